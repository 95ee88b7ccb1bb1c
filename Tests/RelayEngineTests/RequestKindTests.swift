import Foundation
@testable import RelayEngine
import Testing

/// The kind of a request is decided from its grammar (RequestRules): each kind from a dozen
/// phrasings, several of them in words the evaluation never uses.
@Suite struct RequestKindTests {
    static let today = "2026-11-27"  // a Friday

    static func kind(_ request: String) -> RequestKind { RequestRules.analyse(request, today: today).kind }

    @Test(arguments: [
        "What is my sister called?", "Who did I lend my drill to?", "When is my dentist appointment?", "How much did the kettle cost?",
        "Where does Oskar live?", "What's the wifi password?", "Which bakery sells the rye bread?", "Why did the meeting move?",
        "Can you tell me who fixed the boiler?", "What time does the train leave?", "Tell me the name of the vet",
        "How many samples did the lab take?", "By when does the printer want the cast list?", "Where is the shopping list kept?",
    ])
    func aQuestionForOneValueIsALookup(_ request: String) {
        #expect(Self.kind(request) == .lookup, "\(request)")
    }

    @Test(arguments: [
        "What is still on my to-do list?", "List my open tasks", "What do I still need to do?", "Which books did I borrow? List all of them",
        "What are all the plants I bought?", "list everything I have to do before Friday", "Please list the chores", "What's on my todo list?",
        "Enumerate the tools in the shed", "what else do I have to do this week", "Name all the people I met", "What are my tasks?",
        "Give me five ideas for the garden", "What's left on my list?", "Who did we invite to the wedding?", "What have we bought from the timber yard?", "What's outstanding?", "Anything left on my plate?", "What haven't I done yet?",
    ])
    func aRequestForEveryMatchingItemIsAList(_ request: String) {
        #expect(Self.kind(request) == .list, "\(request)")
    }

    @Test(arguments: [
        "Did I pay the plumber?", "Have I called the vet yet?", "Is the dentist appointment on Thursday?", "Was the parcel delivered?",
        "Does Oskar still have my drill?", "Can Mira come to the party?", "Do I need to renew my passport?", "Are the tickets booked?",
        "Has the landlord answered?", "Will the shop open on Sunday?", "Should I bring the charger?", "Didn't I already buy milk?",
    ])
    func aRequestOpeningWithAnAuxiliaryIsYesOrNo(_ request: String) {
        #expect(Self.kind(request) == .yesNo, "\(request)")
    }

    @Test(arguments: [
        ("How much did I spend on the kettle and the toaster in total?", RequestAnalysis.Operation.sum),
        ("What did the train and the hotel cost altogether?", .sum), ("Add up the deposit and the first rent", .sum),
        ("How many days between the dentist and the party?", .daysBetween), ("How many days until my flight?", .daysBetween),
        ("How much more did the sofa cost than the chair?", .difference), ("What is the difference between the two quotes?", .difference),
        ("How long until the lease ends?", .daysBetween), ("What is the sum of the two deposits?", .sum),
        ("How many days are there between the two deadlines?", .daysBetween), ("How much did the garage knock off the bill?", .difference),
        ("How much has the rent gone up by?", .difference), ("How long ago did I last see the dentist?", .daysBetween),
        ("How much did the holiday cost all in?", .sum), ("How much cheaper was the second quote?", .difference),
        ("How many times did I go swimming?", .count),
    ])
    func arithmeticIsComputeWithItsOperation(_ request: String, _ operation: RequestAnalysis.Operation) {
        let analysis = RequestRules.analyse(request, today: Self.today)
        #expect(analysis.kind == .compute, "\(request)")
        #expect(analysis.operation == operation, "\(request)")
    }

    @Test(arguments: [
        ("Which quote is the cheapest?", RequestAnalysis.Operation.lowest), ("Which roofer was most expensive?", .highest),
        ("What is the latest version?", .latest), ("Which appointment is earliest?", .earliest), ("Who offered the lowest price?", .lowest),
        ("Which flat is the largest?", .highest), ("What is the newest release?", .latest), ("Which supplier is cheaper?", .lowest),
        ("Which is the oldest invoice?", .earliest), ("Which hike was the longest?", .highest), ("Which shop had the highest price?", .highest),
        ("Which was the first one we booked?", .earliest), ("What time is the last ferry back on a Saturday?", .latest),
        ("When is my first appointment with the new dentist?", .earliest), ("Which quote is the best value?", .lowest),
        ("Which of the venues is closest?", .lowest),
    ])
    func superlativesAreComparisons(_ request: String, _ operation: RequestAnalysis.Operation) {
        let analysis = RequestRules.analyse(request, today: Self.today)
        #expect(analysis.kind == .compare, "\(request)")
        #expect(analysis.operation == operation, "\(request)")
    }

    @Test(arguments: [
        "Summarise my week", "Summarize this week's notes in three bullets", "What did I do on Tuesday?", "Give me a summary of the meeting",
        "Recap yesterday", "sum up the last 3 days", "What happened last week?", "Can you give me an overview of the project?",
        "catch me up on the garden", "What did I do yesterday?", "Outline the report", "How was my weekend?",
        "Give me a quick summary of my week.", "Give me the highlights of my week.", "What was I busy with this week?",
        "Anything interesting happen this week?", "What does the lease say?", "Tell me what the minutes say.", "What's in the boiler emails?",
        "Give me the short version of the report.",
    ])
    func aRequestForASummaryIsSummarise(_ request: String) {
        #expect(Self.kind(request) == .summarise, "\(request)")
    }

    @Test(arguments: [
        "Draft a message to Oskar asking for my drill back", "Write a short email to the landlord about the boiler",
        "Compose a thank-you note for Mira", "Please write a reply to Jonas", "Draft a reminder for the team meeting",
        "Write a text to my sister about Sunday", "Can you draft an invitation to the party?", "Prepare a note for the plumber",
        "write an apology to Ada", "Draft an answer to the council", "Write a letter to the bank", "Compose a message to the neighbours",
        "Text Mira to say I'm running late.", "Send a reminder to Oskar about the drill.",
    ])
    func aRequestForNewTextAboutTheNotesIsADraft(_ request: String) {
        #expect(Self.kind(request) == .draft, "\(request)")
    }

    @Test func aQuestionForAReferenceWantsTheValueNotYesOrNo() {
        let analysis = RequestRules.analyse("Do I have a booking reference for the ferry?", today: Self.today)
        #expect(analysis.kind == .lookup && analysis.value == .code, "\(analysis)")
        #expect(RequestRules.analyse("Do I have a dentist appointment this week?", today: Self.today).kind == .yesNo)
        #expect(RequestRules.analyse("How much flour goes in the pie?", today: Self.today).value == .number, "a quantity")
        #expect(RequestRules.analyse("How much did the pie cost?", today: Self.today).value == .money)
        #expect(RequestRules.analyse("When does the pharmacy close on Sundays?", today: Self.today).value == .time)
        #expect(RequestRules.analyse("Who do I call about the boiler? I need the number.", today: Self.today).value == .phone)
        #expect(RequestRules.analyse("What does F04 on the boiler mean?", today: Self.today).value == .reason)
        #expect(RequestRules.analyse("And what's her number?", today: Self.today).value == .phone, "a person's number is a phone number")
        #expect(RequestRules.analyse("What is our plot number?", today: Self.today).value == .number)
    }

    @Test func theLastTimeAndLastWeekAreSpansOfTimeNotComparisons() {
        #expect(Self.kind("What did I eat the last time I saw Mira?") != .compare)
        #expect(Self.kind("Where did I park the last few days?") != .compare)
        #expect(Self.kind("Who came round last week?") != .compare)
    }

    @Test func everyAsATimeWordAndItAsTheQuestionsSubjectChangeNothing() {
        #expect(Self.kind("Who made the stew every winter?") == .lookup)
        #expect(RequestRules.refersBack("What is his email address?"))
        #expect(!RequestRules.refersBack("How much does it cost?"), "it: the previous question's subject, not its answer")
    }

    @Test func aPoemIsNoDraftAndAnImperativeOfNoKnownKindIsOther() {
        #expect(Self.kind("Write a poem about autumn") == .other)
        #expect(Self.kind("Translate hello into French") == .other)
    }

    @Test func theValueALookupAsksForIsReadFromItsWords() {
        func value(_ request: String) -> ValueKind? { RequestRules.analyse(request, today: Self.today).value }
        #expect(value("What is Oskar's email address?") == .email)
        #expect(value("What's the plumber's phone number?") == .phone)
        #expect(value("Where does Oskar live?") == .address)
        #expect(value("What is the address of the bakery?") == .address)
        #expect(value("When is my dentist appointment?") == .date)
        #expect(value("What time does the train leave?") == .time)
        #expect(value("How much did I pay for the kettle?") == .money)
        #expect(value("How many samples were taken?") == .number)
        #expect(value("Who fixed the boiler?") == .person)
        #expect(value("Where is the workshop?") == .place)
        #expect(value("Why did the meeting move?") == .reason)
        #expect(value("What is the website of the museum?") == .url)
    }

    @Test func theDaysARequestNamesAreCountedFromToday() {
        func days(_ request: String) -> RequestAnalysis.DayRange? { RequestRules.analyse(request, today: Self.today).days }
        #expect(days("Summarise my week").map { [$0.from, $0.to] } == ["2026-11-21", "2026-11-27"])
        #expect(days("What did I do this week?").map { [$0.from, $0.to] } == ["2026-11-23", "2026-11-27"])
        #expect(days("What happened last week?").map { [$0.from, $0.to] } == ["2026-11-16", "2026-11-22"])
        #expect(days("What did I do yesterday?").map { [$0.from, $0.to] } == ["2026-11-26", "2026-11-26"])
        #expect(days("What did I do on Tuesday?").map { [$0.from, $0.to] } == ["2026-11-24", "2026-11-24"])
        #expect(days("What did I do in October?").map { [$0.from, $0.to] } == ["2026-10-01", "2026-10-31"])
        #expect(days("What is my sister called?") == nil)
    }

    @Test func aCountInTheRequestLimitsTheItems() {
        #expect(RequestRules.analyse("Summarise my week in three bullets", today: Self.today).count == 3)
        #expect(RequestRules.analyse("List the top 5 tasks", today: Self.today).count == 5)
        #expect(RequestRules.analyse("Summarise my week", today: Self.today).count == nil)
    }

    @Test func aPluralAfterWhichOrWhatAsksForEveryItem() {
        #expect(Self.kind("Which people have I lent things to?") == .list)
        #expect(Self.kind("What books did I order from the shop?") == .list)
        #expect(Self.kind("What hours is the library open on Sundays?") == .lookup, "a plural of time asks for one span")
        #expect(Self.kind("What does E12 on the boiler mean?") == .lookup, "an auxiliary is no plural")
        #expect(Self.kind("Which address did Oskar give?") == .lookup)
    }

    @Test func aSuperlativeThatEndsTheQuestionCompares() {
        #expect(Self.kind("Which market took the most?") == .compare)
        #expect(Self.kind("Who paid the least?") == .compare)
        #expect(Self.kind("What did I do last?") != .compare, "no “the”: a time, not a pick among things")
    }

    @Test func moreWaysOfAskingForArithmeticAndForAValue() {
        #expect(Self.kind("What did the jars and the frames cost me between them?") == .compute)
        #expect(Self.kind("How many days are there from the delivery to the show?") == .compute)
        #expect(Self.kind("Have I got an email address for Lorcan?") == .lookup, "the value, not yes or no")
    }

    @Test func whatAThingIsAboutAsksForASummaryOfIt() {
        #expect(Self.kind("What is the lease about?") == .summarise)
        #expect(Self.kind("What's the email thread with the garage about?") == .summarise)
        #expect(Self.kind("What is the film about the river called?") == .lookup, "about in the middle: a value asked for")
    }

    @Test func theKindAndWhyAreShownInOneLine() {
        let shown = RequestRules.analyse("Did I pay the plumber?", today: Self.today).shown
        #expect(shown == "Request kind: yes/no — opens with “did”: a yes/no question")
    }
}
