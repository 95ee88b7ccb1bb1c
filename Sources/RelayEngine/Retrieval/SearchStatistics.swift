import Foundation

/// The one pass of a search: counts what BM25 needs (lines, their lengths, the lines holding
/// each query term) over every line, and keeps only the lines that can score — those holding a
/// query term or standing under a heading that does.
struct SearchStatistics {
    private struct Candidate {
        var path: String
        var line: Int
        var text: String
        var length: Int
        /// (term index, occurrences in the line)
        var counts: [(Int, Int)]
        /// Indices of the query terms in the line's section heading, and — for a line that
        /// continues a list item — in the item's first line.
        var headingTerms: [Int]
        var weight: Double
    }

    private let index: [String: Int]
    /// Each term's factor (1 for the query's own words).
    private let factors: [Double]
    private var documentFrequency: [Int]
    private var documents = 0
    private var totalLength = 0
    private var candidates: [Candidate] = []

    init(terms: [String]) {
        self.init(factors: Dictionary(terms.map { ($0, 1.0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Terms with a factor each: a term's BM25 weight is multiplied by it.
    init(factors: [String: Double]) {
        let terms = factors.keys.sorted()
        index = Dictionary(uniqueKeysWithValues: terms.enumerated().map { ($1, $0) })
        self.factors = terms.map { factors[$0] ?? 1 }
        documentFrequency = Array(repeating: 0, count: terms.count)
    }

    /// Reads one file's lines. Turn markers (`<!-- relay:`) and lines of only Markdown syntax are
    /// no documents; a heading is none either, but its query terms count for the lines below it.
    mutating func add(file path: String, text: String, weight: Double) {
        var headingTerms: [Int] = []
        // What the whole document is about — its file name and its title ("# Oat biscuits"):
        // "How much butter goes in the oat biscuits?" is about the line "120 g butter" of it.
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension.replacingOccurrences(of: "-", with: " ")
        var documentTerms = Set(SearchTerms.terms(of: name).filter { $0.first?.isNumber == false }.compactMap { index[$0] })
        var titled = false
        // The query terms of the list item a line may continue (an indented line without a
        // marker of its own under "- Saskia rang: the party is on Saturday.").
        var itemTerms: [Int] = []
        // The query terms of the header of the table a row is in ("| From Lindow Pier |"
        // above "| 18:45 |"): a row is read with its header.
        var tableTerms: [Int] = []
        var previousWasTable = false
        var number = 0
        // The agents' answers in a chat (between a turn's markers) are not sources: they quote
        // the lines they came from, which are searched themselves; the person's messages are.
        var inTurn = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            let isTable = trimmed.hasPrefix("|"), continuesTable = isTable && previousWasTable
            previousWasTable = isTable
            if trimmed.hasPrefix("<!-- relay:turn ") { inTurn = true }
            if trimmed.hasPrefix("<!-- relay:end ") { inTurn = false; continue }
            guard !inTurn, !trimmed.isEmpty, !trimmed.hasPrefix("<!-- relay:") else { continue }
            // A question a person asked in a chat holds no answer: it would be found first for
            // the same question asked again.
            if weight == WorkspaceSearch.chatWeight, trimmed.hasSuffix("?") { continue }
            let terms = SearchTerms.terms(of: trimmed)
            if Self.isHeading(trimmed) {
                headingTerms = Array(Set(terms.compactMap { index[$0] })).sorted()
                if !titled, trimmed.hasPrefix("# ") { documentTerms.formUnion(headingTerms) }
                titled = true
                itemTerms = []
                // A heading with a number states a fact of its own ("## 4.2 (3 August 2026)").
                guard trimmed.contains(where: \.isNumber) else { continue }
            }
            guard !terms.isEmpty else { continue }
            let indented = line.first == " " || line.first == "\t"
            let isItem = ["- ", "* ", "+ "].contains { trimmed.hasPrefix($0) }
            if isTable && !continuesTable { tableTerms = Array(Set(terms.compactMap { index[$0] })).sorted() }
            let inherited = continuesTable ? tableTerms : indented && !isItem ? itemTerms : []
            if isItem { itemTerms = Array(Set(terms.compactMap { index[$0] })).sorted() } else if !indented { itemTerms = [] }
            documents += 1
            totalLength += terms.count
            var counts: [Int: Int] = [:]
            for term in terms {
                if let position = index[term] { counts[position, default: 0] += 1 }
            }
            for position in counts.keys { documentFrequency[position] += 1 }
            let context = Array(Set(headingTerms + (inherited + documentTerms).filter { counts[$0] == nil })).sorted()
            guard !counts.isEmpty || !context.isEmpty else { continue }
            candidates.append(Candidate(path: path, line: number, text: trimmed, length: terms.count,
                                        counts: counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                                        headingTerms: context, weight: trimmed.hasPrefix(">") ? weight * WorkspaceSearch.quotedWeight : weight))
        }
    }

    /// The best `limit` candidates by score (ties by path, then line); none scoring 0.
    func ranked(limit: Int) -> [RetrievedLine] {
        guard documents > 0 else { return [] }
        let averageLength = Double(totalLength) / Double(documents)
        let idf = zip(documentFrequency, factors).map { frequency, factor in
            factor * log(1 + (Double(documents - frequency) + 0.5) / (Double(frequency) + 0.5))
        }
        let k1 = WorkspaceSearch.k1, b = WorkspaceSearch.b
        let scored = candidates.map { candidate -> RetrievedLine in
            var score = 0.0
            for (term, count) in candidate.counts {
                let tf = Double(count)
                score += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * Double(candidate.length) / averageLength))
            }
            for term in candidate.headingTerms { score += WorkspaceSearch.headingBonus * idf[term] }
            return RetrievedLine(path: candidate.path, line: candidate.line, text: candidate.text, score: score * candidate.weight)
        }
        return scored.filter { $0.score > 0 }.sorted { left, right in
            if left.score != right.score { return left.score > right.score }
            if left.path != right.path { return left.path < right.path }
            return left.line < right.line
        }.prefix(limit).map { $0 }
    }

    /// `# Title` to `###### Title`.
    static func isHeading(_ line: String) -> Bool {
        let hashes = line.prefix { $0 == "#" }.count
        guard (1...6).contains(hashes) else { return false }
        let rest = line.dropFirst(hashes)
        return rest.isEmpty || rest.first == " " || rest.first == "\t"
    }
}
