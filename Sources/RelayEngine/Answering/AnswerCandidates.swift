import Foundation

/// What a one-fact answer can be, found by the engine before the model chooses: the numbers,
/// dates and names of the lines handed to the answering agent, filtered by what the question
/// asks for ("who" → a name, "when" → a date, "how much" → a number), without the ones the
/// question itself names, best first — the line's rank, then closeness to the question's words.
///
/// A model of 135M parameters choosing among a few numbered options mostly takes the first
/// (measured on SmolLM2: 1 right of 4 among unordered options), so the engine puts its best
/// guess first and the model's choice can only move away from it to another real value.
enum AnswerCandidates {
    enum Asked: Equatable {
        case name, date, number, any
        /// "Why …?", "How do …?": the answer is a line, not a value in it.
        case reason
    }

    /// What kind of value `question` asks for: the value kind its words name
    /// (``RequestRules/valuePhrases``), as the ranking here counts kinds.
    static func asked(by question: String) -> Asked {
        RequestRules.value(asked: " " + RequestRules.words(of: question).joined(separator: " ") + " ").asked
    }

    /// Whether `line` gives a reason: with a connective, "because", "since", "so that", "due to".
    static func givesReason(_ line: String) -> Bool {
        let lowered = " " + line.lowercased() + " "
        return [" because ", " since ", " due to ", " so that ", " so we ", " in order to ", " as a result ", " thanks to "].contains { lowered.contains($0) }
    }

    struct Candidate: Equatable {
        var text: String
        /// The line it comes from (an index into the lines given).
        var line: Int
        /// Its ``AnswerEvidence`` within the line.
        var evidence: Double = 0
        /// The sentence of the line it was found in, with that evidence.
        var piece: String = ""

        /// Whether it is an amount of money: a currency sign, a currency word after it or an
        /// abbreviation before it.
        var isMoney: Bool {
            let words = text.lowercased().split(whereSeparator: { $0 == " " }).map { $0.trimmingCharacters(in: .punctuationCharacters) }
            return text.contains(where: { "€$£¥ƒ".contains($0) }) || words.contains(where: AnswerEvidence.money.contains)
                || words.first.map(AnswerEvidence.moneyBefore.contains) == true
                || (words.count == 2 && AnswerEvidence.isCurrency(words[1], after: words[0]))
        }
    }

    /// The candidates worth offering: those of the first one's line whose evidence is close to
    /// its own. Measured on SmolLM2 with three values from three lines: it took "90 euros" from
    /// a line about paint for "What is the budget for the shed?" over the first,
    /// "1,200 euros", from "Shed budget: 1,200 euros".
    static func close(_ candidates: [Candidate], share: Double = 0.75) -> [Candidate] {
        guard let first = candidates.first else { return [] }
        return candidates.filter { $0.line == first.line && $0.evidence >= first.evidence * share }
    }

    /// Whether `line` holds a value of the kind `question` asks for (any line does for a
    /// question that asks for no particular kind).
    static func holdsAnswer(to question: String, line: String, ignoring: Set<String>) -> Bool {
        let asked = asked(by: question)
        if asked == .reason { return givesReason(line) }
        guard asked != .any else { return true }
        return !candidates(for: question, in: [line], ignoring: ignoring, fittingOnly: true).isEmpty
    }

    /// The candidates in `lines` (best first) for `question`; at most `limit`. Values of the kind
    /// asked for come first, then by line (the lines come best first), then by their
    /// ``AnswerEvidence`` within the line, then by closeness to the question's words.
    static func candidates(for question: String, in lines: [String], ignoring: Set<String>, previous: String? = nil,
                           limit: Int = 8, fittingOnly: Bool = false, asked: Asked? = nil) -> [Candidate] {
        let judge = AnswerEvidence(question: question, previous: previous, ignoring: ignoring, asked: asked)
        let weights = judge.weights(among: lines)
        let questionTerms = Set(SearchTerms.terms(of: question))
        let questionClaims = Set(Claims.extract(from: question, ignoring: ignoring).map { $0.text.lowercased() })
        var scored: [(candidate: Candidate, evidence: Double, distance: Int, fits: Bool)] = []
        // Each value once, where it has the most evidence ("Dunmore" of a dateline and of "its
        // plant in Dunmore" in one knowledge line).
        var seen: [String: Int] = [:]
        for (index, line) in lines.enumerated() {
            for value in judge.values(in: line, weights: weights) {
                let key = value.claim.text.lowercased()
                guard !questionClaims.contains(key) else { continue }
                let entry = (Candidate(text: value.shown, line: index, evidence: value.evidence, piece: value.piece), value.evidence,
                             distance(of: value.claim.text, to: questionTerms, in: line), value.fits)
                if let earlier = seen[key] {
                    if scored[earlier].candidate.line == index, value.evidence > scored[earlier].evidence { scored[earlier] = entry }
                    continue
                }
                seen[key] = scored.count
                scored.append(entry)
            }
        }
        if fittingOnly { scored = scored.filter(\.fits) }
        let ranked = scored.enumerated().sorted { lhs, rhs in
            let l = lhs.element, r = rhs.element
            if l.fits != r.fits { return l.fits }
            if l.candidate.line != r.candidate.line { return l.candidate.line < r.candidate.line }
            if abs(l.evidence - r.evidence) > 1e-9 { return l.evidence > r.evidence }
            if l.distance != r.distance { return l.distance < r.distance }
            return lhs.offset < rhs.offset
        }
        return ranked.prefix(limit).map(\.element.candidate)
    }

    /// Characters between `claim` and the nearest of the question's words in `line`.
    private static func distance(of claim: String, to terms: Set<String>, in line: String) -> Int {
        guard let at = line.range(of: claim) else { return Int.max / 2 }
        let position = line.distance(from: line.startIndex, to: at.lowerBound)
        var best = Int.max / 2
        var offset = 0
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            if let term = SearchTerms.terms(of: word).first, terms.contains(term) {
                best = min(best, abs(offset - position))
            }
            offset += word.count + 1
        }
        return best
    }
}
