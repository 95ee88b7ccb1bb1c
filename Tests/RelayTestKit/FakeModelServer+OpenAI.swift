import Crypto
import Foundation
import NIOCore

extension FakeModelServer {
    /// How many chat requests `relay` may send at once, as llama-server's /props says (its slots).
    public static let slots = 2

    /// A plan worker whose subtask holds "(slow)" waits this long the first time it is asked (a
    /// worker still busy when a test kills the relay); asked again, it answers at once.
    public static let slowSubtaskDelay: TimeAmount = .seconds(60)

    /// Answers as an OpenAI-compatible server (llama-server) does: GET /models, /props and
    /// /health, and POST /chat/completions, streamed or not, plain or with a json_schema
    /// response_format, with a deterministic reply naming the agent whose system prompt it got.
    /// Appends one JSON line per chat request to `log`, so a test can also read which model calls
    /// a crashed-and-resumed run repeated.
    ///
    /// A planner (a schema with "subtasks") gets three subtasks; the second is slow the first
    /// time it is asked (``slowSubtaskDelay``), unless the request says "(no slow part)".
    ///
    /// - parameter delay: seconds it waits before each chat reply.
    public static func openAICompatible(delay: Double, log: String) -> @Sendable (Request, Int) -> Response {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let slowSeen = LockedBox<Set<String>>([])
        let chats = LockedBox(0)
        return { request, _ in
            if request.method == "GET" {
                if request.uri.hasSuffix("/models") {
                    return .json(200, #"{"object": "list", "data": [{"id": "fake-model", "object": "model"}]}"#)
                } else if request.uri == "/props" {
                    return .json(200, #"{"total_slots": \#(slots), "default_generation_settings": {"n_ctx": 4096}}"#)
                } else if request.uri.hasSuffix("/health") {
                    return .json(200, #"{"status": "ok"}"#)
                }
                return .json(404, #"{"error": {"message": "not found"}}"#)
            }
            let body = request.json ?? [:]
            let (agent, user) = (request.agent, request.user)
            chats.mutate { count in
                count += 1
                let line: [String: Any] = ["n": count, "agent": agent, "user": user, "messages": request.messages.count]
                if let data = try? JSONSerialization.data(withJSONObject: line), let handle = FileHandle(forWritingAtPath: log) {
                    handle.seekToEndOfFile()
                    handle.write(data + Data("\n".utf8))
                    try? handle.close()
                }
            }
            let digest = Insecure.SHA1.hash(data: Data(user.utf8)).map { String(format: "%02x", $0) }.joined().prefix(8)
            var text = "\(agent) answers (\(digest)): llamas are camelids."
            if agent == "Wren" || agent == "Paige" { text += " They live in the Andes." }
            let format = body["response_format"]
            let schema = format.flatMap { try? JSONSerialization.data(withJSONObject: $0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
            let content: String
            if schema.contains(#""subtasks""#) {
                let second = user.contains("(no slow part)") ? "second part" : "second part (slow)"
                content = jsonText(["subtasks": ["first part", second, "third part"]])
            } else if format != nil, !(format is NSNull) {
                content = jsonText(["answer": text])
            } else {
                content = text
            }
            var wait = TimeAmount.nanoseconds(Int64(delay * 1e9))
            if user.range(of: #"\[Your Subtask[^\]]*\]:\n[^\n]*\(slow\)"#, options: .regularExpression) != nil {
                let firstTime = slowSeen.mutate { $0.insert(String(digest)).inserted }
                if firstTime { wait = wait + slowSubtaskDelay }
            }
            let messages = request.messages
            let usage: [String: Any] = [
                "prompt_tokens": messages.map { "\($0["content"] ?? "")".count }.reduce(0, +) / 4 + 1,
                "completion_tokens": text.count / 4 + 1,
            ]
            guard body["stream"] as? Bool == true else {
                let reply: [String: Any] = ["id": "fake", "object": "chat.completion", "usage": usage, "choices": [
                    ["index": 0, "message": ["role": "assistant", "content": content], "finish_reason": "stop"]]]
                return .whole(status: 200, contentType: "application/json", body: Array(jsonText(reply).utf8), delay: wait)
            }
            var events: [[String: Any]] = stride(from: 0, to: content.count, by: 12).map { start in
                let piece = String(content.dropFirst(start).prefix(12))
                return ["id": "fake", "object": "chat.completion.chunk", "choices": [["index": 0, "delta": ["content": piece], "finish_reason": NSNull()]]]
            }
            events.append(["id": "fake", "object": "chat.completion.chunk", "choices": [["index": 0, "delta": [String: Any](), "finish_reason": "stop"]]])
            events.append(["id": "fake", "object": "chat.completion.chunk", "choices": [Any](), "usage": usage])
            let stream = events.map { "data: \(jsonText($0))\n\n" }.joined() + "data: [DONE]\n\n"
            return .whole(status: 200, contentType: "text/event-stream", body: Array(stream.utf8), delay: wait)
        }
    }

    private static func jsonText(_ object: Any) -> String {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
