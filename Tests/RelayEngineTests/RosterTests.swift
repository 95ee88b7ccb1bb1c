import Foundation
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

@Suite struct RosterTests {
    func problem(_ roster: String) -> String {
        do {
            _ = try Roster.parse(Array(roster.utf8), file: "AgentConfiguration.json")
            return "no error"
        } catch let error as WorkspaceError {
            #expect(error.code == .invalidInput)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    let good = ##"{"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "Write.", "order": 0"##

    @Test func theSeedsRosterFormatLoadsUnchangedInOrder() throws {
        let seed = """
            [{"id": "reviewer", "name": "Reinie", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "Review.", "order": 3},
             {"id": "architect", "name": "Andrea", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "Plan.", "order": 0},
             {"id": "coder", "name": "Carmen", "emoji": "💻", "color": "#2ECC71", "systemPrompt": "Code.", "order": 2},
             {"id": "builder", "name": "Barb", "emoji": "🧱", "color": "#E67E22", "systemPrompt": "Build.", "order": 1}]
            """
        let roster = try Roster.parse(Array(seed.utf8), file: "AgentConfiguration.json")
        #expect(roster.agents.map(\.name) == ["Andrea", "Barb", "Carmen", "Reinie"])
        #expect(roster.agents[0].allowedTools == AgentTool.defaultTools)
        #expect(roster.agent(named: "CARMEN")?.id == "coder")
    }

    @Test func theTemplateRosterIsValid() throws {
        let file = try #require(WorkspaceTemplate.embedded.files.first { $0.path == "AgentConfiguration.json" })
        let roster = try Roster.parse(file.bytes, file: "AgentConfiguration.json")
        #expect(roster.agents.map(\.name) == ["Remy", "Wren", "Vera"])
        #expect(roster.agents.map(\.extract) == [.lines, .answer, .verdict])
        #expect(roster.agents.last?.isReviewer == true)
        let config = try #require(WorkspaceTemplate.embedded.files.first { $0.path == "relay.json" })
        let relays = try RelayConfiguration.parse(config.bytes, file: "relay.json")
        #expect(relays.relays.map(\.name) == ["chat", "research"])
        #expect(relays.relay(named: "research")?.overrides["writer"]?.output == DeclaredOutput(.write, "Research/{name}/summary.md"))
        #expect(relays.relay(named: "chat")?.input == .chat)
        #expect(relays.relay(named: "research")?.overrides["researcher"]?.extract == .sentences)
        #expect(relays.relay(named: "research")?.overrides["researcher"]?.output == DeclaredOutput(.context, "Research"))
    }

    @Test func theRelayFieldsOfIssue17NameTheAgentAndFieldWhenWrong() {
        #expect(problem("[\(good), \"extract\": \"summary\"}]").contains("agent 'writer', field extract: 'summary' is not an extraction (extractions: sentences, lines, verdict, answer)"))
        #expect(problem("[\(good), \"role\": \"boss\"}]").contains("agent 'writer', field role: 'boss' is not a role (roles: work, review)"))
        #expect(problem("[\(good), \"retrieve\": 500}]").contains("agent 'writer', field retrieve"))
        #expect(problem("[\(good), \"grounding\": \"off\"}]").contains("agent 'writer', field grounding"))
        #expect(problem("[\(good), \"extract\": \"lines\"}]").contains("AgentConfiguration.json: agent 'writer': \"extract\": \"lines\" chooses among the lines retrieved"))
        #expect(problem("[\(good), \"output\": {\"context\": \"## Research\"}}]").contains("field output.context: '## Research' is not a section heading"))
    }

    @Test func errorsNameTheFileTheLineTheAgentAndTheField() {
        #expect(problem("[\(good), \"tools\": [\"read_file\", \"browse\"]}]")
            == "AgentConfiguration.json:1:1: agent 'writer', field tools: tools[1]: unknown tool 'browse' (tools: read_file, list_files, search_files, write_file, append_file, update_context, request_revision)"
            || problem("[\(good), \"tools\": [\"read_file\", \"browse\"]}]").contains("agent 'writer', field tools: tools[1]: unknown tool 'browse'"))
        #expect(problem("[\(good), \"colour\": \"red\"}]").contains("agent 'writer', field colour: unknown field 'colour'"))
        #expect(problem("[\(good)}, \(good)}]").contains("agent 'writer', field id: duplicate id 'writer'"))
        #expect(problem(#"[{"id": "a", "name": "A", "emoji": "x", "color": "red", "systemPrompt": "p", "order": 0}]"#)
            .contains("AgentConfiguration.json:1:50: agent 'a', field color: 'red' is not a colour"))
        #expect(problem(##"[{"id": "a", "name": "A", "emoji": "x", "color": "#000000", "order": 0}]"##).contains("agent 'a': missing field 'systemPrompt'"))
        #expect(problem(##"[{"id": "a", "name": "A", "emoji": "x", "color": "#000000", "systemPrompt": "p", "order": 1.5}]"##).contains("agent 'a', field order"))
        #expect(problem("[\(good), \"output\": {\"write\": \"../x.md\"}}]").contains("field output.write: '../x.md' must not contain '..'"))
        #expect(problem("[\(good), \"output\": {\"write\": \"Research/{title}.md\"}}]").contains("'{title}' is not a placeholder"))
        #expect(problem("[\(good), \"output\": {\"write\": \"a.md\", \"append\": \"b.md\"}}]").contains("give exactly one of"))
        #expect(problem("[]").contains("the roster has no agents"))
        #expect(problem("{}").contains("AgentConfiguration.json:1:1: the document must be an array of objects"))
        #expect(problem("[\(good)").contains("AgentConfiguration.json:1:"))
        let twoLines = "[\n  \(good),\n   \"tokenBudget\": 100}\n]"
        #expect(problem(twoLines).contains("AgentConfiguration.json:3:19: agent 'writer', field tokenBudget"))
    }

    @Test func relayJSONOverridesNameTheirAgentAndField() throws {
        let roster = "[\(good)}]"
        func relayProblem(_ json: String) -> String {
            do {
                let configuration = try RelayConfiguration.parse(Array(json.utf8), file: "relay.json")
                let relay = configuration.relays[0]
                _ = try Roster.parse(Array(roster.utf8), file: "AgentConfiguration.json", overrides: relay.overrides)
                return "no error"
            } catch let error as WorkspaceError { return error.message } catch { return "\(error)" }
        }
        #expect(relayProblem(#"{"relays": {"r": {"agents": {"nobody": {"model": "x"}}}}}"#).contains("relay.json:1:40: relays.r.agents.nobody: no agent 'nobody' in AgentConfiguration.json (its agents: writer)"))
        #expect(relayProblem(#"{"relays": {"r": {"input": "email"}}}"#).contains("relays.r.input: 'email' is not an input kind (chat, file)"))
        #expect(relayProblem(#"{"relays": {"r": {"roster": "a.json", "colour": 1}}}"#).contains("unknown field 'colour'"))
        #expect(relayProblem(#"{"relays": {"r": {"agents": {"writer": {"tools": ["write_file"]}}}}}"#) == "no error")
    }

    @Test func anInvalidRosterSavedWhileTheDaemonRunsKeepsTheLastGoodOneAndSaysWhy() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let warnings = LockedBox<[RelayEvent]>([])
        let keeper = RosterKeeper { warning in warnings.mutate { $0.append(.note(warning)) } }
        var engine = scratch.engine(TestModel([.text("1"), .text("2"), .text("3"), .text("4"), .text("5"), .text("6"), .text("7"), .text("8")]))
        engine.rosterKeeper = keeper
        let first = try engine.prepare(ask: "first")
        #expect(first.roster.count == 4)
        try scratch.write("AgentConfiguration.json", "[{\"id\": \"broken\"")
        let second = try engine.prepare(ask: "second")
        #expect(second.roster == first.roster)
        let note = try #require(second.inputNote)
        #expect(note.contains("AgentConfiguration.json:1:"))
        #expect(note.contains("using the last valid roster of relay 'chat'"))
        #expect(warnings.value.count == 1)
        // Without a keeper (relay ask), an invalid roster is an error.
        #expect(throws: WorkspaceError.self) { try scratch.engine(TestModel([])).prepare(ask: "third") }
    }
}
