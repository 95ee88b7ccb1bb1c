import Foundation
import RelayTestKit
import Testing

/// The real `relay` binary running a plan relay against the fake model server (a test double
/// that logs every request): Paige plans three subtasks, Remy works on them two at a time, Wren
/// writes the answer. The server is slow on the second subtask the first time it is asked.
@Suite struct PlanRelayIntegrationTests {
    func usePlanRelay(_ s: ScratchWorkspace) throws {
        try s.useFourAgentRoster()
        let data = try Data(contentsOf: URL(fileURLWithPath: s.path("relay.json")))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw CocoaError(.fileReadCorruptFile) }
        object["relays"] = ["chat": ["roster": "AgentConfiguration.json", "input": "chat", "mode": "plan", "coordinator": "writer", "parallel": 2]]
        try s.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self))
    }

    /// The steps of run `id` whose model reply is in its journal.
    func answeredSteps(_ s: ScratchWorkspace, _ id: String) -> Set<Int> {
        let journal = (try? String(contentsOfFile: s.path(".relay/runs/\(id)/journal.jsonl"), encoding: .utf8)) ?? ""
        return Set(journal.split(separator: "\n").compactMap { line -> Int? in
            guard line.contains("\"type\":\"response\""), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["step"] as? Int
        })
    }

    @Test func killNineDuringAFanOutThenResumeRepeatsNoCallOfAFinishedWorker() throws {
        let s = try ScratchWorkspace.relayInit()
        try usePlanRelay(s)
        let server = FakeModelServer(log: s.base + "/requests.log")
        try server.start()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        let ask = try spawn(Binaries.relay, ["ask", "-w", s.root, "--json", "Compare three llama breeds"], errorLog: s.base + "/ask.log", environment: environment)
        // Workers 1 and 3 answer at once; worker 2 (step 2) is still being answered when the relay is killed.
        let runID = try FileEvents.wait(under: [s.base], endingWith: ask, "the plan and workers 1 and 3 answered") {
            newestRun(inWorkspace: s.root).flatMap { answeredSteps(s, $0).isSuperset(of: [0, 1, 3]) ? $0 : nil }
        }
        killHard(ask)
        #expect(answeredSteps(s, runID) == [0, 1, 3], "killed in the fan-out: the plan and workers 1 and 3 answered, worker 2 not")

        let resumed = try run(Binaries.relay, ["resume", "-w", s.root, runID], environment: environment)
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let users = server.requests.map(\.user)
        #expect(users.filter { $0.contains("Split the request") }.count == 1, "the plan was not asked again")
        #expect(users.filter { $0.contains("[Your Subtask — 1 of 3]:\nfirst part") }.count == 1, "worker 1 finished before the kill: asked once")
        #expect(users.filter { $0.contains("[Your Subtask — 3 of 3]:\nthird part") }.count == 1, "worker 3 finished before the kill: asked once")
        #expect(users.filter { $0.contains("[Your Subtask — 2 of 3]:\nsecond part (slow)") }.count == 2, "worker 2 was in flight: asked again")
        #expect(users.filter { $0.contains("Workers — results in plan order") }.count == 1)

        let chat = try #require(s.contents("Chats/\(RelayRunIntegrationTests.today())-compare-three-llama-breeds.md"))
        let marks = ["> Subtask 1: first part", "> Subtask 2: second part (slow)", "> Subtask 3: third part", "### ✍️ Wren"].map { chat.range(of: $0)?.lowerBound }
        #expect(marks.allSatisfy { $0 != nil } && marks.map { $0! } == marks.map { $0! }.sorted(), "workers in plan order, then the answer: \(chat)")
        #expect(!chat.contains("still working"))

        server.stop()
        let replay = try run(Binaries.relay, ["replay", "-w", s.root, runID, "--into", s.base + "/replayed"])
        #expect(replay.status == 0, "\(replay.text) \(replay.standardError)")
        #expect(replay.text.contains("5 of 5 model requests as recorded"), "\(replay.text)")
        let path = "Chats/\(RelayRunIntegrationTests.today())-compare-three-llama-breeds.md"
        #expect(FileManager.default.contents(atPath: s.base + "/replayed/" + path) == FileManager.default.contents(atPath: s.path(path)))
    }
}
