import Foundation
import HTTPTypes
import Hummingbird
import LanguageModels
import RelayEngine
import WorkspaceCore

/// The conversations in `Chats/`:
/// - `GET /chats` → `{"chats": [{"name", "modified", "bytes"}]}`, the newest first (not the
///   folder's README);
/// - `GET /chats/NAME` → `{"name", "messages", "unanswered", "running"}`: the transcript's
///   messages (`Chats/NAME.json`), the person's newest message in `Chats/NAME.md` that no turn
///   has answered yet (written in an editor, or just sent), and the id of a run of this chat
///   still going.
struct ChatRoutes {
    let engine: RelayRunner

    func add(to router: Router<BasicRequestContext>) {
        router.get("/chats") { _, _ in
            let entries = (try? engine.workspace.list("Chats")) ?? []
            var chats: [String: Workspace.Entry] = [:]
            for entry in entries where entry.kind == .file && (entry.path.hasSuffix(".md") || entry.path.hasSuffix(".json")) {
                let file = String(entry.path.dropFirst("Chats/".count))
                guard !file.contains("/"), !file.hasPrefix(".") else { continue }
                let name = file.hasSuffix(".md") ? String(file.dropLast(3)) : String(file.dropLast(5))
                if name == "README" { continue }  // the folder's own explanation, not a conversation
                if let seen = chats[name], seen.modifiedNanoseconds >= entry.modifiedNanoseconds { continue }
                chats[name] = entry
            }
            let list: [[String: Any]] = chats.sorted { ($0.value.modifiedNanoseconds, $0.key) > ($1.value.modifiedNanoseconds, $1.key) }.map { name, entry in
                ["name": name, "modified": Self.timestamp(entry.modifiedNanoseconds), "bytes": entry.size]
            }
            return JSONBody.response(["chats": list])
        }
        router.get("/chats/{name}") { _, context in
            let name = try FileName.validated(context.parameters.get("name") ?? "", what: "the chat name")
            let chatText = try read("Chats/\(name).md")
            let transcript = try read("Chats/\(name).json")
            guard chatText != nil || transcript != nil else { throw APIError(.notFound, "no chat '\(name)' in Chats/ (GET /chats lists them)") }
            var messages: [Any] = []
            if let transcript, let object = try? JSONSerialization.jsonObject(with: Data(transcript.utf8)) as? [String: Any] {
                messages = object["messages"] as? [Any] ?? []
            }
            let running = (try? engine.store.summaries())?.last { $0.chatFile == "Chats/\(name).md" && $0.state == .running }?.id
            var body: [String: Any] = ["name": name, "messages": messages]
            body["unanswered"] = chatText.flatMap(RelayRunner.unansweredMessage(inChat:)) ?? NSNull()
            body["running"] = running ?? NSNull()
            return JSONBody.response(body)
        }
    }

    /// A file's text through the sandbox; nil when it is not there.
    private func read(_ path: String) throws -> String? {
        do {
            return String(decoding: try engine.workspace.read(path), as: UTF8.self)
        } catch let error as WorkspaceError where error.code == .notFound {
            return nil
        } catch let error as WorkspaceError {
            throw APIError(.invalidRequest, error.message)
        }
    }

    static func timestamp(_ nanoseconds: Int64) -> String {
        Timestamp.iso8601(Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
    }
}
