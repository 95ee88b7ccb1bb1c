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

    /// What kind of value `question` asks for.
    static func asked(by question: String) -> Asked {
        let words = question.lowercased().split { !$0.isLetter }.map(String.init)
        let text = " " + words.joined(separator: " ") + " "
        if text.contains(" how much ") || text.contains(" how many ") || text.contains(" how far ") || text.contains(" how long ")
            || text.contains(" how old ") || text.contains(" how big ") || text.contains(" how tall ") || text.contains(" how heavy ")
            || text.contains(" what number ") || text.contains(" what percentage ") || text.contains(" what price ") || text.contains(" cost ")
            || text.contains(" price ") || text.contains(" budget ") || text.contains(" number ") {
            return .number
        }
        if text.contains(" when ") || text.contains(" what date ") || text.contains(" which date ") || text.contains(" what day ")
            || text.contains(" which day ") || text.contains(" by when ") || text.contains(" what year ") {
            return .date
        }
        if text.hasPrefix(" why ") || text.contains(" why ") || text.hasPrefix(" how ") || text.contains(" what reason ") {
            return .reason
        }
        if text.contains(" who ") || text.contains(" whom ") || text.contains(" whose ") || text.contains(" which company ")
            || text.contains(" which firm ") || text.contains(" what company ") || text.contains(" which book ") || text.contains(" what book ")
            || text.contains(" called ") || text.contains(" named ") || text.contains(" name ") {
            return .name
        }
        return .any
    }

    struct Candidate: Equatable {
        var text: String
        /// The line it comes from (an index into the lines given).
        var line: Int
    }

    /// Whether `line` holds a value of the kind `question` asks for (any line does for a
    /// question that asks for no particular kind).
    static func holdsAnswer(to question: String, line: String, ignoring: Set<String>) -> Bool {
        let asked = asked(by: question)
        if asked == .reason {
            // A reason is given with a connective: "because", "since", "so that", "due to".
            let lowered = " " + line.lowercased() + " "
            return [" because ", " since ", " due to ", " so that ", " so we ", " in order to ", " as a result ", " thanks to "].contains { lowered.contains($0) }
        }
        guard asked != .any else { return true }
        return !candidates(for: question, in: [line], ignoring: ignoring, fittingOnly: true).isEmpty
    }

    /// The candidates in `lines` (best first) for `question`; at most `limit`.
    static func candidates(for question: String, in lines: [String], ignoring: Set<String>, limit: Int = 8, fittingOnly: Bool = false) -> [Candidate] {
        let asked = asked(by: question)
        let questionTerms = Set(SearchTerms.terms(of: question))
        let questionClaims = Set(Claims.extract(from: question, ignoring: ignoring).map { $0.text.lowercased() })
        var scored: [(candidate: Candidate, line: Int, distance: Int, fits: Bool)] = []
        var seen: Set<String> = []
        for (index, line) in lines.enumerated() {
            for claim in Claims.extract(from: line, ignoring: ignoring) {
                let key = claim.text.lowercased()
                // A path or a file name ("Journal/user/2026-11-16.md") is where a fact is, not one.
                guard !key.contains("/"), !key.hasSuffix(".md"), !questionClaims.contains(key), seen.insert(key).inserted else { continue }
                // A name the question already holds word for word is what it asks about, not the answer.
                let claimTerms = Set(SearchTerms.terms(of: claim.text))
                if !claimTerms.isEmpty, claimTerms.isSubset(of: questionTerms) { continue }
                let fits: Bool
                switch asked {
                case .name: fits = claim.kind == .name
                case .date: fits = claim.kind == .date || (claim.kind == .number && isYear(claim.text))
                case .number: fits = claim.kind == .number && !isYear(claim.text)
                case .any, .reason: fits = true
                }
                scored.append((Candidate(text: claim.text, line: index), index, distance(of: claim.text, to: questionTerms, in: line), fits))
            }
        }
        let fitting = scored.filter(\.fits)
        if fittingOnly { return fitting.prefix(limit).map(\.candidate) }
        let pool = fitting.isEmpty ? scored : fitting + scored.filter { !$0.fits }
        let ranked = pool.enumerated().sorted { lhs, rhs in
            let l = lhs.element, r = rhs.element
            if l.fits != r.fits { return l.fits }
            if l.line != r.line { return l.line < r.line }
            if l.distance != r.distance { return l.distance < r.distance }
            return lhs.offset < rhs.offset
        }
        return ranked.prefix(limit).map(\.element.candidate)
    }

    private static func isYear(_ text: String) -> Bool {
        guard text.count == 4, let value = Int(text) else { return false }
        return (1000...2999).contains(value)
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
