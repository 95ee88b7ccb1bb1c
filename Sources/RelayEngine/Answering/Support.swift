import Foundation

/// Whether the evidence found for a question can answer it at all, decided from the evidence
/// itself before any model runs: a question about something the workspace does not hold gets
/// "the workspace does not say", never the nearest value of another line (a 135M model's
/// general knowledge is mostly invention, and the nearest value is a wrong fact stated as one).
/// Pure functions of their arguments.
enum Support {
    /// Words that say what kind of value is asked, or how, rather than what about: a line that
    /// answers seldom repeats them ("What is Oskar's *phone number*?" is answered by "Oskar: 0161
    /// 555 0199"). Stems, as ``SearchTerms`` makes them.
    static let askingWords: Set<String> = Set(SearchTerms.terms(of: """
        name names named called call number numbers address addresses email mail phone mobile telephone date dates time times day \
        days year much many cost costs price prices amount pay paid paying spend spent charge charged charging fee total value kind sort \
        type person people thing things man woman lady guy chap bloke fellow someone whoever street road version versions \
        lives live living where happen happened tell give find know remember list summary summarise week today yesterday \
        still again yet now anymore currently exactly actually usually really also new old get got make made take took come came go \
        went going see saw \
        want need put set keep kept let start started open opened arrive arrived leave left meet met visit visited buy bought use used using meant supposed
        """))

    /// The words of the kinds' own phrases ("cheapest", "in total", "to-do"): they say what to do
    /// with the values, not what the values are about.
    static let kindWords: Set<String> = Set(
        (RequestRules.compareWords.map(\.phrase) + RequestRules.computePhrases.map(\.phrase) + RequestRules.listPhrases + RequestRules.taskPhrases
            + RequestRules.summaryPhrases).flatMap { SearchTerms.terms(of: $0) })

    /// The question's words that say what it is about.
    static func topicTerms(of question: String) -> Set<String> {
        Set(SearchTerms.terms(of: question)).subtracting(askingWords).subtracting(kindWords).filter { $0.count >= 3 || $0.first?.isNumber == true }
    }

    /// The words right after a possessive ("dog" in "What is Bram's dog called?").
    static func possessed(in question: String) -> [String] {
        let words = question.replacingOccurrences(of: "’", with: "'").split(whereSeparator: { $0.isWhitespace }).map(String.init)
        return words.indices.dropLast().compactMap { index in
            let word = words[index].trimmingCharacters(in: .punctuationCharacters)
            guard word.lowercased().hasSuffix("'s") || word.hasSuffix("s'") else { return nil }
            return words[index + 1].trimmingCharacters(in: .punctuationCharacters).lowercased()
        }
    }

    /// The search terms of the names `question` gives ("Tam", "Kittiwake").
    static func nameTerms(of question: String, ignoring: Set<String>) -> Set<String> {
        Set(Claims.extract(from: question, ignoring: ignoring).filter { $0.kind == .name }.flatMap { SearchTerms.terms(of: $0.text) })
    }

    /// A line with what it is about in words: a knowledge line's link name ("[harvest-supper](…):
    /// 19:00 …" is about the harvest supper) and the name of its file.
    static func withItsNames(_ text: String, path: String?) -> String {
        var words = [text]
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") { words.append(String(text[text.index(after: text.startIndex)..<close])) }
        if let path { words.append((path as NSString).lastPathComponent) }
        return words.joined(separator: " ").replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "_", with: " ")
    }

    /// The share of `terms` in `line`.
    static func coverage(of terms: Set<String>, in line: String) -> Double {
        guard !terms.isEmpty else { return 1 }
        return Double(terms.intersection(SearchTerms.terms(of: AnswerEvidence.withoutPaths(line))).count) / Double(terms.count)
    }

    /// Why `lines` (the evidence, best first) cannot answer `question`, or nil when they may:
    /// - a name the question holds is in no line ("Who is Zebedee Farrow?");
    /// - no line shares a word of what the question is about;
    /// - the question asks for something of someone ("Bram's dog", "my neighbour's cat") and no
    ///   line speaks of that thing, though lines speak of its owner.
    /// How a gap for a name no line holds opens.
    static let unmentionedName = "no line of the workspace mentions"

    static func gap(question: String, lines: [String], ignoring: Set<String>) -> String? {
        guard !lines.isEmpty else { return "no line of the workspace matches the request" }
        let pool = lines.map { Set(SearchTerms.terms(of: AnswerEvidence.withoutPaths($0))) }
        let everything = pool.reduce(into: Set<String>()) { $0.formUnion($1) }
        for claim in Claims.extract(from: question, ignoring: ignoring) where claim.kind == .name {
            let terms = Set(SearchTerms.terms(of: claim.text))
            if !terms.isEmpty, terms.isDisjoint(with: everything) { return "\(unmentionedName) \(claim.text)" }
        }
        let topic = topicTerms(of: question)
        guard !topic.isEmpty else { return nil }
        let best = pool.map { Double(topic.intersection($0).count) / Double(topic.count) }.max() ?? 0
        if best == 0 { return "no line of the workspace speaks of \(topic.sorted().joined(separator: ", "))" }
        let owned = Set(possessed(in: question).flatMap { SearchTerms.terms(of: $0) }).intersection(topic)
        if let missing = owned.subtracting(everything).sorted().first { return "the notes found say nothing of “\(missing)”" }
        return nil
    }
}
