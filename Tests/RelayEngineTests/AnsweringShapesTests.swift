import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// The shapes `relay-eval --configs route,plan` measures: a routed agent that answers alone from
/// its retrieved lines, and plan workers that choose lines for their subtasks under the grammar,
/// with a coordinator that answers from the values of all their lines.
@Suite struct AnsweringShapesTests {
    static let notes = "# Monday\n\nBought oat milk and bread.\nAda's cat is called Miso.\nBen's dog is called Pip.\nThe plumber comes on Friday.\n"

    /// The first value an `answer` schema offers (what SmolLM2 mostly picks).
    static func firstOffered(_ request: ModelRequest) -> String {
        let value = request.options.responseSchema?.schema["properties"]?["answer"]?["enum"]?.arrayValue?.first?.stringValue ?? ""
        return #"{"answer": "\#(value)"}"#
    }

    @Test func aRoutedAgentWithRetrieveAnswersAloneWithAValueOfItsRetrievedLines() async throws {
        let roster = """
            [
              {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Answer from the workspace.", "order": 0,
               "retrieve": 4, "extract": "answer", "tools": []},
              {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Write.", "order": 1, "tools": [],
               "route": {"keywords": ["poem"]}}
            ]
            """
        let scratch = try ScratchWorkspace.forRelays(roster: roster, relayJSON: Modes.relayJSON(chat: #"{"roster": "AgentConfiguration.json", "input": "chat", "mode": "route"}"#))
        try scratch.write("Journal/user/2026-11-02.md", Self.notes)
        let model = TestModel { request in .text(Self.firstOffered(request)) }
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What is Ada's cat called?")
        let events = try await scratch.run(engine, manifest.id)

        // One call: Remy's choice among the values of the lines the engine retrieved for it.
        #expect(model.received.count == 1)
        let request = try #require(model.received.first)
        #expect(request.schemaName == "answer")
        #expect(request.user.contains("Journal/user/2026-11-02.md:4: Ada's cat is called Miso."), "\(request.user)")
        let final = try #require(GroundedRelayTests.finals(events).last)
        #expect(final.hasPrefix("Miso — “Ada's cat is called Miso.”"), "\(final)")
        #expect(final.hasSuffix("(Journal/user/2026-11-02.md:4)"))
        #expect(events.contains { if case .selected(_, let reason) = $0 { return reason.hasPrefix("fallback") } else { return false } })
    }

    @Test func planWorkersChooseLinesForTheirSubtasksAndTheCoordinatorAnswersFromThem() async throws {
        let roster = """
            [
              {"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Plan.", "order": 0, "tools": []},
              {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Choose lines.", "order": 1,
               "retrieve": 4, "extract": "lines", "tools": []},
              {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Answer.", "order": 2, "extract": "answer", "tools": []}
            ]
            """
        let scratch = try ScratchWorkspace.forRelays(roster: roster, relayJSON: Modes.relayJSON(chat: #"{"roster": "AgentConfiguration.json", "input": "chat", "mode": "plan", "#
                                                                           + #""planner": "planner", "worker": "researcher", "coordinator": "writer"}"#))
        try scratch.write("Journal/user/2026-11-02.md", Self.notes)
        let model = TestModel { request in
            switch request.schemaName {
            case "plan": return .text(#"{"subtasks": ["Find the cat's name", "Find the dog's name"]}"#)
            case "lines": return .text(#"{"lines": [1]}"#)
            default: return .text(Self.firstOffered(request))
            }
        }
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What is Ada's cat called?")
        let events = try await scratch.run(engine, manifest.id)

        // Each worker chooses under the lines grammar, for its own subtask.
        let workers = model.received.filter { $0.workerNumber != nil }
        #expect(workers.count == 2)
        for worker in workers {
            #expect(worker.schemaName == "lines")
            #expect(worker.user.contains("answer your subtask"))
        }
        #expect(workers.contains { $0.user.contains("[Your Subtask — 2 of 2]:\nFind the dog's name") })
        #expect(events.filter { if case .workerStarted = $0 { return true } else { return false } }.count == 2, "an extracting worker is announced as a worker")
        // The coordinator chooses among the values of the workers' lines, in plan order, and
        // the answer quotes its line with where it is.
        let coordinator = try #require(model.received.last)
        #expect(coordinator.schemaName == "answer")
        #expect(coordinator.user.contains("[1. Find the cat's name — Remy]:\n- "), "\(coordinator.user)")
        let final = try #require(GroundedRelayTests.finals(events).last)
        #expect(final.hasPrefix("Miso — “Ada's cat is called Miso.”") && final.hasSuffix("(Journal/user/2026-11-02.md:4)"), "\(final)")
    }

    @Test func aSubtaskWithAnInventedNumberOrThatEchoesTheInstructionIsDroppedAndTheDropNamed() async throws {
        let scratch = try PlanRelayTests.scratch()
        let model = TestModel { request in
            if request.schemaName == "plan" {
                return .text(#"{"subtasks": ["Find the cat's name", "The cat weighs 100 kilos.", "This task can be done on one short sentence each."]}"#)
            }
            return .text(request.workerNumber == nil ? "FINAL" : "a result")
        }
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What is Ada's cat called?")
        let events = try await scratch.run(engine, manifest.id)

        #expect(events.contains { if case .planned(0, let subtasks) = $0 { return subtasks == ["Find the cat's name"] } else { return false } })
        #expect(model.received.filter { $0.workerNumber != nil }.count == 1, "one worker, for the one grounded subtask")
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(!chat.contains("100 kilos"), "an invented number does not reach the chat: \(chat)")
        // The drops are named: a note in the group chat, and the planner's cuts in the transcript.
        let notes = events.compactMap { if case .note(let text) = $0 { return text } else { return nil } }
        #expect(notes.contains { $0.hasSuffix("subtask 2 dropped: 100 is in none of the planner's inputs") }, "\(notes)")
        #expect(notes.contains { $0.hasSuffix("subtask 3 dropped: it repeats the planning instruction") })
        let transcript = try JSONValue(parsing: try #require(scratch.contents(manifest.transcriptFile)))
        let planner = try #require(transcript["messages"]?.arrayValue?.first { $0["agent"]?["id"]?.stringValue == "planner" })
        #expect(planner["cuts"]?.arrayValue?.compactMap(\.stringValue) == ["subtask 2 dropped: 100 is in none of the planner's inputs",
                                                                         "subtask 3 dropped: it repeats the planning instruction"])
    }
}
