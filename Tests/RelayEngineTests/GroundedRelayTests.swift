import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// Issue 17: the engine keeps small models honest — the grounding check, retrieval, extraction
/// of numbered sentences in window-sized chunks, knowledge kept in context.md, the answer that
/// reaches the person, and a chat's previous exchange. The model is a test double (TestModel).
@Suite struct GroundedRelayTests {
    /// A writer (grounded) and a reviewer.
    static let writerAndReviewer = """
        [
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Answer.", "order": 0, "tools": []},
          {"id": "reviewer", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "You are Vera. Review.", "order": 1,
           "role": "review", "tools": ["request_revision"]}
        ]
        """

    static func finals(_ events: [RelayEvent]) -> [String] {
        events.compactMap { if case .final(_, let text, _) = $0 { return text } else { return nil } }
    }

    static func groundings(_ events: [RelayEvent]) -> [AgentMessage.GroundingNote] {
        events.compactMap { if case .grounding(_, _, let note) = $0 { return note } else { return nil } }
    }

    // MARK: The grounding check

    @Test func anInventedNumberAndNameAreFlaggedARevisionIsRequestedWithTheListAndTheTranscriptShowsIt() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer)
        let model = TestModel([
            .text("The bridge cost 9.9 million crowns and Karl Jensen leads it."),
            .text("The bridge cost 4.2 million crowns and Oksana Pell leads it."),
            .text("APPROVED"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "The bridge cost 4.2 million crowns; Oksana Pell leads it. Who leads it and what did it cost?")
        let events = try await scratch.run(engine, manifest.id)

        let notes = Self.groundings(events)
        #expect(notes.count == 1)
        #expect(notes.first?.action == .revisionRequested)
        #expect(Set(notes.first?.unsupported ?? []).isSuperset(of: ["9.9", "Karl Jensen"]) || (notes.first?.unsupported ?? []).contains { $0.contains("Karl") })
        let revision = model.received[1]
        #expect(revision.user.contains("[Revision Requested by Relay's grounding check]"))
        #expect(revision.user.contains("Karl Jensen"))
        #expect(revision.user.contains("[Your Previous Output]:\nThe bridge cost 9.9 million"))
        #expect(Self.finals(events) == ["The bridge cost 4.2 million crowns and Oksana Pell leads it."])
        let transcript = try #require(scratch.contents(manifest.transcriptFile))
        #expect(transcript.contains("\"grounding\""))
        #expect(transcript.contains("Karl Jensen"))
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(chat.contains("Relay's check"))
        #expect(chat.contains("revision requested by Relay's check"))
    }

    @Test func anOutputFullySupportedByItsInputsPassesUntouched() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer)
        let answer = "Oksana Pell leads it; it cost 4,200 crowns on 12 March 2024."
        let model = TestModel([.text(answer), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "The bridge cost 4200 crowns on 2024-03-12 and Oksana Pell leads it. Summarise.")
        let events = try await scratch.run(engine, manifest.id)
        #expect(Self.groundings(events).isEmpty)
        #expect(model.received.count == 2)
        #expect(Self.finals(events) == [answer])
    }

    @Test func whatTheRevisionStillCannotSupportIsRemovedAndTheRemovalIsMarked() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer)
        let model = TestModel([
            .text("Oksana Pell leads it. The budget is 77 million."),
            .text("Oksana Pell leads it. The budget is 77 million."),
            .text("APPROVED"),
        ])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Oksana Pell leads the bridge. Who leads it?")
        let events = try await scratch.run(engine, manifest.id)
        let notes = Self.groundings(events)
        #expect(notes.map(\.action) == [.revisionRequested, .removed])
        let final = try #require(Self.finals(events).first)
        #expect(final.contains("Oksana Pell leads it."))
        #expect(!final.contains("77"))
        #expect(final.contains("Relay removed 1 statement"))
    }

    @Test func anAgentWithGroundingOffMayInvent() async throws {
        let roster = Self.writerAndReviewer.replacingOccurrences(of: #""tools": []}"#, with: #""tools": [], "grounding": false}"#)
        let scratch = try ScratchWorkspace.forRelays(roster: roster)
        let model = TestModel([.text("Call the grey cat Pebble Moonbeam."), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "A name for a grey cat?")
        let events = try await scratch.run(engine, manifest.id)
        #expect(Self.groundings(events).isEmpty)
        #expect(Self.finals(events) == ["Call the grey cat Pebble Moonbeam."])
    }

    // MARK: The answer the person gets

    @Test func theFinalAnswerIsTheWritersTextNotTheReviewersVerdict() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer)
        let model = TestModel([.text("Llamas hum."), .text("APPROVED — it answers the question.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Do llamas hum?")
        let events = try await scratch.run(engine, manifest.id)
        #expect(Self.finals(events) == ["Llamas hum."])
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(chat.contains("### 🔍 Vera · reviewer · verdict"))
        // The turn's last section is the answer.
        let block = chat.components(separatedBy: "<!-- relay:end").first ?? ""
        let lastSection = block.components(separatedBy: "\n### ").last ?? ""
        #expect(lastSection.hasPrefix("💬 Answer · ✍️ Wren"))
        #expect(lastSection.contains("Llamas hum."))
    }

    @Test func theFinalAnswerIsTheWritersRevisedTextAfterARevision() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer)
        let model = TestModel([.text("Llamas hum loudly always."), .text("REVISION for Wren: say it more simply."), .text("Llamas hum.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Do llamas hum?")
        let events = try await scratch.run(engine, manifest.id)
        #expect(Self.finals(events) == ["Llamas hum."])
        let transcript = try #require(scratch.contents(manifest.transcriptFile))
        let value = try JSONValue(parsing: transcript)
        let answers = (value["messages"]?.arrayValue ?? []).filter { $0["answer"] == .bool(true) }
        #expect(answers.count == 1)
        #expect(answers.first?["text"]?.stringValue == "Llamas hum.")
    }

    @Test func aVerdictUnderItsSchemaIsShownAsAVerdictAndCanAskForARevision() async throws {
        let roster = Self.writerAndReviewer.replacingOccurrences(of: #""role": "review","#, with: #""role": "review", "extract": "verdict","#)
        let scratch = try ScratchWorkspace.forRelays(roster: roster)
        let model = TestModel([.text("Llamas hum."), .text(#"{"check": "too short", "verdict": "revise", "who": "Wren"}"#), .text("Llamas hum softly.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Do llamas hum?")
        let events = try await scratch.run(engine, manifest.id)
        let schema = try #require(model.received[1].options.responseSchema)
        #expect(schema.schema.jsonText.contains("\"Wren\""))
        #expect(model.received[1].tools.isEmpty)
        let verdict = events.compactMap { if case .agentFinished(let m) = $0, m.agent.id == "reviewer" { return m.text } else { return nil } }
        #expect(verdict == ["REVISION for Wren: too short"])
        #expect(Self.finals(events) == ["Llamas hum softly."])
    }

    // MARK: Retrieval

    static let retrievingRoster = """
        [
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Choose lines.", "order": 0,
           "retrieve": 4, "extract": "lines"},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Answer.", "order": 1, "tools": []}
        ]
        """

    @Test func theNoteLineThatAnswersAQuestionReachesTheAnsweringAgentWithPathAndLine() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.retrievingRoster)
        try scratch.write("Journal/user/2026-11-02.md", "# Monday\n\nBought oat milk and bread.\nAda's cat is called Miso.\nThe plumber comes on Friday.\n")
        try scratch.write("Journal/user/2026-11-03.md", "# Tuesday\n\nRain all day; read a book about dogs.\n")
        let model = TestModel([.text(#"{"lines": [1]}"#), .text("Ada's cat is called Miso.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What is Ada's cat called?")
        #expect(manifest.retrieved?.first?.path == "Journal/user/2026-11-02.md")
        #expect(manifest.retrieved?.first?.line == 4)
        let events = try await scratch.run(engine, manifest.id)

        let choosing = model.received[0]
        #expect(choosing.user.contains("[1] Journal/user/2026-11-02.md:4: Ada's cat is called Miso."))
        #expect(choosing.options.responseSchema != nil)
        // Remy hands on the chosen line verbatim, with where it is; Wren answers from it.
        #expect(model.received[1].user.contains("Ada's cat is called Miso. (Journal/user/2026-11-02.md:4)"))
        #expect(Self.finals(events) == ["Ada's cat is called Miso."])
    }

    @Test func theAgentsAnswersInAChatAreNotSearchedButThePersonsMessagesAre() throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.retrievingRoster)
        try scratch.write("Chats/old.md", """
            Where do the glass panels come from? The panels are Hallam's.

            <!-- relay:turn 20261101-100000-abcd -->
            ### 🔎 Remy · researcher

            - the glass panels are 48 (Journal/user/2026-11-16.md:3)
            <!-- relay:end 20261101-100000-abcd · write your next message below this line -->
            """)
        let found = WorkspaceSearch(workspace: scratch.workspace).lines(matching: "glass panels", limit: 5)
        #expect(found.map(\.path) == ["Chats/old.md"])
        #expect(found.first?.line == 1)
    }

    @Test func aQuestionNothingMatchesIsNotFoundWithoutAModelCallForTheChoice() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.retrievingRoster)
        let model = TestModel([.text("I could not find that in the workspace.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "zyxxyq?")
        let events = try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 1)
        #expect(model.received[0].user.contains("Not found"))
        #expect(Self.finals(events) == ["I could not find that in the workspace."])
    }

    @Test func answerCandidatesFitWhatTheQuestionAsksAndLeaveOutWhatItNames() {
        #expect(AnswerCandidates.asked(by: "Who leads the Brindle bridge build?") == .name)
        #expect(AnswerCandidates.asked(by: "When is my dentist appointment?") == .date)
        #expect(AnswerCandidates.asked(by: "How much does the footbridge cost?") == .number)
        #expect(AnswerCandidates.asked(by: "Why did we choose Hallam Glazing?") == .reason)
        let lines = ["The Brindle bridge cost 4.2 million crowns and opens on 14 March 2027.", "Oksana Pell leads the Brindle build."]
        let who = AnswerCandidates.candidates(for: "Who leads the Brindle bridge build?", in: lines, ignoring: [])
        #expect(who.first?.text == "Oksana Pell", "a name, not the bridge the question names: \(who)")
        let cost = AnswerCandidates.candidates(for: "How much does the Brindle bridge cost?", in: lines, ignoring: [])
        #expect(cost.first?.text == "4.2 million crowns", "the number with what it counts: \(cost)")
        let when = AnswerCandidates.candidates(for: "When does the Brindle bridge open?", in: lines, ignoring: [])
        #expect(when.first?.text.contains("14 March 2027") == true, "\(when)")
        #expect(!AnswerCandidates.holdsAnswer(to: "Who leads it?", line: "It opens on 14 March 2027.", ignoring: []))
    }

    // MARK: Extraction in chunks

    static let summarising = """
        [
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Choose sentences.", "order": 0,
           "extract": "sentences", "tokenBudget": 1024},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Summarise.", "order": 1, "tools": []}
        ]
        """
    static let summarisingRelays = """
        {"model": {"contextTokens": 4096},
         "relays": {"research": {"roster": "AgentConfiguration.json", "input": "file",
                                 "agents": {"researcher": {"output": {"context": "Research"}}, "writer": {"output": {"write": "Research/{name}/summary.md"}}}}}}
        """

    @Test func aDocumentFiveWindowsLongIsReadInFullEveryChunkReachesAModelCall() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.summarising, relayJSON: Self.summarisingRelays)
        // ~5 windows of 1,024 tokens (3 bytes a token): 300 numbered sentences.
        let sentences = (1...300).map { "Sentence \($0) says that crate \($0) weighs \($0 * 3) kilograms." }
        try scratch.write("Research/crates.md", sentences.joined(separator: " ") + "\n")
        let hash = try scratch.workspace.hash("Research/crates.md").hex
        let replies: [TestModel.Step] = (0..<40).map { _ in .text(#"{"sentences": [1]}"#) }
        let model = TestModel(replies)
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/crates.md", hash: hash))
        let events = try await scratch.run(engine, manifest.id)

        let extraction = model.received.filter { $0.options.responseSchema?.name == "sentences" }
        #expect(extraction.count >= 5, "a document of ~5 windows needs at least 5 calls, got \(extraction.count)")
        for request in extraction { #expect(FocusedPrompt.estimate(request.system + request.user) < 1024) }
        // Every chunk reached a call: the calls' choices are consecutive parts that cover the
        // document to its last sentence, and each part's best sentences reached the model.
        let offered = extraction.map { request -> [Int] in
            (request.options.responseSchema?.schema["properties"]?["sentences"]?["items"]?["enum"]?.arrayValue ?? []).compactMap(\.intValue)
        }
        #expect(offered.allSatisfy { !$0.isEmpty })
        for (earlier, later) in zip(offered, offered.dropFirst()) { #expect((earlier.max() ?? 0) < (later.min() ?? 0)) }
        #expect(extraction.last?.user.contains("part \(extraction.count) of \(extraction.count)") == true)
        let remy = events.compactMap { if case .agentFinished(let m) = $0, m.agent.id == "researcher" { return m.text } else { return nil } }.first ?? ""
        #expect(remy.contains("Sentence 1 says") && remy.contains("Sentence \(extraction.count > 0 ? (offered.last?.min() ?? 300) : 300) says"), "the beginning and the end of the document reach the extraction: \(remy.suffix(300))")
        #expect(events.contains { if case .note(let text) = $0 { return text.contains("chunks") } else { return false } })
    }

    @Test func extractedSentencesAreVerbatimAndTheWriterGetsThemInsteadOfTheDocument() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.summarising, relayJSON: Self.summarisingRelays)
        let document = "# Bridge report\n\nThe Brindle bridge opened on 3 May 2026. It was a sunny day and the whole town came out to watch the ribbon being cut. "
            + "Oksana Pell led the build. Everyone was pleased with how the afternoon went, and the band played until late. The cost was 4.2 million crowns.\n"
        try scratch.write("Research/bridge.md", document)
        let hash = try scratch.workspace.hash("Research/bridge.md").hex
        let model = TestModel([.text(#"{"sentences": [2, 4]}"#), .text("A report on the Brindle bridge, opened on 3 May 2026 by Oksana Pell's team.")])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/bridge.md", hash: hash))
        let events = try await scratch.run(engine, manifest.id)
        #expect(Self.groundings(events).isEmpty, "\(Self.groundings(events))")
        let writer = model.received[1]
        #expect(writer.user.contains("- The Brindle bridge opened on 3 May 2026.\n- Oksana Pell led the build."))
        #expect(!writer.user.contains("It was a sunny day"), "the writer gets the chosen sentences, not the document")
        #expect(scratch.contents("Research/bridge/summary.md")?.contains("Brindle bridge") == true)
        let context = try #require(scratch.contents("context.md"))
        #expect(context.contains("## Research"))
        #expect(context.contains("- [bridge](Research/bridge/summary.md): The Brindle bridge opened on 3 May 2026. · Oksana Pell led the build."))
    }

    /// The sentences the engine keeps of `document` dropped in Research/, when the model chooses
    /// none: its own ranking within the share.
    static func extractedSummary(of document: String) async throws -> String {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.summarising, relayJSON: Self.summarisingRelays)
        try scratch.write("Research/doc.md", document)
        let hash = try scratch.workspace.hash("Research/doc.md").hex
        let model = TestModel([.text(#"{"sentences": []}"#), .text("A document.")])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/doc.md", hash: hash))
        let events = try await scratch.run(engine, manifest.id)
        return events.compactMap { if case .agentFinished(let m) = $0, m.agent.id == "researcher" { return m.text } else { return nil } }.first ?? ""
    }

    @Test func aLongTableDoesNotCrowdTheTotalsOutOfItsSummaryButAShortTableKeepsEveryRow() async throws {
        var statement = "# Kestrel Bank statement, March\n\n| Date | Description | Paid out | Balance |\n|---|---|---|---|\n"
        for day in 1...16 { statement += "| \(String(format: "%02d", day)) Mar | Card payment to shop number \(day) | \(day * 7).50 | \(3000 - day * 40).00 |\n" }
        statement += "\nClosing balance on 31 March: 2,360.00 crowns. Your overdraft limit is 500 crowns.\n"
        let long = try await Self.extractedSummary(of: statement)
        #expect(long.contains("Closing balance on 31 March: 2,360.00 crowns."), "the totals are kept: \(long)")
        #expect(long.contains("overdraft limit is 500 crowns"), "\(long)")
        let quotes = "# Roof quotes\n\nThree roofers came to look at the roof of the barn in the first week of June, after the storm took half of the tiles off the north side. "
            + "Each of them climbed up, measured the slope and the gutters, and sent a written quote within a few days. All three can start before the end of the summer, "
            + "and all three include taking the old tiles away and a ten-year guarantee on the work.\n\n| Roofer | Price |\n|---|---|\n| Tamsin Roofing | 3,400 crowns |\n| Northgate | 2,950 crowns |\n| Ashby & Daughters | 3,120 crowns |\n"
        let short = try await Self.extractedSummary(of: quotes)
        for roofer in ["Tamsin Roofing", "Northgate", "Ashby & Daughters"] { #expect(short.contains(roofer), "every row of a short table: \(short)") }
    }

    @Test func aSummaryOfMinutesReachesEveryItemAndLeavesTheAttendanceOut() async throws {
        var minutes = "# Weir Row residents' association\n\nPresent: Ada Quint, Bo Lindqvist, Cem Arslan, Dora Pell, Emil Varga, Fenna Holt.\n\n"
        let items = [("Bins", "Bo counted 14 broken lids on 3 May, 6 of them on the north side, and 2 missing bins at number 40."),
                     ("Parking", "Cem measured the bay at 5.2 metres on 4 May; 3 cars fit, 4 with care, and 1 van."),
                     ("Garden", "Dora bought 12 bulbs for 18 crowns on 5 May, and 2 bags of compost for 9 crowns."),
                     ("Lights", "Emil reported 7 lamps out on 16 May, 5 by the gate and 8 by number 31."),
                     ("Fees", "Decided: the fee stays at 35 crowns a year.")]
        for (index, item) in items.enumerated() {
            minutes += "## \(index + 1). \(item.0)\n\n\(item.1) The council was told on 7 May 2027 at 10:15 by phone, ref 2210. Fenna will chase it on 14 May 2027.\n\n"
        }
        let summary = try await Self.extractedSummary(of: minutes)
        #expect(summary.contains("35 crowns a year"), "the last item is reached: \(summary)")
        #expect(summary.contains("7 lamps out"), "\(summary)")
        #expect(!summary.contains("Present:"), "\(summary)")
    }

    @Test func aVersionsHeadingAndItsFirstChangeAreOneBulletAndALettersDateIsNoTitle() async throws {
        let notes = """
            # Loomwork release notes

            Loomwork plans a weaving project from the yarn to the finished cloth.

            ## 3.1 (4 May 2027)

            - A draft can be shared as a link that opens without an account.
            - Colour cards print on A5.

            ## 3.0 (2 March 2027)

            - Loomwork Plus costs 30 marks a year and keeps every draft in the cloud.
            - The treadling view shows 16 shafts.
            """
        let sentences = Sentences.split(DocumentShape.prepared(notes))
        let joined = RunExecutor.datedHeadingsJoined(sentences, headings: RunExecutor.headings(of: DocumentShape.prepared(notes)))
        #expect(joined.contains("3.1 (4 May 2027) — A draft can be shared as a link that opens without an account."), "\(joined)")
        #expect(!joined.contains("3.1 (4 May 2027)"), "no heading alone: \(joined)")
        #expect(!joined.contains { $0.hasPrefix("Loomwork release notes —") }, "a heading without a date stays a signpost: \(joined)")
        let letter = ["Weir Row Residents", "", "7 July 2031", "", "Dear councillors,", "", "The lamps on Weir Row have been out since 3 June."]
        #expect(!Evidence.isTitle(at: 2, in: letter), "a letter's date is no numbered title")
    }

    // MARK: Knowledge in context.md

    @Test func aKnowledgeLineAndAPersonsEditOfContextSavedDuringTheRunBothSurvive() async throws {
        let scratch = try ScratchWorkspace.forRelays(roster: Self.summarising, relayJSON: Self.summarisingRelays)
        try scratch.write("Research/tea.md", "Green tea is steamed soon after picking. Black tea is left to oxidise first.\n")
        let hash = try scratch.workspace.hash("Research/tea.md").hex
        let root = scratch.workspace.root
        let model = TestModel([
            .text(#"{"sentences": [1, 2]}"#),
            // While the writer "thinks", a person saves context.md in an editor.
            .act({ try? "# Context\n\nThe team keeps llamas.\nAda prefers oolong.\n".write(toFile: root + "/context.md", atomically: true, encoding: .utf8) },
                 then: .text("Notes on green and black tea.")),
        ])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/tea.md", hash: hash))
        try await scratch.run(engine, manifest.id)
        let context = try #require(scratch.contents("context.md"))
        #expect(context.contains("Ada prefers oolong."), "the person's edit is kept")
        #expect(context.contains("- [tea](Research/tea/summary.md): Green tea is steamed soon after picking."), "the knowledge line is added")
    }

    @Test func theOldestKnowledgeLinesMoveToTheIndexWhenContextOutgrowsItsBudget() {
        var text = "# Context\n\n## Research\n\n"
        for number in 1...40 { text += "- [doc\(number)](Research/doc\(number)/summary.md): fact \(number) " + String(repeating: "x", count: 150) + "\n" }
        let line = "- [new](Research/new/summary.md): the newest fact"
        let moving = KnowledgeSection.overflow(adding: line, to: text, heading: "Research", budget: 2_000)
        #expect(moving.first?.contains("[doc1]") == true)
        let result = KnowledgeSection.adding(line, to: text, heading: "Research", removing: Set(moving))
        #expect(result.utf8.count <= 2_000)
        #expect(result.contains(line))
        #expect(!result.contains("[doc1]"))
        #expect(result.contains("[doc40]"))
    }

    // MARK: Follow-ups and tools

    @Test func aFollowUpInAChatFileSeesThePreviousExchange() async throws {
        // Names for a cat are the model's to invent: Wren's grounding is off here.
        let scratch = try ScratchWorkspace.forRelays(roster: Self.writerAndReviewer.replacingOccurrences(of: #""tools": []}"#, with: #""tools": [], "grounding": false}"#))
        let model = TestModel([.text("Call it Ash."), .text("APPROVED"), .text("Call it Onyx."), .text("APPROVED")])
        let engine = scratch.engine(model)
        try scratch.write("Chats/cats.md", "What is a good name for a grey cat?\n")
        let first = try #require(try engine.prepare(trigger: "chat", path: "Chats/cats.md", hash: scratch.workspace.hash("Chats/cats.md").hex))
        #expect(first.previousExchange == nil)
        try await scratch.run(engine, first.id)
        let chat = try #require(scratch.contents("Chats/cats.md"))
        try scratch.write("Chats/cats.md", chat + "\nAnd for a black one?\n")
        let second = try #require(try engine.prepare(trigger: "chat", path: "Chats/cats.md", hash: scratch.workspace.hash("Chats/cats.md").hex))
        #expect(second.request == "And for a black one?")
        #expect(second.previousExchange == RunManifest.Exchange(message: "What is a good name for a grey cat?", answer: "Call it Ash."))
        try await scratch.run(engine, second.id)
        let prompt = model.received[2].user
        #expect(prompt.contains("[Previous Exchange in this chat]:\nPerson: What is a good name for a grey cat?\nAnswer: Call it Ash."))
        #expect(prompt.contains("[User Request]:\nAnd for a black one?"))
    }

    @Test func aSecondIdenticalReadGetsNoSecondReadAndTheAgentMustAnswer() async throws {
        let roster = """
            [{"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy.", "order": 0,
              "tools": ["read_file"], "grounding": false}]
            """
        let scratch = try ScratchWorkspace.forRelays(roster: roster)
        let read = TestModel.call("read_file", ["path": "context.md"])
        let model = TestModel([.tools([read]), .tools([read]), .text("The team keeps llamas.")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "What does context.md say?")
        let events = try await scratch.run(engine, manifest.id)
        #expect(model.received.count == 3)
        #expect(model.received[2].tools.isEmpty, "after a repeated call the agent answers without tools")
        #expect(model.received[2].messages.last?.content.contains("already called read_file") == true)
        let results = events.compactMap { if case .toolResult(_, _, _, let result, _) = $0 { return result } else { return nil } }
        #expect(results.count == 2)
        #expect(results.last?.contains("already called read_file") == true, "the repeated call is answered by the engine, not run again")
    }
}
