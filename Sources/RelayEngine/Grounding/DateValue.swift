/// A calendar date as written in a text, compared by its parts: "12 March 2024", "March 12,
/// 2024", "2024-03-12" and "12/03/2024" are one date; "March 2024" is a month; "12 March" a
/// day of a year not said.
struct DateValue: Hashable {
    var year: Int?
    var month: Int
    var day: Int?

    /// The parts as a key: "2024-3-12", "2024-3", "?-3-12".
    var key: String { "\(year.map(String.init) ?? "?")-\(month)" + (day.map { "-\($0)" } ?? "") }

    /// The date in a run of chunks starting at `index`, with every reading of it (a slashed
    /// date whose first two parts are both at most 12 reads day-first and month-first), the
    /// number of chunks it takes and its text as written.
    static func match(_ chunks: [ClaimChunk], at index: Int) -> (readings: [DateValue], used: Int, text: String)? {
        let first = chunks[index]
        // Most chunks are words that start no date: a quick look at the first scalar.
        guard let lead = first.core.unicodeScalars.first, ("0"..."9").contains(lead) || lead.properties.isUppercase else { return nil }
        if ("0"..."9").contains(lead), let readings = compact(first.core) { return (readings, 1, first.core) }
        func joined(_ count: Int) -> String {
            (0..<count).map { offset in
                let chunk = chunks[index + offset]
                return (offset == 0 ? "" : chunk.leading) + chunk.core + (offset == count - 1 ? "" : chunk.trailing)
            }.joined(separator: " ")
        }
        /// Whether the chunk after `offset` may continue the date: nothing but a comma between.
        func continues(after offset: Int) -> Bool {
            index + offset + 1 < chunks.count && (chunks[index + offset].trailing.isEmpty || chunks[index + offset].trailing == ",")
                && chunks[index + offset + 1].leading.isEmpty
        }
        func year(at offset: Int) -> Int? { continues(after: offset - 1) ? Self.year(chunks[index + offset].core) : nil }

        if let day = day(first.core), first.trailing.isEmpty {
            // "12 March 2024", "12th of March", "12 March".
            var monthOffset = 1
            if index + 1 < chunks.count, chunks[index + 1].core == "of", chunks[index + 1].trailing.isEmpty { monthOffset = 2 }
            guard continues(after: monthOffset - 1), let month = month(chunks[index + monthOffset]) else { return nil }
            if let year = year(at: monthOffset + 1) {
                return ([DateValue(year: year, month: month, day: day)], monthOffset + 2, joined(monthOffset + 2))
            }
            return ([DateValue(year: nil, month: month, day: day)], monthOffset + 1, joined(monthOffset + 1))
        }
        guard let month = month(first), continues(after: 0) else { return nil }
        // "March 12, 2024", "March 12", "March 2024".
        if let day = day(chunks[index + 1].core) {
            if let year = year(at: 2) {
                return ([DateValue(year: year, month: month, day: day)], 3, joined(3))
            }
            return ([DateValue(year: nil, month: month, day: day)], 2, joined(2))
        }
        if let year = year(at: 1) { return ([DateValue(year: year, month: month, day: nil)], 2, joined(2)) }
        return nil
    }

    /// A date in one chunk: "2024-03-12" (also with a time after `T`), "2024/03/12", "2024-03",
    /// "12/03/2024", "12.03.2024", "12-03-2024".
    static func compact(_ core: String) -> [DateValue]? {
        let text = core.split(separator: "T", maxSplits: 1).first.map(String.init) ?? core
        guard text.first?.isNumber == true, text.last?.isNumber == true,
              let separator = text.first(where: { "-/.".contains($0) }) else { return nil }
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == parts.count else { return nil }
        if parts[0].count == 4, separator != "." {
            guard let year = Self.year(String(parts[0])), (1...12).contains(numbers[1]), parts[1].count <= 2 else { return nil }
            if parts.count == 2 { return separator == "-" ? [DateValue(year: year, month: numbers[1], day: nil)] : nil }
            guard parts.count == 3, parts[2].count <= 2, (1...31).contains(numbers[2]) else { return nil }
            return [DateValue(year: year, month: numbers[1], day: numbers[2])]
        }
        guard parts.count == 3, parts[0].count <= 2, parts[1].count <= 2, let year = Self.year(String(parts[2])) else { return nil }
        let (a, b) = (numbers[0], numbers[1])
        var readings: [DateValue] = []
        if (1...31).contains(a), (1...12).contains(b) { readings.append(DateValue(year: year, month: b, day: a)) }
        if a != b, (1...12).contains(a), (1...31).contains(b), separator == "/" { readings.append(DateValue(year: year, month: a, day: b)) }
        return readings.isEmpty ? nil : readings
    }

    /// A day of a month: "12", "1st", "21st", "3rd".
    static func day(_ core: String) -> Int? {
        var digits = Substring(core)
        if digits.count > 2, let last = digits.last, last.isLetter { digits = digits.dropLast(2) }
        guard core.count == digits.count || ["st", "nd", "rd", "th"].contains(core.suffix(2).lowercased()) else { return nil }
        guard (1...2).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let day = Int(digits),
              (1...31).contains(day) else { return nil }
        return day
    }

    /// A year written in four digits, 1000 to 2999.
    static func year(_ core: String) -> Int? {
        guard core.count == 4, core.allSatisfy({ $0.isASCII && $0.isNumber }), let year = Int(core), (1000...2999).contains(year) else { return nil }
        return year
    }

    /// The month a capitalised chunk names: "March", "Mar", "Mar.", "Sept".
    static func month(_ chunk: ClaimChunk) -> Int? {
        guard chunk.core.first?.isUppercase == true else { return nil }
        return months[chunk.core.lowercased()]
    }

    static let months: [String: Int] = {
        let names = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
        var result: [String: Int] = [:]
        for (index, name) in names.enumerated() {
            result[name] = index + 1
            result[String(name.prefix(3))] = index + 1
        }
        result["sept"] = 9
        return result
    }()

    /// Month and weekday names in full: never proper names (dates are their own claims).
    static let calendarWords: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]
}
