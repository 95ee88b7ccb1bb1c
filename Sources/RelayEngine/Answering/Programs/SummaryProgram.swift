import Foundation

/// Summarise: lines chosen across the notes and grouped — by day for the notes of a range
/// ("my week": a bullet per day), else by the file they are in. The engine ranks the lines by
/// the facts they carry (so ten lines about one errand do not crowd out the one with the
/// date); the model chooses among the best; the engine keeps the summary to the count the
/// request asks for (or one bullet per day, two lines each) and renders it with sources.
extension RunExecutor {
    func answerSummary(_ step: Int, agent: AgentDefinition, analysis: RequestAnalysis, lines: [SourcedLine], restored: Bool,
                       tally: inout Tally) async throws -> String {
        guard !lines.isEmpty else {
            return notFound(analysis.days.map { "no note is dated \($0.said.lowercased()) (\($0.from) to \($0.to))" } ?? "no line of the workspace matches the request",
                            closest: [])
        }
        let days = lines.map { line in line.source.flatMap { DayWords.day(ofNote: String($0.prefix { $0 != ":" })) } }
        let dayCount = Set(days.compactMap { $0 }).count
        // A document's summary ("sum up the lease"), all from one file: the lines its parts gave
        // (`Evidence.summaryLines`).
        let oneDocument = dayCount == 0 && Set(lines.compactMap { $0.source.map { String($0.prefix { $0 != ":" }) } }).count == 1
        // One day ("what happened on Thursday?"): a bullet for each of its statements, up to six;
        // several days: a bullet a day, of its best two lines or so.
        let limit = analysis.count.map { max($0, 1) }
            ?? (oneDocument ? RelayRunner.documentSummaryLines : dayCount == 1 ? 6 : max(3, dayCount, min(2 * max(dayCount, 1), 12)))
        let ranked = Self.ranked(Array(lines.indices), sentences: lines.map(\.text), ignoring: ignoredNames).map(\.number)
        var chosen: [Int]
        if lines.count > limit {
            let offered = Array(ranked.prefix(limit * 2))
            let picked = try await chooseSeveral(step, agent: agent, options: offered.map { lines[$0].text }, most: limit,
                                                 question: "Choose the lines a summary must keep (at most \(limit)).", kept: [], restored: restored, tally: &tally)
            // Every day of the notes gets its best line first: a summary of a week that leaves a
            // day out is wrong, however much the other days hold.
            chosen = []
            if dayCount > 1 {
                for day in Set(days.compactMap { $0 }).sorted() {
                    if let best = ranked.first(where: { days[$0] == day }) { chosen.append(best) }
                }
            }
            for index in picked.map({ offered[$0] }) + ranked where chosen.count < limit && !chosen.contains(index) {
                chosen.append(index)
            }
        } else {
            chosen = Array(lines.indices)
        }
        chosen.sort()
        if analysis.count != nil || dayCount == 0 {
            return chosen.map { Self.bullet(lines[$0]) }.joined(separator: "\n")
        }
        if dayCount == 1, let day = days.compactMap({ $0 }).first {
            // The day named in the first bullet: "- Thursday 19 August: First full run … (…:3)".
            return chosen.enumerated().map { offset, index in
                let bullet = Self.bullet(lines[index])
                return offset == 0 && bullet.hasPrefix("- ") ? "- \(DayWords.shown(day)): " + bullet.dropFirst(2) : bullet
            }.joined(separator: "\n")
        }
        // A bullet per day, its lines joined: "- Tuesday 24 November: Called the vet. Paid the rent. (Journal/user/2026-11-24.md)".
        var order: [String] = []
        var byDay: [String: [Int]] = [:]
        for index in chosen {
            let day = days[index] ?? "?"
            if byDay[day] == nil { order.append(day) }
            byDay[day, default: []].append(index)
        }
        return order.map { day in
            let texts = byDay[day]!.map { Self.sentence(lines[$0].text) }
            let file = byDay[day]!.first.flatMap { lines[$0].source.map { String($0.prefix { $0 != ":" }) } }
            return "- \(DayWords.shown(day)): " + texts.joined(separator: " ") + (file.map { " (\($0))" } ?? "")
        }.joined(separator: "\n")
    }

    /// A line as a sentence: a capital first, a full stop last.
    static func sentence(_ text: String) -> String {
        var text = text.trimmingCharacters(in: .whitespaces)
        guard let first = text.first else { return text }
        text = first.uppercased() + text.dropFirst()
        if let last = text.last, !".!?".contains(last) { text += "." }
        return text
    }
}
