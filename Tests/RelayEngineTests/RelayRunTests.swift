import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

@Suite struct RelayRunTests {
    @Test func agentThreesPromptHoldsTheRequestAndAgentTwosOutputAndNothingElse() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("PLAN-OUTPUT-1"), .text("FACTS-OUTPUT-2"), .text("ANSWER-3"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Tell me about llamas")
        try await scratch.run(engine, manifest.id)

        let requests = model.received
        #expect(requests.count == 4)
        let third = requests[2]
        // A fresh session: the system prompt and one user message, no history.
        #expect(third.messages.map(\.role) == [.system, .user])
        #expect(third.user == "[User Request]:\nTell me about llamas\n\n[Previous Agent — Remy]:\nFACTS-OUTPUT-2")
        #expect(third.system.hasPrefix("You are Wren. Write."))
        #expect(third.system.contains("The team keeps llamas."), "context.md is read fresh into the system prompt")
        for message in third.messages { #expect(!message.content.contains("PLAN-OUTPUT-1"), "agent 1's output must not reach agent 3") }
        #expect(requests[0].user == "[User Request]:\nTell me about llamas")
        #expect(requests[0].tools.isEmpty, "Paige's roster entry allows no tools")
        #expect(requests[1].tools.map(\.name) == ["read_file", "list_files", "search_files"])
    }

    @Test func aRevisionRerunsTheNamedAgentInAFreshSessionWithWhatWasAskedItsOutputAndTheRequesters() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([
            .text("plan"), .text("facts"), .text("FIRST DRAFT"),
            .tools([TestModel.call("request_revision", ["targetAgentName": "Wren", "revisionRequest": "Add the Andes."])]),
            .text("Needs one fix."),
            .text("SECOND DRAFT with the Andes"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        let events = try await scratch.run(engine, manifest.id)

        let requests = model.received
        #expect(requests.count == 6)
        let revision = requests[5]
        #expect(revision.messages.map(\.role) == [.system, .user])
        #expect(revision.system.hasPrefix("You are Wren."))
        #expect(revision.user == """
            [User Request]:
            Llamas?

            [Your Previous Output]:
            FIRST DRAFT

            [Revision Requested by Vera]:
            Add the Andes.

            [Vera's Output]:
            Needs one fix.
            """)
        let finished = events.compactMap { if case .agentFinished(let message) = $0 { return message } else { return nil } }
        #expect(finished.map(\.agent.name) == ["Paige", "Remy", "Wren", "Vera", "Wren"])
        #expect(finished.last?.revisionRequestedBy == "Vera")
        #expect(events.contains { if case .final(_, let text, _) = $0 { return text == "SECOND DRAFT with the Andes" } else { return false } })
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(chat.contains("### ✍️ Wren · writer · revision requested by Vera"))
        #expect(chat.contains("> Add the Andes."))
    }

    @Test func theFourthRevisionOfATurnIsRefusedByTheEngine() async throws {
        // Wren may ask for revisions too, so a revision can ask for another.
        let scratch = try ScratchWorkspace.forRelays(roster: ScratchWorkspace.relayRoster.replacingOccurrences(of: #""tools": ["write_file", "append_file", "update_context"]"#,
                                                                                         with: #""tools": ["request_revision"]"#))
        func ask(_ target: String, _ id: String) -> ToolCall {
            TestModel.call("request_revision", ["targetAgentName": .string(target), "revisionRequest": .string("fix, \(target)")], id: id)
        }
        let model = TestModel([
            .text("plan"), .text("facts"), .text("draft"),
            .tools([ask("Paige", "a"), ask("Remy", "b"), ask("Wren", "c"), ask("Wren", "d")]), .text("three asks"),
            .text("plan 2"), .text("facts 2"),
            .tools([ask("Remy", "e")]), .text("draft 2"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        let events = try await scratch.run(engine, manifest.id)

        #expect(model.received.count == 9, "three revisions run, not four")
        let decisions: [(accepted: Bool, reason: String?)] = events.compactMap {
            if case .revisionRequested(_, _, _, _, let accepted, let reason) = $0 { return (accepted, reason) } else { return nil }
        }
        #expect(decisions.map(\.accepted) == [true, true, true, false, false])
        #expect(decisions[3].reason?.contains("already requested") == true, "one revision per target and request")
        #expect(decisions[4].reason?.contains("3 revisions per turn") == true)
        // The model saw the refusal as a tool error.
        let wrensTools = model.received[8].messages.filter { $0.role == ChatMessage.Role.tool }.map { $0.content }
        #expect(wrensTools == ["error: refused: the relay allows 3 revisions per turn and 3 have been requested; finish with your own answer"])
        let finished = events.compactMap { if case .agentFinished(let message) = $0 { return message.agent.name } else { return nil } }
        #expect(finished == ["Paige", "Remy", "Wren", "Vera", "Paige", "Remy", "Wren"])
        let transcript = try #require(scratch.contents(Conversation.transcriptPath(forChat: manifest.chatFile)))
        #expect(transcript.contains("error: refused: the relay allows 3 revisions per turn"))
    }

    @Test func aWrittenRevisionLineWorksForModelsThatCannotCallTools() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("REVISION for Wren: shorter please."), .text("short draft")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 5)
        #expect(model.received[4].user.contains("[Revision Requested by Vera]:\nshorter please."))
    }

    @Test func aToolTheAgentLacksIsRefusedAndDoesNothing() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        // Remy may read, not write; a model may still name any tool.
        let model = TestModel([
            .text("plan"),
            .tools([TestModel.call("write_file", ["path": "hacked.md", "content": "x"]), TestModel.call("delete_everything", [:], id: "call_1")]),
            .text("facts"), .text("draft"), .text("APPROVED"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        try await scratch.run(engine, manifest.id)
        let results = model.received[2].messages.filter { $0.role == .tool }.map(\.content)
        #expect(results == [
            "error: Remy may not use write_file (allowed: read_file, list_files, search_files)",
            "error: there is no tool named 'delete_everything' (yours: read_file, list_files, search_files)",
        ])
        #expect(!scratch.exists("hacked.md"))
    }

    @Test func sandboxEscapesThroughToolsAreRefusedWithAClearMessage() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try FileManager.default.createDirectory(atPath: scratch.workspace.root + "/Research", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: scratch.workspace.root + "/Research/leak", withDestinationPath: scratch.base + "/outside")
        let reads = ["../outside/secret.txt", "/etc/passwd", ".relay/replica-id", "Research/leak/secret.txt", "Research/../../outside/secret.txt"]
        let writes: [(String, String)] = [("write_file", "../outside/owned.txt"), ("append_file", "/tmp/owned.txt"), ("write_file", ".relay/evil"),
                                          ("write_file", "Research/leak/owned.txt")]
        var calls = reads.enumerated().map { TestModel.call("read_file", ["path": .string($1)], id: "r\($0)") }
        calls += [TestModel.call("list_files", ["path": ".."], id: "l0"), TestModel.call("search_files", ["query": "secret", "path": "../outside"], id: "s0")]
        let writeCalls = writes.enumerated().map { TestModel.call($1.0, ["path": .string($1.1), "content": "owned", "text": "owned"], id: "w\($0)") }
        let model = TestModel([.text("plan"), .tools(calls), .text("facts"), .tools(writeCalls), .text("draft"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Escape!")
        try await scratch.run(engine, manifest.id)

        let readResults = model.received[2].messages.filter { $0.role == .tool }.map(\.content)
        #expect(readResults.count == reads.count + 2)
        for result in readResults {
            #expect(result.hasPrefix("error: "), "refused: \(result)")
            #expect(!result.contains("secret\n") && !result.contains("root:"), "nothing from outside leaks: \(result)")
        }
        let writeResults = model.received[4].messages.filter { $0.role == .tool }.map(\.content)
        #expect(writeResults.count == writes.count)
        for result in writeResults { #expect(result.hasPrefix("error: "), "refused: \(result)") }
        #expect(!FileManager.default.fileExists(atPath: scratch.base + "/outside/owned.txt"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/owned.txt"))
        #expect(!scratch.exists(".relay/evil"))
        #expect(readResults.contains { $0.contains(".relay") }, "the message names the rule: \(readResults)")
    }

    @Test func writingToolsWriteThroughTheWorkspaceAndUpdateContextKeepsAPersonsEdit() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let root = scratch.workspace.root
        let model = TestModel([
            .text("plan"), .text("facts"),
            // While Wren's model thinks, a person adds a line to context.md with an editor (temp file + rename).
            .act({
                let path = root + "/context.md"
                let edited = (try! String(contentsOfFile: path, encoding: .utf8)) + "\nAda's note: feed them at 6.\n"
                try! edited.write(toFile: path + ".swp", atomically: false, encoding: .utf8)
                rename(path + ".swp", path)
            }, then: .tools([
                TestModel.call("update_context", ["section": "Decisions", "content": "- Llamas stay in the north field."]),
                TestModel.call("write_file", ["path": "Research/llamas/notes.md", "content": "# Llamas\n"], id: "call_1"),
                TestModel.call("append_file", ["path": "Journal/agent/log.md", "text": "- wrote notes"], id: "call_2"),
                TestModel.call("write_file", ["path": "context.md", "content": "clobbered"], id: "call_3"),
            ])),
            .text("done"), .text("APPROVED"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Record the decision")
        try await scratch.run(engine, manifest.id)

        let context = try #require(scratch.contents("context.md"))
        #expect(context.contains("The team keeps llamas."))
        #expect(context.contains("Ada's note: feed them at 6."), "the person's edit survives update_context")
        #expect(context.contains("## Decisions\n\n- Llamas stay in the north field."))
        #expect(!context.contains("clobbered"), "write_file may not replace context.md")
        #expect(scratch.contents("Research/llamas/notes.md") == "# Llamas\n")
        #expect(scratch.contents("Journal/agent/log.md") == "- wrote notes\n")
    }

    @Test func declaredOutputsLandWhereDeclared() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("Research/llama-care.md", "Llamas need shade and fresh water.\n")
        let model = TestModel([.text("plan"), .text("facts"), .text("# Llama care\n\nShade and water."), .text("APPROVED: complete.")])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/llama-care.md", hash: scratch.workspace.hash("Research/llama-care.md").hex))
        try await scratch.run(engine, manifest.id)

        #expect(model.received[0].user.contains("--- Research/llama-care.md ---\nLlamas need shade and fresh water."))
        #expect(scratch.contents("Research/llama-care/summary.md") == "# Llama care\n\nShade and water.\n")
        let journal = try #require(scratch.contents("Journal/agent/\(manifest.localDate).md"))
        #expect(journal.contains("🔍 Vera · research (run \(manifest.id))\n\nAPPROVED: complete.\n"))
        #expect(journal.contains("research on Research/llama-care.md: 4 messages"))
        #expect(scratch.exists("Chats/research-llama-care.md") && scratch.exists("Chats/research-llama-care.json"))
    }

    @Test func longInputsAreCutToTheAgentsBudgetAndTheCutIsMarked() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let huge = String(repeating: "Llamas hum when they are content. ", count: 2_000)  // ~68,000 characters
        let model = TestModel([.text("plan"), .text(huge), .text("draft"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        let events = try await scratch.run(engine, manifest.id)

        let wrenPrompt = model.received[2]
        let characters = wrenPrompt.messages.reduce(0) { $0 + $1.content.utf8.count }
        #expect(characters < 4096 * 3, "the prompt fits the 4,096-token budget at 3 bytes a token (\(characters) bytes)")
        #expect(wrenPrompt.user.contains("[… cut by Relay: "))
        #expect(wrenPrompt.user.contains("of Remy's output left out to fit the 4096-token budget …]"))
        #expect(events.contains { if case .note(let text) = $0 { return text.contains("Remy's output") } else { return false } })
        let transcript = try #require(scratch.contents(Conversation.transcriptPath(forChat: manifest.chatFile)))
        #expect(transcript.contains("\"cuts\""))
    }

    @Test func oneAgentAloneAnswersWithAskAgent() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("Just Wren here.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Hi Wren", agent: "wren")
        try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 1)
        #expect(model.received[0].system.hasPrefix("You are Wren."))
        #expect(throws: RelayError.self) { try engine.prepare(ask: "Hi", agent: "Nobody") }
    }

    @Test func twoRunsAnsweringInTheSameChatAtOnceLoseNeitherTurn() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let answer: TestModel.Step = .text("an answer")
        let first = TestModel([answer, answer, answer, .text("APPROVED one")])
        let second = TestModel([answer, answer, answer, .text("APPROVED two")])
        let engineA = scratch.engine(first), engineB = scratch.engine(second)
        let a = try engineA.prepare(ask: "First question", conversation: "shared")
        let b = try engineB.prepare(ask: "Second question", conversation: "shared")
        // Both runs rewrite the shared chat after every agent (as with a slow, real model),
        // so their rewrites interleave.
        try await RunExecutor.$conversationInterval.withValue(.zero) {
            async let runA: Void = engineA.execute(a.id) { _ in }
            async let runB: Void = engineB.execute(b.id) { _ in }
            _ = try await (runA, runB)
        }
        let chat = try #require(scratch.contents("Chats/shared.md"))
        #expect(chat.contains("<!-- relay:end \(a.id)") && chat.contains("<!-- relay:end \(b.id)"))
        #expect(chat.contains("APPROVED one") && chat.contains("APPROVED two"))
        let transcript = try JSONValue(parsing: try #require(scratch.contents("Chats/shared.json")))
        #expect(transcript["messages"]?.arrayValue?.count == 10)
    }

    @Test func anAgentsModelFieldAsksThatModel() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: ScratchWorkspace.relayRoster.replacingOccurrences(of: #""systemPrompt": "You are Wren. Write.", "order": 2,"#,
                                                                                         with: #""systemPrompt": "You are Wren. Write.", "order": 2, "model": "bigger-model","#))
        let asked = LockedBox<[RelayEvent]>([])
        let model = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])
        let engine = RelayRunner(workspace: scratch.workspace, models: ModelProvider(description: "test") { name in
            asked.mutate { $0.append(.note(name ?? "default")) }
            return model
        })
        let manifest = try engine.prepare(ask: "Llamas?")
        try await scratch.run(engine, manifest.id)
        #expect(asked.value.contains(.note("bigger-model")))
        #expect(asked.value.contains(.note("default")))
    }

    @Test func theEventStreamRunsFromRunStartedToFinalAndEndsWithTheErrorWhenTheModelFails() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let engine = scratch.engine(TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")]))
        let manifest = try engine.prepare(ask: "Llamas?")
        var kinds: [String] = []
        for try await event in engine.run(manifest.id) { kinds.append(event.json["event"]?.stringValue ?? "?") }
        #expect(kinds.first == "runStarted" && kinds.last == "final")
        #expect(kinds.filter { $0 == "agentStarted" }.count == 4)
        #expect(kinds.filter { $0 == "textDelta" }.count >= 4)

        let failing = scratch.engine(TestModel([.text("plan"), .fail(LanguageModelError(.httpStatus, "HTTP 500 from the server", status: 500))]))
        let second = try failing.prepare(ask: "Again?")
        var last: RelayEvent?
        var failure: RelayError?
        do {
            for try await event in failing.run(second.id) { last = event }
            Issue.record("the stream should end with the model's error")
        } catch let error as RelayError {
            failure = error
        }
        // One error, the engine's: it names the agent and the model; the model's error is its cause.
        let error = try #require(failure)
        #expect(error.code == .model && error.modelCause?.status == 500)
        #expect(error.message == "🔎 Remy got no answer from test model (test double): HTTP 500 from the server", "\(error.message)")
        #expect(last == .error(runID: second.id, message: error.message))
    }

    @Test func updateContextReplacesOnlyItsSection() {
        let text = "# Context\n\nIntro.\n\n## Decisions\n\nold decision\n\n### Detail\n\nkept? no, part of it\n\n## People\n\nAda\n"
        let updated = AgentToolbox.replacingSection(in: text, heading: "Decisions", content: "new decision")
        #expect(updated == "# Context\n\nIntro.\n\n## Decisions\n\nnew decision\n\n## People\n\nAda\n")
        let added = AgentToolbox.replacingSection(in: "# Context\n\nIntro.\n", heading: "Open questions", content: "- none")
        #expect(added == "# Context\n\nIntro.\n\n## Open questions\n\n- none\n")
        let last = AgentToolbox.replacingSection(in: "## People\n\nAda\n", heading: "people", content: "Ada\nGrace")
        #expect(last == "## People\n\nAda\nGrace\n")
    }
}
