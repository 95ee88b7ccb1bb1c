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
        // What each item is called, where the line alone does not say (two prices in one line).
        var labels: [Int: String] = [:]
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
        } else if let listed = Self.labelledList(in: lines),
                  Self.amounts(in: [lines[listed.0]]).count < 2 {
            // "Thursday 64, Friday 88, Saturday evening 112": each number is its label's.
            for item in listed.1 {
                labels[items.count] = item.label
                items.append((item.value, item.number, listed.0))
            }
        } else {
            let amounts = Self.amounts(in: lines)
            if let first = amounts.first, case let several = Self.comparable(amounts.filter { $0.line == first.line }), several.count >= 2 {
                // The best line that holds a value holds several in one unit ("Holm Timber ask
                // 38.50 euros; Brackley charges 34.75 euros"): they are compared, each named by
                // its clause.
                let text = lines[first.line].text
                for amount in several {
                    labels[items.count] = Self.clauseLabel(before: amount.offset, in: text)
                    items.append((amount.value, amount.shown, amount.line))
                }
            } else {
                // One amount per line, the first, of the unit most lines give ("650 g" is not
                // compared with "2 tablespoons").
                var seen: Set<Int> = []
                let firsts = amounts.filter { seen.insert($0.line).inserted }
                let units = Dictionary(grouping: firsts, by: { $0.unit ?? $0.prefix })
                let common = units.max { $0.value.count != $1.value.count ? $0.value.count < $1.value.count : $0.key > $1.key }?.key
                for amount in firsts where (amount.unit ?? amount.prefix) == common {
                    items.append((amount.value, amount.shown, amount.line))
                }
            }
        }
        guard items.count >= 2 else { return nil }
        let bestIndex = [.lowest, .earliest].contains(operation) ? items.indices.min { items[$0].value < items[$1].value }!
            : items.indices.max { items[$0].value < items[$1].value }!
        let best = items[bestIndex]
        let line = lines[best.line]
        let which = ["lowest": "the lowest", "highest": "the highest", "earliest": "the earliest", "latest": "the latest"][operation.rawValue] ?? operation.rawValue
        let label = labels[bestIndex] ?? Self.label(of: line.text, without: best.shown)
        // "Kell & Sons — 3,100 euros, …"; a row named by its whole text: the value first.
        let head = label.hasPrefix("“") ? "\(best.shown) — \(label)" : "\(label) — \(best.shown)"
        let compared = "\(head), \(which) of \(items.count) (\(line.source ?? "?"))"
        guard let first = RequestRules.words(of: question).first, RequestRules.auxiliaries.contains(first) else { return compared }
        // "Did we go with the cheapest printer?": whether the item the notes say was chosen is it.
        let names = items.indices.map { labels[$0] ?? Self.label(of: lines[items[$0].line].text, without: items[$0].shown) }
        guard let (chosen, said) = chosenItem(among: names) else {
            return "\(Self.notFoundOpening): no note says which was chosen. Of those compared: \(compared)"
        }
        let phrase = RequestRules.compareWords.first { RequestRules.words(of: question).joined(separator: " ").contains($0.phrase) }?.phrase ?? which
        let quoted = "“\(Self.clip(said.text))” (\(said.source ?? "?"))"
        return chosen == bestIndex ? "Yes — \(names[chosen]), the \(phrase): \(quoted); \(compared)"
            : "No — \(names[chosen]), not the \(phrase): \(quoted). The \(phrase) is \(compared)"
    }

    /// Words that say a thing was chosen: "went with", "ordered", "booked".
    static let choiceWords = ["went with", "going with", "go with", "gone with", "chose", "chosen", "choose", "picked", "ordered", "bought",
                              "booked", "decided on", "settled on", "opted for", "accepted", "said yes to", "hired", "signed up"]

    /// Which of the items `names` the person's own notes (or context.md) say was chosen, and the
    /// line that says so — the newest note. An item is known by its name's first word that no
    /// other item's name shares ("Fenwray Press, Colley" by "Fenwray").
    func chosenItem(among names: [String]) -> (Int, SourcedLine)? {
        let words = names.map { name in name.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init).filter { $0.first?.isUppercase == true } }
        let keys = words.enumerated().map { index, own in
            own.first { word in !words.enumerated().contains { $0.offset != index && $0.element.contains(word) } }
        }
        let query = keys.compactMap { $0 }.joined(separator: " ")
        guard !query.isEmpty else { return nil }
        var best: (Int, SourcedLine, String)?
        for line in WorkspaceSearch(workspace: workspace).lines(matching: query, limit: 40) {
            guard line.path.hasPrefix("Journal/user/") || line.path == "context.md" else { continue }
            let lowered = " " + line.text.lowercased() + " "
            guard Self.choiceWords.contains(where: { lowered.contains(" " + $0 + " ") }) else { continue }
            let text = " " + line.text + " "
            guard let item = keys.indices.first(where: { keys[$0].map { key in text.range(of: #"\b\#(key)\b"#, options: .regularExpression) != nil } ?? false }) else { continue }
            let day = Evidence.day(ofNotePath: line.path) ?? ""
            let said = line.text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: #"^([-*+]|\d+\.)\s+(\[[ xX]\]\s+)?"#, with: "", options: .regularExpression)
            if best == nil || day > best!.2 { best = (item, SourcedLine(text: said, source: "\(line.path):\(line.line)"), day) }
        }
        return best.map { ($0.0, $0.1) }
    }

    /// Words of a request for the lowest or highest price, and the headers of a price column.
    static let moneyWordsText = "cheap cheaper cheapest expensive dear dearer dearest pricey priciest price prices cost costs pay charge charges quote fee"
    static let moneyWords: Set<String> = Set(SearchTerms.terms(of: moneyWordsText))
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
        // Every header of the rows, in order: a row leaves its empty cells out ("Paid in" has
        // no "Paid out"), so the first row alone may lack the column asked about.
        var headers: [String] = []
        for row in rows { for cell in row where !headers.contains(cell.header) { headers.append(cell.header) } }
        // A column whose rows all hold the same value ("Qty: 1" on every line of an invoice)
        // cannot decide a comparison.
        let numeric = headers.filter { header in
            let values = rows.compactMap { row in row.first { $0.header == header && fits($0.value) }?.value }
            return values.count >= 2 && Set(values).count >= 2
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
        if !asked.isDisjoint(with: moneyWords) {
            if let price = numeric.first(where: { !Set(SearchTerms.terms(of: $0.lowercased())).isDisjoint(with: moneyHeaders) }) { return price }
            // An invoice's "Each": the first column whose every value is written with cents.
            let cents = numeric.first { header in
                rows.allSatisfy { row in row.first { $0.header == header }.map { $0.value.range(of: #"\d\.\d\d\b"#, options: .regularExpression) != nil } ?? true }
            }
            if let cents { return cents }
        }
        return numeric.first
    }

    /// A cell that holds an amount to compare: a number, not a date ("01 Jan") or a time.
    static func isAmount(_ cell: String) -> Bool {
        let text = cell.trimmingCharacters(in: .whitespaces)
        guard text.first?.isNumber == true || "€$£¥".contains(text.first ?? " ") else { return false }
        // "6.40" alone is an amount (a price column); a time has a colon or says am or pm.
        let time = ValueSpans.find(.time, in: text).first
        return Claims.extract(from: text).first?.kind != .date && (time == nil || (time == text && !text.contains(":") && !text.contains(where: \.isLetter)))
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

    /// A line's numbers each after its label, listed ("Ticket sales so far: Thursday 64, Friday 88,
    /// Saturday matinee 41, Saturday evening 112"): the label, the number as written and its
    /// value; empty unless two pieces at least are so made. Pieces are split at commas,
    /// semicolons and "and", after a colon that introduces them.
    static func labelledNumbers(in line: String) -> [(label: String, number: String, value: Double)] {
        var text = line.trimmingCharacters(in: CharacterSet(charactersIn: " .-*"))
        if let colon = text.range(of: ": ") { text = String(text[colon.upperBound...]) }
        let pieces = text.components(separatedBy: CharacterSet(charactersIn: ",;")).flatMap { $0.components(separatedBy: " and ") }
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " .")) }.filter { !$0.isEmpty }
        let found = pieces.compactMap { piece -> (String, String, Double)? in
            let words = piece.split(separator: " ")
            guard words.count >= 2, words.count <= 5, let last = words.last, let value = Calculator.number(String(last)),
                  last.allSatisfy({ $0.isNumber || $0 == "." || $0 == "," }), words.dropLast().allSatisfy({ $0.first?.isLetter == true }) else { return nil }
            return (words.dropLast().joined(separator: " "), String(last), value)
        }
        return found.count >= 2 && found.count * 2 >= pieces.count ? found : []
    }

    /// The first of the best three lines that lists numbers each after its label: its index and
    /// the labelled numbers.
    static func labelledList(in lines: [SourcedLine]) -> (Int, [(label: String, number: String, value: Double)])? {
        lines.prefix(3).enumerated().lazy.map { ($0.offset, labelledNumbers(in: $0.element.text)) }.first { !$0.1.isEmpty }
    }

    /// The amounts of one line that compare with each other: those in the unit of the first
    /// (money with money), without a total of them ("27 kg in all", "Total: 44.16").
    static func comparable(_ amounts: [Amount]) -> [Amount] {
        guard let first = amounts.first else { return [] }
        func unit(_ amount: Amount) -> String { amount.isMoney ? "money" : amount.unit ?? amount.prefix }
        return amounts.filter { unit($0) == unit(first) && $0.line == first.line && !$0.totalled }
    }

    /// What a value of several in one line is: the words of its clause before it when they hold
    /// a number of their own ("hive 4 gave 13 kg": hive 4), else the name of its clause.
    static func clauseLabel(before offset: Int, in line: String) -> String? {
        let bytes = Array(line.utf8)
        let head = String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self)
        let clause = head.components(separatedBy: CharacterSet(charactersIn: ",;:.!?")).last?
            .components(separatedBy: " and ").last?.trimmingCharacters(in: .whitespaces) ?? ""
        let words = clause.split(separator: " ")
        if clause.contains(where: \.isNumber), (1...6).contains(words.count) { return clause }
        return clauseName(before: offset, in: line)
    }

    /// The name that says whose a value in `line` is: the last name before it in its clause
    /// (clauses end at ";" and at sentences), else the last name before the clause ("Pia from
    /// Holm Timber came by. Their price is 38.50 euros": Holm Timber); nil when none.
    static func clauseName(before offset: Int, in line: String) -> String? {
        let bytes = Array(line.utf8)
        let head = String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self)
        let clauses = head.components(separatedBy: CharacterSet(charactersIn: ";.!?"))
        for clause in clauses.reversed() {
            if let name = Claims.extract(from: clause).last(where: { $0.kind == .name }) { return name.text }
        }
        return nil
    }

    /// What a compared line is about: a table row's first cell that names a thing (not a date,
    /// not a number: a statement's "Description", not its "Date"), else its first name, else the
    /// line; a list item of a quantity ("450 g strong white flour") is what follows the quantity.
    static func label(of line: String, without value: String) -> String {
        if let row = cells(of: line) {
            let named = row.first { cell in
                let text = cell.value.trimmingCharacters(in: .whitespaces)
                return text.first?.isLetter == true && Claims.extract(from: text).first.map { $0.kind == .date && $0.text.count >= text.count - 1 } != true
            }
            if let named, !named.value.contains(value), row.first?.value.first?.isNumber == true || row.first?.header == named.header {
                return named.value.trimmingCharacters(in: .whitespaces)
            }
        }
        if line.first?.isNumber == true, line.hasPrefix(value.split(separator: " ").first.map(String.init) ?? value) {
            let rest = line.dropFirst(value.count).trimmingCharacters(in: .whitespaces)
            let thing = rest.split(separator: ",", maxSplits: 1).first.map(String.init) ?? rest
            if thing.contains(where: \.isLetter) { return thing.trimmingCharacters(in: .whitespaces) }
        }
        // A short line of a name and the value, a heading "4.3 (12 October 2026)": the rest is its name.
        let rest = line.replacingOccurrences(of: value, with: "").replacingOccurrences(of: "()", with: "")
            .trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "–—-:,;")))
        if line.count <= 60, cells(of: line) == nil, !rest.isEmpty, rest.split(separator: " ").count <= 4 { return rest }
        if let cell = cells(of: line)?.first?.value.trimmingCharacters(in: .whitespaces), !cell.isEmpty {
            // A row named by its first cell ("Roofer: Kell & Sons"); a row of times or
            // numbers is named by the whole row.
            return cell == value || cell.first?.isNumber == true ? "“\(clip(line, 160))”" : cell
        }
        if let name = Claims.extract(from: line).first(where: { $0.kind == .name }) { return name.text }
        return "“\(clip(line, 120))”"
    }
}
