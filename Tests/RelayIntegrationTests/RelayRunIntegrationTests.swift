import Foundation
import RelayTestKit
import Testing

/// The real `relay` binary running relays against a real HTTP model server (the fake one: a
/// test double that answers instantly or slowly, and logs every request it gets).
@Suite struct RelayRunIntegrationTests {
    func newestRun(in s: ScratchWorkspace) -> String? { RelayIntegrationTests.newestRun(inWorkspace: s.root) }
    func steps(_ s: ScratchWorkspace, _ run: String) -> Int { finishedSteps(of: run, inWorkspace: s.root) }

    @Test func killNineBetweenAgentsThenResumeRepeatsNoModelCallOfAFinishedAgent() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let server = FakeModelServer(delay: 0.5, log: s.base + "/requests.log")
        try server.start()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        let ask = try spawn(Binaries.relay, ["ask", "-w", s.root, "Tell me about llamas"], errorLog: s.base + "/ask.log", environment: environment)
        // Kill it once two agents have finished (the third is being asked): the journal's second
        // step record is the event.
        let id = try FileEvents.wait(under: [s.base], endingWith: ask, "two finished agents") {
            newestRun(in: s).flatMap { steps(s, $0) >= 2 ? $0 : nil }
        }
        killHard(ask)
        #expect(steps(s, id) >= 2 && steps(s, id) < 4, "killed between agents")
        let finishedBeforeKill = steps(s, id)

        // Whatever the kill interrupted, the transcript is whole JSON with whole messages.
        let transcriptPath = s.path("Chats/\(Self.today())-tell-me-about-llamas.json")
        if let data = FileManager.default.contents(atPath: transcriptPath) {
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let messages = try #require(object["messages"] as? [[String: Any]])
            #expect(messages.allSatisfy { ($0["text"] as? String)?.hasSuffix("camelids.") == true || ($0["text"] as? String)?.hasSuffix("Andes.") == true || $0["role"] as? String == "user" })
        }
        let listed = try run(Binaries.relay, ["runs", "-w", s.root, "--json"], environment: environment)
        #expect(listed.text.contains("\"state\":\"interrupted\""), "\(listed.text)")

        let resumed = try run(Binaries.relay, ["resume", "-w", s.root, id], environment: environment)
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(resumed.text.contains("from the run journal"))
        #expect(steps(s, id) == 4)

        let agents = server.requests.map(\.agent)
        let finishedAgents = ["Paige", "Remy", "Wren"].prefix(finishedBeforeKill)
        for agent in finishedAgents {
            #expect(agents.filter { $0 == agent }.count == 1, "\(agent) was asked \(agents.filter { $0 == agent }.count) times: \(agents)")
        }
        #expect(agents.filter { $0 == "Vera" }.count == 1)
        let chat = try #require(s.contents("Chats/\(Self.today())-tell-me-about-llamas.md"))
        #expect(chat.components(separatedBy: "### 📋 Paige").count == 2)
        #expect(chat.contains("### 🔍 Vera"))
        #expect(!chat.contains("still working"))
        #expect(try run(Binaries.relay, ["runs", "-w", s.root, id]).text.contains("· done ·"))
    }

    @Test func ctrlCStopsARunCleanlyAndResumeFinishesIt() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let server = FakeModelServer(delay: 0.4, log: s.base + "/requests.log")
        try server.start()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        let ask = try spawn(Binaries.relay, ["ask", "-w", s.root, "Plan a picnic"], errorLog: s.base + "/ask.log", environment: environment)
        try FileEvents.wait(under: [s.base], endingWith: ask, "a finished agent") {
            (newestRun(in: s).map { steps(s, $0) } ?? 0) >= 1 ? () : nil
        }
        kill(ask.processIdentifier, SIGINT)
        ask.waitUntilExit()
        #expect(ask.terminationStatus == 130)
        let log = (try? String(contentsOfFile: s.base + "/ask.log", encoding: .utf8)) ?? ""
        #expect(log.contains("relay resume"), "\(log)")
        let id = try #require(newestRun(in: s))
        let journal = try String(contentsOfFile: s.path(".relay/runs/\(id)/journal.jsonl"), encoding: .utf8)
        #expect(journal.contains("\"type\":\"interrupted\""))
        #expect(try run(Binaries.relay, ["resume", "-w", s.root, "--all"], environment: environment).status == 0)
        #expect(steps(s, id) == 4)
    }

    @Test func replayOfARealRunReproducesItsFiles() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let server = FakeModelServer(log: s.base + "/requests.log")
        try server.start()
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "--json", "Llamas?"], environment: ["RELAY_MODEL_URL": server.baseURL])
        #expect(ask.status == 0)
        // --json: one event object per line, from runStarted to final.
        let events = try ask.text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["event"] as? String
        }
        #expect(events.first == "runStarted" && events.last == "final")
        #expect(events.filter { $0 == "agentStarted" }.count == 4 && events.filter { $0 == "agentFinished" }.count == 4)
        #expect(events.contains("textDelta"))
        server.stop()
        let id = try #require(newestRun(in: s))
        let replay = try run(Binaries.relay, ["replay", "-w", s.root, String(id.prefix(17)), "--into", s.base + "/replayed"])
        #expect(replay.status == 0, "\(replay.text) \(replay.standardError)")
        #expect(replay.text.contains("4 of 4 model requests as recorded"))
        let chat = "Chats/\(Self.today())-llamas.md"
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.base + "/replayed/" + chat)) == Data(contentsOf: URL(fileURLWithPath: s.path(chat))))
    }

    @Test func badInputGetsAClearErrorAndChangesNothing() throws {
        let s = try ScratchWorkspace.relayInit()
        try "[{\"id\": \"a\", \"name\": \"A\", \"emoji\": \"x\", \"color\": \"blue\", \"systemPrompt\": \"p\", \"order\": 0}]"
            .write(toFile: s.path("AgentConfiguration.json"), atomically: true, encoding: .utf8)
        let before = try FileManager.default.contentsOfDirectory(atPath: s.path("Chats"))
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "hello"], environment: ["RELAY_MODEL_URL": "http://127.0.0.1:9/v1"])
        #expect(ask.status == 2)
        #expect(ask.standardError.contains("AgentConfiguration.json:1:50: agent 'a', field color: 'blue' is not a colour"), "\(ask.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("Chats")) == before)
        let runs = (try? FileManager.default.contentsOfDirectory(atPath: s.path(".relay/runs"))) ?? []
        #expect(runs.isEmpty)
        let agents = try run(Binaries.relay, ["agents", "-w", s.root])
        #expect(agents.status == 2 && agents.standardError.contains("field color"))
        #expect(try run(Binaries.relay, ["ask", "-w", s.root, "--relay", "nope", "hi"]).status == 2)
        #expect(try run(Binaries.relay, ["resume", "-w", s.root, "no-such-run"]).status == 2)
    }

    @Test func anUnreachableModelServerFailsTheAskWithAResumableRun() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let port = FakeModelServer.freePort()
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "hello"], environment: ["RELAY_MODEL_URL": "http://127.0.0.1:\(port)/v1"])
        #expect(ask.status == 1)
        // One clear error, the engine's: the agent, the model and its URL, then the model's words.
        let url = "http://127.0.0.1:\(port)/v1"
        #expect(ask.standardError.contains("relay: error: 📋 Paige got no answer from ") && ask.standardError.contains("(openai-compatible) at \(url)") && ask.standardError.contains(": no model server at \(url)"),
                "\(ask.standardError)")
        #expect(ask.standardError.components(separatedBy: "relay: error:").count == 2, "one error: \(ask.standardError)")
        #expect(ask.standardError.contains("relay resume"))
        let server = FakeModelServer(port: port, log: s.base + "/requests.log")
        try server.start()
        let resumed = try run(Binaries.relay, ["resume", "-w", s.root, "--all"], environment: ["RELAY_MODEL_URL": server.baseURL])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(server.requests.count == 4)
    }

    @Test func agentsListsTheTemplateRosters() throws {
        let s = try ScratchWorkspace.relayInit()
        let agents = try run(Binaries.relay, ["agents", "-w", s.root])
        #expect(agents.status == 0)
        #expect(agents.text.contains("relay research · input: file"))
        #expect(agents.text.contains("✍️ Wren (writer) · tools: none · write → Research/{name}/summary.md"))
        #expect(agents.text.contains("all rosters valid"))
    }

    static func today() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }
}

/// `relay watch` running relays on dropped files.
@Suite struct WatchRelayIntegrationTests {
    static var templateTriggers: [[String: Any]] { [
        ["pattern": "Research/**", "exclude": ["**/README.md", "Research/*/summary.md"], "relay": "research"],
        ["pattern": "Chats/*.md", "exclude": ["Chats/README.md"], "relay": "chat"],
    ] }

    func waitFor(_ path: String, in w: WatchedWorkspace) throws -> String {
        try w.waitFor("\(path) to appear") { try? String(contentsOfFile: w.path(path), encoding: .utf8) }
    }

    @Test func aFileDroppedInResearchRunsTheResearchRelayOnce() throws {
        let w = try WatchedWorkspace(triggers: Self.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let server = FakeModelServer(log: w.scratch.base + "/requests.log")
        try server.start()
        try w.start(environment: ["RELAY_MODEL_URL": server.baseURL])
        try w.write("Research/llamas.md", "# Llamas\n\nLlamas hum when they are content.\n")
        let summary = try waitFor("Research/llamas/summary.md", in: w)
        #expect(summary.hasPrefix("Wren answers"))
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        #expect(server.requests.count == 4, "one run of four agents, and its own writes start nothing: \(server.requests.map(\.agent))")
        #expect(server.requests[0].user.contains("Llamas hum when they are content."))
        let chat = try #require(try? String(contentsOfFile: w.path("Chats/research-llamas.md"), encoding: .utf8))
        #expect(chat.hasPrefix("📎 Research/llamas.md"))
        w.stop()
    }

    @Test func aMessageWrittenInAChatFileIsAnsweredInIt() throws {
        let w = try WatchedWorkspace(triggers: Self.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let server = FakeModelServer(log: w.scratch.base + "/requests.log")
        try server.start()
        try w.start(environment: ["RELAY_MODEL_URL": server.baseURL])
        try w.write("Chats/picnic.md", "What should we bring to the picnic?\n")
        let chat = try w.waitFor("Vera's answer in Chats/picnic.md") {
            let chat = (try? String(contentsOfFile: w.path("Chats/picnic.md"), encoding: .utf8)) ?? ""
            return chat.contains("### 🔍 Vera") && !chat.contains("still working") ? chat : nil
        }
        try w.write("Chats/picnic.md", chat + "And drinks?\n")
        try server.waitForRequests(8)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        try #require(server.requests.count == 8)
        // A follow-up: the agents see the previous exchange, then the new message.
        #expect(server.requests[4].user.hasPrefix("[Previous Exchange in this chat]:\nPerson: What should we bring to the picnic?\nAnswer: "))
        #expect(server.requests[4].user.contains("[User Request]:\nAnd drinks?"))
        w.stop()
    }

    @Test func relayWatchResumesAnAskRunKilledBetweenAgentsWhenItStarts() throws {
        let w = try WatchedWorkspace(triggers: Self.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let server = FakeModelServer(delay: 0.4, log: w.scratch.base + "/requests.log")
        try server.start()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        let ask = try spawn(Binaries.relay, ["ask", "-w", w.root, "Plan a picnic"], environment: environment)
        func steps() -> Int { newestRun(inWorkspace: w.root).map { finishedSteps(of: $0, inWorkspace: w.root) } ?? 0 }
        try FileEvents.wait(under: [w.scratch.base], endingWith: ask, "a finished agent") { steps() >= 1 ? () : nil }
        killHard(ask)
        let finishedBefore = steps()
        #expect(finishedBefore >= 1 && finishedBefore < 4)
        try w.start(environment: environment)
        try w.waitFor("the resumed run's fourth agent") { steps() == 4 ? () : nil }
        #expect(server.requests.filter { $0.agent == "Paige" }.count == 1, "Paige finished before the kill and is not asked again")
        #expect(w.log().contains("resuming an interrupted run"))
        w.stop()
    }

    @Test func whileTheModelServerIsDownATriggeredRunWaitsAndRunsWhenItAnswers() throws {
        let w = try WatchedWorkspace(triggers: Self.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let port = FakeModelServer.freePort()
        try w.start(environment: ["RELAY_MODEL_URL": "http://127.0.0.1:\(port)/v1"])
        try w.write("Research/alpacas.md", "Alpacas are smaller than llamas.\n")
        try w.waitForLog("run waits for the model server")
        #expect(!FileManager.default.fileExists(atPath: w.path("Research/alpacas/summary.md")))
        let server = FakeModelServer(port: port, log: w.scratch.base + "/requests.log")
        try server.start()
        let summary = try waitFor("Research/alpacas/summary.md", in: w)
        #expect(summary.hasPrefix("Wren answers"))
        #expect(try w.queue().allSatisfy { $0.state == "done" || $0.state == "running" })
        w.stop()
    }
}

/// The id of the newest run of the workspace at `root`.
func newestRun(inWorkspace root: String) -> String? {
    ((try? FileManager.default.contentsOfDirectory(atPath: root + "/.relay/runs")) ?? []).filter { $0 != "by-trigger" }.sorted().last
}

/// How many agents of run `id` have finished, by its journal's step records.
func finishedSteps(of id: String, inWorkspace root: String) -> Int {
    ((try? String(contentsOfFile: root + "/.relay/runs/\(id)/journal.jsonl", encoding: .utf8)) ?? "")
        .split(separator: "\n").filter { $0.contains("\"type\":\"step\"") }.count
}

/// The id of a run of the workspace at `root` that `path` triggered and whose journal says it
/// finished (its last record: the state every listing derives "done" from).
func finishedRun(triggeredBy path: String, inWorkspace root: String) -> String? {
    let runs = root + "/.relay/runs"
    for id in ((try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? []).sorted() {
        guard let data = FileManager.default.contents(atPath: runs + "/\(id)/run.json"),
              (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["triggerPath"] as? String == path,
              let journal = try? String(contentsOfFile: runs + "/\(id)/journal.jsonl", encoding: .utf8),
              journal.contains("\"type\":\"finished\"") else { continue }
        return id
    }
    return nil
}
