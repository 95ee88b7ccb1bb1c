import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// Plan relays: Paige plans, Remy works (one session per subtask, in parallel), Wren coordinates.
@Suite struct PlanRelayTests {
    static let roster = """
        [
          {"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Plan.", "order": 0, "grounding": false},
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Find facts.", "order": 1, "grounding": false,
           "tools": ["read_file", "write_file", "request_revision"]},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Write.", "order": 2, "grounding": false}
        ]
        """

    static func scratch(_ extra: String = "", roster: String = PlanRelayTests.roster) throws -> ScratchWorkspace {
        try ScratchWorkspace.forRelays(roster: roster, relayJSON: Modes.relayJSON(chat: #"{"roster": "AgentConfiguration.json", "input": "chat", "mode": "plan""# + extra + "}"))
    }

    static let plan = #"{"subtasks": ["alpha part", "beta part", "gamma part"]}"#

    /// Plans three subtasks; worker 1 answers only after worker 2 has finished.
    static func outOfOrderModel() -> TestModel {
        let secondDone = Gate()
        return TestModel { request in
            if request.schemaName == "plan" { return .gated(label: "plan", then: .text(Self.plan)) }
            switch request.workerNumber {
            case 1: return .gated(after: secondDone, label: "worker 1", then: .text("RESULT-1 alpha"))
            case 2: return .gated(opens: secondDone, label: "worker 2", then: .text("RESULT-2 beta"))
            case 3: return .gated(label: "worker 3", then: .text("RESULT-3 gamma"))
            default: return .gated(label: "coordinator", then: .text("FINAL ANSWER"))
            }
        }
    }

    @Test func workersThatFinishOutOfOrderReachTheCoordinatorInPlanOrder() async throws {
        let scratch = try Self.scratch()
        let model = Self.outOfOrderModel()
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Compare three llama breeds")
        let events = try await scratch.run(engine, manifest.id)

        #expect(model.finished.firstIndex(of: "worker 2")! < model.finished.firstIndex(of: "worker 1")!, "worker 2 finished first")
        let planRequest = try #require(model.received.first)
        #expect(planRequest.options.responseSchema?.schema["properties"]?["subtasks"]?["maxItems"] == 4)
        let coordinator = try #require(model.received.last)
        #expect(coordinator.system.hasPrefix("You are Wren."))
        let user = coordinator.user
        let one = try #require(user.range(of: "RESULT-1")), two = try #require(user.range(of: "RESULT-2")), three = try #require(user.range(of: "RESULT-3"))
        #expect(one.lowerBound < two.lowerBound && two.lowerBound < three.lowerBound)
        #expect(user.contains("[1. alpha part — Remy]:"))
        // Each worker: a fresh session with the request and its one subtask, nothing of the others.
        let second = try #require(model.received.first { $0.workerNumber == 2 })
        #expect(second.messages.map(\.role) == [.system, .user])
        #expect(second.user.contains("[User Request]:\nCompare three llama breeds") && second.user.contains("[Your Subtask — 2 of 3]:\nbeta part"))
        #expect(!second.user.contains("alpha part") && !second.user.contains("gamma part"))
        #expect(second.tools.map(\.name) == ["read_file"], "workers read; they neither write nor ask for revisions")

        #expect(events.contains { if case .planned(0, let subtasks) = $0 { return subtasks == ["alpha part", "beta part", "gamma part"] } else { return false } })
        let started = events.compactMap { if case .workerStarted(let step, let worker, 3, _, _) = $0 { return step * 10 + worker } else { return nil } }
        #expect(Set(started) == [11, 22, 33], "worker n is step n")
        #expect(events.contains { if case .final(_, let text, _) = $0 { return text == "FINAL ANSWER" } else { return false } })

        // The transcript and chat hold the workers in plan order, with their subtasks.
        let transcript = try JSONValue(parsing: try #require(scratch.contents(manifest.transcriptFile)))
        let workers = try #require(transcript["messages"]?.arrayValue).compactMap { $0["worker"]?.intValue }
        #expect(workers.sorted() == [1, 2, 3])
        let chat = try #require(scratch.contents(manifest.chatFile))
        let order = ["> Subtask 1: alpha part", "> Subtask 2: beta part", "> Subtask 3: gamma part", "### ✍️ Wren"].map { chat.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted(), "\(chat)")
    }

    @Test func aPlanRunReplaysByteForByteAlthoughItsWorkersFinishedOutOfOrder() async throws {
        let scratch = try Self.scratch()
        let engine = scratch.engine(Self.outOfOrderModel())
        let manifest = try engine.prepare(ask: "Compare three llama breeds")
        try await scratch.run(engine, manifest.id)
        let report = try await engine.replay(manifest.id, into: scratch.base + "/replayed")
        #expect(report.matches, "\(report)")
        #expect(report.requests.count == 5)
        for file in [manifest.chatFile, manifest.transcriptFile] {
            #expect(FileManager.default.contents(atPath: scratch.base + "/replayed/" + file) == FileManager.default.contents(atPath: scratch.workspace.root + "/" + file))
        }
    }

    @Test func aFanOutInterruptedByAFailingWorkerResumesWithoutAskingFinishedWorkersAgain() async throws {
        let scratch = try Self.scratch()
        let firstDone = Gate()
        let failing = TestModel { request in
            if request.schemaName == "plan" { return .text(Self.plan) }
            switch request.workerNumber {
            case 1: return .gated(opens: firstDone, label: "worker 1", then: .text("RESULT-1"))
            case 2: return .gated(after: firstDone, label: "worker 2", then: .fail(LanguageModelError(.unreachable, "test model: told to fail (worker 2)")))
            default: return .gated(after: Gate(), label: "never", then: .text("unexpected"))
            }
        }
        let engine = scratch.engine(failing)
        let manifest = try engine.prepare(ask: "Compare three llama breeds")
        await #expect(throws: RelayError.self) { try await scratch.run(engine, manifest.id) }

        let healthy = TestModel { request in
            .text(request.workerNumber.map { "RESULT-\($0)" } ?? "FINAL")
        }
        try await scratch.run(scratch.engine(healthy), manifest.id)
        #expect(!healthy.received.contains { $0.schemaName == "plan" }, "the plan is served from the journal")
        #expect(!healthy.received.contains { $0.workerNumber == 1 }, "worker 1 had finished: not asked again")
        #expect(healthy.received.compactMap(\.workerNumber).sorted() == [2, 3])
        #expect(healthy.received.last?.user.contains("RESULT-1") == true)
    }

    @Test func aWorkerTryingToStartWorkersIsRefusedWithItsTypedError() async throws {
        let scratch = try Self.scratch()
        let spawn = TestModel.call("request_revision", ["targetAgentName": "Paige", "revisionRequest": "plan my part into subtasks"])
        let model = TestModel { request in
            if request.schemaName == "plan" { return .text(#"{"subtasks": ["only part"]}"#) }
            if request.workerNumber == 1 {
                let refused = request.messages.contains { $0.role == .tool }
                return refused ? .text("RESULT after refusal") : .tools([spawn])
            }
            return .text("FINAL")
        }
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Llamas?").id)
        let refusals = events.compactMap { if case .refused(1, _, let error) = $0 { return error } else { return nil } }
        #expect(refusals.map(\.code) == [.workerCannotSpawn])
        let retry = try #require(model.received.last { $0.workerNumber == 1 })
        #expect(retry.messages.last?.content.contains("workers cannot start workers") == true)
        #expect(model.received.count == 4, "plan, the worker's two rounds, the coordinator: nobody else ran")
        #expect(!model.received.contains { $0.system.hasPrefix("You are Paige.") && $0.schemaName != "plan" })
    }

    @Test func minWorkersMakesThePlannersSchemaAskForThatManyAndRepeatedSubtasksAreOneWorker() async throws {
        let scratch = try Self.scratch(#", "minWorkers": 2"#)
        let model = TestModel { request in
            if request.schemaName == "plan" { return .text(#"{"subtasks": ["Describe llamas", "describe llamas", "Describe alpacas"]}"#) }
            return .text(request.workerNumber.map { "RESULT-\($0)" } ?? "FINAL")
        }
        let engine = scratch.engine(model)
        try await scratch.run(engine, try engine.prepare(ask: "Compare llamas and alpacas").id)
        let schema = try #require(model.received.first?.options.responseSchema?.schema["properties"]?["subtasks"])
        #expect(schema["minItems"] == 2 && schema["maxItems"] == 4)
        #expect(model.received.compactMap(\.workerNumber).sorted() == [1, 2])
        #expect(model.received.contains { $0.user.contains("[Your Subtask — 2 of 2]:\nDescribe alpacas") })
    }

    @Test func morePlannedSubtasksThanMaxWorkersAreRefusedBeforeAnyWorkerRuns() async throws {
        let scratch = try Self.scratch(#", "maxWorkers": 2"#)
        let model = TestModel { _ in .text(Self.plan) }  // a server that ignored the schema's maxItems
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        let error = await #expect(throws: RelayError.self) { try await scratch.run(engine, manifest.id) }
        #expect(error?.code == .tooManySubtasks)
        #expect(error?.message.contains("planned 3 subtasks and relay 'chat' allows 2") == true, "\(String(describing: error))")
        #expect(model.received.count == 1)
    }

    @Test func aTurnPastItsModelCallCapIsRefusedWithItsTypedError() async throws {
        let scratch = try Self.scratch(#", "maxCalls": 3, "parallel": 1"#)
        let model = TestModel { request in .text(request.schemaName == "plan" ? Self.plan : "RESULT") }
        let engine = scratch.engine(model)
        let error = await #expect(throws: RelayError.self) { try await scratch.run(engine, try engine.prepare(ask: "Llamas?").id) }
        #expect(error?.code == .modelCallCap)
        #expect(model.received.count == 3, "the fourth call was not made")
    }

    @Test func anAgentWhosePromptCannotFitItsBudgetIsRefusedBeforeAnyCall() async throws {
        let long = String(repeating: "Always be thorough. ", count: 120)
        let roster = Self.roster.replacingOccurrences(of: #""systemPrompt": "You are Wren. Write.", "order": 2,"#,
                                                      with: #""systemPrompt": "You are Wren. \#(long)", "order": 2, "tokenBudget": 1024,"#)
        let scratch = try Self.scratch(roster: roster)
        let model = TestModel { _ in .text(Self.plan) }
        let engine = scratch.engine(model)
        let error = await #expect(throws: RelayError.self) { try await scratch.run(engine, try engine.prepare(ask: "Llamas?").id) }
        #expect(error?.code == .overBudget)
        #expect(error?.message.contains("agent 'writer' (the coordinator of relay 'chat')") == true, "\(String(describing: error))")
        #expect(model.received.isEmpty)
    }

    @Test func theCoordinatorGetsTheWorkersResultsCutToFitWithTheCutVisible() async throws {
        let scratch = try Self.scratch()
        let long = (1...900).map { "fact\($0)" }.joined(separator: " ")
        let model = TestModel { request in
            if request.schemaName == "plan" { return .text(Self.plan) }
            return .text(request.workerNumber.map { "RESULT-\($0) " + long } ?? "FINAL")
        }
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Llamas?").id)
        let coordinator = try #require(model.received.last)
        #expect(coordinator.user.contains("[… cut by Relay:") && coordinator.user.contains("of worker 3's result left out"))
        #expect(["RESULT-1", "RESULT-2", "RESULT-3"].allSatisfy(coordinator.user.contains), "every worker keeps its share")
        let estimate = FocusedPrompt.estimate(coordinator.system) + FocusedPrompt.estimate(coordinator.user) + (coordinator.options.maxTokens ?? 0)
        #expect(estimate <= 4096)
        let finished = events.compactMap { if case .agentFinished(let message) = $0, message.agent.id == "writer" { return message } else { return nil } }
        #expect(finished.first?.cuts.contains { $0.hasPrefix("worker 1's result:") } == true)
    }
}
