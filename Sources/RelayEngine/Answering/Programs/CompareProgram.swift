import Foundation

/// Compare: the item with the lowest or highest amount, or the earliest or latest date, among
/// the lines handed on (every row of a table, read with its header). The engine compares; the
/// answer names the item, its value, how many were compared, and the source.
extension RunExecutor {
    func answerCompare(analysis: RequestAnalysis, lines: [SourcedLine]) -> String {
        let question = evidenceQuestion
        let pool = (manifest.retrieved ?? []).map(\.withHeading)
        if let gap = Support.gap(question: question, lines: pool.isEmpty ? lines.map(\.text) : pool, ignoring: ignoredNames) {
            return notFound(gap, closest: lines)
        }
        let operation = analysis.operation ?? .lowest
        let today = RelayEngine.today(manifest.localDate)
        var items: [(value: Double, shown: String, line: Int)] = []
        if operation == .earliest || operation == .latest {
            for (index, line) in lines.enumerated() {
                guard let claim = Claims.extract(from: line.text).first(where: { $0.kind == .date }),
                      let day = DayWords.parse(claim.text, today: today) else { continue }
                items.append((day.timeIntervalSince1970, claim.text, index))
            }
        } else {
            // One amount per line: the first, or the one whose column the request names.
            var seen: Set<Int> = []
            for amount in Self.amounts(in: lines) where seen.insert(amount.line).inserted {
                items.append((amount.value, amount.shown, amount.line))
            }
        }
        guard items.count >= 2 else {
            return notFound("the lines found hold fewer than two \(operation == .earliest || operation == .latest ? "dates" : "amounts") to compare", closest: lines)
        }
        let best = [.lowest, .earliest].contains(operation) ? items.min { $0.value < $1.value }! : items.max { $0.value < $1.value }!
        let line = lines[best.line]
        let which = ["lowest": "the lowest", "highest": "the highest", "earliest": "the earliest", "latest": "the latest"][operation.rawValue] ?? operation.rawValue
        return "\(Self.label(of: line.text, without: best.shown)) — \(best.shown), \(which) of \(items.count) (\(line.source ?? "?"))"
    }

    /// What a compared line is about: a table row's first cell, else its first name, else the line.
    static func label(of line: String, without value: String) -> String {
        if let first = line.split(separator: ";").first, first.contains(": ") {
            let cell = first.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if !cell.isEmpty, !cell.contains(value) { return cell }
        }
        if let name = Claims.extract(from: line).first(where: { $0.kind == .name }) { return name.text }
        return "“\(clip(line, 120))”"
    }
}
