import Foundation
@testable import RelayEngine
import RelayTestKit
import Testing

/// Issue 32, the sixth round: mechanisms of the answering design that a fresh dev part (a life
/// none of the earlier parts had) showed missing — each a rule of language or of the workspace's
/// structure, tried end to end on the scripted model (which takes the engine's first choice).
/// Every name and figure here is invented for the test.
@Suite struct AnswerGeneralityTests {
    typealias Programs = AnswerProgramsTests

    // MARK: Not found

    @Test func aThingNamedByItsNumberIsNotAnotherThingOfTheSameNoun() async throws {
        let scratch = try Programs.workspace(notes: [
            Programs.day(3): "# Notes\n\n- Tam's grade 5 flute exam is on Tuesday 9 March.\n",
        ])
        let (other, _) = try await Programs.ask("When is Tam's grade 6 exam?", in: scratch)
        #expect(other.hasPrefix(RunExecutor.notFoundOpening) && other.contains("grade 6"), "grade 5 is another exam: \(other)")
        try scratch.write("Journal/user/\(Programs.day(1)).md", "# Notes\n\n- Tam's grade 6 exam is booked for Friday 2 July.\n")
        let (this, _) = try await Programs.ask("When is Tam's grade 6 exam?", in: scratch)
        #expect(this.contains("2 July") && !this.contains("9 March"), "the line about grade 6, not grade 5: \(this)")
        #expect(RequestRules.numberedThings("Does Ada know her Act 1 lines?").map { "\($0.noun) \($0.number)" } == ["act 1"])
        #expect(RequestRules.numberedThings("Did it take 3 days at 7 euros each?").isEmpty, "a count and an amount number nothing")
    }

    @Test func aWhoQuestionWhoseEveryAskedWordIsInNoFileIsNotAnsweredFromTheName() async throws {
        let scratch = try Programs.workspace(notes: [
            Programs.day(2): "# Notes\n\n- Filled Kittiwake's tank at Brisk Quay: 60 litres.\n- Kittiwake is moored at Brisk Quay until May.\n",
        ])
        let (answer, _) = try await Programs.ask("Who insures Kittiwake?", in: scratch)
        #expect(answer.hasPrefix(RunExecutor.notFoundOpening) && answer.contains("insures"), "nothing speaks of insuring: \(answer)")
    }

    @Test func aNameAfterTheOrInCapitalsIsNoPersonSoAWhoQuestionWithNoneIsNotAnswered() async throws {
        let scratch = try Programs.workspace(files: [
            "Research/cake-show.md": "# Cake show\n\nThe best cake of the show receives the Pemberton Salver.\n\nJudging is by the WI panel at 14:00.\n",
        ])
        let (answer, _) = try await Programs.ask("Who won the best cake at the show?", in: scratch)
        #expect(answer.hasPrefix(RunExecutor.notFoundOpening), "a salver, a panel's initials: no one who won: \(answer)")
    }

    @Test func aTimeOfDayIsNoAmountOfMoney() async throws {
        let scratch = try Programs.workspace(files: ["Research/hall-rules.md": "# Hall rules\n\n10:00: the first van is unloaded at the back door.\n"])
        let (answer, _) = try await Programs.ask("What will the van for the move cost us?", in: scratch)
        #expect(answer.hasPrefix(RunExecutor.notFoundOpening), "10:00 is a time: \(answer)")
    }

    // MARK: Compute

    @Test func altogetherAddsUpEveryPurchaseOfTheThingCountTimesPriceEach() async throws {
        let scratch = try Programs.workspace(notes: [
            Programs.day(4): "# Notes\n\n- Fitted five new oak fence posts, 12 florins each.\n- The budget for the fence is 300 florins.\n",
        ])
        let (answer, _) = try await Programs.ask("What did the fence posts cost altogether?", in: scratch)
        #expect(answer.hasPrefix("60 florins"), "five (a count in words) × 12, the currency read from the other line: \(answer)")
        #expect(RequestRules.analyse("How much did the paint cost us altogether?", today: "2027-05-15").kind == .compute, "altogether of one thing: its purchases")
        #expect(RequestRules.analyse("What did the solar panels come to?", today: "2027-05-15").kind == .compute)
        #expect(RequestRules.analyse("Who came to the committee meeting?", today: "2027-05-15").kind != .compute, "came to a meeting is no amount")
    }

    @Test func aLineThatSaysFromOneAmountToAnotherDecidesHowMuchMore() async throws {
        let scratch = try Programs.workspace(notes: [
            Programs.day(6): "# Notes\n\n- Roof quote from Jessamy: 900 lira for the slates, 120.00 lira for the lead.\n",
            Programs.day(1): "# Notes\n\n- Jessamy rang about the roof: more slates are cracked, so the price goes up from 900 to 960 lira.\n",
        ])
        let (answer, _) = try await Programs.ask("How much more is the roof costing than Jessamy first quoted?", in: scratch)
        #expect(answer.hasPrefix("60 lira") && answer.contains("960 lira") && answer.contains("− 900 lira"), "larger − smaller: \(answer)")
    }

    // MARK: Yes/no

    @Test func didWeGoWithTheCheapestComparesAndReadsWhichTheNotesSayWasChosen() async throws {
        let quotes = """
            # Gutter quotes

            | Firm | Price |
            |---|---|
            | Brannock Roofing | 410 |
            | Stannary & Daughters | 365 |
            | Cobbold Gutters | 480 |
            """
        let scratch = try Programs.workspace(notes: [
            Programs.day(2): "# Notes\n\n- Went with Brannock Roofing for the gutters: not the cheapest, but they can start on Monday.\n",
        ], files: ["Research/gutter-quotes.md": quotes])
        let (answer, _) = try await Programs.ask("Did we go with the cheapest gutter quote?", in: scratch)
        #expect(answer.hasPrefix("No — Brannock Roofing, not the cheapest"), "\(answer)")
        #expect(answer.contains("Stannary & Daughters") && answer.contains("365"), "the cheapest, named: \(answer)")
    }

    @Test func aDayALineSaysWasReplacedIsNotItsDayAndAStateLastingUntilLaterIsNotYetOver() async throws {
        let scratch = try Programs.workspace(notes: [
            Programs.day(3): "# Notes\n\n- The kiln delivery now comes on Friday 20 March instead of the 14th.\n- Lent Mallory my long ladder.\n",
            Programs.day(1): "# Notes\n\n- Mallory says she needs the ladder until the end of the month.\n- Walked the river path: too muddy to get past the weir.\n",
        ])
        let (moved, _) = try await Programs.ask("Is the kiln delivery still coming on the 14th?", in: scratch)
        #expect(moved.hasPrefix("No"), "\(moved)")
        let (ladder, _) = try await Programs.ask("Have I got my ladder back from Mallory yet?", in: scratch)
        #expect(ladder.hasPrefix("No"), "\(ladder)")
        #expect(!RunExecutor.polarity(of: "The ford was too deep after the rain."), "too deep denies")
        #expect(RunExecutor.polarity(of: "Ros came too, with the cakes."), "too as also affirms")
    }

    // MARK: Lookup

    @Test func twoDaysEachWithItsWeekdayAreAnsweredAsBoth() async throws {
        let scratch = try Programs.workspace(files: [
            "Research/barge-fair.md": "# Barge fair\n\nThe barge fair returns to Colley Basin on Saturday 17 and Sunday 18 October, with boat trips and stalls.\n",
        ])
        let (answer, _) = try await Programs.ask("When's the barge fair?", in: scratch)
        #expect(answer.hasPrefix("Saturday 17 and Sunday 18 October"), "\(answer)")
    }

    @Test func wordsOfAMeasureAndOfAPhoneAskForTheirKindOfValue() {
        func value(_ question: String) -> ValueKind? { RequestRules.analyse(question, today: "2027-05-15").value }
        #expect(value("how long's the guarantee on the boiler") == .number, "long's is long is")
        #expect(value("What torque were the wheel nuts done up to?") == .number)
        #expect(value("Can you give me the mobile of whoever is driving?") == .phone)
        #expect(RequestRules.analyse("What did Mallory's survey say?", today: "2027-05-15").kind == .summarise)
        #expect(RequestRules.analyse("What did the parish council decide?", today: "2027-05-15").kind == .summarise)
        #expect(RequestRules.analyse("What are we singing at the carol service?", today: "2027-05-15").kind == .list)
    }

    // MARK: Lists

    @Test func aListNamesTheWholeNameAskedAndASummarysCopyOfItsDocumentGoes() async throws {
        let sheet = """
            date,item,supplier,quantity
            2027-03-02,sash clamps,Bexley Tools,2
            2027-03-09,chisel set,Bexley Tools,1
            2027-03-10,linseed oil,Beckett's Paints,3
            """
        let scratch = try Programs.workspace(notes: [
            Programs.day(2): "# Notes\n\n- **Meeting at Bexley Street hall, Tuesday 19:30**\n",
        ], files: ["Research/workshop-spend.csv": sheet])
        try scratch.write("Research/workshop-spend/summary.md", "2027-03-02: sash clamps, Bexley Tools, 2\n")
        try scratch.write("context.md", Programs.context + "## Research\n\n- [workshop-spend](Research/workshop-spend/summary.md): 2027-03-02: sash clamps, Bexley Tools, 2\n")
        let (answer, _) = try await Programs.ask("What have we bought from Bexley Tools?", in: scratch)
        #expect(answer.contains("sash clamps") && answer.contains("chisel set"), "\(answer)")
        #expect(!answer.contains("Bexley Street"), "Bexley alone is not Bexley Tools: \(answer)")
        #expect(!answer.contains("summary.md") && !answer.contains("(context.md"), "the sheet's own rows, not their copies: \(answer)")
    }

    // MARK: Summaries of a document (the seventh round)

    @Test func aFormsOpeningFieldsGiveOneLineAndALetterheadInCapitalsIsATitle() throws {
        let sheet = """
            TAMSWORTH JOINERY - SASH WINDOW REPAIR WORK SHEET

            Work sheet: WS-4471
            Date: 3 March 2027
            Customer: Perrin Vask, 9 Weir Row, Sennen
            Windows: four sashes, front bay
            Joiner: Piet Tamsworth

            1. Work done
            Rotten bottom rails cut out and new oak spliced in.
            Sash cords replaced on all four windows.

            2. Charges
            Labour: 310.00 crowns (10 hours).
            Total: 395.00 crowns, paid on the day.

            3. Guarantee
            Five years on the splices, provided the paint is kept up.
            """
        let scratch = try Programs.workspace(files: ["Research/window-work-sheet.txt": sheet])
        let summary = Evidence(workspace: scratch.workspace).summaryLines(of: "Research/window-work-sheet.txt", limit: 6).map(\.text)
        #expect(!summary.contains { $0.hasPrefix("TAMSWORTH") }, "the letterhead is the document's title: \(summary)")
        #expect(summary.filter { $0.hasPrefix("Work sheet:") || $0.hasPrefix("Customer:") || $0.hasPrefix("Windows:") || $0.hasPrefix("Joiner:") }.count == 1,
                "one line says which sheet it is: \(summary)")
        #expect(summary.contains("Sash cords replaced on all four windows."), "the findings get the room: \(summary)")
        #expect(summary.contains { $0.hasPrefix("Five years") }, "\(summary)")
    }

    // MARK: A list in a document (the seventh round)

    @Test func aListIntroducedWithAColonIsAnsweredWithItsItemsNotTheLinesSharingTheWords() async throws {
        let rules = """
            # Sennen craft fair: rules for stallholders

            The fair runs from 10:00 to 16:00 on the green. Stallholders arrive from 08:30 and every stall must be set up by 09:45.

            Every stallholder must bring, and keep at the stall all day:

            - a fire blanket;
            - a float of change;
            - their public liability insurance papers.

            Stallholders who sell food also need a hygiene certificate, shown to the organisers on arrival.
            """
        let scratch = try Programs.workspace(notes: [Programs.day(1): "# Notes\n\n- Booked a stall at the craft fair for the pots.\n"],
                                            files: ["Research/craft-fair-rules.md": rules])
        let (answer, _) = try await Programs.ask("What are the things every stallholder must bring to the craft fair?", in: scratch)
        for item in ["fire blanket", "float of change", "liability insurance"] { #expect(answer.contains(item), "\(answer)") }
        #expect(!answer.contains("Booked a stall"), "a line that shares the words is no item: \(answer)")
    }

    @Test func aWeekdayIsNoPersonSoWhoLeadsTheWalkIsTheLeaderNotTheFridays() async throws {
        let scratch = try Programs.workspace(files: [
            "Research/rowing-club-handbook.md": "# Handbook\n\nFrom May to September there are open Fridays at the boathouse, a walk along the weir and the summer open evenings.\n",
            "Research/rowing-club-minutes.md": "# Minutes\n\nThursday 9 September 2027 at 19:00 in the clubroom: Dr Perrin Farrant will lead it.\n",
        ])
        let (answer, _) = try await Programs.ask("Who's leading the walk on the open evening in September?", in: scratch)
        #expect(answer.hasPrefix("Perrin Farrant"), "\(answer)")
    }

    @Test func aFollowUpWhoseWordIsInNoFileIsAnsweredFromTheLineAboutThePersonThePreviousAnswerNamed() async throws {
        let scratch = try Programs.workspace(notes: [Programs.day(3): "# Notes\n\n- Ysella (my cousin) married Jon on 19 January 2015. She'd like a kite.\n"])
        let engine = scratch.engine(Programs.model())
        _ = try await scratch.run(engine, try engine.prepare(ask: "What is my cousin's name?", conversation: "cousin").id)
        let events = try await scratch.run(engine, try engine.prepare(ask: "When's her anniversary?", conversation: "cousin").id)
        let answer = GroundedRelayTests.finals(events).last ?? ""
        #expect(answer.hasPrefix("19 January"), "\(answer)")
    }
}
