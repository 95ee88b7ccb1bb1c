import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RelayTestKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `relay serve` (issue 18) with the scripted model, driven by real clients: the seed
/// app's URLSession code, curl, and (where installed) the OpenAI Python SDK.
@Suite(.serialized) struct HTTPServerTests {
    struct ChatResponse: Decodable { let response: String }

    @Test func theSeedClientsExactRequestGetsTheRelaysFinalAnswer() async throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        // The seed's client, word for word (port aside).
        var request = URLRequest(url: URL(string: "http://localhost:\(served.port)/agent/chat")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["query": "Tell me about llamas"])
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let decoded = try JSONDecoder().decode(ChatResponse.self, from: data)
        #expect(decoded.response == "Llamas are camelids from the Andes.")

        // The turn is an ordinary chat: Chats/NAME.md, continued with "session".
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let session = try #require(object["session"] as? String)
        let chat = try #require(s.contents("Chats/\(session).md"))
        #expect(chat.contains("Tell me about llamas"))
        let next = try served.curl("POST", "/agent/chat", body: #"{"query": "And alpacas?", "session": "\#(session)"}"#)
        #expect(next.status == 200 && jsonObject(next.body)?["session"] as? String == session, "\(next)")
        #expect(s.contents("Chats/\(session).md")?.contains("And alpacas?") == true)
    }

    @Test func withATokenEveryEndpointButHealthWantsItAndTheTokenIsNeverLogged() throws {
        let s = try ServedWorkspace.scripted()
        let token = "t0ken-\(UUID().uuidString)"
        let served = try ServedWorkspace(s, environment: ["RELAY_API_TOKEN": token, "RELAY_LOG_LEVEL": "debug"])
        #expect(try served.curl("GET", "/health").status == 200)
        let missing = try served.curl("GET", "/v1/models")
        #expect(missing.status == 401)
        let error = try #require(jsonObject(missing.body)?["error"] as? [String: Any])
        #expect(error["code"] as? String == "unauthorized" && error["message"] is String)
        #expect(try served.curl("GET", "/v1/models", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(try served.curl("GET", "/v1/models", headers: ["Authorization: Bearer \(token)x"]).status == 401)
        #expect(try served.curl("POST", "/agent/chat", body: #"{"query": "hi"}"#).status == 401)
        let good = try served.curl("GET", "/v1/models", headers: ["Authorization: Bearer \(token)"])
        #expect(good.status == 200, "\(good)")
        let chat = try served.curl("POST", "/agent/chat", body: #"{"query": "hi"}"#, headers: ["Authorization: Bearer \(token)"])
        #expect(chat.status == 200, "\(chat)")
        // No CORS: a preflight gets no Access-Control headers.
        let preflight = try run("/usr/bin/curl", ["-s", "-i", "-X", "OPTIONS", served.base + "/v1/models", "-H", "Origin: http://evil.example",
                                                  "-H", "Access-Control-Request-Method: POST"])
        #expect(!preflight.text.lowercased().contains("access-control-allow"))
        kill(served.process.processIdentifier, SIGTERM)
        served.process.waitUntilExit()
        let logs = served.log + ((try? String(contentsOfFile: s.path(".relay/log/watch.log"), encoding: .utf8)) ?? "")
        #expect(!logs.contains(token), "the token reached a log")
    }

    @Test func aTokenFileThatCannotBeMadeIsAClearErrorWithStatus2AndNothingListens() throws {
        let s = try ServedWorkspace.scripted()
        // Something that is not a file already holds the token's name.
        try FileManager.default.createDirectory(atPath: s.path(".relay/api-token"), withIntermediateDirectories: false)
        let port = FakeModelServer.freePort()
        let refused = try run(Binaries.relay, ["serve", "-w", s.root, "--http", "0.0.0.0:\(port)", "--new-token"], environment: ["RELAY_API_TOKEN": ""])
        #expect(refused.status == 2)
        // (Read through the system-call layer, the folder is an error at once, not a missing token.)
        #expect(refused.standardError.contains("cannot read the API token in \(s.path(".relay/api-token")): Is a directory"), "\(refused.standardError)")
        #expect(!FakeModelServer.accepts(port))
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path(".relay/api-token")).isEmpty)
    }

    @Test func aNonLoopbackAddressWithoutATokenIsRefusedAndNewTokenMakesOneOnce() throws {
        let s = try ServedWorkspace.scripted()
        let port = FakeModelServer.freePort()
        let refused = try run(Binaries.relay, ["serve", "-w", s.root, "--http", "0.0.0.0:\(port)"], environment: ["RELAY_API_TOKEN": ""])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("RELAY_API_TOKEN"), "\(refused.standardError)")
        #expect(!FakeModelServer.accepts(port))
        #expect(!FileManager.default.fileExists(atPath: s.path(".relay/api-token")))

        let served = try ServedWorkspace(s, host: "0.0.0.0", arguments: ["--new-token"], environment: ["RELAY_API_TOKEN": ""])
        let file = s.path(".relay/api-token")
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let token = try #require(s.contents(".relay/api-token")?.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(token.count == 64)
        #expect(served.log.contains(token), "printed once at generation")
        #expect(try served.curl("GET", "/v1/models").status == 401)
        #expect(try served.curl("GET", "/v1/models", headers: ["Authorization: Bearer \(token)"]).status == 200)
        kill(served.process.processIdentifier, SIGTERM)
        served.process.waitUntilExit()
        #expect(served.process.terminationStatus == 0)

        // The next start reads it, prints nothing, and may listen beyond loopback with it.
        let again = try ServedWorkspace(s, host: "0.0.0.0", environment: ["RELAY_API_TOKEN": ""])
        #expect(!again.log.contains(token))
        #expect(try again.curl("GET", "/v1/models", headers: ["Authorization: Bearer \(token)"]).status == 200)
    }

    @Test func anOversizedBodyGets413WithAndWithoutAContentLength() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s, arguments: ["--max-body-bytes", "1000"])
        let big = #"{"query": ""# + String(repeating: "a", count: 5000) + #""}"#
        let declared = try served.curl("POST", "/agent/chat", body: big)
        #expect(declared.status == 413, "\(declared)")
        #expect((jsonObject(declared.body)?["error"] as? [String: Any])?["code"] as? String == "request_too_large")
        let chunked = try served.curl("POST", "/agent/chat", body: big, headers: ["Transfer-Encoding: chunked"])
        #expect(chunked.status == 413, "\(chunked)")
        #expect(try served.curl("POST", "/agent/chat", body: #"{"query": "small"}"#).status == 200)
        #expect(!FileManager.default.fileExists(atPath: s.path("Chats/\(RelayRunIntegrationTests.today())-aaaa.md")))
    }

    @Test func aStalledClientBlocksNeitherOtherClientsNorTheRun() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        // One client sends half a request and stalls; another connects and sends nothing.
        let half = try Self.connect(port: served.port)
        let silent = try Self.connect(port: served.port)
        defer { close(half); close(silent) }
        let partial = "POST /agent/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"query\": \"stal"
        #expect(partial.withCString { send(half, $0, strlen($0), 0) } > 0)
        #expect(try served.curl("GET", "/health").status == 200)
        let answered = try served.curl("POST", "/agent/chat", body: #"{"query": "Tell me about llamas"}"#)
        #expect(answered.status == 200, "\(answered)")
        #expect(jsonObject(answered.body)?["response"] as? String == "Llamas are camelids from the Andes.")
        // The stalled request started no turn.
        let chats = (try? FileManager.default.contentsOfDirectory(atPath: s.path("Chats"))) ?? []
        #expect(!chats.contains { (try? String(contentsOfFile: s.path("Chats/\($0)"), encoding: .utf8))?.contains("stal") == true })
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CocoaError(.fileReadUnknown) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw CocoaError(.fileReadUnknown) }
        return fd
    }

    @Test func badRequestsGetTheErrorShape() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        let missing = try served.curl("POST", "/agent/chat", body: #"{"question": "hi"}"#)
        #expect(missing.status == 400 && (jsonObject(missing.body)?["error"] as? [String: Any])?["message"] as? String == "the body has no \"query\"", "\(missing)")
        let notJSON = try served.curl("POST", "/agent/chat", extra: ["-H", "Content-Type: text/plain", "--data-binary", "query=hi"])
        #expect(notJSON.status == 415, "\(notJSON)")
        let unknown = try served.curl("GET", "/nowhere")
        #expect(unknown.status == 404 && (jsonObject(unknown.body)?["error"] as? [String: Any])?["code"] as? String == "not_found")
        let model = try served.curl("POST", "/v1/chat/completions", body: #"{"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}"#)
        #expect(model.status == 404 && (jsonObject(model.body)?["error"] as? [String: Any])?["code"] as? String == "model_not_found")
        let escape = try served.curl("POST", "/agent/chat", body: #"{"query": "hi", "session": "../../outside"}"#)
        #expect(escape.status == 400, "\(escape)")
        #expect(!FileManager.default.fileExists(atPath: s.base + "/outside.md") && !FileManager.default.fileExists(atPath: s.path("outside.md")))
        let header = try served.curl("POST", "/v1/chat/completions", body: #"{"messages": [{"role": "user", "content": "hi"}]}"#, headers: ["X-Relay-Chat: .hidden"])
        #expect(header.status == 400, "\(header)")
        let rebound = try served.curl("GET", "/v1/models", headers: ["Host: attacker.example"])
        #expect(rebound.status == 403, "without a token, only requests addressed to localhost")
    }

    @Test func modelsListEachRelayAndEachAgentAndACompletionAnswersWithTheRelay() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        let models = try served.curl("GET", "/v1/models")
        let ids = ((jsonObject(models.body)?["data"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(ids.contains("chat") && ids.contains("research"), "\(ids)")
        #expect(ids.contains("chat/planner") && ids.contains("chat/writer") && ids.contains("chat/reviewer"), "\(ids)")

        let completion = try served.curl("POST", "/v1/chat/completions", body: #"{"model": "chat", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me about llamas"}]}"#)
        let object = try #require(jsonObject(completion.body), "\(completion)")
        #expect(object["object"] as? String == "chat.completion")
        let message = ((object["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])
        #expect(message?["content"] as? String == "Llamas are camelids from the Andes.")
        #expect(((object["usage"] as? [String: Any])?["total_tokens"] as? Int ?? 0) > 0)
        // One agent as the model: a turn of that agent alone.
        let one = try served.curl("POST", "/v1/chat/completions", body: #"{"model": "chat/writer", "chat": "just-wren", "messages": [{"role": "user", "content": "Write a line"}]}"#)
        #expect(one.status == 200, "\(one)")
        let transcript = try #require(s.contents("Chats/just-wren.json"))
        #expect(transcript.contains("Wren") && !transcript.contains("Paige"))
    }

    @Test func aStreamedCompletionSendsChunksUsageAndDone() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        let body = #"{"model": "chat", "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "Tell me about llamas"}]}"#
        let result = try served.curl("POST", "/v1/chat/completions", body: body, extra: ["-N"])
        #expect(result.status == 200)
        let data = result.body.components(separatedBy: "\n").filter { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
        #expect(data.last == "[DONE]", "\(result.body)")
        let chunks = data.dropLast().compactMap(jsonObject)
        #expect(chunks.count == data.count - 1 && chunks.allSatisfy { $0["object"] as? String == "chat.completion.chunk" })
        let content = chunks.compactMap { (($0["choices"] as? [[String: Any]])?.first?["delta"] as? [String: Any])?["content"] as? String }.joined()
        #expect(content == "Llamas are camelids from the Andes.")
        #expect(chunks.contains { (($0["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String) == "stop" })
        let usage = try #require(chunks.last?["usage"] as? [String: Any], "the usage chunk comes last")
        #expect((usage["completion_tokens"] as? Int ?? 0) > 0)
        #expect(result.body.contains(": ✍️ Wren is working"), "agents' progress as SSE comments")
        // The conversation is a Chats/ file, continued by the next turn of the same conversation.
        let chats = try FileManager.default.contentsOfDirectory(atPath: s.path("Chats")).filter { $0.hasPrefix("openai-") && $0.hasSuffix(".md") }
        #expect(chats.count == 1, "\(chats)")
    }

    @Test func sigtermWithAClientConnectedStopsCleanlyAndKeepsTheRun() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let model = FakeModelServer(delay: 2, log: s.base + "/requests.log")
        try model.start()
        let served = try ServedWorkspace(s, environment: ["RELAY_MODEL_URL": model.baseURL])
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        client.arguments = ["-s", "-N", "-X", "POST", served.base + "/v1/chat/completions", "-H", "Content-Type: application/json",
                            "--data-binary", #"{"stream": true, "messages": [{"role": "user", "content": "Plan a picnic"}]}"#]
        let output = Pipe()
        client.standardOutput = output
        try client.run()
        // The first agent is being asked (the model answers after 2 s): its request is the event.
        try model.waitForRequests(1)
        let id = try #require(newestRun(inWorkspace: s.root))
        kill(served.process.processIdentifier, SIGTERM)
        served.process.waitUntilExit()
        #expect(served.process.terminationStatus == 0, "\(served.log)")
        // It stopped without waiting for the run: the model was not asked for all four agents.
        #expect(model.requests.count < 4, "\(model.requests.map(\.agent))")
        client.waitUntilExit()
        let streamed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(streamed.contains("shutting_down") && streamed.hasSuffix("data: [DONE]\n\n"), "\(streamed)")
        let journal = try String(contentsOfFile: s.path(".relay/runs/\(id)/journal.jsonl"), encoding: .utf8)
        #expect(journal.contains("\"type\":\"interrupted\""), "the run is kept, resumable")
    }

    static let hasOpenAISDK = (try? run("/usr/bin/env", ["python3", "-c", "import openai"]).status) == 0

    @Test(.enabled(if: hasOpenAISDK, "needs the OpenAI Python SDK (make deps runs pip install openai)"))
    func theOpenAIPythonSDKListsModelsAndStreamsACompletion() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s, environment: ["RELAY_API_TOKEN": "sdk-token"])
        let script = """
            from openai import OpenAI
            client = OpenAI(base_url="\(served.base)/v1", api_key="sdk-token")
            print("models:", ",".join(m.id for m in client.models.list()))
            text = ""
            for chunk in client.chat.completions.create(model="chat", stream=True, messages=[{"role": "user", "content": "Tell me about llamas"}]):
                if chunk.choices and chunk.choices[0].delta.content:
                    text += chunk.choices[0].delta.content
            print("answer:", text)
            """
        let result = try run("/usr/bin/env", ["python3", "-c", script])
        #expect(result.status == 0, "\(result.standardError)")
        let models = result.text.split(separator: "\n").first { $0.hasPrefix("models: ") }.map { Set($0.dropFirst(8).split(separator: ",").map(String.init)) } ?? []
        #expect(models.isSuperset(of: ["chat", "chat/planner", "chat/writer", "research"]), "\(result.text)")
        #expect(result.text.contains("answer: Llamas are camelids from the Andes."), "\(result.text)")
    }
}

/// `relay watch --http` is the same daemon as `relay serve`.
@Suite struct WatchWithHTTPTests {
    @Test func relayWatchWithHTTPServesTheAPIAndStopsOnSIGTERM() throws {
        let s = try ServedWorkspace.scripted()
        let port = FakeModelServer.freePort()
        let watch = try spawn(Binaries.relay, ["watch", "-w", s.root, "--http", "\(port)"], errorLog: s.base + "/watch.log")
        try FileEvents.wait(under: [s.base], endingWith: watch, "relay watch --http to listen") {
            ((try? String(contentsOfFile: s.base + "/watch.log", encoding: .utf8)) ?? "").contains("relay http listening") ? () : nil
        }
        let health = try run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/health"])
        #expect(health.text == #"{"status":"ok"}"#)
        let chat = try run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/agent/chat", "-H", "Content-Type: application/json", "--data-binary", #"{"query": "hi"}"#])
        #expect(jsonObject(chat.text)?["response"] as? String == "Llamas are camelids from the Andes.", "\(chat.text)")
        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()
        #expect(watch.terminationStatus == 0)
    }

    @Test func aPortInUseIsAClearErrorNamingTheAddress() throws {
        let s = try ServedWorkspace.scripted()
        let other = FakeModelServer(log: s.base + "/requests.log")  // something else on the port
        try other.start()
        let result = try run(Binaries.relay, ["serve", "-w", s.root, "--http", "127.0.0.1:\(other.port)"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot listen on 127.0.0.1:\(other.port): the port is in use"), "\(result.standardError)")
    }
}
