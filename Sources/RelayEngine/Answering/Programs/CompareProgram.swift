import Foundation

/// Compare: the item with the lowest or highest amount, or the earliest or latest date, among
/// the lines handed on (every row of a table, read with its header). The engine compares; the
/// answer names the item, its value, how many were compared, and the source.
extension RunExecutor {
    /// The answer; nil when fewer than two items compare ("my first appointment" when the notes
    /// hold one): then the request is a lookup.
    func answerCompare(analysis: RequestAnalysis, lines: [SourcedLine]) -> String? {
        let question = evidenceQuestion
        if let gap = unsupported(by: lines) { return gap }
        let operation = analysis.operation ?? .lowest
        let today = RelayRunner.today(manifest.localDate)
        var items: [(value: Double, shown: String, line: Int)] = []
        if operation == .earliest || operation == .latest {
            // In time: a table's column of times or dates (the one the request names), else the
            // date of each line, else its time of day.
            let column = Self.column(for: question, in: lines, holding: { Self.moment(of: $0, today: today) != nil })
            for (index, line) in lines.enumerated() {
                if let column {
                    guard let cell = Self.cells(of: line.text)?.first(where: { $0.header == column }),
                          let moment = Self.moment(of: cell.value, today: today) else { continue }
                    items.append((moment, cell.value, index))
                } else if let claim = Claims.extract(from: line.text).first(where: { $0.kind == .date }),
                          let day = DayWords.parse(claim.text, today: today) {
                    items.append((day.timeIntervalSince1970, claim.text, index))
                }
            }
            if items.count < 2 {
                items = lines.enumerated().compactMap { index, line in
                    ValueSpans.find(.time, in: line.text).first.flatMap { time in Self.minutes(time).map { (Double($0), time, index) } }
                }
            }
        } else if let column = Self.column(for: question, in: lines) {
            // Table rows: the column the request names ("cheapest" → the price).
            for (index, line) in lines.enumerated() {
                guard let cell = Self.cells(of: line.text)?.first(where: { $0.header == column }), let value = Calculator.number(cell.value),
                      cell.value.contains(where: \.isNumber) else { continue }
                items.append((value, cell.value + Self.unit(inHeader: column), index))
            }
        } else {
            // One amount per line: the first.
            var seen: Set<Int> = []
            for amount in Self.amounts(in: lines) where seen.insert(amount.line).inserted {
                items.append((amount.value, amount.shown, amount.line))
            }
        }
        guard items.count >= 2 else { return nil }
        let best = [.lowest, .earliest].contains(operation) ? items.min { $0.value < $1.value }! : items.max { $0.value < $1.value }!
        let line = lines[best.line]
        let which = ["lowest": "the lowest", "highest": "the highest", "earliest": "the earliest", "latest": "the latest"][operation.rawValue] ?? operation.rawValue
        let label = Self.label(of: line.text, without: best.shown)
        // "Kell & Sons — 3,100 euros, …"; a row named by its whole text: the value first.
        let head = label.hasPrefix("“") ? "\(best.shown) — \(label)" : "\(label) — \(best.shown)"
        return "\(head), \(which) of \(items.count) (\(line.source ?? "?"))"
    }

    /// Words of a request for the lowest or highest price, and the headers of a price column.
    static let moneyWords: Set<String> = Set(SearchTerms.terms(of: "cheap cheaper cheapest expensive dear dearest pricey priciest price cost costs pay quote fee"))
    static let moneyHeaders: Set<String> = Set(SearchTerms.terms(of: "price cost fee amount quote total rate charge sum"))
        .union(AnswerEvidence.money)

    /// A table row as written by the evidence ("Roofer: Harl; Price (crowns): 4,320; …"): its cells.
    static func cells(of row: String) -> [(header: String, value: String)]? {
        let parts = row.components(separatedBy: "; ")
        let cells = parts.compactMap { part -> (String, String)? in
            guard let colon = part.range(of: ": ") else { return nil }
            return (String(part[..<colon.lowerBound]), String(part[colon.upperBound...]))
        }
        return cells.count >= 2 && cells.count == parts.count ? cells : nil
    }

    /// The numeric column of the rows in `lines` the request compares: the one whose header
    /// shares a word with the request, else for a question about price the price column, else
    /// the first numeric one; nil when the lines are no table rows.
    static func column(for question: String, in lines: [SourcedLine], holding fits: (String) -> Bool = isAmount) -> String? {
        let rows = lines.compactMap { cells(of: $0.text) }
        guard rows.count >= 2 else { return nil }
        let numeric = rows[0].map(\.header).filter { header in
            rows.filter { row in row.contains { $0.header == header && fits($0.value) } }.count >= 2
        }
        let asked = Set(SearchTerms.terms(of: question))
        if let named = numeric.first(where: { !Set(SearchTerms.terms(of: $0)).isDisjoint(with: asked.subtracting(moneyWords)) }) { return named }
        // "the biggest payment out" → "Paid out": the header sharing most words with the request.
        // Plain words count too: "out" is no search term, but it tells "Paid out" from "Paid in".
        let plain = Set(RequestRules.words(of: question)).subtracting(["the", "a", "an", "of", "in", "on", "at", "to", "for", "and", "is", "was", "by"])
        let shared = numeric.map { header in
            (header, Set(SearchTerms.terms(of: header)).intersection(asked).count + Set(RequestRules.words(of: header)).intersection(plain).count)
        }.filter { $0.1 > 0 }
        if let best = shared.max(by: { $0.1 < $1.1 }), shared.filter({ $0.1 == best.1 }).count == 1 { return best.0 }
        if !asked.isDisjoint(with: moneyWords), let price = numeric.first(where: { !Set(SearchTerms.terms(of: $0.lowercased())).isDisjoint(with: moneyHeaders) }) {
            return price
        }
        return numeric.first
    }

    /// A cell that holds an amount to compare: a number, not a date ("01 Jan") or a time.
    static func isAmount(_ cell: String) -> Bool {
        let text = cell.trimmingCharacters(in: .whitespaces)
        guard text.first?.isNumber == true || "€$£¥".contains(text.first ?? " ") else { return false }
        return Claims.extract(from: text).first?.kind != .date && ValueSpans.find(.time, in: text).isEmpty
    }

    /// A cell's moment, to order by: a date (with its time, if any), else a time of day (minutes).
    static func moment(of text: String, today: String) -> Double? {
        if let claim = Claims.extract(from: text).first(where: { $0.kind == .date }), let day = DayWords.parse(claim.text, today: today) {
            return day.timeIntervalSince1970 + (ValueSpans.find(.time, in: text).first.flatMap(minutes).map { Double($0) * 60 } ?? 0)
        }
        return ValueSpans.find(.time, in: text).first.flatMap(minutes).map(Double.init)
    }

    /// Minutes after midnight of "18:45", "6.45 pm", "9am", "noon".
    static func minutes(_ time: String) -> Int? {
        let lowered = time.lowercased().replacingOccurrences(of: ".", with: ":").replacingOccurrences(of: " ", with: "")
        if lowered == "noon" { return 12 * 60 }
        if lowered == "midnight" { return 0 }
        let pm = lowered.hasSuffix("pm") || lowered.hasSuffix("p:m:"), am = lowered.hasSuffix("am") || lowered.hasSuffix("a:m:")
        let digits = lowered.filter { $0.isNumber || $0 == ":" }
        let parts = digits.split(separator: ":").compactMap { Int($0) }
        guard let hour = parts.first, hour < 24 else { return nil }
        let minute = parts.count > 1 ? parts[1] : 0
        let hours = pm && hour < 12 ? hour + 12 : am && hour == 12 ? 0 : hour
        return hours * 60 + minute
    }

    /// " crowns" of "Price (crowns)": a unit a header gives in brackets.
    static func unit(inHeader header: String) -> String {
        guard let open = header.firstIndex(of: "("), let close = header.lastIndex(of: ")"), open < close else { return "" }
        return " " + header[header.index(after: open)..<close]
    }

    /// What a compared line is about: a table row's first cell, else its first name, else the line.
    static func label(of line: String, without value: String) -> String {
        if let cell = cells(of: line)?.first?.value.trimmingCharacters(in: .whitespaces), !cell.isEmpty {
            // A row named by its first cell ("Roofer: Kell & Sons"); a row of times or
            // numbers is named by the whole row.
            return cell.contains(value) || cell.first?.isNumber == true ? "“\(clip(line, 160))”" : cell
        }
        if let name = Claims.extract(from: line).first(where: { $0.kind == .name }) { return name.text }
        return "“\(clip(line, 120))”"
    }
}
