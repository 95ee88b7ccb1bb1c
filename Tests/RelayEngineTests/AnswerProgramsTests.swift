import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// Each kind's answering program on a small workspace, through the template's three agents
/// (Remy chooses lines, Wren answers, Vera reviews) on the scripted model (a test double that
/// takes the first option it is offered, as SmolLM2 mostly does).
@Suite struct AnswerProgramsTests {
    static let roster = """
        [
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Choose the lines that answer.", "order": 0,
           "retrieve": 6, "extract": "lines", "tools": []},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Give the answer the notes hold.", "order": 1,
           "extract": "answer", "tools": []},
          {"id": "reviewer", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "You are Vera. Check the answer.", "order": 2,
           "role": "review", "extract": "verdict", "tools": ["request_revision"]}
        ]
        """
    static let relayJSON = #"{"model": {"contextTokens": 4096}, "relays": {"chat": {"roster": "AgentConfiguration.json", "input": "chat"}}}"#

    static let context = """
        # Context

        ## People
        - Oskar Brandt: 12 Fenwick Road, Harwick; oskar.brandt@example.org
        - Mira Halloway: my sister, 0161 555 0142

        """

    /// The scripted model: the first option of whatever grammar it is given; free text `writes`.
    static func model(writes: String = "Thanks, see you soon.", kind: RequestKind? = nil) -> TestModel {
        TestModel { request in
            let schema = request.options.responseSchema
            switch schema?.name {
            case "kind" where kind != nil: return .text(#"{"kind": "\#(kind?.rawValue ?? "")"}"#)
            case "lines": return .text(#"{"lines": [1]}"#)
            case "answer":
                let first = schema?.schema["properties"]?["answer"]?["enum"]?.arrayValue?.first?.stringValue ?? ""
                return .text(#"{"answer": "\#(first)"}"#)
            case "choice": return .text(#"{"choice": 1}"#)
            case "verdict":
                let check = schema?.schema["properties"]?["check"]?["enum"]?.arrayValue?.first?.stringValue
                    ?? schema?.schema["anyOf"]?.arrayValue?.first?["properties"]?["check"]?["enum"]?.arrayValue?.first?.stringValue ?? "ok"
                return .text(#"{"check": "\#(check)", "verdict": "approved"}"#)
            default: return .text(writes)
            }
        }
    }

    static func workspace(notes: [String: String] = [:], files: [String: String] = [:]) throws -> ScratchWorkspace {
        let scratch = try ScratchWorkspace.forRelays(roster: roster, relayJSON: relayJSON)
        try scratch.write("context.md", context)
        for (day, text) in notes { try scratch.write("Journal/user/\(day).md", text) }
        for (path, text) in files { try scratch.write(path, text) }
        return scratch
    }

    /// The turn's answer for `question`, and the events.
    static func ask(_ question: String, in scratch: ScratchWorkspace, model: TestModel = model()) async throws -> (String, [RelayEvent]) {
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: question)
        let events = try await scratch.run(engine, manifest.id)
        return (GroundedRelayTests.finals(events).last ?? "", events)
    }

    /// `days` days before today, as the engine counts today.
    static func day(_ days: Int) -> String {
        let today = RelayRunner.localDateAndTime(Date()).0
        return DayWords.string(DayWords.calendar.date(byAdding: .day, value: -days, to: DayWords.date(today)!)!)
    }

    // MARK: List

    @Test func aToDoListGivesEveryOpenTaskOfThreeNotesAndLeavesTheDoneOnesOut() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(3): "# Notes\n\n- Walked to the market.\n- [ ] call the vet about Pip\n",
            Self.day(2): "# Notes\n\nTODO: renew the car insurance\n- [x] pay the window cleaner\n- need to call the insurer about the spoiled milk (about 40 euros worth)\n",
            Self.day(1): "# Notes\n\n- Need to return Oskar's ladder.\n- [ ] pay the window cleaner\n- [ ] pay the paint invoice\n",
            Self.day(0): "# Notes\n\n- [x] Paid the paint invoice online (kr 412.40).\n- [x] Rang the insurer about the spoiled milk: under the excess.\n",
        ])
        let (answer, events) = try await Self.ask("What is still on my to-do list?", in: scratch)
        let items = answer.split(separator: "\n")
        #expect(items.count == 3, "\(answer)")
        #expect(answer.contains("call the vet about Pip (Journal/user/\(Self.day(3)).md:4)"))
        #expect(answer.contains("renew the car insurance"))
        #expect(answer.contains("Need to return Oskar's ladder."))
        #expect(!answer.contains("window cleaner"), "ticked off in an earlier note: done")
        #expect(!answer.contains("paint invoice"), "ticked off in other words: done")
        #expect(!answer.contains("spoiled milk"), "ticked off in other words, the task's aside in brackets aside: done")
        #expect(events.contains { if case .note(let text) = $0 { return text.hasPrefix("Request kind: list") } else { return false } })
    }

    // MARK: The kind the grammar cannot tell

    @Test func whereTheGrammarCannotTellTheModelChoosesTheKindOnceAndReplayAsksNothing() async throws {
        let request = "The jobs I still have open"
        #expect(RequestRules.analyse(request, today: "2026-11-27").undecided == true, "no question word, auxiliary or known imperative")
        #expect(RequestRules.analyse("What is still on my to-do list?", today: "2026-11-27").undecided == nil, "the grammar tells a list")
        let scratch = try Self.workspace(notes: [
            Self.day(2): "# Notes\n\n- Jobs still open: call the vet about Pip.\n- Bought bread.\n",
            Self.day(1): "# Notes\n\n- Jobs still open: renew the car insurance.\n",
        ])
        let model = Self.model(kind: .list)
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: request)
        let events = try await scratch.run(engine, manifest.id)
        let kindCalls = model.received.filter { $0.options.responseSchema?.name == "kind" }
        #expect(kindCalls.count == 1)
        #expect(kindCalls.first?.messages.last?.content.contains("- list: asks for every item") == true, "the kinds are offered with what each means")
        #expect(events.contains { if case .note(let text) = $0 { return text.hasPrefix("Request kind: list — the model chose it") } else { return false } },
                "the group chat shows the kind and who chose it")
        let stored = try engine.store.manifest(manifest.id)
        #expect(stored.analysis?.kind == .list && stored.analysis?.undecided == nil, "the chosen kind is kept in run.json")
        let answer = GroundedRelayTests.finals(events).last ?? ""
        #expect(answer.contains("call the vet about Pip") && answer.contains("renew the car insurance"), "answered as a list: \(answer)")

        let report = try await engine.replay(manifest.id, into: scratch.base + "/replayed")
        #expect(report.matches, "\(report.requests.filter { !$0.matches })")
        #expect(!report.requests.contains { $0.what.contains("kind") }, "a replay reads the kind from run.json and asks nothing")
    }

    @Test func aTaskDoneWithItsOwnVerbIsOffTheListAndWhoAgreedToDoWhatAtAMeetingIsItsActionItems() async throws {
        let minutes = "# Production meeting minutes\n\n## Set\n\nThe tower is nearly built.\n\n## Action items\n\n- Drummond: fire-proofing certificate by 3 September.\n- Caspar: lighting plot to the theatre.\n"
        let scratch = try Self.workspace(notes: [
            Self.day(5): "# Notes\n\n- Need to find a proper foghorn sound for the storm.\n- Need to buy 24 AA batteries for the radio mics.\n",
            Self.day(2): "# Notes\n\n- Found a good foghorn: a free recording from the museum.\n- Got the 24 AA batteries for the radio mics.\n",
        ], files: ["Research/production-meeting-minutes.md": minutes])
        try scratch.write("context.md", Self.context + "## Research\n\n- [handbook](Research/handbook/summary.md): Visiting companies must book the get-in a month ahead.\n")
        let (tasks, _) = try await Self.ask("Which jobs are still outstanding?", in: scratch)
        #expect(tasks.hasPrefix("The workspace does not say"), "found the foghorn, got the batteries; a document's line in context.md is no task: \(tasks)")
        let (actions, _) = try await Self.ask("Who agreed to do what at the production meeting?", in: scratch)
        #expect(actions.contains("fire-proofing") && actions.contains("lighting plot") && !actions.contains("foghorn"),
                "the minutes' action items, not my tasks: \(actions)")
    }

    @Test func aTaskANoteLaterReportsDoneInPlainWordsIsOffTheListAndAnExpectationIsNoTask() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(5): "# Notes\n\n- Need to fix the gate latch at the allotment before the sheep get in.\n- must send the flower show entry form by 24 July\n",
            Self.day(3): "# Notes\n\n- Checked the seedlings: all as it should be.\n- Sent Saskia the July rota.\n",
            Self.day(4): "# Notes\n\n- Need to fit the CO alarms before the examiner comes.\n- Need to paint the hatch.\n",
            Self.day(2): "# Notes\n\n- Fitted both CO alarms last night, just in time.\n- Wanted to paint the hatch but it rained.\n",
            Self.day(1): "# Notes\n\n- Afternoon at the allotment: finally fixed the gate latch.\n",
        ])
        let (answer, _) = try await Self.ask("What have I still got to do?", in: scratch)
        #expect(!answer.contains("gate latch"), "reported done in a later note: \(answer)")
        #expect(!answer.contains("CO alarms"), "a note that opens with the verb in the past reports it done: \(answer)")
        #expect(answer.contains("paint the hatch"), "“wanted to” is no deed: \(answer)")
        #expect(answer.contains("flower show entry form"), "“sent” and “July” of another errand do not close it: \(answer)")
        #expect(!answer.contains("seedlings"), "“as it should be” is no task: \(answer)")
    }

    @Test func whatIsNewInAVersionIsTheListUnderItsHeading() async throws {
        let notes = "# Tansy: what's new\n\n## 4.3 (12 October 2026)\n\n- Faster sync of large folders.\n- Dark mode follows the system.\n\n## 4.2 (1 September 2026)\n\n- A map pin for each note.\n"
        let minutes = "# Allotment society: committee meeting\n\n## 1. Treasurer's report\n\nThe balance is 412 crowns.\n\n## Action items\n\n- Ada: book the hall.\n- Bo: mend the fence.\n"
        let scratch = try Self.workspace(files: ["Research/tansy-release-notes.md": notes, "Research/society-minutes.md": minutes])
        let (new, _) = try await Self.ask("What's new in Tansy 4.3?", in: scratch)
        #expect(new.contains("Faster sync of large folders.") && new.contains("Dark mode follows the system."), "\(new)")
        #expect(!new.contains("map pin"), "another version's section: \(new)")
        let (actions, _) = try await Self.ask("What are the action points from the committee meeting?", in: scratch)
        #expect(actions.contains("Ada: book the hall.") && actions.contains("Bo: mend the fence."), "\(actions)")
        #expect(!actions.contains("412"), "\(actions)")
    }

    // MARK: Yes/no

    @Test func aThingStillOnTheDayAskedIsNoWhenTheNewestNoteMovedItToAnother() async throws {
        let future = { (days: Int) in DayWords.shown(DayWords.string(DayWords.calendar.date(byAdding: .day, value: days, to: DayWords.date(Self.day(0))!)!)) }
        let first = future(10), moved = future(18)
        let scratch = try Self.workspace(notes: [
            Self.day(6): "# Notes\n\n- The boat is booked into the dry dock on \(first) for blacking.\n",
            Self.day(2): "# Notes\n\n- Bertil has moved the boat's dry dock to \(moved), after the stoppage.\n",
        ])
        let (answer, _) = try await Self.ask("Is the boat still going into the dry dock on \(first)?", in: scratch)
        #expect(answer.hasPrefix("No — “Bertil has moved the boat's dry dock"), "\(answer)")
        let (same, _) = try await Self.ask("Is the boat going into the dry dock on \(moved)?", in: scratch)
        #expect(same.hasPrefix("Yes"), "\(same)")
    }

    @Test func aSumOfWhatThingsCostAddsMoneyOnlyAndNeverAmountsOfDifferentUnits() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(3): "# Notes\n\n- The new jars hold 340 g each.\n- Bought 30 frames at the meeting: 31.50 thalers.\n",
            Self.day(1): "# Notes\n\n- The jars came to 46.80 thalers with the lids.\n",
        ])
        let (sum, _) = try await Self.ask("What did the jars and the frames cost me between them?", in: scratch)
        #expect(sum.hasPrefix("78.30 thalers — "), "money only, in a currency on no list: \(sum)")
        #expect(!sum.contains("340 g"), "\(sum)")
    }

    @Test func aYesNoVerdictIsReadInTheClauseAboutTheQuestionAndALineNamingThePersonDecides() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(3): "# Notes\n\n- Nadia came to inspect the hives: no sign of foulseed anywhere.\n",
            Self.day(1): "# Notes\n\n- Hive 3: eggs at last, so it's queenright again and I didn't need to buy a queen.\n",
        ], files: ["Research/handbook.md": "# Handbook\n\nInspectors visit apiaries to look for foulseed in the hives and other notifiable diseases.\n"])
        let (queen, _) = try await Self.ask("Is hive 3 queenright now?", in: scratch)
        #expect(queen.hasPrefix("Yes — "), "“didn't” belongs to another clause: \(queen)")
        let (found, _) = try await Self.ask("Did Nadia find foulseed in any of the hives?", in: scratch)
        #expect(found.hasPrefix("No — “Nadia came to inspect"), "the line that names her decides, not the handbook's: \(found)")
    }

    @Test func aYesNoQuestionGetsItsVerdictAndTheLineThatDecidesIt() async throws {
        let scratch = try Self.workspace(notes: [Self.day(2): "# Notes\n\n- Paid the plumber 80 euros for the tap.\n- Bought bread.\n",
                                                 Self.day(1): "# Notes\n\n- [ ] book the chimney sweep\n"])
        let (yes, _) = try await Self.ask("Did I pay the plumber?", in: scratch)
        #expect(yes == "Yes — “Paid the plumber 80 euros for the tap.” (Journal/user/\(Self.day(2)).md:3)", "\(yes)")
        let (no, _) = try await Self.ask("Did I book the chimney sweep?", in: scratch)
        #expect(no.hasPrefix("No — “[ ] book the chimney sweep”") || no.hasPrefix("No — “book the chimney sweep”") || no.hasPrefix("No"), "\(no)")
        #expect(no.contains("chimney sweep"))
    }

    @Test func whatIDidIsDecidedByMyNotesEvenWithoutAValueAndADayStillToComeIsNotYet() async throws {
        let later = DayWords.string(DayWords.calendar.date(byAdding: .day, value: 5, to: DayWords.date(Self.day(0))!)!)
        let scratch = try Self.workspace(notes: [
            Self.day(9): "# Notes\n\n- Harrow's for odds and ends (invoice in Research, on account).\n- Quote came through: 489 thalers for the extractor, delivered next week.\n",
            Self.day(4): "# Notes\n\n- [x] paid Harrow's invoice by bank transfer\n",
            Self.day(2): "# Notes\n\n- Email from Bertil: the extractor is delayed, it now comes on \(later).\n",
        ], files: [
            "Research/harrow-invoice.md": "# HARROW & DAUGHTERS\n\nTerms: payment of 54.90 thalers within 30 days to Harrow & Daughters.\n",
            "Research/minutes.md": "# Minutes\n\n14 members have not yet paid; subscriptions (28 thalers) are due by 30 June.\n",
        ])
        let (paid, _) = try await Self.ask("Have I paid Harrow's yet?", in: scratch)
        #expect(paid == "Yes — “[x] paid Harrow's invoice by bank transfer” (Journal/user/\(Self.day(4)).md:3)",
                "the note that holds no amount decides, not the invoice's terms nor a “not yet” of others: \(paid)")
        let (come, _) = try await Self.ask("Has the extractor come yet?", in: scratch)
        #expect(come.hasPrefix("No — “Email from Bertil"), "the newest note decides, and it puts the day still to come: \(come)")
    }

    @Test func aListItemRunningOverTwoLinesIsOneItemAndLinesThatShareOneWordAreNoItems() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(2): "# Notes\n\n- Hedda rang: the anniversary party is on Saturday at the boathouse.\n  Coming: Yusuf, Amalie and Tobiah Renk.\n- Need to buy a card for Hedda.\n",
        ])
        let (answer, _) = try await Self.ask("Who is coming to Hedda's anniversary party?", in: scratch)
        #expect(answer.contains("Coming: Yusuf, Amalie and Tobiah Renk."), "\(answer)")
        #expect(!answer.contains("card"), "a line sharing one word of the topic is no item: \(answer)")
    }

    // MARK: Compute

    @Test func aSumIsComputedByTheCalculatorFromTwoLines() async throws {
        let scratch = try Self.workspace(notes: [Self.day(4): "# Notes\n\n- Bought a new kettle for 42 euros.\n",
                                                 Self.day(3): "# Notes\n\n- The toaster cost 30 euros at the market.\n"])
        let (answer, _) = try await Self.ask("How much did I spend on the kettle and the toaster in total?", in: scratch)
        #expect(answer.hasPrefix("72 euros — 42 euros (Journal/user/\(Self.day(4)).md:3) + 30 euros (Journal/user/\(Self.day(3)).md:3)"), "\(answer)")
        #expect(answer.contains("Relay's calculator"))
    }

    @Test func howManyMarketDaysSoFarCountsTheRowsOfTheTableThatNamesThemUpToToday() async throws {
        let soon = DayWords.string(DayWords.calendar.date(byAdding: .day, value: 5, to: DayWords.date(Self.day(0))!)!)
        let csv = "date,market,jars_sold,takings\n\(Self.day(30)),Square,24,84.00\n\(Self.day(20)),Square,31,108.50\n\(Self.day(6)),Corve Fair,38,133.00\n\(soon),Square,0,0\n"
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Best market so far: 38 jars at the Corve Fair.\n"],
                                         files: ["Research/market-takings.csv": csv])
        let (answer, _) = try await Self.ask("How many market days have I done so far?", in: scratch)
        #expect(answer.hasPrefix("3 — the rows of the table (Research/market-takings.csv:2 to Research/market-takings.csv:4)"), "the booked day to come is not done: \(answer)")
        #expect(RequestRules.countedThing("How many days until the show?") == nil, "a span of days counts no thing")
        let lab = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The lab took 23 samples from the market stalls.\n"], files: ["Research/market-takings.csv": csv])
        let (samples, _) = try await Self.ask("How many samples did the lab take?", in: lab)
        #expect(samples.hasPrefix("23"), "a line that gives the count answers: \(samples)")
    }

    @Test func daysUntilAThingCountToItsDayToComeNotToADayGoneOfAnotherLine() async throws {
        let ahead = DayWords.string(DayWords.calendar.date(byAdding: .day, value: 17, to: DayWords.date(Self.day(0))!)!)
        let expiry = DayWords.string(DayWords.calendar.date(byAdding: .day, value: 400, to: DayWords.date(Self.day(0))!)!)
        let scratch = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- Last spring concert was on \(DayWords.shown(Self.day(40))), a long time ago now.\n- The spring concert is on \(DayWords.shown(ahead)) at 19:00.\n",
                                                 Self.day(2): "# Notes\n\n- The boat's certificate is valid until \(DayWords.shown(expiry)).\n"])
        let (answer, _) = try await Self.ask("How many days is it until the spring concert?", in: scratch)
        #expect(answer.hasPrefix("17 days — "), "not the certificate's expiry, a day to come of another thing: \(answer)")
    }

    @Test func howManyTicketsAddsTheCountsOfTheirKindsInOneLine() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Raffle tickets so far, from Saskia: 42 adult, 31 under-18 and 9 family tickets.\n"])
        let (answer, _) = try await Self.ask("How many raffle tickets have gone so far?", in: scratch)
        #expect(answer.hasPrefix("82 — 42 adult + 31 under-18 + 9 family tickets (Journal/user/\(Self.day(1)).md:3)"), "\(answer)")
        let trust = try Self.workspace(files: ["Research/water-report.md": "# Annual report\n\nAt the end of the year we served 12,300 households, and several hundred businesses.\n"])
        let (households, _) = try await Self.ask("How many households does the trust serve?", in: trust)
        #expect(households.hasPrefix("12,300"), "a number written with a thousands comma is one number: \(households)")
        let rehearsal = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Saturday rehearsal: 38 of 45 singers came; the flu is going round.\n"])
        let (missing, _) = try await Self.ask("How many singers came on Saturday?", in: rehearsal)
        #expect(!missing.hasPrefix("83"), "“38 of 45” lists no kinds: \(missing)")
    }

    @Test func anOperandOfACostIsAnAmountOfMoneyNotTheWeightOfALineAboutTheThing() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(5): "# Notes\n\nJar prices, for the record (340 g screw-top jar with lid, each):\n\n- Hobbs: 0.72 crowns\n- Tern Supplies: 0.65 crowns\n\n- Went with Tern Supplies, 6 dozen jars: 52.80 crowns with delivery.\n",
            Self.day(3): "# Notes\n\n- Bought 30 seed trays at the meeting: 31.50 crowns.\n",
        ])
        let (answer, _) = try await Self.ask("What did the screw-top jars and the seed trays cost me between them?", in: scratch)
        #expect(answer.hasPrefix("84.30 crowns — 52.80 crowns"), "\(answer)")
    }

    @Test func howMuchAPriceCameDownIsTheDifferenceOfTheThingsTwoPricesInItsTwoBestLines() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(9): "# Notes\n\n- Bertil's quote came through: 612 crowns for the kiln. Paid the deposit.\n- Membership is 28 crowns a year.\n",
            Self.day(2): "# Notes\n\n- Email from Bertil: the kiln is late, and he has knocked the price down to 578 crowns.\n",
        ])
        let (answer, _) = try await Self.ask("How much less is the kiln costing than Bertil first quoted?", in: scratch)
        #expect(answer.hasPrefix("34 crowns — 612 crowns"), "\(answer)")
        let thread = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- The refit is 660 crowns now; Bertil wants an 80 crowns deposit.\n",
                                                Self.day(2): "# Notes\n\n- Bertil changed the refit: that brings the price down from 720 to 660 crowns.\n"])
        let (cheaper, _) = try await Self.ask("How much cheaper is the refit now that the job has changed?", in: thread)
        #expect(cheaper.hasPrefix("60 crowns"), "the line that says both, not the deposit: \(cheaper)")
    }

    @Test func aSumOverATableIsItsNamedColumnOverTheRowsOfTheMonthAsked() async throws {
        let csv = "date,market,jars_sold,takings\n2027-05-22,Square,24,84.00\n2027-06-12,Square,31,108.50\n2027-06-19,Square,26,91.00\n2027-06-26,Corve Fair,38,133.00\n"
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Best market of June: 38 jars, sold out by eleven.\n"],
                                         files: ["Research/stall-takings.csv": csv])
        let (answer, _) = try await Self.ask("How much did I take at the markets in June 2027 altogether?", in: scratch)
        #expect(answer.hasPrefix("332.50 — the takings of 3 rows (Research/stall-takings.csv:3 to Research/stall-takings.csv:5)"),
                "May's row left out, the jars column not added: \(answer)")
    }

    @Test func daysFromOneThingToAnotherTakeOneDayOfEachThingsStatement() async throws {
        let scratch = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- Quote for the extractor: 489 thalers. Delivery was due 21 June 2027 · The new delivery date is Friday 2 July 2027.\n",
                                                 Self.day(2): "# Notes\n\n- The honey show is on Saturday 7 August 2027 in the Village Hall.\n"])
        let (answer, _) = try await Self.ask("How many days are there from the extractor delivery to the honey show?", in: scratch)
        #expect(answer.hasPrefix("36 days — between 2 July 2027"), "the new delivery date, not the old one: \(answer)")
    }

    @Test func whatThingsBoughtAtAPriceEachCameToIsTheCountTimesThePriceAndAPriceOfOneIsNoTotal() async throws {
        let csv = "date,item,supplier,quantity,unit price ducats\n2027-08-04,steel hinges,Ropewalk Timber,8,2.15\n2027-08-13,black gaffer tape,Gullhaven Hardware,6,7.25\n2027-08-13,glow tape,Gullhaven Hardware,2,4.10\n"
        let scratch = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- Bought 4 sheets of 8 ft × 4 ft plywood for the tower, 23.50 ducats a sheet.\n"],
                                         files: ["Research/purchases.csv": csv])
        let (plywood, _) = try await Self.ask("What did the plywood for the tower come to?", in: scratch)
        #expect(plywood.hasPrefix("94.00 ducats — 4 sheets × 23.50 ducats"), "\(plywood)")
        let (gaffer, _) = try await Self.ask("How much did we spend on gaffer tape in total?", in: scratch)
        #expect(gaffer.hasPrefix("43.50 — 6 × 7.25 (Research/purchases.csv:3), multiplied by"), "the gaffer row only, its count times its price: \(gaffer)")
        #expect(RunExecutor.unitPriceTotal(in: "Paid 23.50 ducats for the lot, 4 sheets in all.") == nil, "no price of one")
    }

    @Test func twoPricesInOneLineAreTheTwoOperandsEachNearItsName() async throws {
        let scratch = try Self.workspace(notes: [Self.day(2): "# Notes\n\n- Dorian from Eastmill dropped in. Their price is fl 38.50 a 25 kg sack; Westmill charges fl 34.75.\n"])
        let (answer, _) = try await Self.ask("How much more a sack does Eastmill charge than Westmill?", in: scratch)
        #expect(answer.hasPrefix("fl 3.75 — fl 38.50 ("), "money from money, not 25 kg: \(answer)")
    }

    @Test func eachOperandOfASumIsSearchedForOnItsOwn() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(5): "# Notes\n\n- Ordered 12 proving baskets from Pelham, fl 86.40.\n",
            Self.day(4): "# Notes\n\n- The boiler man fixed the boiler: a new valve. 145 florins, paid by card.\n- The proving baskets arrived, all 12.\n",
        ])
        let (answer, _) = try await Self.ask("What did the boiler repair and the proving baskets come to altogether?", in: scratch)
        #expect(answer.hasPrefix("231.40 florins — 145 florins (") || answer.hasPrefix("fl 231.40 — "), "\(answer)")
    }

    @Test func theCalculatorCountsDaysBetweenTwoDates() {
        let today = "2026-11-27"
        #expect(DayWords.days(from: DayWords.parse("3 December 2026", today: today)!, to: DayWords.parse("19 December", today: today)!) == 16)
        #expect(Calculator.apply(.sum, to: [1275.5, 24.5]) == 1300)
        #expect(Calculator.format(1300, like: ["1,275.50", "24.50"]) == "1,300.00")
        #expect(Calculator.apply(.difference, to: [30, 42]) == 12)
    }

    // MARK: Compare

    @Test func theCheapestRowOfATableIsFoundByTheEngine() async throws {
        let quotes = """
            # Quotes for the roof

            | Roofer | Price | Start |
            |---|---|---|
            | Tamsin Roofing | 3,400 euros | March |
            | Northgate Roofers | 2,950 euros | April |
            | Kell & Sons | 3,100 euros | May |

            """
        let scratch = try Self.workspace(files: ["Research/roof-quotes.md": quotes])
        let (answer, _) = try await Self.ask("Which roofer quote is the cheapest?", in: scratch)
        #expect(answer.hasPrefix("Northgate Roofers — 2,950 euros, the lowest of 3 (Research/roof-quotes.md:6)"), "\(answer)")
    }

    @Test func theBiggestPaymentOutIsReadFromThePaidOutColumnEvenWhenTheFirstRowLeavesItEmpty() async throws {
        let statement = """
            # Kestrel Bank statement, March

            | Date | Description | Paid out | Paid in | Balance |
            |---|---|---|---|---|
            | 01 Mar | Salary |  | 2,400.00 | 5,100.00 |
            | 03 Mar | Brook Lets - rent, March | 1,150.00 |  | 3,950.00 |
            | 09 Mar | Corner Grocers | 86.20 |  | 3,863.80 |

            """
        let scratch = try Self.workspace(files: ["Research/kestrel-statement.md": statement])
        let (answer, _) = try await Self.ask("Which was the biggest payment out of the account in March?", in: scratch)
        #expect(answer.hasPrefix("Brook Lets - rent, March — 1,150.00, the highest of 2"), "the Paid out column, named by its description: \(answer)")
    }

    @Test func theIngredientNeededMostIsTheLargestQuantityOfItsListInTheListsUnit() async throws {
        let recipe = """
            # Walnut loaf

            Makes one loaf of about 900 g.

            ## Ingredients

            - 450 g strong white flour
            - 2 tablespoons honey
            - 300 g warm water
            - 80 g walnuts, toasted

            """
        let scratch = try Self.workspace(files: ["Research/walnut-loaf.md": recipe])
        let (answer, _) = try await Self.ask("Which ingredient does the walnut loaf need the most of?", in: scratch)
        #expect(answer.hasPrefix("strong white flour — 450 g, the highest of 3 (Research/walnut-loaf.md:7)"),
                "the list's items in grams, not the loaf's weight, not the tablespoons: \(answer)")
    }

    @Test func numbersListedEachAfterItsLabelAreComparedAndAddedUp() async throws {
        #expect(RunExecutor.labelledNumbers(in: "Ticket sales so far: Thursday 64, Friday 88, Saturday matinee 41 and Saturday evening 112.").map(\.label)
                == ["Thursday", "Friday", "Saturday matinee", "Saturday evening"])
        #expect(RunExecutor.labelledNumbers(in: "Met Ada at 9, then lunch with the team.").isEmpty, "one number in prose is no list")
        let scratch = try Self.workspace(notes: [Self.day(2): "# Notes\n\n- Ticket sales so far, from the box office: Thursday 64, Friday 88, Saturday matinee 41, Saturday evening 112.\n- First full run: Act 1 took 64 minutes and the second act, Act 2, took 54 minutes.\n"])
        let (best, _) = try await Self.ask("Which performance has sold best so far?", in: scratch)
        #expect(best.hasPrefix("Saturday evening — 112, the highest of 4"), "\(best)")
        let (total, _) = try await Self.ask("How many tickets have gone so far across all the shows?", in: scratch)
        #expect(total.hasPrefix("305 — Thursday 64 + Friday 88 + Saturday matinee 41 + Saturday evening 112"), "\(total)")
        let (longer, _) = try await Self.ask("Which act runs longer, the first or the second?", in: scratch)
        #expect(longer.hasPrefix("Act 1 took — 64 minutes, the highest of 2"), "a comparative before “first”: \(longer)")
    }

    @Test func theCheapestOfAListOfPricedOptionsInACurrencyOfTheirOwnIsFoundUnderTheLineThatIntroducesThem() async throws {
        let scratch = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- Paid the hall for August.\n\nWig options for the Widow Jago, from Marguerite:\n\n- grey bun wig, synthetic: 34 ducats\n- grey bun wig, real hair: 95 ducats\n- hire from the Stannard Costume Store: 12 ducats a week\n"])
        let (answer, _) = try await Self.ask("What's the cheapest way to get a wig for the Widow Jago?", in: scratch)
        #expect(answer.hasPrefix("Stannard Costume Store — 12 ducats, the lowest of 3"), "“ducats” after a number in three items is their currency: \(answer)")
        #expect(RunExecutor.currencyWords(in: [.init(text: "Met 3 friends", source: nil), .init(text: "Ate 2 pies", source: nil)]).isEmpty,
                "a word after a number once is no currency")
    }

    @Test func twoPricesInOneLineAreComparedEachNamedByItsClause() {
        let line = RunExecutor.SourcedLine(text: "Pia from Holm Timber came by. Their price is 38.50 euros a sheet; Brackley charges 34.75 euros.",
                                           source: "Journal/user/2026-11-20.md:3")
        #expect(RunExecutor.clauseName(before: line.text.utf8.count - 12, in: line.text) == "Brackley")
        #expect(RunExecutor.clauseName(before: 60, in: line.text) == "Holm Timber", "no name in its own clause: the sentence before names it")
    }

    /// A plain-text invoice as `pdftotext -layout` writes it: the spaces of two rows squeezed.
    static let invoice = """
        HARROW & DAUGHTERS - HARDWARE
        21 Market Street, Brennock

        INVOICE  HD-2210
        Date: 17 June 2027

        Qty Item                         Each    Line
         1 Smoker fuel pellets, 2 kg bag        6.40   6.40
         2 Galvanised mesh, 1 m roll              8.95   17.90
         1 Brass padlock, 40 mm, two keys         11.20 11.20
         1 Ratchet straps, pack of 4          10.25 10.25

        Subtotal (thalers)                       45.75
        TOTAL DUE (thalers)                      54.90

        """

    @Test func aTableLaidOutWithSpacesIsReadAsRowsUnderItsHeaderAndALabelWithAValueIsNoTable() {
        let lines = Self.invoice.components(separatedBy: "\n")
        #expect(Evidence.tableRow(at: 7, in: lines) == "Qty: 1; Item: Smoker fuel pellets, 2 kg bag; Each: 6.40; Line: 6.40")
        #expect(Evidence.tableRow(at: 9, in: lines) == "Qty: 1; Item: Brass padlock, 40 mm, two keys; Each: 11.20; Line: 11.20",
                "squeezed spaces: the numbers that open and close the row are its cells")
        #expect(Evidence.tableRow(at: 10, in: lines) == "Qty: 1; Item: Ratchet straps, pack of 4; Each: 10.25; Line: 10.25",
                "the 4 is the item's: the header leaves two closing numbers")
        #expect(Evidence.tableRow(at: 6, in: lines) == nil, "the header is no row")
        #expect(Evidence.tableRow(at: 12, in: lines) == nil, "a label and a value are no table")
        #expect(Evidence.tableRow(at: 4, in: lines) == nil, "a line of prose with a date is no row")
        let spaced = ["Date        Item            Unit price   Paid", "3 May       Seed potatoes   2.10         4.20", "9 May       Twine           1.50         1.50"]
        #expect(Evidence.tableRow(at: 2, in: spaced) == "Date: 9 May; Item: Twine; Unit price: 1.50; Paid: 1.50", "a header name of two words")
    }

    @Test func theDearestThingOnAnInvoiceTheRequestNamesIsReadFromItsTableAndAListOfWhatIGotIsItsRows() async throws {
        let scratch = try Self.workspace(notes: [Self.day(3): "# Note\n\n- Harrow's for odds and ends (invoice in Research).\n"],
                                         files: ["Research/harrow-invoice-HD-2210.txt": Self.invoice])
        let (dearest, _) = try await Self.ask("What was the dearest thing on the Harrow invoice?", in: scratch)
        #expect(dearest.hasPrefix("Brass padlock, 40 mm, two keys — 11.20, the highest of 4 (Research/harrow-invoice-HD-2210.txt:10)"),
                "the Each column (every Qty is 1: no column to decide by): \(dearest)")
        let (list, _) = try await Self.ask("What did I get at Harrow's?", in: scratch)
        for item in ["pellets", "mesh", "padlock", "straps"] { #expect(list.contains(item), "\(item): \(list)") }
        #expect(!list.contains("TOTAL"), "\(list)")
    }

    @Test func amountsInOneLineAreComparedEachNamedByItsClauseAndTheirTotalIsNotOneOfThem() async throws {
        let scratch = try Self.workspace(notes: [Self.day(2): "# Note\n\n- Extracted the honey. Hive 1 gave only 5 kg, hive 2 gave 9 kg and hive 4 gave 13 kg: 27 kg in all.\n"])
        let (answer, _) = try await Self.ask("Which hive gave me the most honey?", in: scratch)
        #expect(answer.hasPrefix("hive 4 gave — 13 kg, the highest of 3"), "27 kg is the total, not a hive's: \(answer)")
    }

    @Test func aCSVIsReadAsItsTableAndARowIsCitedByItsLineInTheFile() async throws {
        let csv = "\u{FEFF}\"date\",\"market\",\"jars_sold\",\"takings\"\r\n\"2027-05-08\",\"Square, north side\",\"18\",\"63.00\"\r\n"
            + "\"2027-05-15\",\"The \"\"Food\"\" Fair\",\"41\",\"143.50\"\r\n\"2027-05-22\",\"Square, north side\",\"24\",\"84.00\"\r\n"
        #expect(CSVTable.markdown(String(csv.dropFirst())) == """
            | date | market | jars sold | takings |
            |---|---|---|---|
            | 2027-05-08 | Square, north side | 18 | 63.00 |
            | 2027-05-15 | The "Food" Fair | 41 | 143.50 |
            | 2027-05-22 | Square, north side | 24 | 84.00 |

            """)
        #expect(CSVTable.markdown("just one column\nand another line\n") == nil, "no table: plain text")
        #expect(CSVTable.markdown("a,b\n\"open,quote\n") == nil, "an open quote: plain text")
        let scratch = try Self.workspace(files: ["Research/takings.csv": csv])
        let (answer, _) = try await Self.ask("Which market took the most?", in: scratch)
        #expect(answer.hasPrefix("The \"Food\" Fair — "), "\(answer)")
        #expect(answer.contains("(Research/takings.csv:3)"), "the row's line in the file, not in its table: \(answer)")
    }

    @Test func theLastFerryIsTheLatestTimeInTheColumnTheQuestionNamesOfTheDaysTable() async throws {
        let timetable = """
            # Brill ferry

            ## Monday to Friday

            | From Harwick | From Brill |
            |---|---|
            | 07:10 | 08:15 |
            | 17:20 | 19:25 |

            ## Saturday

            | From Harwick | From Brill |
            |---|---|
            | 08:00 | 09:05 |
            | 16:40 | 18:45 |
            | 12:15 | 13:20 |

            """
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Party at Mira's on Saturday at 18:00.\n"],
                                         files: ["Research/brill-ferry.md": timetable])
        let (answer, _) = try await Self.ask("What time is the last ferry back from Brill on a Saturday?", in: scratch)
        #expect(answer.hasPrefix("18:45 — “From Harwick: 16:40; From Brill: 18:45”, the latest of 3 (Research/brill-ferry.md:15)"), "\(answer)")
    }

    @Test func aComparisonWithOneThingToCompareIsALookup() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Booked my first appointment with the new dentist: 3 December at 10:30.\n"])
        let (answer, _) = try await Self.ask("When is my first appointment with the new dentist?", in: scratch)
        #expect(answer.hasPrefix("3 December at 10:30 — "), "\(answer)")
    }

    // MARK: Summarise

    static let committeeMinutes = """
        # Allotment society: committee meeting

        **Tuesday 3 March 2026, 19:00, the pavilion**

        Present: Ada Quint, Bo Lindqvist, Cem Arslan.
        Apologies: Dora Fell.

        ## 1. Water

        Bo reported that the stand-pipe on row C leaks again, the third time this winter.
        Decided: a plumber mends it before 1 April, for up to 120 crowns.

        ## 2. Rents

        Plot rents stay at 35 crowns a year.

        ## 3. Open day

        The open day is on Saturday 16 May, from 10:00.
        Cem will bake for the tea stall.

        ## Action items

        - Ada: book the plumber.
        - Bo: print the open-day posters.

        Next meeting: Tuesday 7 April 2026 at 19:00.
        """

    @Test func whoCameToAMeetingIsTheAttendanceLineOfItsMinutesNotItsDecisions() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The committee meeting went on too long.\n"],
                                         files: ["Research/allotment-committee-minutes.md": Self.committeeMinutes])
        let (answer, _) = try await Self.ask("Who came to the allotment committee meeting?", in: scratch)
        #expect(answer.contains("Present: Ada Quint, Bo Lindqvist, Cem Arslan."), "\(answer)")
        #expect(!answer.contains("Dora Fell") && !answer.contains("Decided"), "apologies are of those who did not come: \(answer)")
    }

    @Test func whoIsDoingWhatAfterAMeetingIsItsActionItems() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The committee meeting went on too long.\n"],
                                         files: ["Research/allotment-committee-minutes.md": Self.committeeMinutes])
        let (answer, _) = try await Self.ask("Who's meant to be doing what after the allotment committee meeting?", in: scratch)
        #expect(answer.contains("Ada: book the plumber.") && answer.contains("Bo: print the open-day posters."), "\(answer)")
    }

    @Test func aPlainTextDocumentsNumberedTitlesOpenItsPartsButANumberedListIsItems() throws {
        let spec = """
            JOINERY - SET PIECE SPECIFICATION

            Job: a garden arch for the open day
            Maker: Cem Arslan

            1. Size
            Height: 7 ft 2 in.
            Width: 4 ft at the base.

            2. Finish
            Painted sage green, two coats.

            3. Delivery
            Delivered on Friday 15 May, in two halves.

            To do before then:

            1. Buy the hinges
            2. Collect the paint
            3. Book the van
            """
        let lines = spec.components(separatedBy: "\n")
        #expect(Evidence.isTitle(at: 0, in: lines))
        #expect(Evidence.isTitle(at: 5, in: lines))
        #expect(!Evidence.isTitle(at: 18, in: lines), "an item of a numbered list, followed by another")
        let scratch = try Self.workspace(files: ["Research/arch-spec.txt": spec])
        let summary = Evidence(workspace: scratch.workspace).summaryLines(of: "Research/arch-spec.txt", limit: 5).map(\.text)
        #expect(summary.contains("Height: 7 ft 2 in."), "\(summary)")
        #expect(summary.contains("Painted sage green, two coats."), "\(summary)")
        #expect(summary.contains("Delivered on Friday 15 May, in two halves."), "\(summary)")
        #expect(summary.contains("Job: a garden arch for the open day"), "\(summary)")
        #expect(summary.count == 5, "\(summary)")
    }

    @Test func aSummaryOfADocumentTheRequestNamesTakesALeadFromEachOfItsPartsNotItsFirstLines() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Read the committee minutes on the bus.\n- The plumber rang back.\n"],
                                         files: ["Research/allotment-committee-minutes.md": Self.committeeMinutes,
                                                 "Research/allotment-committee-minutes/summary.md": "Present: Ada Quint, Bo Lindqvist.\n",
                                                 "Research/boiler-manual.md": "# Boiler manual\n\nBleed the radiators in autumn.\n"])
        for request in ["Sum up the committee minutes for me", "What are the allotment committee minutes about?"] {
            let (answer, _) = try await Self.ask(request, in: scratch)
            #expect(answer.contains("- Decided: a plumber mends it before 1 April, for up to 120 crowns. (Research/allotment-committee-minutes.md:11)"),
                    "a part's decision leads it: \(request): \(answer)")
            #expect(answer.contains("35 crowns a year"), "\(answer)")
            #expect(answer.contains("16 May"), "\(answer)")
            #expect(answer.contains("Ada: book the plumber."), "\(answer)")
            #expect(answer.contains("Next meeting: Tuesday 7 April 2026"), "the paragraph after a list is a part of its own: \(answer)")
            #expect(!answer.contains("Present:") && !answer.contains("Apologies:"), "who was there is not what the meeting did: \(answer)")
            #expect(!answer.contains("Journal/user"), "lines that merely share a word with the request are not its summary: \(answer)")
        }
        let evidence = Evidence(workspace: scratch.workspace)
        #expect(evidence.document(namedBy: Set(SearchTerms.terms(of: "boiler"))) == "Research/boiler-manual.md")
        #expect(evidence.document(namedBy: Set(SearchTerms.terms(of: "manual minutes"))) == nil, "a tie names no document")
        #expect(evidence.document(namedBy: Set(SearchTerms.terms(of: "garden shed minutes"))) == nil, "one word of three names no document")
    }

    @Test func myWeekIsSummarisedFromFiveDatedNotesADayABullet() async throws {
        var notes: [String: String] = [:]
        let done = ["Repotted the fig tree.", "Met Mira for lunch at the Lantern cafe.", "Fixed the bike's brakes.", "Paid the rent of 950 euros.",
                    "Finished the quarterly report."]
        for (offset, line) in done.enumerated() { notes[Self.day(offset)] = "# Notes\n\n- \(line)\n" }
        notes[Self.day(30)] = "# Notes\n\n- An old note from last month.\n"
        let scratch = try Self.workspace(notes: notes)
        let (answer, _) = try await Self.ask("Summarise my week", in: scratch)
        let bullets = answer.split(separator: "\n")
        #expect(bullets.count == 5, "\(answer)")
        for line in done { #expect(answer.contains(line), "\(line) in \(answer)") }
        #expect(!answer.contains("old note"))
        #expect(bullets.first?.hasPrefix("- \(DayWords.shown(Self.day(4))): Finished the quarterly report.") == true, "oldest day first: \(answer)")
    }

    @Test func aRequestAboutADayAndNothingElseIsItsSummaryABulletAStatement() async throws {
        #expect(RequestRules.analyse("How did last week go?", today: "2027-08-23").kind == .summarise)
        #expect(RequestRules.analyse("Anything on Tuesday?", today: "2027-08-23").kind == .summarise)
        #expect(RequestRules.analyse("What did I pay last week?", today: "2027-08-23").kind != .summarise, "a topic besides the days")
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- First full run: 1 hour 58 minutes.\n- Kit cracked the lantern glass.\n- Marguerite finished the grey dress.\n- TODO: send the get-in schedule\n"])
        let (answer, _) = try await Self.ask("How did yesterday go?", in: scratch)
        let bullets = answer.split(separator: "\n")
        #expect(bullets.count == 4 && bullets.first?.hasPrefix("- \(DayWords.shown(Self.day(1))): First full run") == true, "\(answer)")
        #expect(answer.contains("grey dress") && answer.contains("get-in schedule"), "every statement of the day: \(answer)")
    }

    @Test func aQuietDayIsNotCrowdedOutOfTheWeekByBusyOnes() async throws {
        let busy = (1...6).map { "- Paid invoice \($0) of \(100 + $0) euros on \($0) May at 1\($0):00.\n" }.joined()
        let scratch = try Self.workspace(notes: [Self.day(2): "# Notes\n\n" + busy, Self.day(1): "# Notes\n\n" + busy.replacingOccurrences(of: "invoice", with: "bill"),
                                                 Self.day(0): "# Notes\n\n- Walked by the river with Mira.\n"])
        let (answer, _) = try await Self.ask("Summarise my week", in: scratch)
        #expect(answer.contains("Walked by the river with Mira."), "every day has its best line: \(answer)")
        #expect(answer.split(separator: "\n").count == 3, "\(answer)")
    }

    // MARK: Draft

    @Test func aDraftKeepsWhatTheNotesHoldAndLosesTheNameItInvented() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Lent my drill to Oskar Brandt on Saturday.\n"])
        let model = Self.model(writes: "Hi Oskar, could I have the drill back soon? Greta Ulvaeus needs it for the shelves.")
        let (answer, events) = try await Self.ask("Draft a message to Oskar asking for my drill back", in: scratch, model: model)
        #expect(answer.contains("Oskar"), "\(answer)")
        #expect(!answer.contains("Greta"), "an invented name is removed: \(answer)")
        #expect(GroundedRelayTests.groundings(events).contains { $0.unsupported.contains { $0.contains("Greta") } })
    }

    @Test func aDraftOfAShapeThePlainDraftDoesNotKnowLosesThePromptsMarkersAndTheAgentsCitations() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Oskar Brandt fixed the gate on Saturday.\n"])
        let model = Self.model(writes: "[User Request]: Write Oskar a thank-you card.\nDear Oskar, the gate works again, you fixed it on Saturday (Journal/user/\(Self.day(1)).md:3). Thank you so much!")
        let (answer, _) = try await Self.ask("Write Oskar a card.", in: scratch, model: model)
        #expect(!answer.contains("[User Request]") && !answer.contains("(Journal/"), "\(answer)")
        #expect(answer.contains("Dear Oskar, the gate works again, you fixed it on Saturday. Thank you so much!"), "\(answer)")
    }

    @Test func aModelThatTalksAboutTheRequestInsteadOfDraftingGetsTheEnginesPlainDraft() async throws {
        #expect(RunExecutor.plainDraft(for: "Draft a short message to Casimir asking for my tile cutter back before the weekend.", ignoring: [])
            == "Hi Casimir,\n\nCould I have my tile cutter back before the weekend?\n\nThanks!")
        #expect(RunExecutor.isNoDraft("The user requested that I send a message to Casimir. [Vera's Output]: …"))
        #expect(RunExecutor.isNoDraft("Hi Casimir,\n\n[User Request — Remy]:\nI will fix it. (Research/manual"), "the prompt's marker with an agent's name, a source cited as agents cite them")
        #expect(RunExecutor.isNoDraft("Rufus, I've attached a document with all the details of the smoker."), "an attachment it cannot have sent")
        #expect(RunExecutor.plainDraft(for: "Draft an email to Odette with my apologies for the July committee meeting.", ignoring: [])
            == "Hi Odette,\n\nMy apologies for the July committee meeting.\n\nThanks!", "apologies are no thanks")
        #expect(RunExecutor.echoes("Draft a message to Casimir asking for my tile cutter back before the weekend.",
                                   request: "Draft a short message to Casimir asking for my tile cutter back before the weekend."))
        #expect(!RunExecutor.echoes("Hi Casimir, could I have my tile cutter back before the weekend?",
                                    request: "Draft a short message to Casimir asking for my tile cutter back before the weekend."))
        #expect(RunExecutor.plainDraft(for: "Draft a text to Mira checking she's still fine to open up on Saturday.", ignoring: [])
            == "Hi Mira,\n\nJust checking you're still fine to open up on Saturday.\n\nThanks!")
        #expect(!RunExecutor.speaksOfPurpose("Mira, I hope your work goes well!", request: "Write a note to Mira asking her to fix the back door lock", ignoring: []),
                "good wishes are not the note asked for")
        #expect(RunExecutor.speaksOfPurpose("Hi Mira, could you look at the lock this week?", request: "Write a note to Mira asking her to fix the back door lock", ignoring: []))
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Lent my drill to Oskar Brandt on Saturday.\n"])
        let (answer, _) = try await Self.ask("Draft a message to Oskar asking for my drill back", in: scratch,
                                             model: Self.model(writes: "The user requested that I write to Oskar."))
        #expect(answer == "Hi Oskar,\n\nCould I have my drill back?\n\nThanks!", "\(answer)")
    }

    @Test func aReviewerThatAlwaysRevisesCannotSendBackADraftTheEngineVerified() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Lent my drill to Oskar Brandt on Saturday.\n"])
        let revisable = Counter()
        let model = TestModel { request in
            let schema = request.options.responseSchema
            guard schema?.name == "verdict" else { return .text("Hi Oskar, could I have my drill back?") }
            // Revise whenever the grammar allows it.
            if let options = schema?.schema["anyOf"]?.arrayValue, let revise = options.last?["properties"] {
                revisable.add()
                let check = revise["check"]?["enum"]?.arrayValue?.first?.stringValue ?? ""
                return .text(#"{"check": "\#(check)", "verdict": "revise", "who": "Wren"}"#)
            }
            let check = schema?.schema["properties"]?["check"]?["enum"]?.arrayValue?.first?.stringValue ?? ""
            return .text(#"{"check": "\#(check)", "verdict": "approved"}"#)
        }
        let (answer, events) = try await Self.ask("Draft a message to Oskar asking for my drill back", in: scratch, model: model)
        #expect(answer == "Hi Oskar, could I have my drill back?", "\(answer)")
        #expect(revisable.value == 0, "the draft names Oskar and holds nothing unsupported: approving is the only choice")
        #expect(!events.contains { if case .agentStarted(_, _, let by?, _) = $0 { return by.name == "Vera" } else { return false } })
    }

    // MARK: Two hops

    @Test func theEmailOfThePersonILentMyDrillToTakesTwoHops() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Lent my drill to Oskar Brandt after the barbecue.\n"])
        let (answer, _) = try await Self.ask("What is the email address of the person I lent my drill to?", in: scratch)
        #expect(answer.hasPrefix("oskar.brandt@example.org — "), "\(answer)")
        #expect(answer.contains("(context.md:4)"))
        #expect(answer.contains("via “Lent my drill to Oskar Brandt after the barbecue.” (Journal/user/\(Self.day(1)).md:3)"), "\(answer)")
    }

    @Test func aPersonDescribedNotNamedIsFoundByTheDescriptionAloneNotByALineThatHoldsAnotherNumber() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(6): "# Notes\n\n- Rang the supplier about a 9-frame extractor. Shop phone 0790 332 145, they will deliver the extractor in July.\n",
            Self.day(4): "# Notes\n\n- Mira asked if she can borrow my new extractor in July. Told her yes.\n- Planted the new beans.\n",
            Self.day(2): "# Notes\n\n- Oskar came round for his second lesson. I'm mentoring him through his first season.\n",
        ], files: ["Research/handbook.md": "# Handbook\n\nEvery new beekeeper is offered a mentor, a member living nearby, for the first season.\n"])
        let (phone, _) = try await Self.ask("What's the phone number of whoever is borrowing my extractor in July?", in: scratch)
        #expect(phone.hasPrefix("0161 555 0142 — "), "Mira's, not the shop's number in a line about the extractor: \(phone)")
        #expect(phone.contains("via “Mira asked if she can borrow my new extractor in July."), "\(phone)")
        let (home, _) = try await Self.ask("Where does the new beekeeper I'm mentoring live?", in: scratch)
        #expect(home.hasPrefix("12 Fenwick Road, Harwick — "), "a rare word of the description decides, not “new”: \(home)")
        #expect(RequestRules.value(asked: " which street does the person who took the minutes live on ") == .address,
                "“who” of the describing clause does not make it a question for a person")
        #expect(RequestRules.describedPerson(in: "Who is borrowing my extractor?") == nil, "a question that opens with who describes no one")
        #expect(RequestRules.value(asked: " where does the lady who is lending us the chair live ") == .address, "the first question word decides")
        #expect(RequestRules.describedPerson(in: "Where does the actor playing the keeper live?") != nil, "a person and what they do")
    }

    @Test func aDescriptionIsMatchedByWhatThePersonDidNotByWhatTheyAreNorByEarlierQuestionsInTheChats() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(5): "# Notes\n\n- Delia says we can borrow her old rocking chair for the play.\n- Lent Oskar my glue gun.\n",
            Self.day(3): "# Notes\n\n- Oskar is making both of the bride's dresses for the play.\n- Remember to collect the rocking chair before Sunday.\n",
        ], files: ["Chats/earlier.md": "# Chat\n\nWhere does the lady who is lending us the rocking chair live? And the woman sewing the bride's dresses?\n",
                   "context.md": Self.context + "- Delia Moss: 3 Quay Lane, Harwick\n"])
        let (chair, _) = try await Self.ask("Where does the lady who's lending us the rocking chair live?", in: scratch)
        #expect(chair.hasPrefix("3 Quay Lane, Harwick") && chair.contains("via “Delia says we can borrow her old rocking chair"),
                "borrow is lend seen from the other side, and two words of three outweigh the rarer third: \(chair)")
        let (dresses, _) = try await Self.ask("Which street is the woman sewing the bride's dresses on?", in: scratch)
        #expect(dresses.hasPrefix("12 Fenwick Road"), "“sewing” is in no line and tells none apart; “bride's dresses” does: \(dresses)")
        #expect(dresses.contains("via “Oskar is making both of the bride's dresses"), "\(dresses)")
    }

    @Test func ofALineThatListsPeopleTheOneNextToTheWordAskedComesFirstAndAMorningIsAGreeting() {
        #expect(Evidence.nearestFirst(["Saskia Dunne", "Runa Holm"], to: Set(SearchTerms.terms(of: "treasurer")),
                                      in: "Present: Saskia Dunne (chair), Runa Holm (treasurer), Tam Okafor (secretary).") == ["Runa Holm", "Saskia Dunne"])
        #expect(DocumentShape.isGreeting("Morning Fen,"))
    }

    @Test func aNameThatOpensItsSentenceIsANameWhenTheNotesWriteItInsideOneAndGotIsNoWordToFind() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(6): "# Notes\n\n- Rufus borrowed my spare smoker for his sister's new hive.\n- Need to fix the gate before Wilf's sheep get into the orchard.\n",
            Self.day(2): "# Notes\n\n- Remember to give Jory the spare hive stand on Sunday.\n- [ ] ask Rufus for the smoker back before the move\n",
        ])
        let (answer, _) = try await Self.ask("Who's got my spare smoker?", in: scratch)
        #expect(answer.hasPrefix("Rufus — “Rufus borrowed my spare smoker"), "\(answer)")
    }

    @Test func whatSomethingCostsNowIsTheNewestNoteAboutItNotTheFirstQuote() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(9): "# Notes\n\n- Bertil's quote came through: 489 thalers for the extractor, delivered on the 21st. Paid the deposit.\n",
            Self.day(4): "# Notes\n\n- Email from Bertil: the extractor is delayed. He's knocked the price down to 455 thalers for the wait.\n",
        ])
        let (answer, _) = try await Self.ask("What am I paying for the new extractor now?", in: scratch)
        #expect(answer.hasPrefix("455 — "), "\(answer)")
    }

    @Test func aDurationInTwoUnitsIsOneValue() async throws {
        let scratch = try Self.workspace(notes: [Self.day(3): "# Notes\n\n- Read-through at the church hall: 2 hours 10 minutes with the interval.\n"])
        let (answer, _) = try await Self.ask("How long did the read-through run?", in: scratch)
        #expect(answer.hasPrefix("2 hours 10 minutes — "), "\(answer)")
    }

    // MARK: Not found

    @Test func aPhoneNumberTheNotesDoNotHoldIsNotFoundAndNoDigitsAreCutFromAnotherNumber() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Lent my drill to Oskar Brandt after the barbecue.\n"])
        // A model scripted to invent: every free text it writes is a number.
        let model = Self.model(writes: "His number is 0161 555 0199.")
        let (answer, _) = try await Self.ask("What is Oskar's phone number?", in: scratch, model: model)
        #expect(answer.hasPrefix("The workspace does not say"), "\(answer)")
        #expect(!answer.contains("0199") && !answer.contains("0142"), "\(answer)")
    }

    @Test func aThingNoFileMentionsIsNotFoundBeforeAnyValueIsChosen() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The shop is closed on Mondays.\n"])
        let (answer, _) = try await Self.ask("What's the alarm code at the shop?", in: scratch)
        #expect(answer.hasPrefix("The workspace does not say: no file of the workspace mentions “alarm”"), "\(answer)")
    }

    @Test func oneWordOfTheQuestionNoNoteUsesIsNoGap() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Booked the dentist: 3 December at 10:30.\n"])
        let (answer, _) = try await Self.ask("When is my dentist appointment?", in: scratch)
        #expect(answer.hasPrefix("3 December at 10:30 — "), "\(answer)")
    }

    @Test func anAmountForSomeoneIsFromALineAboutThemOrNotFound() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Paid the paint invoice online (kr 412.40).\n- Mira opens up on Saturdays now.\n"])
        let (answer, _) = try await Self.ask("How much does Mira get paid an hour?", in: scratch)
        #expect(answer.hasPrefix("The workspace does not say"), "\(answer)")
        #expect(!answer.hasPrefix("kr 412.40"))
    }

    @Test func aStateTheNewestNoteSaysEndedIsNoLonger() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(3): "# Notes\n\n- The walk-in fridge is broken again, moved the butter out.\n",
            Self.day(2): "# Notes\n\n- The engineer fixed the walk-in fridge: a new fan motor.\n",
        ])
        let (answer, _) = try await Self.ask("Is the walk-in fridge still broken?", in: scratch)
        #expect(answer.hasPrefix("No — “The engineer fixed the walk-in fridge"), "\(answer)")
    }

    @Test func aPersonNeverMentionedIsNotFoundWhateverTheModelWouldSay() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Met Mira at the station at 9.\n"])
        let (answer, _) = try await Self.ask("When did I last meet Zebedee Farrow?", in: scratch, model: Self.model(writes: "On 3 March at 10."))
        #expect(answer.hasPrefix("The workspace does not say: no line of the workspace mentions Zebedee Farrow."), "\(answer)")
        #expect(!answer.contains("March"))
    }

    @Test func aRequestNotAboutTheWorkspaceIsLabelledAsTheModelsOwn() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Met Mira at the station at 9.\n"])
        let (answer, _) = try await Self.ask("List three facts about rivers", in: scratch,
                                             model: Self.model(writes: "- Rivers flow downhill.\n- The Nile is long.\n- Rivers carry silt."))
        #expect(answer.hasPrefix(RunExecutor.generalOpening), "\(answer)")
        #expect(answer.contains("The Nile is long."), "unchecked: not stripped by the grounding check")
    }

    @Test func aWhyQuestionAboutPeopleInGeneralGetsTheModelsLabelledAnswerNotALineThatSharesAWord() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Good news: the theatre has a dock door after all.\n- Paid 40 marks for the hall.\n"])
        let (answer, _) = try await Self.ask("Why do people in the theatre say \"break a leg\" for good luck?", in: scratch,
                                             model: Self.model(writes: "Wishing luck was thought to bring the opposite."))
        #expect(answer.hasPrefix(RunExecutor.generalOpening), "\(answer)")
        #expect(!answer.contains("dock door"), "\(answer)")
    }

    @Test func tipsAskedForWithGiveMeAreGeneralThoughMeIsFirstPerson() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Baked six loaves of rye for the market.\n"])
        let (answer, _) = try await Self.ask("Give me three tips for keeping bread fresh.", in: scratch,
                                             model: Self.model(writes: "- Keep it in a cloth bag.\n- Freeze slices.\n- Avoid the fridge."))
        #expect(answer.hasPrefix(RunExecutor.generalOpening), "\(answer)")
    }

    @Test func howDoIIsGeneralWhenTheWorkspaceDoesNotSpeakOfItAndAnsweredFromItsLinesWhenItDoes() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Spilt red wine at Mira's party.\n"],
                                         files: ["Research/boiler-manual.md": "# Boiler manual\n\nTo reset the boiler, hold the reset button for five seconds.\n"])
        let (carpet, _) = try await Self.ask("How do I get red wine out of a carpet?", in: scratch, model: Self.model(writes: "Blot it, then salt."))
        #expect(carpet.hasPrefix(RunExecutor.generalOpening), "\(carpet)")
        let (reset, _) = try await Self.ask("How do I reset the boiler?", in: scratch, model: Self.model(writes: "Call an engineer."))
        #expect(reset.contains("hold the reset button for five seconds"), "\(reset)")
    }

    @Test func aWhyQuestionAboutTheWorkspacesOwnThingIsAnsweredFromItsLine() async throws {
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The hut is closed on Monday because the roof is being mended.\n"])
        let (answer, _) = try await Self.ask("Why is the hut closed on Monday?", in: scratch, model: Self.model(writes: "Nobody knows."))
        #expect(!answer.hasPrefix(RunExecutor.generalOpening), "\(answer)")
        #expect(answer.contains("roof is being mended"), "\(answer)")
    }

    // MARK: Documents

    @Test func theNewestReleaseOfReleaseNotesTheRequestNamesIsTheirLatestDatedHeading() async throws {
        let notes = """
            # Lumen release notes

            Lumen plays your show's cues from one laptop.

            ## 4.3 (12 October 2026)

            - A phone can be the GO button, over the local network.

            ## 4.2 (3 August 2026)

            - Fades can be paused. Released on a Monday, 3 August 2026, after a beta of 2 weeks.

            ## 4.1 (20 May 2026)

            - First release with sound cues.
            """
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- Updated Lumen on the laptop on 1 September 2026.\n"],
                                         files: ["Research/lumen-release-notes.md": notes])
        let (answer, _) = try await Self.ask("What's the newest Lumen release?", in: scratch)
        #expect(answer.hasPrefix("4.3"), "\(answer)")
        #expect(answer.contains("12 October 2026") && answer.contains("the latest of 3"), "\(answer)")
        let (first, _) = try await Self.ask("Which was the first Lumen release?", in: scratch)
        #expect(first.hasPrefix("4.1"), "\(first)")
    }

    @Test func aStreetAddressOfCottagesAUnitAfterANumberAndAColumnTheQuestionNames() async throws {
        #expect(ValueSpans.find(.address, in: "Jorvik Brannagh: 3 Quarry Cottages, Mill Basin. Phone 0779 115 342.").first == "3 Quarry Cottages, Mill Basin")
        #expect(RunExecutor.followsNumber("Ah", in: "the Sunmark 200 Ah, fitted by Jorvik."))
        #expect(!RunExecutor.followsNumber("Jorvik", in: "the Sunmark 200 Ah, fitted by Jorvik."))
        let battery = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The boat's new battery bank is the Sunmark 200 Ah, fitted by Jorvik.\n"])
        let (fitter, _) = try await Self.ask("Who's putting the new battery in on the boat?", in: battery)
        #expect(fitter.hasPrefix("Jorvik — "), "\(fitter)")
        let programme = """
            # Spring concert

            | Piece | Composer | Soloist | Length |
            | --- | --- | --- | --- |
            | Lantern Hill | Per Ambrose | none | 8 minutes |
            | Violin Concerto in G | Rhona Vell | Ilse Marsh, violin | 11 minutes |
            | Glass Meadow | Ansel Frey | none | 18 minutes |
            """
        let scratch = try Self.workspace(notes: [Self.day(2): "# Notes\n\n- Sat down with Clement and settled the spring concert: Saturday 8 April.\n"],
                                         files: ["Research/spring-concert.md": programme])
        let (soloist, _) = try await Self.ask("Who's the soloist at the spring concert?", in: scratch)
        #expect(soloist.hasPrefix("Ilse Marsh, violin — "), "the Soloist column, its one filled cell: \(soloist)")
        let (length, _) = try await Self.ask("What is the length of Glass Meadow?", in: scratch)
        #expect(length.hasPrefix("18 minutes — "), "the row that names the rest of the question: \(length)")
    }

    @Test func aYearInsideAReferenceIsNoDateOfTheLine() async throws {
        let scratch = try Self.workspace(files: ["Research/boat-safety-report.md": "# Boat safety report\n\nCertificate number CRT-2031-40217, valid until 10 March 2032.\n"])
        let (answer, _) = try await Self.ask("When does the boat's safety certificate run out?", in: scratch)
        #expect(answer.hasPrefix("10 March 2032 — "), "\(answer)")
        #expect(RunExecutor.isInsideReference("2028", in: "Invoice INV-2028-004 paid in 2028.") == false, "written alone too")
        try scratch.write("Research/festival.md", "# Canal festival\n\nThe canal festival returns to the basin on Saturday 17 and Sunday 18 June 2028, with boats.\n")
        let (festival, _) = try await Self.ask("When's the canal festival this year?", in: scratch)
        #expect(festival.hasPrefix("Saturday 17 and Sunday 18 June 2028") || festival.hasPrefix("17 and Sunday 18 June 2028") || festival.contains("18 June 2028 — "),
                "\(festival)")
    }

    @Test func whichVersionBroughtSomethingInIsTheHeadingOfTheReleaseNotesSectionItIsIn() async throws {
        let notes = """
            # Lumen release notes

            ## 4.3 (12 October 2026)

            - A phone can be the GO button, over the local network.

            ## 4.2 (3 August 2026)

            - Fades can be paused.
            - A chart of cue timings after each show.
            """
        let scratch = try Self.workspace(notes: [Self.day(1): "# Notes\n\n- The cue timing chart helped at the dress rehearsal.\n"],
                                         files: ["Research/lumen-release-notes.md": notes])
        let (answer, _) = try await Self.ask("Which version of Lumen brought in the chart of cue timings?", in: scratch)
        #expect(answer.hasPrefix("4.2 — “A chart of cue timings after each show.” (Research/lumen-release-notes.md:10)"), "\(answer)")
        let (phone, _) = try await Self.ask("Which Lumen version first let you use a phone as the GO button?", in: scratch)
        #expect(phone.hasPrefix("4.3 — "), "\(phone)")
    }

    @Test func aShortDocumentsSummaryWithItsOpeningStaysWithinHalfDroppingTheBulletWithFewestFacts() {
        let document = """
            # Bike service prices, spring 2027

            Larch Cycles services bikes in the yard behind the shop, Tuesday to Saturday.
            A basic service costs 45 crowns and takes one day.
            A full service costs 95 crowns, with new cables, and takes two days.
            Wheels are trued while you wait.
            """
        let bullets = "- A basic service costs 45 crowns and takes one day.\n- A full service costs 95 crowns, with new cables, and takes two days.\n- Wheels are trued while you wait."
        let overview = "Larch Cycles services bikes in the yard behind the shop, Tuesday to Saturday."
        let summary = RunExecutor.withinHalf(overview: overview, bullets: bullets, of: document)
        #expect(RunExecutor.visibleLength(of: summary) <= RunExecutor.visibleLength(of: document) / 2, "\(summary)")
        #expect(summary.hasPrefix(overview), "\(summary)")
        #expect(!summary.contains("Wheels are trued"), "the bullet with no number goes first: \(summary)")
        #expect(summary.contains("45 crowns"), "\(summary)")
        let roomy = document + String(repeating: "\nThe shop sells bells, lights and locks of every kind for town bikes.", count: 6)
        #expect(RunExecutor.withinHalf(overview: overview, bullets: bullets, of: roomy) == overview + "\n\n" + bullets, "within half: kept whole")
    }

    @Test func theNewerMessageOfAThreadSaysWhenItIsNowNotTheQuotedOneNorTheHeader() async throws {
        let thread = """
            Subject: RE: the club dinner
            From: Bettina Lorrimer
            Date: Wednesday 14 October 2026, 11:26

            Dear Maren,

            I am sorry, but we have double-booked the hall on Friday 20 November.
            I can offer you Friday 27 November 2026 instead, in the same room, with the dinner
            starting at 19:30.

            > From: Maren Quillby
            > Sent: Thursday 1 October 2026, 15:40
            >
            > We confirm the club dinner on Friday 20 November 2026, from 19:00.
            """
        let scratch = try Self.workspace(files: ["Research/dinner-thread.md": thread])
        let (answer, _) = try await Self.ask("When is the club dinner now?", in: scratch)
        #expect(answer.hasPrefix("Friday 27 November 2026 at 19:30 — “I can offer you Friday 27 November 2026 instead"), "\(answer)")
    }

    @Test func aWeekdayBeforeACalendarDateIsPartOfItAndAMoveSaysWhenTheNextOneIs() async throws {
        let scratch = try Self.workspace(notes: [
            Self.day(9): "# Notes\n\n- Next book club: Tuesday 13 July 2027, 19:30, at the library.\n",
            Self.day(2): "# Notes\n\n- Ada rang: the book club moves to Wednesday 14 July, same time (19:30).\n",
        ])
        let (answer, _) = try await Self.ask("When's the next book club?", in: scratch)
        #expect(answer.hasPrefix("Wednesday 14 July"), "the weekday with its date, and the date it moved to: \(answer)")
    }

    @Test func anyWordAfterAnAmountWithCentsIsItsCurrency() {
        #expect(AnswerEvidence.isCurrency("thalers", after: "1.50"))
        #expect(AnswerEvidence.isCurrency("crowns", after: "40"), "a known currency needs no cents")
        #expect(!AnswerEvidence.isCurrency("thalers", after: "40"), "an unknown word after a whole number is not taken for money")
        #expect(!AnswerEvidence.isCurrency("metres", after: "3.50"), "a unit is no currency")
        #expect(!AnswerEvidence.isCurrency("each", after: "2.50"), "a common word is no currency")
    }

    @Test func gcPrunesTheTextKeptForDocumentsNoFileHoldsAndKeepsTheRest() throws {
        let scratch = try Self.workspace(files: ["Research/a.html": "<html><body><p>Ferry at 9.</p></body></html>",
                                                 "Research/b.html": "<html><body><p>Bus at 10.</p></body></html>",
                                                 "Research/c.html": "<html><body><p>Tram at 11.</p></body></html>"])
        let sources = SourceText(workspace: scratch.workspace)
        for name in ["a", "b", "c"] { _ = sources.text(of: "Research/\(name).html") }
        let cache = scratch.root + "/.relay/cache/text"
        #expect((try? FileManager.default.contentsOfDirectory(atPath: cache))?.count == 3)
        try FileManager.default.removeItem(atPath: scratch.root + "/Research/b.html")
        try scratch.write("Research/c.html", "<html><body><p>Tram at 11.30.</p></body></html>")
        let dry = try TextCache.prune(in: scratch.workspace, dryRun: true)
        #expect(dry.pruned.count == 2 && dry.kept == 1, "a deleted document's text and an edited one's old text: \(dry)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: cache))?.count == 3, "a dry run changes nothing")
        let done = try TextCache.prune(in: scratch.workspace, dryRun: false)
        #expect(done.pruned == dry.pruned && done.bytesFreed > 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: cache)
        #expect(left == [try scratch.workspace.hash("Research/a.html").hex + ".md"], "the current document's text is kept: \(left)")
    }

    @Test func anHTMLPageDroppedInResearchIsSearchedAsItsTextConvertedOnce() async throws {
        guard InputConverter.executable("pandoc") != nil else { return }
        let page = "<html><body><h1>Brill ferry</h1><p>The crossing takes <b>55 minutes</b>. Be at the quay early.</p></body></html>"
        let scratch = try Self.workspace(files: ["Research/brill-ferry.html": page])
        let (answer, _) = try await Self.ask("How long does the Brill ferry crossing take?", in: scratch)
        #expect(answer.hasPrefix("55 minutes — "), "\(answer)")
        #expect(answer.contains("(Research/brill-ferry.html:"), "\(answer)")
        let cache = scratch.root + "/.relay/cache/text"
        #expect((try? FileManager.default.contentsOfDirectory(atPath: cache))?.count == 1, "one conversion kept, named by the page's bytes")
    }

    @Test func aReleaseNotesHeadingAndATableSurviveSentenceSplitting() {
        #expect(RunExecutor.bare("4.3 (12 October 2026)") == "4.3 (12 October 2026)")
        #expect(RunExecutor.bare("2. Fixed the login") == "Fixed the login")
        #expect(RunExecutor.bare("**Total for May:** 40 euros") == "Total for May: 40 euros", "a bold lead leaves no marks behind")
        let notes = "# Changelog\n\n## 4.3 (12 October 2026)\n\n- Faster sync.\n\n## 4.2 (1 September 2026)\n\n- Dark mode.\n"
        let units = Sentences.split(DocumentShape.prepared(notes)).map(RunExecutor.bare)
        #expect(units.contains("4.3 (12 October 2026)"), "\(units)")
        #expect(units.contains("4.2 (1 September 2026)"))
        let table = "| Roofer | Price |\n|---|---|\n| Tamsin Roofing | 3,400 euros |\n| Northgate | 2,950 euros |\n"
        let rows = Sentences.split(DocumentShape.prepared(table)).map(RunExecutor.bare)
        #expect(rows == ["Tamsin Roofing: 3,400 euros", "Northgate: 2,950 euros"], "\(rows)")
        let timetable = "| From Harwick | From Brill |\n|---|---|\n| 07:10 | 08:15 |\n"
        #expect(Sentences.split(DocumentShape.prepared(timetable)).map(RunExecutor.bare) == ["From Harwick: 07:10; From Brill: 08:15"],
                "a row of times is written with its header")
    }

    @Test func anEmailThreadsNewestMessageComesFirstAndItsQuotedRepliesAfterAsContext() {
        let thread = """
            **From:** Jonas
            **Subject:** Re: delivery

            Dear Ada,

            The delivery moves to 9 December, a week later.
            The driver will call an hour before.
            Please keep the gate open.

            Kind regards,
            Jonas

            On 1 December, Ada wrote:
            > The delivery is on 2 December.
            > The sofa is booked as order SF-2210.
            """
        let prepared = DocumentShape.prepared(thread)
        let newest = prepared.range(of: "9 December")?.lowerBound, earlier = prepared.range(of: "Earlier in the thread")?.lowerBound
        #expect(newest != nil && earlier != nil && newest! < earlier!, "\(prepared)")
        #expect(prepared.contains("The sofa is booked as order SF-2210."), "what only the earlier message says stays: \(prepared)")
        #expect(!prepared.contains(">") && !prepared.contains("Dear Ada") && !prepared.contains("Kind regards"), "\(prepared)")
        #expect(prepared.contains("- From: Jonas"), "a bold header is a header: \(prepared)")
    }
}

/// A count shared with a scripted model's closure.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
