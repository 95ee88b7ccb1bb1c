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
            let topic = Support.topicTerms(of: evidenceQuestion).subtracting(Self.listWords)
            items = lines.filter { line in
                structural.contains(line.source ?? "") || topic.isEmpty || Support.coverage(of: topic, in: line.text) > 0
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
