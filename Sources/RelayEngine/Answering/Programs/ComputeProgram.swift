import Foundation

/// Compute: a sum or a difference of amounts in the notes, or the days between two dates. The
/// operands come from the lines about each thing the request names ("the kettle and the
/// toaster": one amount from the best line about each); when the request names its operands no
/// such way, the model chooses them among the amounts offered. The engine's calculator does the
/// arithmetic, and the answer shows the operands with their sources.
extension RunExecutor {
    func answerCompute(_ step: Int, agent: AgentDefinition, analysis: RequestAnalysis, lines: [SourcedLine], restored: Bool,
                       tally: inout Tally) async throws -> String {
        let question = evidenceQuestion
        if let gap = unsupported(by: lines) { return gap }
        let operation = analysis.operation ?? .sum
        if operation == .daysBetween { return daysBetween(question: question, lines: lines) }
        if operation == .count {
            let topic = Support.topicTerms(of: question)
            let matching = lines.filter { Support.coverage(of: topic, in: $0.text) > 0 }
            guard !matching.isEmpty else { return notFound("no line found speaks of it", closest: lines) }
            return "\(matching.count) — " + matching.prefix(3).map { "“\(Self.clip($0.text, 80))”" + ($0.source.map { " (\($0))" } ?? "") }.joined(separator: ", ")
        }
        if operation == .sum, RequestRules.operandParts(question).count < 2, let summed = sumOfColumn(question: question, lines: lines) { return summed }
        // "What did the fence posts cost altogether?" — "five new posts, 12 florins each".
        if operation == .sum, RequestRules.operandParts(question).count < 2, let total = totalOfUnitPrice(lines: lines, among: 5) { return total }
        var amounts = Self.amounts(in: lines)
        // Money with money: "25 kg" is no operand of a price — and a question of what things
        // cost is answered from amounts of money only.
        let asksMoney = RequestRules.value(asked: " " + RequestRules.words(of: question).joined(separator: " ") + " ") == .money
        if amounts.filter(\.isMoney).count >= 2 || (asksMoney && amounts.contains(where: \.isMoney)) { amounts = amounts.filter(\.isMoney) }
        if operation == .sum, amounts.count < 2,
           let listed = Self.labelledList(in: lines),
           let result = Calculator.apply(.sum, to: listed.1.map(\.value)) {
            // "Thursday 64, Friday 88, Saturday evening 112" — across all of them.
            let shown = Calculator.format(result, like: listed.1.map(\.number))
            return "\(shown) — " + listed.1.map { "\($0.label) \($0.number)" }.joined(separator: " + ")
                + " (\(lines[listed.0].source ?? "?")), added by Relay's calculator"
        }
        if operation == .sum, amounts.count == 1, let only = amounts.first {
            // One amount of what was asked: that is the whole of it.
            return "\(only.shown) — “\(Self.clip(lines[only.line].text))” (\(lines[only.line].source ?? "?")), the one amount found"
        }
        guard amounts.count >= 2 else { return notFound("the lines found hold fewer than two amounts to \(operation == .sum ? "add" : "subtract")", closest: lines) }
        var operands = Self.operandsByPart(question: question, amounts: amounts, lines: lines)
        if operation == .difference {
            // "How much less is the extractor costing than first quoted?": one thing's two
            // amounts, the first of each of the two best lines about it that differ (the quote,
            // then the lowered price).
            let topic = Support.topicTerms(of: question)
            var pair: [Amount] = []
            // A line that says both ("down from 720 to 660 crowns", the first in the unit of
            // the second) says it best.
            for index in lines.indices where pair.isEmpty && Support.coverage(of: topic, in: lines[index].text) > 0 {
                let text = lines[index].text
                guard let match = text.range(of: #"from [0-9][0-9.,]* to [0-9][0-9.,]*"#, options: .regularExpression) else { continue }
                let parts = text[match].split(separator: " ")
                let offset = text.utf8.distance(from: text.utf8.startIndex, to: match.upperBound.samePosition(in: text.utf8) ?? text.utf8.endIndex)
                guard parts.count == 4, let was = Calculator.number(String(parts[1])), var now = Self.amounts(in: lines).first(where: { amount in
                    amount.line == index && amount.number == String(parts[3]).trimmingCharacters(in: CharacterSet(charactersIn: ",.")) && amount.offset < offset
                }) else { continue }
                now.line = index
                var before = now
                before.value = was
                before.number = String(parts[1])
                before.shown = now.shown.replacingOccurrences(of: now.number, with: before.number)
                pair = [before, now]
            }
            // (A line that says both decides over one amount of each part: "the price goes up
            // from 900 to 960" for "How much more is it than first quoted?".)
            if pair.isEmpty, operands.count < 2 {
                for amount in amounts where pair.count < 2 && !pair.contains(where: { $0.line == amount.line || $0.value == amount.value })
                    && (topic.isEmpty || Support.coverage(of: topic, in: lines[amount.line].text) > 0) {
                    pair.append(amount)
                }
            }
            if pair.count == 2 { operands = pair }
        }
        if operands.count < 2 {
            let offered = Array(amounts.prefix(6))
            let picked = try await chooseSeveral(step, agent: agent, options: offered.map { "\($0.shown): \(Self.clip(lines[$0.line].text, 120))" }, most: 4,
                                                 question: "Which amounts does the request ask to \(operation == .sum ? "add up" : "subtract")? Choose at least two.",
                                                 kept: [], restored: restored, tally: &tally)
            operands = picked.count >= 2 ? picked.map { offered[$0] } : Array(offered.prefix(2))
        }
        // "340 g + 31.50 crowns" is no sum: amounts in different units are not added up.
        let units = Set(operands.map { $0.isMoney ? "money" : ($0.unit ?? "") })
        guard units.subtracting([""]).count <= 1 else {
            return notFound("the amounts found are in different units (\(operands.map(\.shown).joined(separator: ", ")))", closest: lines)
        }
        guard let result = Calculator.apply(operation, to: operands.map(\.value)) else { return notFound("it cannot be computed from the lines found", closest: lines) }
        let unit = operands.compactMap(\.unit).first.map { " " + $0 } ?? ""
        let shown = Calculator.format(result, like: operands.map(\.number))
        let sign = operation == .sum ? " + " : " − "
        // A difference reads larger − smaller, as the calculator takes it.
        let shownOperands = operation == .difference && operands.count == 2 ? operands.sorted { $0.value > $1.value } : operands
        let parts = shownOperands.map { "\($0.shown) (\(lines[$0.line].source ?? "?"))" }.joined(separator: sign)
        return "\(operands.first?.prefix ?? "")\(shown)\(unit) — \(parts), \(operation == .sum ? "added" : "subtracted") by Relay's calculator"
    }

    /// "Bought 4 sheets of board …, 23.50 marks a sheet": the count of the things a line
    /// prices one of, times that price — as the line says what the whole came to. Nil when the
    /// line gives no price of one ("a sheet", "per sheet", "each") or no count of that thing.
    /// (`context`: the other lines found, whose amounts say which words are currencies: "96
    /// florins each" beside "300.00 florins".)
    static func unitPriceTotal(in line: String, context: [SourcedLine] = []) -> (total: Double, count: String, price: Amount)? {
        let bytes = Array(line.utf8)
        let tokens = line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" }).map(String.init)
        let all = [SourcedLine(text: line, source: nil)] + context
        for price in amounts(in: all) where price.line == 0 && price.isMoney {
            // The words after the amount and its unit: "a sheet", "per sheet", "each".
            let end = min(bytes.count, price.offset + price.number.utf8.count + price.prefix.utf8.count)
            var rest = String(decoding: bytes[end...], as: UTF8.self).lowercased().split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters) }
            if let unit = price.unit, rest.first == unit { rest.removeFirst() }
            guard let marker = rest.first, ["a", "an", "per", "each", "apiece"].contains(marker) else { continue }
            let thing = ["a", "an", "per"].contains(marker) && rest.count > 1 ? SearchTerms.terms(of: rest[1]).first : nil
            // The count: a number right before a plural of that thing ("4 sheets"); for "each",
            // a number before any plural noun.
            for (index, token) in tokens.enumerated() where index + 1 < tokens.count {
                // ("five new posts": a count in words is a count.)
                guard let count = Double(token) ?? RequestRules.countWords[token.lowercased()].map(Double.init), count > 1, count < 10_000,
                      token != price.number else { continue }
                let next = tokens[index + 1].lowercased().trimmingCharacters(in: .punctuationCharacters)
                if let thing {
                    if SearchTerms.terms(of: next).first == thing && next != rest[1] { return (count * price.value, token + " " + next, price) }
                    continue
                }
                // "five new oak 8x8 M12 posts, 12 florins each": the first plural within a few words.
                let ahead = tokens[(index + 1)...].prefix(6).map { $0.trimmingCharacters(in: .punctuationCharacters) }
                if let noun = ahead.first(where: { RequestRules.isPlural($0.lowercased()) }) {
                    return (count * price.value, ([token] + ahead.prefix { $0 != noun } + [noun]).joined(separator: " "), price)
                }
            }
        }
        return nil
    }

    /// Headers of a table's count of things, and of the price of one.
    static let quantityHeaders: Set<String> = Set(SearchTerms.terms(of: "qty quantity number count units pieces how many"))
    static let unitPriceHeaders: Set<String> = Set(SearchTerms.terms(of: "unit price each rate per"))
    static let totalHeaders: Set<String> = Set(SearchTerms.terms(of: "total amount line sum subtotal"))

    /// A row's count and the price of one, when its table gives no total of its own
    /// ("quantity: 6; unit price marks: 7.25"): the two cells.
    static func quantityAndUnitPrice(_ row: [(header: String, value: String)]) -> (quantity: String, price: String, header: String)? {
        func has(_ header: String, _ words: Set<String>) -> Bool { !Set(SearchTerms.terms(of: header.lowercased())).isDisjoint(with: words) }
        guard !row.contains(where: { has($0.header, totalHeaders) }),
              let quantity = row.first(where: { has($0.header, quantityHeaders) && Calculator.number($0.value) != nil }),
              let price = row.first(where: { $0.header != quantity.header && has($0.header, unitPriceHeaders) && Calculator.number($0.value) != nil })
        else { return nil }
        return (quantity.value, price.value, price.header)
    }

    /// The sum of the column the request names over the table rows handed on ("the takings of
    /// the June markets"); for money spent, over a table of counts and prices of one with no
    /// total of its own, each row's count times its price. Nil when there is no row to sum.
    private func sumOfColumn(question: String, lines: [SourcedLine]) -> String? {
        var rows = lines.filter { Self.cells(of: $0.text) != nil }
        // The rows the evidence chose (those of the thing or the month asked), when it chose some.
        let chosen = structuralSources
        if rows.contains(where: { chosen.contains($0.source ?? "") }) { rows = rows.filter { chosen.contains($0.source ?? "") } }
        let asksMoney = RequestRules.value(asked: " " + RequestRules.words(of: question).joined(separator: " ") + " ") == .money
            || !Set(SearchTerms.terms(of: question)).isDisjoint(with: SearchTerms.terms(of: "spend spent cost costs pay paid"))
        let products = rows.compactMap { line in Self.cells(of: line.text).flatMap(Self.quantityAndUnitPrice).map { (line, $0) } }
        if asksMoney, !products.isEmpty, products.count == rows.count {
            // "How much did we spend on gaffer tape?" — 6 rolls at 7.25 each.
            var total = 0.0
            var parts: [String] = []
            for (line, cells) in products {
                guard let quantity = Calculator.number(cells.quantity), let price = Calculator.number(cells.price) else { return nil }
                total += quantity * price
                parts.append("\(cells.quantity) × \(cells.price) (\(line.source ?? "?"))")
            }
            let unit = Self.unit(inHeader: products[0].1.header)
            return "\(Calculator.format(total, like: products.map(\.1.price)))\(unit) — " + parts.joined(separator: " + ")
                + ", \(parts.count == 1 ? "multiplied" : "multiplied and added") by Relay's calculator"
        }
        guard let column = Self.column(for: question, in: rows) else { return nil }
        let summed = rows.filter { Self.cells(of: $0.text)?.contains { $0.header == column } == true }
        let values = summed.compactMap { line in Self.cells(of: line.text)?.first { $0.header == column }?.value }
        guard values.count >= 2, let result = Calculator.apply(.sum, to: values.compactMap(Calculator.number)) else { return nil }
        let shown = Calculator.format(result, like: values) + Self.unit(inHeader: column)
        let first = summed.first?.source ?? "?", last = summed.last?.source ?? "?"
        return "\(shown) — the \(column) of \(summed.count) rows (\(first) to \(last)): \(values.joined(separator: " + ")), added by Relay's calculator"
    }

    /// An amount of a line: its value, as written, its unit, and the line.
    struct Amount {
        var value: Double
        var number: String
        var shown: String
        var prefix: String = ""
        var unit: String?
        var line: Int
        /// Where it starts in its line (UTF-8 bytes).
        var offset = 0
        /// The total of amounts beside it ("27 kg in all", "Total: 44.16"), not one of them.
        var totalled = false
        /// Whether its unit is a word the lines write as a currency (`currencyWords`): "960
        /// lira" beside "120.00 lira".
        var learntCurrency = false

        var isMoney: Bool { !prefix.isEmpty || learntCurrency || unit.map { AnswerEvidence.isCurrency($0, after: number) } == true }
    }

    /// The amounts of `lines` (numbers with a money sign or a unit; years, dates and list numbers left out), in order.
    static func amounts(in lines: [SourcedLine]) -> [Amount] {
        var result: [Amount] = []
        let currencies = currencyWords(in: lines)
        for (index, line) in lines.enumerated() {
            let bytes = Array(line.text.utf8)
            for found in Claims.scan(line.text, ignoring: []) where found.claim.kind == .number && !AnswerEvidence.isYear(found.claim.text) {
                let text = found.claim.text
                let symbol = text.first.map { "€$£¥".contains($0) } ?? false
                let end = min(bytes.count, found.offset + text.utf8.count)
                let after = String(decoding: bytes[end...].prefix(24), as: UTF8.self)
                let word = after.split(separator: " ").first.map { $0.trimmingCharacters(in: .punctuationCharacters).lowercased() } ?? ""
                let before = String(decoding: bytes[..<found.offset].suffix(8), as: UTF8.self)
                    .split(separator: " ").last.map { $0.trimmingCharacters(in: .punctuationCharacters) } ?? ""
                let currencyBefore = AnswerEvidence.moneyBefore.contains(before.lowercased()) && bytes[..<found.offset].last == UInt8(ascii: " ")
                let unit = AnswerEvidence.anyUnit.contains(word) || AnswerEvidence.isCurrency(word, after: text) || currencies.contains(word) ? word : nil
                guard symbol || currencyBefore || unit != nil, let value = Calculator.number(text) else { continue }
                let following = (unit == nil ? after : String(after.drop { $0 == " " }.drop { $0 != " " })).lowercased().trimmingCharacters(in: .whitespaces)
                let preceding = String(decoding: bytes[..<found.offset].suffix(16), as: UTF8.self).lowercased()
                let totalled = totalWords.contains { following.hasPrefix($0) } || preceding.contains("total")
                if currencyBefore {
                    result.append(Amount(value: value, number: text, shown: before + " " + text, prefix: before + " ", unit: nil, line: index,
                                         offset: found.offset, totalled: totalled))
                    continue
                }
                let prefix = symbol ? String(text.prefix(1)) : ""
                let number = symbol ? String(text.dropFirst()) : text
                result.append(Amount(value: value, number: number, shown: text + (unit.map { " " + $0 } ?? ""), prefix: prefix, unit: unit,
                                     line: index, offset: found.offset, totalled: totalled, learntCurrency: unit.map(currencies.contains) ?? false))
            }
        }
        return result
    }

    /// Words `lines` write as a currency: after an amount with cents in one of them ("23.50
    /// dalers"), or after a number in two of them at least ("34 dalers" and "95 dalers" in a
    /// list of options) — a currency of the person's own, on no list, is a unit all the same.
    static func currencyWords(in lines: [SourcedLine]) -> Set<String> {
        var seen: [String: Set<Int>] = [:]
        var certain: Set<String> = []
        for (index, line) in lines.enumerated() {
            let words = line.text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" || $0 == ":" }).map(String.init)
            for (position, word) in words.enumerated() where position + 1 < words.count {
                let number = word.trimmingCharacters(in: .punctuationCharacters)
                guard let first = number.first, first.isNumber, number.allSatisfy({ $0.isNumber || $0 == "." || $0 == "," }) else { continue }
                let next = words[position + 1].trimmingCharacters(in: .punctuationCharacters).lowercased()
                guard next.count >= 3, next.allSatisfy(\.isLetter), !CommonWords.contains(next), !AnswerEvidence.anyUnit.contains(next) else { continue }
                if AnswerEvidence.isCurrency(next, after: number) { certain.insert(next) }
                seen[next, default: []].insert(index)
            }
        }
        return certain.union(seen.filter { $0.value.count >= 2 }.keys)
    }

    /// Words after an amount that make it the total of others beside it ("27 kg in all").
    static let totalWords = ["in all", "in total", "altogether", "all told", "total", "combined", "between them"]

    /// One amount for each thing the request joins with "and" or commas ("the kettle and the
    /// toaster"): the first amount of the line that best covers that part's words.
    static func operandsByPart(question: String, amounts: [Amount], lines: [SourcedLine]) -> [Amount] {
        let parts = RequestRules.operandParts(question)
        guard parts.count >= 2 else { return [] }
        var chosen: [Amount] = []
        var used: Set<String> = []
        for part in parts {
            let topic = Support.topicTerms(of: part).subtracting(Support.topicTerms(of: parts.filter { $0 != part }.joined(separator: " ")))
            guard !topic.isEmpty else { continue }
            let open = amounts.filter { !used.contains("\($0.line):\($0.offset)") }
            let coverage = open.map { Support.coverage(of: topic, in: lines[$0.line].text) }
            guard let most = coverage.max(), most > 0 else { continue }
            // Of the best line's amounts, the one nearest after the part's words ("Northmill
            // charges 34.75" in a line that gives Eastmill's price first).
            let candidates = open.indices.filter { coverage[$0] == most }.map { open[$0] }
            let amount = candidates.min { distance($0, topic, lines) < distance($1, topic, lines) }!
            used.insert("\(amount.line):\(amount.offset)")
            chosen.append(amount)
        }
        return chosen
    }

    /// How far `amount` stands from the nearest word of `topic` in its line (a word after it
    /// counts double: an amount follows what it is the amount of).
    private static func distance(_ amount: Amount, _ topic: Set<String>, _ lines: [SourcedLine]) -> Int {
        let text = lines[amount.line].text
        var best = Int.max
        var offset = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !topic.isDisjoint(with: SearchTerms.terms(of: word)) {
                let gap = amount.offset - offset
                best = min(best, gap >= 0 ? gap : -gap * 2)
            }
            offset += word.utf8.count + 1
        }
        return best
    }

    /// Days between the two dates the request or its lines give ("until" a date counts from today).
    private func daysBetween(question: String, lines: [SourcedLine]) -> String {
        let today = RelayRunner.today(manifest.localDate)
        var dates: [(day: Date, shown: String, source: String?)] = []
        for claim in Claims.extract(from: question) where claim.kind == .date {
            if let day = DayWords.parse(claim.text, today: today) { dates.append((day, claim.text, nil)) }
        }
        let words = " " + RequestRules.words(of: question).joined(separator: " ") + " "
        let fromToday = [" until ", " till ", " before ", " since ", " ago ", " left ", " away "].contains { words.contains($0) }
        // From one thing to another ("from the delivery to the show"): one date of each thing's
        // line — its last, as a line that moves a day gives the new one last ("due on 21 June,
        // now comes on 2 July").
        let onePerLine = RequestRules.operandParts(question).count >= 2
        // "Until" a thing asks of a day to come, "since" of one gone: a line's day on the other
        // side of today is of something else (last year's report, an earlier booking).
        let now = DayWords.date(today)
        let ahead = [" until ", " till ", " left ", " away "].contains { words.contains($0) }
        let behind = [" since ", " ago "].contains { words.contains($0) }
        func onItsSide(_ day: Date) -> Bool {
            guard let now, fromToday else { return true }
            return ahead ? day >= now : behind ? day <= now : true
        }
        // "Until the spring concert": the lines about it first, and only those when there are any
        // (a certificate's expiry is a day to come too).
        let topic = Support.topicTerms(of: question)
        // Most about it first, a line read with the name of its file ("harvest-supper.html").
        func coverage(_ line: SourcedLine) -> Double {
            Support.coverage(of: topic, in: Support.withItsNames(line.text, path: line.source.map { String($0.prefix { $0 != ":" }) }))
        }
        let about = lines.enumerated().filter { Support.coverage(of: topic, in: $0.element.text) > 0 }
            .sorted { coverage($0.element) != coverage($1.element) ? coverage($0.element) > coverage($1.element) : $0.offset < $1.offset }.map(\.element)
        for line in (fromToday && !about.isEmpty ? about : lines) where dates.count < (fromToday ? 1 : 2) {
            var found = Claims.extract(from: line.text).filter { $0.kind == .date }
            if onePerLine { found = Array(found.suffix(1)) }
            for claim in found where dates.count < (fromToday ? 1 : 2) {
                if let day = DayWords.parse(claim.text, today: today), onItsSide(day), !dates.contains(where: { $0.day == day }) {
                    dates.append((day, claim.text, line.source))
                }
            }
        }
        if fromToday, let now { dates.insert((now, "today (\(today))", nil), at: 0) }
        guard dates.count >= 2 else { return notFound("the lines found hold no two dates to count between", closest: lines) }
        let count = abs(DayWords.days(from: dates[0].day, to: dates[1].day))
        let sources = dates.prefix(2).map { $0.shown + ($0.source.map { " (\($0))" } ?? "") }.joined(separator: " and ")
        return "\(count) day\(count == 1 ? "" : "s") — between \(sources), counted by Relay's calculator"
    }
}
