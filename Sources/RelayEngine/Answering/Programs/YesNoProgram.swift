import Foundation

/// Yes/no: the line that decides, and the verdict it gives. The model chooses the deciding line
/// among those about what the question asks; the engine reads its polarity — a negation, or a
/// task still open ("- [ ] pay the plumber" answers "Did I pay the plumber?" with no), says no;
/// a statement of it, or a task ticked off, says yes.
extension RunExecutor {
    func answerYesNo(_ step: Int, agent: AgentDefinition, analysis: RequestAnalysis, lines: [SourcedLine], restored: Bool,
                     tally: inout Tally) async throws -> String {
        let question = evidenceQuestion
        if let gap = unsupported(by: lines) { return gap }
        let topic = Support.topicTerms(of: question)
        let covered: [(index: Int, share: Double)] = lines.indices.map { ($0, Support.coverage(of: topic, in: lines[$0].text)) }
        let about: [Int] = covered.filter { $0.share >= 0.5 }.sorted { $0.share != $1.share ? $0.share > $1.share : $0.index < $1.index }.map(\.index)
        guard !about.isEmpty else { return notFound("no line found decides it", closest: lines) }
        let offered = Array(about.prefix(Self.answerChoices))
        let index = try await choose(step, agent: agent, options: offered.map { lines[$0].text }, question: "Which line decides the question?",
                                     context: "", restored: restored, tally: &tally)
        let line = lines[offered[index]]
        let verdict = Self.polarity(of: line.text) ? "Yes" : "No"
        return "\(verdict) — “\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
    }

    /// Words that make a line deny what it speaks of. Why each: plain negations; "forgot",
    /// "missed", "cancelled", "postponed" and "not yet" deny that a thing was done; an open task
    /// marker says it is still to do.
    static let negations: [String] = [
        " not ", "n't ", " never ", " no ", " none ", " nobody ", " nothing ", " forgot ", " forgotten ", " missed ", " cancelled ",
        " canceled ", " postponed ", " not yet ", " failed to ", " unable to ", " without ",
    ]

    /// Whether `line` affirms what it speaks of.
    static func polarity(of line: String) -> Bool {
        if Evidence.doneTaskMarkers.contains(where: { line.contains($0) }) { return true }
        if Evidence.isOpenTask(line) { return false }
        let lowered = " " + line.lowercased().replacingOccurrences(of: "’", with: "'") + " "
        let spaced = lowered.map { $0.isLetter || $0 == "'" ? String($0) : " " }.joined()
        return !negations.contains { spaced.contains($0) || lowered.contains($0) }
    }
}
