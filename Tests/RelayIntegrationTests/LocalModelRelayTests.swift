import Foundation
import RelayTestKit
import Testing

/// The template's relays on the real local model of `make model` (llama-server with
/// SmolLM2-135M-Instruct). Skipped, with the reason in the report, where no server answers.
/// One test at a time: `make model` serves two requests at a time (a plan relay's two workers),
/// and runs queued behind each other's on a loaded machine could wait past the client's idle timeout.
@Suite("Relays on the local model, end to end", .serialized,
       .enabled(if: LocalModel.isAnswering, "no model server answers at 127.0.0.1:8080 — run `make model` to run these tests"))
struct LocalModelRelayTests {
    @Test func relayAskRunsTheTemplateRosterAndWritesItsTranscript() throws {
        let s = try ScratchWorkspace.relayInit()
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "Name two things to pack for a day hike."])
        #expect(ask.status == 0, "\(ask.standardError)")
        for agent in ["🔎 Remy", "✍️ Wren", "🔍 Vera"] { #expect(ask.text.contains(agent)) }
        #expect(ask.text.contains("→ handed off to"))
        let chats = try FileManager.default.contentsOfDirectory(atPath: s.path("Chats"))
        let transcript = try #require(chats.first { $0.hasSuffix(".json") })
        let value = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("Chats/" + transcript)))) as? [String: Any]
        let messages = try #require(value?["messages"] as? [[String: Any]])
        #expect(messages.count >= 4, "the person's message and at least three agents'")
        let agentMessages = messages.filter { $0["role"] as? String == "agent" }
        #expect(agentMessages.allSatisfy { (($0["tokens"] as? [String: Any])?["completion"] as? Int ?? 0) > 0 || ($0["text"] as? String ?? "").hasPrefix("Not found") },
                "every agent answered with tokens counted by the server (Remy makes no call when nothing matches)")
        let journal = try #require(s.contents("Journal/agent/\(RelayRunIntegrationTests.today()).md"))
        #expect(journal.contains("chat: "))
        #expect(try run(Binaries.relay, ["runs", "-w", s.root]).text.contains("done"))
    }

    @Test func aQuestionWhoseAnswerIsANameInAJournalNoteGetsThatNameInTheFinalAnswer() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.write("Journal/user/2026-11-02.md", "# Monday\n\nBought oat milk and a new kettle.\nOur new neighbour is called Thessaly Marchbank.\nThe plumber comes on Friday.\n")
        try s.write("Journal/user/2026-11-03.md", "# Tuesday\n\nRain all day. Finished the book about lighthouses.\n")
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "--json", "What is our new neighbour called?"])
        #expect(ask.status == 0, "\(ask.standardError)")
        let final = ask.text.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] as? String == "final" else { return nil }
            return object["text"] as? String
        }.last
        let answer = try #require(final, "no final event in: \(ask.text.suffix(2000))")
        #expect(answer.contains("Thessaly Marchbank"), "the final answer: \(answer)")
        #expect(answer.count < 400, "an answer, not a dump of the notes: \(answer)")
    }

    /// The final answer of `relay ask --json` (the text of the `final` event).
    func finalAnswer(_ question: String, in s: ScratchWorkspace) throws -> String {
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "--json", question])
        #expect(ask.status == 0, "\(ask.standardError)")
        let final = ask.text.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["event"] as? String == "final" else { return nil }
            return object["text"] as? String
        }.last
        return try #require(final, "no final event in: \(ask.text.suffix(2000))")
    }

    @Test func aToDoListQuestionGetsEveryOpenTaskOfTheNotes() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.write("Journal/user/2026-11-02.md", "# Monday\n\n- Bought oat milk.\n- [ ] call the vet about the cat\n")
        try s.write("Journal/user/2026-11-03.md", "# Tuesday\n\nTODO: renew the bike insurance\n- [x] water the ferns\n")
        try s.write("Journal/user/2026-11-04.md", "# Wednesday\n\n- Need to return the ladder to Pim.\n")
        let answer = try finalAnswer("What is still on my to-do list?", in: s)
        for task in ["call the vet about the cat", "renew the bike insurance", "return the ladder to Pim"] {
            #expect(answer.contains(task), "\(task) in: \(answer)")
        }
        #expect(!answer.contains("ferns"), "a task ticked off is done: \(answer)")
    }

    @Test func aQuestionTheNotesCannotAnswerGetsTheWorkspaceDoesNotSayAndNoInventedNumber() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.write("Journal/user/2026-11-02.md", "# Monday\n\nLent my drill to Oskar Brandt.\nMira's number is 0161 555 0142.\n")
        let answer = try finalAnswer("What is Oskar's phone number?", in: s)
        #expect(answer.hasPrefix("The workspace does not say"), "\(answer)")
        #expect(!answer.contains("0142") && !answer.contains("555"), "no digits of another person's number: \(answer)")
    }

    @Test func aPlanRelayCompletesWithTwoParallelWorkers() throws {
        let s = try ScratchWorkspace.relayInit()
        // The template's agents and a planner; SmolLM2 copies the request as its only subtask
        // unless the schema asks for two (`minWorkers`).
        let roster = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("AgentConfiguration.json")))) as? [[String: Any]])
        let planner: [String: Any] = ["id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "order": -1, "tools": [String](),
                                      "systemPrompt": "You are Paige, the Planner. You split a request into small independent subtasks, one per thing the request names."]
        try s.write("AgentConfiguration.json", String(decoding: try JSONSerialization.data(withJSONObject: [planner] + roster), as: UTF8.self))
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path("relay.json")))) as? [String: Any])
        object["relays"] = ["chat": ["roster": "AgentConfiguration.json", "input": "chat", "mode": "plan", "planner": "planner", "worker": "writer",
                                     "coordinator": "writer", "minWorkers": 2, "maxWorkers": 2, "parallel": 2]]
        try s.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        let ask = try run(Binaries.relay, ["ask", "-w", s.root, "--json", "Compare green tea and black tea"])
        #expect(ask.status == 0, "\(ask.standardError)")
        let events = ask.text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        // The schema asks for exactly two subtasks (min and max 2); each gets a worker unless the engine dropped it as
        // ungrounded or an echo of its instruction (SmolLM2 often writes one such), and says so.
        let planned = (events.first { $0["event"] as? String == "planned" }?["subtasks"] as? [Any])?.count ?? 0
        let dropped = events.filter { ($0["event"] as? String) == "note" && (($0["text"] ?? $0["message"]) as? String ?? "").contains("dropped:") }.count
        #expect(planned >= 1 && planned + dropped == 2, "\(ask.text.suffix(2000))")
        #expect(events.filter { $0["event"] as? String == "workerStarted" }.count == planned, "\(ask.text.suffix(2000))")
        #expect(events.filter { $0["event"] as? String == "agentFinished" && $0["worker"] != nil }.count == planned)
        let final = events.last { $0["event"] as? String == "final" }?["text"] as? String ?? ""
        #expect(!final.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    @Test func aFileDroppedInResearchUnderRelayWatchGetsItsSummary() throws {
        let w = try WatchedWorkspace(triggers: WatchRelayIntegrationTests.templateTriggers)
        try w.start(environment: ["RELAY_MODEL_URL": LocalModel.baseURL])
        try w.write("Research/tea.md", "# Tea\n\nGreen tea is steamed soon after picking; black tea is left to oxidise first.\n")
        try w.waitFor("Research/tea/summary.md from the local model", guardSeconds: 600) {
            FileManager.default.fileExists(atPath: w.path("Research/tea/summary.md")) ? () : nil
        }
        let summary = try #require(try? String(contentsOfFile: w.path("Research/tea/summary.md"), encoding: .utf8), "\(w.log().suffix(3000))")
        #expect(!summary.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        #expect(summary.lowercased().contains("tea"), "a summary about the dropped file: \(summary)")
        #expect(FileManager.default.fileExists(atPath: w.path("Chats/research-tea.md")))
        try w.waitUntilQueueIdle(timeout: 600)
        #expect(try w.queue().allSatisfy { $0.state == "done" })
        w.stop()
    }
}

enum LocalModel {
    static let baseURL = ProcessInfo.processInfo.environment["RELAY_MODEL_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8080/v1"

    static var isAnswering: Bool {
        guard let parts = URLComponents(string: baseURL), let port = parts.port else { return false }
        return FakeModelServer.accepts(port)
    }
}
