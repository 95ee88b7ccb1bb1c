import Foundation

/// List: every item that matches, one line each with its source. For open tasks the evidence is
/// already the list (the notes' task lines, done ones left out); otherwise the lines handed on
/// that speak of what the request is about, as many as it asks for.
extension RunExecutor {
    func answerList(_ step: Int, agent: AgentDefinition, analysis: RequestAnalysis, lines: [SourcedLine], restored: Bool,
                    tally: inout Tally) async throws -> String {
        let structural = structuralSources
        var items = lines
        if !analysis.tasks {
            // Only lines about what the request names ("the books I borrowed"), not every line found.
            // Of those, the ones that speak of it most: a line sharing one word of four with the
            // request ("a card for Saskia" for "who is coming to Saskia's party") is not an item
            // when another line holds all four.
            let topic = Support.topicTerms(of: evidenceQuestion).subtracting(Self.listWords)
            let covered = Dictionary(lines.map { ($0.text, Support.coverage(of: topic, in: $0.text)) }, uniquingKeysWith: max)
            let best = covered.values.max() ?? 0
            items = lines.filter { line in
                let coverage = covered[line.text] ?? 0
                return structural.contains(line.source ?? "") || topic.isEmpty || (coverage > 0 && coverage * 2 >= best)
            }
        } else if items.contains(where: { structural.contains($0.source ?? "") }) {
            items = items.filter { structural.contains($0.source ?? "") }
        } else {
            items = []
        }
        guard !items.isEmpty else {
            return notFound(analysis.tasks ? "no note holds an open task (a “TODO”, a “- [ ]” or “need to” line)" : "no line of the workspace lists what was asked",
                            closest: lines)
        }
        // "What have we bought from Kell Hardware?": an item names the whole name asked about,
        // not one of its words ("Kell" of a heading about Kell Street).
        let named = Claims.extract(from: evidenceQuestion, ignoring: ignoredNames).filter { $0.kind == .name }.map { Set(SearchTerms.terms(of: $0.text)) }
        let naming = items.filter { line in named.allSatisfy { $0.isSubset(of: SearchTerms.terms(of: line.text)) } }
        if !named.isEmpty, !naming.isEmpty { items = naming }
        // A summary's line repeats its document's: with the document's own lines found, the
        // summary's go ("Research/spend/summary.md" beside "Research/spend.csv").
        let documents = Set(items.compactMap { $0.source.map { String($0.prefix { $0 != ":" }) } }.filter { !$0.hasSuffix("/summary.md") }
            .map { ($0 as NSString).deletingPathExtension })
        // (So does context.md's line for it: "[spend](Research/spend/summary.md): …".)
        items = items.filter { line in
            var path = line.source.map { String($0.prefix { $0 != ":" }) } ?? ""
            if line.text.hasPrefix("["), let open = line.text.range(of: "]("), let close = line.text[open.upperBound...].firstIndex(of: ")") {
                path = String(line.text[open.upperBound..<close])
            }
            guard path.hasSuffix("/summary.md") else { return true }
            return !documents.contains((path as NSString).deletingLastPathComponent)
        }
        if let count = analysis.count { items = Array(items.prefix(count)) }
        var seen: Set<String> = []
        return items.filter { seen.insert($0.text.lowercased()).inserted }.map(Self.bullet).joined(separator: "\n")
    }

    /// Words of a request for a list that say it is a list, not what it lists.
    static let listWords: Set<String> = Set(SearchTerms.terms(of: "list all every each item items things thing remaining left open"))

    /// The `path:line` of every line of the evidence found by the workspace's structure.
    var structuralSources: Set<String> {
        Set((manifest.retrieved ?? []).filter { $0.score >= Evidence.structural }.map { "\($0.path):\($0.line)" })
    }
}
