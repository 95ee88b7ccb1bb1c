import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

@Suite struct MentionTests {
    let roster = try! Roster.parse(Array(ScratchWorkspace.relayRoster.utf8), file: "AgentConfiguration.json").agents

    @Test func mentionsMatchNamesAndIdsInAnyCaseAndComeBackInRosterOrder() {
        let found = Mentions.resolve("@WREN and @planner, please", roster: roster)
        #expect(found.agents.map(\.name) == ["Paige", "Wren"])
        #expect(found.unknown.isEmpty)
    }

    @Test func aMentionInsideACodeSpanOrFenceOrAnEmailAddressIsNotOne() {
        #expect(Mentions.resolve("the handle `@Wren` is taken", roster: roster).isEmpty)
        #expect(Mentions.resolve("``code with ` and @Wren`` here", roster: roster).isEmpty)
        #expect(Mentions.resolve("```\n@Wren\n```\nplain", roster: roster).isEmpty)
        #expect(Mentions.resolve("write to wren@example.com", roster: roster).isEmpty)
        #expect(Mentions.resolve("an unclosed `tick then @Wren.", roster: roster).agents.map(\.name) == ["Wren"])
    }

    @Test func anUnknownNameIsReportedWithTheAgentsThereAre() throws {
        let found = Mentions.resolve("@Bob hello", roster: roster)
        #expect(found.unknown == ["Bob"])
        let notice = try #require(found.notice(roster: roster))
        #expect(notice.contains("No agent is called @Bob"))
        for name in ["@Paige", "@Remy", "@Wren", "@Vera"] { #expect(notice.contains(name)) }
    }

    @Test func anAtMentionInAskSendsTheTurnToThatAgentAlone() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("Shorter text.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "@wren make it shorter")
        #expect(manifest.mentioned == ["writer"])
        let events = try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 1)
        #expect(model.received[0].system.hasPrefix("You are Wren."))
        #expect(events.contains { if case .final(_, let text, _) = $0 { return text == "Shorter text." } else { return false } })
    }

    @Test func severalMentionsRunThoseAgentsInRosterOrder() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("a plan"), .text("a draft")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "@Wren and @Paige: a weekend in Lisbon")
        try await scratch.run(engine, manifest.id)
        #expect(model.received.map { String($0.system.prefix(12)) } == ["You are Paig", "You are Wren"])
        #expect(model.received[1].user.contains("[Previous Agent — Paige]:\na plan"))
    }

    @Test func aMentionInACodeSpanLeavesTheWholeRelayToAnswer() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("p"), .text("f"), .text("d"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What does `@Wren` do in a roster?")
        #expect(manifest.mentioned == nil)
        try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 4)
    }

    @Test func anUnknownMentionInAChatFileGetsAClearMessageThereAndAsksNoAgent() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("Chats/team.md", "@Bob can you help?\n")
        let model = TestModel([])
        let engine = scratch.engine(model)
        let run = try #require(try engine.prepare(trigger: "chat", path: "Chats/team.md", hash: scratch.workspace.hash("Chats/team.md").hex))
        let events = try await scratch.run(engine, run.id)
        #expect(model.received.isEmpty)
        let chat = try #require(scratch.contents("Chats/team.md"))
        #expect(chat.contains("No agent is called @Bob in this relay"))
        #expect(chat.contains("@Wren (✍️ writer)"))
        #expect(chat.hasSuffix("write your next message below this line -->\n"), "the turn is closed: the person can write again")
        #expect(events.contains { if case .final(_, let text, _) = $0 { return text.contains("@Bob") } else { return false } })
        #expect(try engine.prepare(trigger: "chat", path: "Chats/team.md", hash: scratch.workspace.hash("Chats/team.md").hex) == nil)
    }

    @Test func aMentionInAChatFileSendsTheTurnToThatAgent() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("Chats/team.md", "@Remy what do llamas eat?\n")
        let model = TestModel([.text("Grass.")])
        let engine = scratch.engine(model)
        let run = try #require(try engine.prepare(trigger: "chat", path: "Chats/team.md", hash: scratch.workspace.hash("Chats/team.md").hex))
        try await scratch.run(engine, run.id)
        #expect(model.received.count == 1)
        #expect(model.received[0].system.hasPrefix("You are Remy."))
    }

    @Test func theEngineAnswersWhichAgentsAMessageMentionsForTheAPI() throws {
        let scratch = try ScratchWorkspace.forRelays()
        let engine = scratch.engine(TestModel([]))
        #expect(try engine.mentions(in: "@vera check this").agents.map(\.id) == ["reviewer"])
        #expect(try engine.mentions(in: "@nobody").unknown == ["nobody"])
    }
}

@Suite struct RoutedRelayTests {
    static func scratch(classifier: Bool = false, maxMessages: Int? = nil) throws -> ScratchWorkspace {
        var chat = #"{"roster": "AgentConfiguration.json", "input": "chat", "mode": "route""#
        if classifier { chat += #", "classifier": true"# }
        if let maxMessages { chat += #", "maxMessages": \#(maxMessages)"# }
        return try ScratchWorkspace.forRelays(roster: Modes.routedRoster, relayJSON: Modes.relayJSON(chat: chat + "}"))
    }

    static func selections(_ events: [RelayEvent]) -> [String] {
        events.compactMap { if case .selected(_, let reason) = $0 { return reason } else { return nil } }
    }

    @Test func aKeywordRuleSendsTheTurnToItsAgentAloneAndTheChatSaysWhy() async throws {
        let scratch = try Self.scratch(classifier: true)
        let model = TestModel([.text("Soft wool, high hills.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "A haiku about llamas, please")
        let events = try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 1, "a rule matched: no classifier call")
        #expect(model.received[0].system.hasPrefix("You are Wren."))
        #expect(Self.selections(events) == ["rule: Wren's keyword 'haiku'"])
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(chat.contains("### ✍️ Wren · writer · selected by rule: Wren's keyword 'haiku'"))
        let transcript = try #require(scratch.contents(manifest.transcriptFile))
        #expect(transcript.contains(#""selectedBy" : "rule: Wren's keyword 'haiku'""#))
    }

    @Test func aPatternRuleMatchesCaseInsensitively() async throws {
        let scratch = try Self.scratch()
        let model = TestModel([.text("Grass and hay.")])
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Find what llamas eat").id)
        #expect(model.received.map { String($0.system.prefix(12)) } == ["You are Remy"])
        #expect(Self.selections(events) == ["rule: Remy's pattern '^find\\b'"])
    }

    @Test func aMentionInARoutedRelayIsItsFirstRule() async throws {
        let scratch = try Self.scratch(classifier: true)
        let model = TestModel([.text("Checked.")])
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "@Vera a poem please").id)
        #expect(model.received.map { String($0.system.prefix(12)) } == ["You are Vera"], "the mention wins over Wren's keyword")
        #expect(Self.selections(events) == ["mention: @Vera"])
    }

    @Test func theClassifierChoosesUnderAnEnumOfTheAgentsNames() async throws {
        let scratch = try Self.scratch(classifier: true)
        let model = TestModel([.text(#"{"agent": "Vera"}"#), .text("Looks right.")])
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Is my plan sound?").id)
        #expect(model.received.count == 2)
        let schema = try #require(model.received[0].options.responseSchema)
        #expect(schema.name == "route")
        #expect(schema.schema["properties"]?["agent"]?["enum"] == ["Paige", "Remy", "Wren", "Vera"])
        #expect(model.received[0].user.contains("- Wren: You are Wren. Write."))
        #expect(model.received[1].system.hasPrefix("You are Vera."))
        #expect(Self.selections(events).first?.hasPrefix("classifier: chose Vera") == true)
    }

    @Test func aClassifierThatNamesNoAgentFallsBackToTheFirst() async throws {
        let scratch = try Self.scratch(classifier: true)
        let model = TestModel([.text("I am not sure."), .text("A plan.")])
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Is my plan sound?").id)
        #expect(model.received[1].system.hasPrefix("You are Paige."))
        #expect(Self.selections(events) == ["fallback: the classifier named no agent; the first agent answers"])
    }

    @Test func withoutRuleOrClassifierTheFirstAgentAnswers() async throws {
        let scratch = try Self.scratch()
        let model = TestModel([.text("A plan.")])
        let engine = scratch.engine(model)
        let events = try await scratch.run(engine, try engine.prepare(ask: "Is my plan sound?").id)
        #expect(model.received.count == 1 && model.received[0].system.hasPrefix("You are Paige."))
        #expect(Self.selections(events) == ["fallback: no mention or rule matched; the first agent answers"])
    }

    @Test func theSelectedAgentGetsItsOwnEarlierExchangesTrimmedToWholePairs() async throws {
        // maxMessages 5 → 4 messages: the two newest of Wren's exchanges, never half of one.
        let scratch = try Self.scratch(maxMessages: 5)
        let model = TestModel([.text("P1"), .text("R1"), .text("P2"), .text("P3"), .text("P4")])
        let engine = scratch.engine(model)
        for message in ["poem one", "find llamas", "poem two", "poem three", "poem four"] {
            try await scratch.run(engine, try engine.prepare(ask: message, conversation: "poems").id)
        }
        let last = try #require(model.received.last)
        #expect(last.messages.map(\.role) == [.system, .user, .assistant, .user, .assistant, .user])
        #expect(last.messages[1...4].map(\.content) == ["poem two", "P2", "poem three", "P3"], "Remy's exchange is not Wren's")
        #expect(last.messages[5].content.contains("[User Request]:\npoem four"))
        // Remy's turn saw Wren's first exchange? No: its own history only (none before).
        #expect(model.received[1].messages.map(\.role) == [.system, .user])
    }

    @Test func historiesAreCountedInMessagesAndRoundedDownToPairs() throws {
        let transcript = """
            {"messages": [
              {"turn": "t1", "role": "user", "text": "a"}, {"turn": "t1", "role": "agent", "agent": {"id": "w"}, "text": "A"},
              {"turn": "t2", "role": "user", "text": "b"}, {"turn": "t2", "role": "agent", "agent": {"id": "w"}, "text": "B"},
              {"turn": "t3", "role": "user", "text": "c"}, {"turn": "t3", "role": "agent", "agent": {"id": "w"}, "text": "C"},
              {"turn": "now", "role": "user", "text": "d"}
            ]}
            """
        let three = RelayRunner.histories(inTranscript: transcript, agents: ["w"], excludingTurn: "now", maxMessages: 3)
        #expect(three["w"] == [RunManifest.Exchange(message: "c", answer: "C")])
        let all = RelayRunner.histories(inTranscript: transcript, agents: ["w"], excludingTurn: "now", maxMessages: 100)
        #expect(all["w"]?.map(\.message) == ["a", "b", "c"])
        #expect(RelayRunner.histories(inTranscript: transcript, agents: ["w"], excludingTurn: "now", maxMessages: 1).isEmpty)
    }

    @Test func aRoutedRunReplaysWithTheSameSelection() async throws {
        let scratch = try Self.scratch(classifier: true)
        let model = TestModel([.text(#"{"agent": "Remy"}"#), .text("Facts.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Tell me something")
        try await scratch.run(engine, manifest.id)
        let box = LockedBox<[RelayEvent]>([])
        let report = try await engine.replay(manifest.id, into: scratch.base + "/replayed") { event in box.mutate { $0.append(event) } }
        #expect(report.matches, "\(report)")
        #expect(Self.selections(box.value).first?.hasPrefix("classifier: chose Remy") == true)
        #expect(FileManager.default.contents(atPath: scratch.base + "/replayed/" + manifest.chatFile) == FileManager.default.contents(atPath: scratch.workspace.root + "/" + manifest.chatFile))
    }
}

@Suite struct ModeValidationTests {
    func failure(_ chat: String, roster: String = ScratchWorkspace.relayRoster) throws -> String {
        let scratch = try ScratchWorkspace.forRelays(roster: roster, relayJSON: Modes.relayJSON(chat: chat))
        do {
            _ = try scratch.engine(TestModel([])).prepare(ask: "hello")
            return ""
        } catch let error as WorkspaceError {
            return error.message
        }
    }

    @Test func anUnknownPlannerIsNamedWithTheFileRelayFieldAndAgents() throws {
        let message = try failure(#"{"roster": "AgentConfiguration.json", "mode": "plan", "planner": "boss"}"#)
        #expect(message.contains("relay.json:"), "\(message)")
        #expect(message.contains("relays.chat") && message.contains("planner"), "\(message)")
        #expect(message.contains("no agent 'boss'") && message.contains("planner, researcher, writer, reviewer"), "\(message)")
    }

    @Test func aFieldOfAnotherModeIsAnErrorNotIgnored() throws {
        let message = try failure(#"{"roster": "AgentConfiguration.json", "maxMessages": 10}"#)
        #expect(message.contains("maxMessages") && message.contains("\"mode\": \"route\""), "\(message)")
        let unknown = try failure(#"{"roster": "AgentConfiguration.json", "mode": "swarm"}"#)
        #expect(unknown.contains("'swarm' is not a relay mode (modes: sequence, route, plan)"), "\(unknown)")
    }

    @Test func aBadRoutePatternNamesTheFileAgentAndField() throws {
        let roster = ScratchWorkspace.relayRoster.replacingOccurrences(of: #""order": 2,"#, with: #""order": 2, "route": {"patterns": ["(unclosed"]},"#)
        let message = try failure(#"{"roster": "AgentConfiguration.json"}"#, roster: roster)
        #expect(message.contains("AgentConfiguration.json:") && message.contains("agent 'writer'") && message.contains("patterns[0]"), "\(message)")
    }
}
