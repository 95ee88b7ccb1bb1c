import Foundation
import WorkspaceCore

/// A line of the workspace that matches a request, with where it is.
public struct RetrievedLine: Sendable, Codable, Equatable {
    /// Relative to the workspace root.
    public var path: String
    /// 1-based.
    public var line: Int
    /// The line, trimmed.
    public var text: String
    public var score: Double
    /// The heading of the section the line is in ("Quotes for the roof" above a table row):
    /// what the line is about when the line itself does not say.
    public var heading: String?
    /// Whether the line is of a quoted earlier message (a mail thread's "> …" or what follows
    /// "-----Original message-----"): what was said before, often since changed.
    public var quoted: Bool?

    public init(path: String, line: Int, text: String, score: Double, heading: String? = nil) {
        self.path = path
        self.line = line
        self.text = text
        self.score = score
        self.heading = heading
    }

    /// The line with its heading, for judging what it is about.
    var withHeading: String { heading.map { text + " — " + $0 } ?? text }
}

/// Finds the workspace lines that answer a request, so an agent on a small model gets the
/// facts with their `path:line` instead of inventing them.
///
/// Each non-empty line of `context.md`, `Journal/**`, `Research/**` (Markdown and text, and
/// documents dropped as PDF, HTML, DOCX… read as their text: `SourceText`) and
/// `Chats/*.md` is a document for BM25 (k1 1.2, b 0.75) over `SearchTerms`; a line under a
/// heading that holds a query term gets half that term's weight as a bonus ("## Cats" helps
/// "what is the cat called"), and chat lines count half (they are earlier model answers).
/// Every call reads the files again (through the sandbox) in one pass, keeping only the lines
/// that can score. For example:
///
/// ```swift
/// let hits = WorkspaceSearch(workspace: workspace).lines(matching: "When does the tea shop open?")
/// // [RetrievedLine(path: "Journal/user/2026-11-22.md", line: 3, text: "The tea shop opens at 9.", …)]
/// ```
public struct WorkspaceSearch: Sendable {
    let workspace: Workspace

    /// Files larger than this are not searched (a dropped book is summarised, not searched).
    static let largestFile = 256 * 1024
    /// A document read through a converter (PDF, HTML…) may be this large; its text no larger
    /// than `largestFile`.
    static let largestConvertedFile = 8 << 20
    static let k1 = 1.2
    static let b = 0.75
    /// The share of a term's weight a matching section heading gives each line below it.
    static let headingBonus = 0.5
    /// The weight of a quoted line ("> …": an email's earlier message, a quotation): what was
    /// said before the text that quotes it, often since changed.
    static let quotedWeight = 0.5
    /// The weight of lines in `Chats/*.md`.
    static let chatWeight = 0.5

    public init(workspace: Workspace) { self.workspace = workspace }

    /// The lines best matching `query`, best first (ties: path then line, so results are deterministic).
    ///
    /// - parameter context: more words that count a third as much as the query's (a follow-up's
    ///   previous message: "And when does it open?" is about what that message named).
    /// - parameter excluding: paths (relative) not to search, such as the file being summarised.
    public func lines(matching query: String, context: String? = nil, limit: Int = 8, excluding: Set<String> = []) -> [RetrievedLine] {
        var factors: [String: Double] = [:]
        for term in context.map({ SearchTerms.terms(of: $0) }) ?? [] { factors[term] = AnswerEvidence.previousFactor }
        for term in SearchTerms.terms(of: query) { factors[term] = 1 }
        guard !factors.isEmpty, limit > 0, let entries = try? workspace.list(".", recursive: true) else { return [] }
        var statistics = SearchStatistics(factors: factors)
        let sources = SourceText(workspace: workspace)
        for entry in entries where entry.kind == .file && !excluding.contains(entry.path)
            && entry.size <= (SourceText.isConverted(entry.path) ? Self.largestConvertedFile : Self.largestFile) {
            guard let weight = Self.weight(of: entry.path), let text = sources.text(of: entry.path), text.utf8.count <= Self.largestFile else { continue }
            statistics.add(file: entry.path, text: text, weight: weight)
        }
        return statistics.ranked(limit: limit)
    }

    /// Of `terms` (search terms), those no searched line holds — not even a heading. The chats
    /// and the agents' journal are left out: they repeat the questions asked (a question about
    /// the alarm code is no note of it).
    public func unknownTerms(_ terms: Set<String>, excluding: Set<String> = []) -> Set<String> {
        guard !terms.isEmpty, let entries = try? workspace.list(".", recursive: true) else { return [] }
        var missing = terms
        let sources = SourceText(workspace: workspace)
        for entry in entries where entry.kind == .file && !excluding.contains(entry.path) && !missing.isEmpty
            && entry.size <= (SourceText.isConverted(entry.path) ? Self.largestConvertedFile : Self.largestFile) {
            guard let weight = Self.weight(of: entry.path), weight == 1, let text = sources.text(of: entry.path) else { continue }
            missing.subtract(SearchTerms.terms(of: text))
        }
        return missing
    }

    /// How much a file's lines count, or nil when it is not searched: `context.md`, Markdown
    /// and text under `Journal/` and `Research/` count fully, `Chats/*.md` half,
    /// `Journal/agent/` a quarter; a README,
    /// anything hidden and everything else not at all.
    static let agentJournalWeight = 0.25

    static func weight(of path: String) -> Double? {
        let components = path.split(separator: "/")
        guard let name = components.last?.lowercased(), !components.contains(where: { $0.hasPrefix(".") }),
              !name.hasPrefix("readme.") && name != "readme" else { return nil }
        if path == "context.md" { return 1 }
        // A dropped PDF, HTML page, DOCX… counts as its text, a CSV as its table (`SourceText`).
        let textual = name.hasSuffix(".md") || name.hasSuffix(".txt") || name.hasSuffix(".markdown") || SourceText.isConverted(name) || CSVTable.isTable(name)
        switch components.first {
        // The agents' journal is mostly Relay's own log of runs ("10:07 research on …"): it
        // names every file it worked on, so it would outrank the files themselves.
        case "Journal" where components.count > 1 && components[1] == "agent": return textual ? agentJournalWeight : nil
        case "Journal", "Research": return textual ? 1 : nil
        case "Chats": return components.count == 2 && name.hasSuffix(".md") ? chatWeight : nil
        default: return nil
        }
    }

}
