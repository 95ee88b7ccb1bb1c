import Foundation

/// Decides a request's kind from its grammar: the words it opens with (a question word, an
/// auxiliary verb, an imperative), and a few phrases that say what is wanted ("in total",
/// "cheapest", "to-do"). Every rule is a row of a table below with the reason it exists; a new
/// phrasing goes into a table, not into code. Pure functions of their arguments.
///
/// For example:
/// ```swift
/// RequestRules.analyse("Did I pay the plumber?", today: "2026-11-27").kind      // .yesNo
/// RequestRules.analyse("What is still on my to-do list?", today: "2026-11-27").kind   // .list
/// ```
enum RequestRules {
    // MARK: The tables

    /// Polite openings that say nothing about the kind: "please", "can you" before a verb
    /// ("Can you tell me who …" is a lookup, not a yes/no question).
    static let politeOpenings: [[String]] = [
        ["please"], ["can", "you"], ["could", "you"], ["would", "you"], ["will", "you"], ["can", "i", "have"],
        ["i", "want", "to", "know"], ["i'd", "like", "to", "know"], ["i", "wonder"], ["do", "you", "know"],
        ["tell", "me"], ["remind", "me"], ["show", "me"], ["give", "me"], ["find"], ["find", "out"], ["look", "up"], ["check"],
    ]

    /// Verbs that open a request for new text; with one of ``draftObjects`` it is a draft.
    static let draftVerbs: Set<String> = ["draft", "write", "compose", "prepare", "pen", "send"]
    /// Verbs that are a message themselves: "Text Mira to say I'm late", "Email the landlord about the damp".
    static let messageVerbs: Set<String> = ["text", "email", "e-mail", "message", "reply", "sms", "whatsapp"]
    /// What a draft is (a poem or a story is new text too, but about nothing in the notes: other).
    static let draftObjects: Set<String> = ["message", "email", "e-mail", "note", "reply", "letter", "text", "invitation", "invite",
                                            "card", "thank-you", "reminder", "post", "answer", "response", "apology", "request", "sms"]

    /// Openings and phrases of a request for a summary.
    /// The words of asking for a summary, as search terms: not what the summary is about.
    static let summaryTerms: Set<String> = Set(SearchTerms.terms(of: "summarise summarize summary sum up recap outline overview digest gist main key points rundown round-up roundup review about thread"))
    static let summaryOpenings: Set<String> = ["summarise", "summarize", "recap", "outline", "overview", "digest"]
    static let summaryPhrases: [String] = [
        "sum up", "a summary", "an overview", "what did i do", "what have i done", "what happened", "how was my", "catch me up",
        "what went on", "the gist", "main points", "key points", "what was my week", "what did we do",
        "a rundown", "the rundown", "rundown of", "run-down", "run down of", "been up to", "did i get up to", "what have we done",
        "a round-up", "round up", "a roundup", "a review of my", "short version", "highlights of", "the highlights",
        // "How's the work on the boat coming along?": how a thing is going is a summary of it.
        "coming along", "getting on with", "progress on", "progress with", "where are we with", "how are things with", "how is it going",
    ]
    /// Nouns of a summary, anywhere in the request ("Give me a quick summary of my week").
    static let summaryNouns: Set<String> = ["summary", "recap", "rundown", "run-down", "overview", "gist", "highlights", "digest", "round-up", "roundup"]

    /// The things arithmetic is over, as the request names them: joined with "and" or commas
    /// ("the boiler repair and the new tiles"), or "from" one "to" another ("from the delivery to
    /// the show"). One part when it names them no such way.
    static func operandParts(_ question: String) -> [String] {
        let lowered = question.lowercased()
        let parts = lowered.components(separatedBy: " and ").flatMap { $0.components(separatedBy: ", ") }
        if parts.count >= 2 { return parts }
        if let from = lowered.range(of: " from "), let to = lowered.range(of: " to ", range: from.upperBound..<lowered.endIndex) {
            return [String(lowered[..<to.lowerBound]), String(lowered[to.upperBound...])]
        }
        return parts
    }

    /// Phrases of arithmetic, and the operation each means. "How many days until" counts days
    /// from today; "in total" adds what the notes hold.
    static let computePhrases: [(phrase: String, operation: RequestAnalysis.Operation)] = [
        ("how many days between", .daysBetween), ("how many days until", .daysBetween), ("how many days till", .daysBetween),
        ("how many days since", .daysBetween), ("how many days from", .daysBetween), ("how many days before", .daysBetween),
        ("how many days after", .daysBetween), ("how many days are there between", .daysBetween), ("how many days is it until", .daysBetween),
        ("how many days are there from", .daysBetween), ("how many days is it from", .daysBetween), ("how many days are there until", .daysBetween),
        ("how many weeks between", .daysBetween), ("how many weeks until", .daysBetween), ("how long until", .daysBetween),
        ("how long ago", .daysBetween), ("how long since", .daysBetween), ("how long has it been since", .daysBetween),
        ("how long between", .daysBetween), ("how long is it until", .daysBetween), ("days apart", .daysBetween),
        ("how much more", .difference), ("how many more", .difference), ("difference between", .difference), ("how much less", .difference),
        ("how much cheaper", .difference), ("how much dearer", .difference), ("how much is left", .difference), ("minus", .difference),
        // A price that changed: "How much did they knock off?", "How much has the rent gone up by?"
        ("knock off", .difference), ("knocked off", .difference), ("take off", .difference), ("taken off", .difference),
        ("come down by", .difference), ("came down by", .difference), ("gone down by", .difference), ("went down by", .difference),
        ("go up by", .difference), ("gone up by", .difference), ("went up by", .difference), ("come up by", .difference),
        ("reduced by", .difference), ("increased by", .difference),
        ("in total", .sum), ("altogether", .sum), ("all together", .sum), ("combined", .sum), ("the total", .sum), ("total cost", .sum),
        ("sum of", .sum), ("add up", .sum), ("added up", .sum), ("in all", .sum), ("plus", .sum), ("together", .sum),
        ("between them", .sum), ("between the two", .sum), ("across all", .sum), ("over all the", .sum), ("all in", .sum),
        // "What did the solar panels come to?": what several things cost (one thing's is a lookup).
        ("come to", .sum), ("came to", .sum), ("comes to", .sum), ("all told", .sum),
        ("how many times", .count),
    ]

    /// Superlatives and comparatives, and which end of the values they want.
    static let compareWords: [(phrase: String, operation: RequestAnalysis.Operation)] = [
        // Comparatives first: "Which act runs longer, the first or the second?" compares lengths.
        ("sold best", .highest), ("sells best", .highest), ("best-selling", .highest), ("best selling", .highest),
        ("selling best", .highest), ("selling well", .highest), ("sold the most", .highest), ("most popular", .highest),
        ("more expensive", .highest), ("dearer", .highest), ("longer", .highest), ("shorter", .lowest), ("bigger", .highest),
        ("larger", .highest), ("smaller", .lowest), ("higher", .highest), ("lower", .lowest), ("heavier", .highest), ("older", .earliest),
        ("newer", .latest),
        ("least expensive", .lowest), ("most expensive", .highest), ("cheapest", .lowest), ("cheaper", .lowest), ("lowest", .lowest),
        ("smallest", .lowest), ("fewest", .lowest), ("least", .lowest), ("shortest", .lowest), ("dearest", .highest),
        ("highest", .highest), ("largest", .highest), ("biggest", .highest), ("longest", .highest), ("most", .highest),
        ("priciest", .highest), ("best paid", .highest), ("earliest", .earliest), ("soonest", .earliest), ("oldest", .earliest),
        ("first", .earliest), ("latest", .latest), ("newest", .latest), ("most recent", .latest), ("last", .latest),
        // Value for money and distance: "the best value" is the lowest price, "closest" the shortest way.
        ("best value", .lowest), ("best deal", .lowest), ("best price", .lowest), ("closest", .lowest), ("nearest", .lowest),
        ("furthest", .highest), ("farthest", .highest),
    ]
    /// Comparatives that also say other things ("no longer", "a bigger problem"): they compare
    /// only in a question that opens with which, who or what ("Which act runs longer?").
    static let choiceCompareWords: Set<String> = ["longer", "shorter", "bigger", "larger", "smaller", "higher", "lower", "heavier", "older", "newer", "dearer"]
    /// Superlatives above that also open ordinary lookups ("When is my first appointment?" still
    /// compares; "What did I do last" does not): they count only after "which", "what", "who"
    /// and a noun, or before "one".
    static let weakCompareWords: Set<String> = ["first", "last", "most", "least"]

    /// Openings and phrases of a request for every matching item.
    static let listOpenings: Set<String> = ["list", "enumerate", "itemise", "itemize"]
    static let listPhrases: [String] = [
        "list ", "all of them", "what are all", "which are all", "all the", "each of", "what are my", "what are the", "which ones",
        "what else", "name all", "name every", "anything i", "what things", "what do i have to", "what is on my", "what's on my",
        "to-do", "todo", "to do list", "to do", "still need to", "need to do", "have to do", "left to do", "open tasks", "my tasks",
        "chores", "errands", "what should i", "what must i", "what do i still",
        // "What's outstanding?", "Anything left on my plate?", "What haven't I done yet?"
        "outstanding", "on my plate", "anything left", "what haven't i", "haven't done", "need to buy", "have to buy", "need to get",
        // "Who" with a verb of coming or being there asks for the set of people, not one person.
        "who is coming", "who's coming", "who are coming", "who came", "who was at ", "who were at ", "who turned up", "who will come", "who attended", "who went", "who was there",
        "who is invited", "who was invited", "who are invited", "who is going", "who's going",
        "who have i invited", "who did i invite", "who have we invited", "who did we invite",
        // "Who's in the cast?", "who is on the committee?": the members.
        "who is in the ", "who are in the ", "who was in the ", "who is on the ", "who are on the ",
        // "What's on in March?", "What is left on my list?": the events, the open items.
        "what is on ", "what is left ", "on my list",
        // "What did I get at the hardware shop?": a purchase is seldom one thing.
        "what did i buy", "what did i get at", "what did i order", "what have i bought", "what have i ordered", "what did we buy",
        "what have we bought", "what have we ordered", "what did we order", "what did we get at", "what did we get from", "what did i get from",
        // "What's new in 3.2?", "What changed in the lease?": every change.
        "what is new", "what are the new", "what changed", "what has changed", "what have they changed",
        // "Who's doing what after the meeting?": every action and its person.
        "doing what", "do what", "does what",
    ]
    /// Phrases that make a request about open tasks (the engine then reads the task lines of the
    /// notes, not the lines most like the request).
    static let taskPhrases: [String] = [
        "to-do", "todo", "to do", "need to", "have to", "must i", "should i", "tasks", "task list", "chores", "errands",
        "left to do", "still need", "outstanding", "pending", "open items", "not done", "haven't done", "remind me to",
        "on my list", "left on my", "what is left",
    ]
    /// "Do I have a confirmation number for the hotel?": an auxiliary, but asking for a value
    /// the person hopes is in the notes — answered with it, not with "yes".
    static let valueQuestionOpenings: [String] = [
        "do i have a", "do i have an", "do i have the", "do we have a", "do we have an", "do we have the", "have i got a", "have we got a",
        "have i got an", "have we got an", "have i got the", "do i have any", "have i got any",
        "is there a", "is there an",
    ]

    /// Auxiliary verbs: a request that opens with one (after any polite opening) asks yes or no.
    static let auxiliaries: Set<String> = [
        "did", "do", "does", "is", "are", "was", "were", "have", "has", "had", "can", "could", "will", "would", "should", "am",
        "shall", "may", "must", "didn't", "don't", "doesn't", "isn't", "aren't", "wasn't", "haven't", "hasn't",
    ]

    /// Question words: a request that holds one near its start asks for one value.
    static let questionWords: Set<String> = ["who", "whom", "whose", "what", "when", "where", "which", "why", "how"]

    /// Phrases that say which kind of value a lookup asks for, in the order they are tried (the
    /// more specific first: "email address" before "address", "what time" before "when").
    static let valuePhrases: [(phrase: String, value: ValueKind)] = [
        // Nouns that name the value whatever the question word.
        ("email", .email), ("e-mail", .email), ("mail address", .email),
        ("phone", .phone), ("mobile number", .phone), ("mobile", .phone), ("telephone", .phone), ("cell number", .phone), ("number can i call", .phone),
        ("website", .url), ("web address", .url), ("url", .url), ("web page", .url), ("link to", .url),
        // A reference of letters and digits ("KX-5512"), not a quantity.
        ("confirmation number", .code), ("confirmation code", .code), ("booking number", .code), ("booking reference", .code),
        ("booking code", .code), ("reference number", .code), ("reference", .code), ("policy number", .code), ("order number", .code),
        ("flight number", .code), ("membership number", .code), ("tracking number", .code), ("error code", .code), ("code", .code),
        // Then the question word decides ("Who will pay the rent?" asks for a person, "How many
        // samples were lost when …" for a number): measures first, then time, people, places.
        ("how much", .money), ("what price", .money), ("come to", .money), ("came to", .money), ("comes to", .money),
        ("how many", .number), ("how far", .number), ("how long", .number), ("how old", .number), ("how big", .number),
        ("how tall", .number), ("how heavy", .number), ("how wide", .number), ("how deep", .number), ("how high", .number),
        ("how large", .number), ("how fast", .number), ("how often", .number), ("how hot", .number), ("how cold", .number),
        ("what number", .number), ("what percentage", .number), ("temperature", .number),
        // Measures named: "What torque …?", "What pressure should the boiler be at?".
        ("torque", .number), ("pressure", .number), ("weight", .number), ("length", .number), ("height", .number), ("speed", .number),
        ("capacity", .number), ("distance", .number), ("mileage", .number), ("voltage", .number), ("width", .number), ("depth", .number),
        ("closing time", .time), ("opening time", .time), ("what time", .time), ("at what time", .time), ("which time", .time), ("how late", .time), ("how early", .time),
        ("when", .date), ("what date", .date), ("which date", .date), ("what day", .date), ("which day", .date), ("by when", .date),
        ("what year", .date), ("how soon", .date),
        ("who", .person), ("whom", .person), ("whose", .person),
        // "Where does Oskar live?" asks for a street address; "Where is the workshop?" for a place.
        ("address", .address), ("live", .address), ("lives", .address), ("living", .address), ("street", .address),
        ("where", .place),
        ("why", .reason), ("what reason", .reason), ("how come", .reason), ("how do", .reason), ("how does", .reason),
        ("how did", .reason), ("how can", .reason), ("how should", .reason), ("how to", .reason),
        // "What does F04 mean?": a sentence that explains, like a reason.
        ("mean", .reason), ("means", .reason), ("meaning of", .reason), ("stand for", .reason), ("stands for", .reason),
        // Without a question word that says, nouns of the value.
        ("deadline", .date), ("due", .date),
        ("cost", .money), ("price", .money), ("budget", .money), ("rent", .money), ("fee", .money), ("pay", .money), ("paid", .money),
        ("spend", .money), ("spent", .money), ("owe", .money), ("salary", .money), ("fare", .money), ("paying", .money), ("pays", .money),
        ("costs", .money), ("charged", .money), ("charging", .money), ("charges", .money), ("priced", .money),
        // The money words of bills and policies.
        ("excess", .money), ("premium", .money), ("deposit", .money), ("deductible", .money), ("charge", .money), ("wage", .money),
        ("called", .name), ("named", .name), ("name", .name), ("which company", .name), ("what company", .name),
        ("which book", .name), ("what book", .name), ("which shop", .name), ("what shop", .name),
        ("number", .number),
    ]

    /// Number words a request uses for a count ("three bullets").
    static let countWords: [String: Int] = [
        "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
        "a couple of": 2, "a few": 3,
    ]
    /// What a count counts in a request for a list or a summary.
    static let countedItems: Set<String> = ["bullets", "bullet", "points", "items", "things", "lines", "sentences", "facts", "tasks", "ideas", "words",
                                            "tips", "ways", "examples", "reasons", "suggestions", "steps", "options"]

    /// Words of a request about days that say nothing of a topic: "how did last week go?".
    static let dayOnlyWords = "last next this past previous week weekend day days today yesterday go went going happen happened happening do did done up anything something news busy interesting"

    // MARK: Deciding

    /// The analysis of `request`; `today` (`yyyy-MM-dd`) anchors "this week" and "yesterday".
    static func analyse(_ request: String, today: String) -> RequestAnalysis {
        let words = self.words(of: request)
        let text = " " + words.joined(separator: " ") + " "
        var analysis = decideKind(words: words, text: text, question: request.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("?"))
        analysis.days = DayWords.range(in: words, today: today)
        analysis.tasks = taskPhrases.contains { text.contains(" \($0)") }
        analysis.count = count(in: words)
        if analysis.kind == .lookup { analysis.value = value(asked: text) }
        // "The number of the boater I lent my sander to": a person's number is their phone.
        if analysis.value == .number, text.contains(" number "), !text.contains(" how many "), describedPerson(in: request) != nil { analysis.value = .phone }
        // "How did last week go?", "Anything on Tuesday?": a request about days and nothing else
        // asks what those days held.
        if let days = analysis.days, [.lookup, .other, .yesNo].contains(analysis.kind),
           Set(SearchTerms.terms(of: request)).subtracting(SearchTerms.terms(of: days.said + " " + dayOnlyWords + " remind tell happen")).isEmpty {
            analysis = RequestAnalysis(kind: .summarise, why: "asks about \(days.said) and nothing else: a summary of those days")
            analysis.days = days
            analysis.count = count(in: words)
            return analysis
        }
        if analysis.kind == .summarise, analysis.days == nil, text.contains(" week ") {
            analysis.days = DayWords.range(in: ["past", "week"], today: today)
        }
        return analysis
    }

    /// The request's words, lowercased, with "what's" as "what is" and "’" as "'".
    static func words(of request: String) -> [String] {
        let flat = request.lowercased().replacingOccurrences(of: "’", with: "'")
        var result: [String] = []
        for raw in flat.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "'" || $0 == "-") }) {
            var word = String(raw).trimmingCharacters(in: CharacterSet(charactersIn: "'-"))
            guard !word.isEmpty else { continue }
            // ("how long's the guarantee": "long's" is "long is" — of a measure after "how", not a possessive.)
            if word.hasSuffix("'s"), ["what", "who", "where", "when", "how", "that", "it", "there", "here", "long", "far", "old", "much", "big"].contains(String(word.dropLast(2))) {
                word = String(word.dropLast(2))
                result += [word, "is"]
                continue
            }
            result.append(word)
        }
        return result
    }

    private static func decideKind(words all: [String], text: String, question: Bool) -> RequestAnalysis {
        let words = withoutPoliteOpening(all)
        let first = words.first ?? ""
        let opening = " " + words.joined(separator: " ") + " "
        if draftVerbs.contains(first), words.contains(where: draftObjects.contains) {
            return RequestAnalysis(kind: .draft, why: "“\(first) … \(words.first(where: draftObjects.contains) ?? "")”: new text from the notes")
        }
        if messageVerbs.contains(first), words.count >= 3, !question {
            return RequestAnalysis(kind: .draft, why: "opens with “\(first)”: a message to write")
        }
        if summaryOpenings.contains(first) {
            return RequestAnalysis(kind: .summarise, why: "opens with “\(first)”")
        }
        if let phrase = summaryPhrases.first(where: { text.contains(" \($0) ") }) {
            return RequestAnalysis(kind: .summarise, why: "“\(phrase)” asks for a summary")
        }
        // "What is the lease about?": what a thing is about is a summary of it.
        if first == "what", words.count >= 4, ["is", "was", "are", "were"].contains(words[1]), words.last == "about" {
            return RequestAnalysis(kind: .summarise, why: "“what \(words[1]) … about”: a summary of it")
        }
        // "What does the lease say?", "What's in the boiler emails?": what a thing says.
        // ("What did Mallory's survey say?", "What does my lease say?": whose it is.)
        let determiners: Set<String> = ["the", "my", "our", "his", "her", "their", "this", "that", "your"]
        if first == "what", words.count >= 3, words.count <= 7, ["say", "says"].contains(words.last ?? ""),
           determiners.contains(words[1]) || words[1].hasSuffix("'s")
            || (["does", "do", "did"].contains(words[1]) && (determiners.contains(words[2]) || words[2].hasSuffix("'s"))) {
            return RequestAnalysis(kind: .summarise, why: "“what \(words[1]) the … say”: a summary of it")
        }
        // "What did the committee decide?", "What was agreed at the meeting?": its decisions, a summary.
        if first == "what", words.count >= 3, ["did", "was", "were", "have", "has"].contains(words[1]), words.contains(where: ["decide", "decided", "agree", "agreed"].contains) {
            return RequestAnalysis(kind: .summarise, why: "“what … decided”: a summary of the decisions")
        }
        if first == "what", words.count >= 5, words.count <= 8, ["is", "was"].contains(words[1]), words[2] == "in", words[3] == "the" {
            return RequestAnalysis(kind: .summarise, why: "“what is in the …”: a summary of it")
        }
        if let noun = words.first(where: summaryNouns.contains), !draftVerbs.contains(first) {
            return RequestAnalysis(kind: .summarise, why: "“\(noun)” asks for a summary")
        }
        if let found = computePhrases.first(where: { text.contains(" \($0.phrase) ") && (!amountPhrases.contains($0.phrase) || ["what", "how"].contains(first)) }),
           found.operation != .sum || hasTwoAmounts(text) || sumsWhatever.contains(found.phrase) {
            var analysis = RequestAnalysis(kind: .compute, why: "“\(found.phrase)” asks for arithmetic")
            analysis.operation = found.operation
            return analysis
        }
        if let found = compareWords.first(where: { compares(text, $0.phrase) }) {
            var analysis = RequestAnalysis(kind: .compare, why: "“\(found.phrase)” compares items")
            analysis.operation = found.operation
            return analysis
        }
        if listOpenings.contains(first) {
            return RequestAnalysis(kind: .list, why: "opens with “\(first)”")
        }
        // "(Give me) three tips for …": a number of things asked for is a list.
        if !questionWords.contains(first), !auxiliaries.contains(first), let count = count(in: words), words.prefix(3).contains(where: { Int($0) == count || countWords[$0] == count }) {
            return RequestAnalysis(kind: .list, why: "asks for \(count) items")
        }
        // "By when do the printers want the cast list?": a question that opens with when, where
        // or why asks one value, whatever list it names later.
        let asksOneValue = words.prefix(2).contains { ["when", "where", "why"].contains($0) }
        // A phrase is whole words ("anything i" is not "anything interesting"), unless it ends in
        // a space of its own ("list ", "who is in the ").
        if !asksOneValue, let phrase = listPhrases.first(where: { opening.contains(" \($0)" + ($0.hasSuffix(" ") ? "" : " ")) }),
           !auxiliaries.contains(first) || phrase.contains("to") {
            return RequestAnalysis(kind: .list, why: "“\(phrase.trimmingCharacters(in: .whitespaces))” asks for every item")
        }
        // "Which people have I lent things to?", "What books did I order?": a plural asked for
        // is every item that matches. (Plurals of time — "what hours", "what times" — ask for one
        // span.)
        if ["which", "what"].contains(first), words.count >= 3, isPlural(words[1]), !auxiliaries.contains(words[1]) {
            return RequestAnalysis(kind: .list, why: "“\(first) \(words[1])”: a plural, every item asked for")
        }
        // "What are we playing at the concert?", "What were the options?": a plural verb after
        // "what" asks for the things, every one — unless what is asked is one kind of value
        // ("What are the opening hours?", "What were the dates?").
        if first == "what", words.count >= 4, ["are", "were"].contains(words[1]), [.phrase, .name].contains(value(asked: text)),
           !words.contains(where: pluralsOfTime.contains) {
            return RequestAnalysis(kind: .list, why: "“what \(words[1])”: a plural, every item asked for")
        }
        if let phrase = valueQuestionOpenings.first(where: { opening.hasPrefix(" \($0) ") }), value(asked: text).isSpan {
            return RequestAnalysis(kind: .lookup, why: "“\(phrase) …”: asks for the value, not yes or no")
        }
        if auxiliaries.contains(first), words.count > 1 {
            return RequestAnalysis(kind: .yesNo, why: "opens with “\(first)”: a yes/no question")
        }
        if let word = words.prefix(4).first(where: questionWords.contains) {
            return RequestAnalysis(kind: .lookup, why: "“\(word)”: one value asked for")
        }
        if question || all.count != words.count {
            return RequestAnalysis(kind: .lookup, why: "a question with no question word: one value asked for")
        }
        var undecided = RequestAnalysis(kind: .other, why: "no question word, auxiliary or known imperative opens it")
        undecided.undecided = true
        return undecided
    }

    /// Plural nouns that ask for every item; those of time ask for one span.
    static let irregularPlurals: Set<String> = ["people", "children", "men", "women", "folk", "staff"]
    static let pluralsOfTime: Set<String> = ["hours", "times", "minutes", "seconds", "days", "weeks", "months", "years", "dates"]

    static func isPlural(_ word: String) -> Bool {
        if irregularPlurals.contains(word) { return true }
        guard word.count >= 4, word.hasSuffix("s"), !pluralsOfTime.contains(word) else { return false }
        return !["ss", "us", "is", "'s"].contains { word.hasSuffix($0) }
    }

    /// Phrases of an amount only in a question of what or how much ("What did it come to?"; not
    /// "Who came to the meeting?").
    static let amountPhrases: Set<String> = ["come to", "came to", "comes to"]

    /// Phrases that add up whatever they follow: "How much did the paint cost altogether?" asks
    /// for every purchase of paint, however the request counts them.
    static let sumsWhatever: Set<String> = ["altogether", "all together", "all told"]

    /// "in total" of one amount ("What did the total come to?") is a lookup; a sum needs two
    /// things to add: "and", a comma, a plural after "all", or a plural noun ("at the markets in
    /// June altogether").
    private static func hasTwoAmounts(_ text: String) -> Bool {
        text.contains(" and ") || text.contains(",") || text.contains(" both ") || text.contains(" all ") || text.contains(" my ")
            || text.contains(" two ") || text.split(separator: " ").contains { isPlural(String($0)) }
            // "How much did we spend on gaffer tape in total?": what was spent on a thing may be several purchases.
            || [" spend ", " spent ", " paid ", " pay "].contains(where: text.contains)
    }

    /// Whether `text` compares with `phrase`: a weak one ("first", "last", "most") only after
    /// "which"/"what" and a noun or before "one".
    private static func compares(_ text: String, _ phrase: String) -> Bool {
        guard text.contains(" \(phrase) ") else { return false }
        if choiceCompareWords.contains(phrase) {
            return ["which", "who", "what"].contains(text.split(separator: " ").first.map(String.init) ?? "")
        }
        guard weakCompareWords.contains(phrase) else { return true }
        if text.contains(" which \(phrase) ") || text.contains(" \(phrase) one ") || text.contains(" the \(phrase) of ") { return true }
        // "the last ferry", "my first appointment": one of several things, picked by its place;
        // not "the last time", "last week", "the last few days".
        let words = text.split(separator: " ").map(String.init)
        // "Which market took the most?", "Who paid the least?": the superlative ends the question.
        if words.count >= 3, words.last == phrase, words[words.count - 2] == "the", ["which", "who", "what"].contains(words[0]) { return true }
        return words.indices.dropFirst().dropLast().contains { index in
            words[index] == phrase && ["the", "my", "our"].contains(words[index - 1]) && !periodWords.contains(words[index + 1])
        }
    }

    /// Words after "the last" / "the first" that make it a span of time, not a pick among things.
    static let periodWords: Set<String> = [
        "time", "times", "day", "days", "week", "weeks", "weekend", "month", "months", "year", "years", "night", "nights",
        "hour", "hours", "minute", "minutes", "few", "couple", "two", "three", "four", "five", "bit", "thing", "things",
    ]

    /// The kind of value a lookup asks for (``valuePhrases``, first match), else a short phrase.
    /// "Which version first let you print labels?", "What Lumen release added fades?": the
    /// version a thing came in, asked of release notes.
    static func asksVersion(_ text: String) -> Bool {
        let words = text.split(separator: " ").map(String.init)
        return ["which", "what", "in"].contains(words.first ?? "") && words.prefix(4).contains { ["version", "release", "update"].contains($0) }
    }

    static func value(asked text: String) -> ValueKind {
        // A version, whatever else the question names ("… use a phone as the button?").
        if asksVersion(text) { return .phrase }
        // Only the request's first question word says what is asked: a later one is of a clause
        // that describes ("where does the lady who's lending us the chair live?", "the day when …").
        let first = text.split(separator: " ").first { questionWords.contains(String($0)) }.map(String.init)
        let found = valuePhrases.first { phrase in
            questionWords.contains(phrase.phrase) ? phrase.phrase == first : text.contains(" \(phrase.phrase) ")
        }?.value ?? .phrase
        // "What's her number?", "Ines's number": a person's number is their phone number.
        if text.range(of: #" (her|his|their|your|[a-z]+'s) (phone |mobile )?number "#, options: .regularExpression) != nil { return .phone }
        // "Who should I call about the door? I need the number.": the phone number.
        if [" call ", " ring ", " phone "].contains(where: text.contains), text.contains(" number ") { return .phone }
        // "When does the bank close?": opening hours are times of day.
        if found == .date, [" open ", " opens ", " close ", " closes ", " shut ", " shuts "].contains(where: text.contains) { return .time }
        // "How much salt goes in …?" asks for a quantity; "how much did …", "how much is …" for money.
        if found == .money, let range = text.range(of: " how much ") {
            let next = text[range.upperBound...].split(separator: " ").first.map(String.init) ?? ""
            if !next.isEmpty, !auxiliaries.contains(next), !moneyFollowers.contains(next) { return .number }
        }
        return found
    }

    /// Words after "how much" that keep it a question of money.
    static let moneyFollowers: Set<String> = [
        "money", "cash", "i", "we", "you", "it", "they", "he", "she", "for", "to", "in", "more", "less", "extra", "altogether", "total",
        "rent", "cost", "costs", "tax", "vat",
    ]

    /// Pronouns that point back to whom (or where) the previous answer named: a follow-up ("What
    /// is his email address?") is about that person. "It" and "that" point back to what the
    /// previous *question* was about ("Which company makes the robot?" — "How much does it
    /// cost?"), which the search already weighs through the previous message.
    static let backReferences: Set<String> = ["he", "she", "him", "her", "his", "hers", "they", "them", "their", "theirs", "there"]

    /// Words that make a request about the person's own workspace.
    static let firstPerson: Set<String> = ["i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "us", "our", "ours"]

    /// Whether the request speaks of the person's own things: a first-person word other than
    /// the "me" of a polite opening ("Give me three tips for …" is not about me; "Give me my
    /// list" is).
    static func isPersonal(_ request: String) -> Bool {
        !Set(withoutPoliteOpening(words(of: request))).isDisjoint(with: firstPerson)
    }

    /// Subjects that make a why or how question one about things in general: "Why do *people*
    /// say …", "How do *you* get wax out of wool?" (the "you" of anyone, once the polite "can
    /// you" is gone).
    static let generalSubjects: Set<String> = ["people", "you", "one", "someone", "anyone", "everyone", "everybody", "folk", "folks"]

    static func asksInGeneral(_ request: String) -> Bool {
        let words = withoutPoliteOpening(words(of: request))
        // "What's a good way to …", "How do I get wine out of a carpet?", "(Tell me) a joke".
        let text = " " + words.joined(separator: " ") + " "
        return !Set(words).isDisjoint(with: generalSubjects) || ["a", "an", "some"].contains(words.first ?? "")
            || [" a good way to ", " the best way to ", " how to ", " best way to "].contains(where: text.contains) || asksHowTo(request)
    }

    /// "How do I get red wine out of a carpet?", "How can I keep bread fresh?": how a thing is
    /// done — the person's own only when the workspace speaks of it.
    static func asksHowTo(_ request: String) -> Bool {
        let words = withoutPoliteOpening(words(of: request))
        return words.count >= 4 && words[0] == "how" && ["do", "can", "should", "would"].contains(words[1]) && ["i", "you", "we", "one"].contains(words[2])
    }

    /// `words` without the polite openings they start with ("can you", "tell me", "please").
    static func withoutPoliteOpening(_ all: [String]) -> [String] {
        var words = all
        var stripped = true
        while stripped {
            stripped = false
            for opening in politeOpenings where words.count > opening.count && Array(words.prefix(opening.count)) == opening {
                words.removeFirst(opening.count)
                stripped = true
            }
        }
        return words
    }

    static func refersBack(_ request: String) -> Bool {
        words(of: request).contains(where: backReferences.contains)
    }

    /// Words a line holding a value of `kind` often has, for the second search of two hops.
    static func slotWords(for kind: ValueKind) -> String {
        switch kind {
        case .email: "email"
        case .phone: "phone"
        case .address, .place: "address lives"
        case .url: "website"
        default: ""
        }
    }

    /// Words that ask for someone's details, not who they are: left out of the search for the
    /// person a request describes ("the phone number of whoever is borrowing my extractor").
    static let detailWords: Set<String> = Set(SearchTerms.terms(
        of: "email e-mail mail address phone number mobile telephone ring call live lives living street road website contact reach"))

    /// Words that describe someone instead of naming them, after the question's opening: "of
    /// whoever is borrowing", "the person who took the minutes", "the beekeeper I'm mentoring".
    static let describingMarkers = [" whoever ", " who ", " whom ", " that ", " i'm ", " i am ", " i've ", " i have ", " i "]

    /// Nouns of a person a request may describe by what they do.
    static let personNouns: Set<String> = ["person", "man", "woman", "lady", "guy", "chap", "actor", "actress", "girl", "boy", "one",
                                           "someone", "friend", "neighbour", "neighbor", "people", "bloke", "fellow", "builder", "teacher"]

    /// The search terms of the person `question` describes, when it describes one it does not
    /// name; nil otherwise.
    static func describedPerson(in question: String) -> Set<String>? {
        let words = words(of: question)
        guard words.count > 3 else { return nil }
        // After the first two words: "Who is …" and "I need …" open a question, they describe no one.
        let tail = " " + words.dropFirst(2).joined(separator: " ") + " "
        // "the actor playing the keeper", "the woman sewing the dresses": a person and what they do.
        let doing = words.indices.dropFirst(2).contains { index in
            index + 1 < words.count && personNouns.contains(words[index]) && words[index + 1].hasSuffix("ing") && words[index + 1].count > 4
        }
        guard doing || describingMarkers.contains(where: tail.contains) else { return nil }
        let terms = Set(SearchTerms.terms(of: question)).subtracting(detailWords)
        return terms.isEmpty ? nil : terms
    }

    /// "Who's meant to be doing what after the meeting?", "Who does what?": the action items.
    static func asksWhoDoesWhat(_ request: String) -> Bool {
        let text = " " + words(of: request).joined(separator: " ") + " "
        return text.hasPrefix(" who ") && [" doing what ", " do what ", " does what ", " did what "].contains(where: text.contains)
    }

    /// "Who came to the meeting?", "Who was at the AGM?": the people who were there.
    static func asksWhoCame(_ request: String) -> Bool {
        let text = " " + words(of: request).joined(separator: " ") + " "
        return [" who came ", " who attended ", " who was there ", " who was at ", " who were at ", " who was present ", " who turned up ",
                " who went to ", " who was in attendance "].contains(where: text.contains)
    }

    /// "How many market days have I done?", "How many performances are there?": the search
    /// terms of what is counted, up to its plural noun ("market days"); nil when the request
    /// counts nothing so.
    static func countedThing(_ question: String) -> Set<String>? {
        let words = words(of: question)
        guard let at = words.indices.first(where: { $0 + 1 < words.count && words[$0] == "how" && words[$0 + 1] == "many" }) else { return nil }
        let after = Array(words[(at + 2)...].prefix(3))
        // A plural of time after a noun is a thing ("market days"); alone it is a span ("how many days").
        guard let end = after.indices.first(where: { isPlural(after[$0]) || ($0 > 0 && pluralsOfTime.contains(after[$0])) }) else { return nil }
        let terms = Set(SearchTerms.terms(of: after[...end].joined(separator: " ")))
        return terms.isEmpty ? nil : terms
    }

    /// "grade 3", "Act 2", "pen 5", "flat 12": things the request names by a number after their
    /// noun. A line that names the same noun with another number only ("grade 6") is about
    /// another thing, and a workspace with no line for this one does not say. Not a number after
    /// a function word ("at 7", "in 3.2", "under 18") or a counted one ("top 3", "3 bullets"), and
    /// not a year ("in June 2027").
    static func numberedThings(_ request: String) -> [(noun: String, number: String)] {
        let words = words(of: request)
        return words.indices.dropLast().compactMap { index in
            let noun = words[index], number = words[index + 1]
            guard noun.allSatisfy(\.isLetter), noun.count >= 2, !SearchTerms.terms(of: noun).isEmpty,
                  !numberedNounsNot.contains(noun), !DayWords.months.contains(noun),
                  number.count <= 3, number.allSatisfy(\.isNumber) else { return nil }
            // "takes 7 days", "paid 40 euros": a count or an amount of the word after it, not a
            // numbered thing ("Act 1 songs" is one: a plural does not follow a count of one).
            if index + 2 < words.count, case let after = words[index + 2],
               AnswerEvidence.anyUnit.contains(after) || number != "1" && (isPlural(after) || countedItems.contains(after)) { return nil }
            return (noun, number)
        }
    }

    /// Words that a number follows without numbering them: quantities and ranks.
    static let numberedNounsNot: Set<String> = ["top", "under", "over", "about", "around", "than", "only", "just", "nearly", "almost",
                                                "least", "most", "last", "first", "next", "every", "each", "per", "times", "minus", "plus",
                                                "aged", "age", "till", "until", "from", "between", "and", "or", "to"]

    /// Whether `line` names `noun` with `number` ("Grade 3", "grade-3", "pen #5"), and whether
    /// it names it with another number only.
    static func numbering(of noun: String, _ number: String, in line: String) -> (this: Bool, other: Bool) {
        let pattern = "\\b" + NSRegularExpression.escapedPattern(for: noun) + "s?[ -]?#?(\\d+)\\b"
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { return (false, false) }
        let numbers = regex.matches(in: line, range: NSRange(line.startIndex..., in: line)).compactMap { match in
            Range(match.range(at: 1), in: line).map { String(line[$0]) }
        }
        let this = numbers.contains { Int($0) == Int(number) }
        return (this, !this && !numbers.isEmpty)
    }

    /// "three bullets", "5 points", "top 3": how many items the request wants.
    static func count(in words: [String]) -> Int? {
        for (index, word) in words.enumerated() where index + 1 < words.count {
            let next = words[index + 1]
            let number = Int(word) ?? countWords[word]
            if let number, countedItems.contains(next) || (index + 2 < words.count && countedItems.contains(words[index + 2])) {
                return number
            }
            if word == "top", let number = Int(next) ?? countWords[next] { return number }
        }
        return nil
    }
}
