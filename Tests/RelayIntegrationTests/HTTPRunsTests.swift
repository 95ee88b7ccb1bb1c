import Foundation
import RelayTestKit
import Testing
import WorkspaceWatcher
#if canImport(Glibc)
import Glibc
#endif

/// The native runs API of the real `relay serve` (issue 18), driven by curl: runs started over
/// HTTP, their events as SSE with reconnects, cancel and resume, chats, uploads into Research/.
@Suite(.serialized) struct HTTPRunsTests {
    /// A served workspace whose model (the fake model server, a test double) takes `delay`
    /// seconds per reply, so a run is still going when the test acts on it.
    static func slowServed(delay: Double) throws -> (ScratchWorkspace, FakeModelServer, ServedWorkspace) {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let model = FakeModelServer(delay: delay, log: s.base + "/requests.log")
        try model.start()
        let served = try ServedWorkspace(s, environment: ["RELAY_MODEL_URL": model.baseURL])
        return (s, model, served)
    }

    static func startRun(_ served: ServedWorkspace, _ body: String) throws -> (id: String, chat: String) {
        let started = try served.curl("POST", "/runs", body: body)
        #expect(started.status == 202, "\(started)")
        let object = try #require(jsonObject(started.body), "\(started)")
        return (try #require(object["run"] as? String), try #require(object["chat"] as? String))
    }

    @Test func reconnectingWithLastEventIDMidRunGivesExactlyTheMissingEvents() throws {
        let (s, model, served) = try Self.slowServed(delay: 1)
        _ = model
        let turn = try Self.startRun(served, #"{"message": "Plan a picnic by the river"}"#)
        let url = served.base + "/runs/\(turn.id)/events"

        // A client that hangs up once the first agent has finished, mid-run.
        let first = try SSEReader(url: url)
        first.read { events in events.contains { $0.kind == "agentFinished" } }
        first.hangUp()
        let seen = first.events
        #expect(seen.first?.kind == "runStarted")
        #expect(!seen.contains { $0.kind == "final" || $0.kind == "end" }, "the run was still going when the client left")
        let lastID = try #require(seen.last?.id)

        // It comes back with the last id it saw, and reads to the end of the run.
        let second = try SSEReader(url: url, lastEventID: lastID)
        second.read()
        let rest = second.events
        #expect(rest.first?.id == lastID + 1, "no gap: \(rest.prefix(2))")
        #expect(rest.last?.kind == "end" && rest.last?.object["state"] as? String == "done", "\(rest.suffix(2))")
        #expect(rest.contains { $0.kind == "final" })

        // The finished run replays whole: the two halves are exactly the whole, in order.
        let whole = try SSEReader(url: url)
        whole.read()
        #expect(whole.events.map(\.id) == Array(1...whole.events.count).map { Optional($0) }, "ids 1…n without gaps")
        #expect(seen + rest == whole.events, "the two connections together are the whole stream, nothing twice")
        #expect(whole.events.filter { $0.kind == "agentFinished" }.count == 4)

        // The events are the engine's (as `relay ask --json` prints them).
        let started = try #require(whole.events.first?.object)
        #expect(started["run"] as? String == turn.id && (started["agents"] as? [[String: Any]])?.count == 4)
        let deltas = whole.events.filter { $0.kind == "textDelta" }
        #expect(!deltas.isEmpty && deltas.allSatisfy { $0.object["text"] is String && $0.object["agent"] is String })

        // Listed, with its chat and transcript.
        let runs = try served.curl("GET", "/runs?chat=\(turn.chat)")
        let listed = (jsonObject(runs.body)?["runs"] as? [[String: Any]]) ?? []
        #expect(listed.count == 1 && listed.first?["id"] as? String == turn.id && listed.first?["state"] as? String == "done", "\(runs)")
        let chats = try served.curl("GET", "/chats")
        #expect(((jsonObject(chats.body)?["chats"] as? [[String: Any]]) ?? []).contains { $0["name"] as? String == turn.chat }, "\(chats)")
        let chat = try served.curl("GET", "/chats/\(turn.chat)")
        let messages = (jsonObject(chat.body)?["messages"] as? [[String: Any]]) ?? []
        #expect(messages.first?["role"] as? String == "user" && messages.first?["text"] as? String == "Plan a picnic by the river", "\(chat)")
        #expect(messages.filter { $0["role"] as? String == "agent" }.count == 4)
        #expect(s.contents("Chats/\(turn.chat).md")?.contains("Plan a picnic by the river") == true)
    }

    @Test func fiftyClientsOnOneRunEachReceiveEveryEventOnce() throws {
        let (_, model, served) = try Self.slowServed(delay: 0.5)
        let turn = try Self.startRun(served, #"{"message": "Plan a picnic by the river"}"#)
        let url = served.base + "/runs/\(turn.id)/events"
        // All connect while the run is going, each in its own curl.
        let clients = try (0..<50).map { _ in try SSEReader(url: url) }
        let collected = LockedBox(Array(repeating: [SSEReader.Event](), count: clients.count))
        DispatchQueue.concurrentPerform(iterations: clients.count) { index in
            let events = clients[index].read()
            collected.mutate { $0[index] = events }
        }
        let results = collected.value
        let whole = try SSEReader(url: url).read()
        #expect(whole.last?.kind == "end" && whole.filter { $0.kind == "agentFinished" }.count == 4)
        for (index, events) in results.enumerated() {
            #expect(events == whole, "client \(index) got \(events.count) of \(whole.count) events")
        }
        _ = model
    }

    @Test func cancellingARunLeavesItCancelledAndRelayResumeFinishesIt() throws {
        let (s, model, served) = try Self.slowServed(delay: 2)
        let turn = try Self.startRun(served, #"{"message": "Plan a picnic by the river"}"#)
        let stream = try SSEReader(url: served.base + "/runs/\(turn.id)/events")
        stream.read { events in events.contains { $0.kind == "agentStarted" } }

        // One turn at a time in a chat.
        let second = try served.curl("POST", "/runs", body: #"{"message": "And a second thing", "chat": "\#(turn.chat)"}"#)
        #expect(second.status == 409 && second.body.contains(turn.id), "\(second)")

        let cancelled = try served.curl("POST", "/runs/\(turn.id)/cancel", body: "{}")
        #expect(cancelled.status == 200, "\(cancelled)")
        #expect(jsonObject(cancelled.body)?["state"] as? String == "cancelled", "\(cancelled)")
        // The open stream ends with the stop, as every listener learns it.
        stream.read()
        #expect(stream.events.last?.kind == "end" && stream.events.last?.object["state"] as? String == "cancelled", "\(stream.events.suffix(2))")
        #expect(!stream.events.contains { $0.kind == "final" })
        let again = try served.curl("POST", "/runs/\(turn.id)/cancel", body: "{}")
        #expect(again.status == 409, "a stopped run cannot be stopped again: \(again)")
        let journal = try #require(s.contents(".relay/runs/\(turn.id)/journal.jsonl"))
        #expect(journal.contains("\"type\":\"interrupted\"") && journal.contains("stopped by a person over HTTP"))

        kill(served.process.processIdentifier, SIGTERM)
        served.process.waitUntilExit()
        #expect(served.process.terminationStatus == 0)
        let listed = try s.relay(["runs", "-w", s.root, "--json"])
        #expect(listed.text.contains("\"cancelled\""), "\(listed.text)")
        let resumed = try run(Binaries.relay, ["resume", "-w", s.root, turn.id], environment: ["RELAY_MODEL_URL": model.baseURL])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let state = try s.relay(["runs", "-w", s.root, turn.id, "--json"])
        #expect(state.text.contains("\"done\""), "\(state.text)")
        // The resumed execution went on counting in the same event log.
        var reader = [String]()
        for line in (s.contents(".relay/runs/\(turn.id)/events.jsonl") ?? "").split(separator: "\n") { reader.append(String(line)) }
        let sequences = reader.compactMap { Int($0.prefix { $0 != "\t" }) }
        #expect(sequences == Array(1...sequences.count), "one sequence across both executions")
        #expect(reader.last?.contains("\"state\":\"done\"") == true)
        _ = model
    }

    @Test func anUploadIntoResearchStartsTheResearchRelayExactlyOnce() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s, environment: ["RELAY_LOG_LEVEL": "info"])
        try Self.waitForWatcher(s, served)
        let upload = try run("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "-X", "PUT", "--data-binary", "Llamas hum when they are curious.\n",
                                               served.base + "/research/llama-notes.md"])
        #expect(upload.text.hasSuffix("\n201"), "\(upload.text)")
        #expect(jsonObject(String(upload.text.dropLast(4)))?["path"] as? String == "Research/llama-notes.md")
        #expect(s.contents("Research/llama-notes.md") == "Llamas hum when they are curious.\n")

        // The watcher sees it settle and runs the research relay on it.
        try served.waitForRun(triggeredBy: "Research/llama-notes.md")
        let runs = (jsonObject(try served.curl("GET", "/runs").body)?["runs"] as? [[String: Any]]) ?? []
        let research = runs.filter { $0["source"] as? String == "Research/llama-notes.md" }
        #expect(research.count == 1 && research.first?["relay"] as? String == "research", "\(research)")
        #expect(research.first?["state"] as? String == "done", "\(research)")
        // Everything written before this cookie has been seen by the watcher: still one run.
        try Self.waitForWatcher(s, served)
        let after = (jsonObject(try served.curl("GET", "/runs").body)?["runs"] as? [[String: Any]]) ?? []
        #expect(after.filter { $0["source"] as? String == "Research/llama-notes.md" }.count == 1, "\(after)")
        #expect(after.count == 1, "the upload and the run's own writes started nothing else: \(after)")

        // The same name again is refused and changes nothing.
        let twice = try run("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "-X", "PUT", "--data-binary", "other", served.base + "/research/llama-notes.md"])
        #expect(twice.text.hasSuffix("\n409"), "\(twice.text)")
        #expect(s.contents("Research/llama-notes.md") == "Llamas hum when they are curious.\n")
    }

    /// Writes a cookie and waits until the daemon's watcher has handled it (and everything before).
    static func waitForWatcher(_ s: ScratchWorkspace, _ served: ServedWorkspace) throws {
        try served.waitForWatcher()
    }

    @Test func hostileRunAndUploadRequestsGetClearErrorsAndChangeNothing() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s, arguments: ["--max-upload-bytes", "1000"])
        let before = try Self.tree(s)
        func error(_ result: (status: Int, body: String)) -> (code: String, message: String) {
            let object = jsonObject(result.body)?["error"] as? [String: Any]
            return (object?["code"] as? String ?? "", object?["message"] as? String ?? "")
        }
        func put(_ name: String, _ body: String, _ extra: [String] = []) throws -> (status: Int, body: String) {
            try served.curl("PUT", "/research/\(name)", extra: ["--path-as-is", "--data-binary", body] + extra)
        }
        // Names that would leave Research/ or hide there.
        for name in ["..%2F..%2Fescaped.md", "..%2Fcontext.md", "%2E%2E", ".hidden", "a%5Cb", "bad%00name", "..%2F.relay%2Fapi-token"] {
            let result = try put(name, "x")
            #expect(result.status == 400, "\(name): \(result)")
            #expect(!error(result).message.isEmpty)
        }
        #expect(try put("../../escaped.md", "x").status != 201)
        // Too large: declared, and sent chunked without a length.
        let big = String(repeating: "a", count: 5000)
        let declared = try put("big.md", big)
        #expect(declared.status == 413 && error(declared).code == "request_too_large", "\(declared)")
        let chunked = try put("big.md", big, ["-H", "Transfer-Encoding: chunked"])
        #expect(chunked.status == 413, "\(chunked)")
        #expect(try put("empty.md", "").status == 400)

        // Runs that are not there, ids that are not ids.
        let unknown = try served.curl("GET", "/runs/20200101-000000-abcd")
        #expect(unknown.status == 404 && error(unknown).code == "not_found", "\(unknown)")
        #expect(try served.curl("GET", "/runs/20200101-000000-abcd/events").status == 404)
        #expect(try served.curl("POST", "/runs/20200101-000000-abcd/cancel", body: "{}").status == 404)
        #expect(try served.curl("GET", "/runs/..%2F..%2Frelay.json", extra: ["--path-as-is"]).status == 404)
        // Bodies that are not a run.
        let notJSON = try served.curl("POST", "/runs", body: "{message: hi")
        #expect(notJSON.status == 400 && error(notJSON).message.contains("not valid JSON"), "\(notJSON)")
        let wrongType = try served.curl("POST", "/runs", body: #"{"message": 5}"#)
        #expect(wrongType.status == 400 && error(wrongType).message.contains("\"message\""), "\(wrongType)")
        let missing = try served.curl("POST", "/runs", body: #"{"text": "hi"}"#)
        #expect(missing.status == 400 && error(missing).message == "the body has no \"message\"", "\(missing)")
        let noRelay = try served.curl("POST", "/runs", body: #"{"message": "hi", "relay": "nope"}"#)
        #expect(noRelay.status == 404, "\(noRelay)")
        let escape = try served.curl("POST", "/runs", body: #"{"message": "hi", "chat": "../../outside"}"#)
        #expect(escape.status == 400, "\(escape)")
        #expect(try served.curl("GET", "/chats/..%2Frelay", extra: ["--path-as-is"]).status == 400)
        #expect(try served.curl("GET", "/chats/nope").status == 404)
        #expect(try served.curl("GET", "/runs/20200101-000000-abcd/events", headers: ["Last-Event-ID: x"]).status == 404)

        let after = try Self.tree(s)
        let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
        #expect(changed.isEmpty, "nothing in the workspace changed: \(changed)")
        #expect(!FileManager.default.fileExists(atPath: s.base + "/escaped.md"))
    }

    /// Every file of the workspace but what the daemon keeps up on its own (logs, locks, the
    /// watcher's and sync's SQLite files), with its content.
    static func tree(_ s: ScratchWorkspace) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: s.root)
        while let path = enumerator?.nextObject() as? String {
            guard !path.hasPrefix(".relay/log"), !path.hasPrefix(".relay/watch"), !path.hasPrefix(".relay/locks"),
                  !(path.hasPrefix(".relay/") && path.contains(".sqlite")) else { continue }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: s.path(path), isDirectory: &isFolder), !isFolder.boolValue {
                files[path] = FileManager.default.contents(atPath: s.path(path))
            }
        }
        return files
    }
}

/// A run on the real local model (`make model`: llama-server with SmolLM2-135M-Instruct on
/// 127.0.0.1:8080), over the native API, end to end.
@Suite(.serialized, .enabled(if: LocalModel.isAnswering, "no model server answers at 127.0.0.1:8080 — run `make model` to run this test"))
struct HTTPRunsLocalModelTests {
    @Test func aRunOnTheLocalModelStreamsEveryAgentsTextAndItsAnswer() throws {
        let s = try ScratchWorkspace.relayInit()
        let served = try ServedWorkspace(s)
        let started = try served.curl("POST", "/runs", body: #"{"message": "Name two things to pack for a day hike."}"#)
        #expect(started.status == 202, "\(started)")
        let id = try #require(jsonObject(started.body)?["run"] as? String)
        let stream = try SSEReader(url: served.base + "/runs/\(id)/events")
        let events = stream.read()
        #expect(events.last?.kind == "end" && events.last?.object["state"] as? String == "done", "\(events.suffix(3).map(\.data))")
        let finished = events.filter { $0.kind == "agentFinished" }
        #expect(finished.count >= 3, "the template's three agents")
        #expect(events.contains { $0.kind == "textDelta" }, "text streamed from the model")
        let final = try #require(events.first { $0.kind == "final" }?.object["text"] as? String)
        #expect(!final.isEmpty)
    }
}
