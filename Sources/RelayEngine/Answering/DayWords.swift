import Foundation

/// The days a request is about, from the words people use for them ("today", "yesterday",
/// "this week", "last week", "my week", "on Tuesday", "in November", "the last 3 days"),
/// relative to `today`. Journal notes are named by their day (`Journal/user/2026-11-24.md`),
/// so a range picks notes without searching their words. Pure functions of their arguments.
enum DayWords {
    static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    static let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]

    /// The range the request's `words` name, or nil.
    static func range(in words: [String], today: String) -> RequestAnalysis.DayRange? {
        guard let now = date(today) else { return nil }
        let text = " " + words.joined(separator: " ") + " "
        func days(_ from: Date, _ to: Date, _ said: String) -> RequestAnalysis.DayRange {
            RequestAnalysis.DayRange(from: string(from), to: string(to), said: said)
        }
        let calendar = Self.calendar
        func add(_ days: Int, to day: Date) -> Date { calendar.date(byAdding: .day, value: days, to: day)! }
        // Monday-based weeks, as an ISO calendar has them.
        let weekday = (calendar.component(.weekday, from: now) + 5) % 7
        let monday = add(-weekday, to: now)
        if text.contains(" today ") || text.contains(" tonight ") { return days(now, now, "today") }
        if text.contains(" yesterday ") { return days(add(-1, to: now), add(-1, to: now), "yesterday") }
        if text.contains(" last week ") || text.contains(" previous week ") { return days(add(-7, to: monday), add(-1, to: monday), "last week") }
        if text.contains(" this week ") { return days(monday, now, "this week") }
        if text.contains(" past week ") || text.contains(" my week ") || text.contains(" the week ") || text.contains(" last seven days ")
            || text.contains(" last 7 days ") { return days(add(-6, to: now), now, "the past seven days") }
        if text.contains(" weekend ") {
            let saturday = add(-((weekday + 2) % 7), to: now)
            return days(saturday, add(1, to: saturday), "the weekend")
        }
        for (index, word) in words.enumerated() where index + 2 < words.count && (word == "last" || word == "past") {
            if let count = Int(words[index + 1]) ?? RequestRules.countWords[words[index + 1]], words[index + 2].hasPrefix("day") {
                return days(add(-(count - 1), to: now), now, "the last \(count) days")
            }
        }
        // "Tuesday the 9th", "on the 3rd": that day of this month (of the last, if it is still to come).
        if let ordinal = words.compactMap({ word -> Int? in
            guard let suffix = ["st", "nd", "rd", "th"].first(where: word.hasSuffix) else { return nil }
            return Int(word.dropLast(suffix.count)).flatMap { (1...31).contains($0) ? $0 : nil }
        }).first {
            var month = calendar.dateComponents([.year, .month], from: now)
            if ordinal > calendar.component(.day, from: now) { month = calendar.dateComponents([.year, .month], from: add(-calendar.component(.day, from: now), to: now)) }
            month.day = ordinal
            if let day = calendar.date(from: month) {
                let name = weekdays.first(where: { text.contains(" \($0) ") }).map { $0.capitalized + " " } ?? ""
                return days(day, day, name + "the \(words.first { $0.hasPrefix(String(ordinal)) } ?? String(ordinal))")
            }
        }
        if let name = weekdays.first(where: { text.contains(" \($0) ") }) {
            let target = weekdays.firstIndex(of: name)!
            var back = (weekday - target + 7) % 7
            if text.contains(" last \(name) ") && back == 0 { back = 7 }
            let day = add(-back, to: now)
            return days(day, day, name.capitalized)
        }
        if let month = months.first(where: { text.contains(" in \($0) ") || text.contains(" during \($0) ") || text.contains(" of \($0) ") }) {
            let number = months.firstIndex(of: month)! + 1
            var year = calendar.component(.year, from: now)
            if number > calendar.component(.month, from: now) { year -= 1 }
            // "in June 2027": the year said.
            if let range = text.range(of: "\(month) "), let said = Int(text[range.upperBound...].prefix(4)), (1900...2200).contains(said) { year = said }
            guard let first = calendar.date(from: DateComponents(year: year, month: number, day: 1)),
                  let last = calendar.date(byAdding: DateComponents(month: 1, day: -1), to: first) else { return nil }
            return days(first, last, month.capitalized)
        }
        if text.contains(" this month ") {
            let first = calendar.date(from: calendar.dateComponents([.year, .month], from: now))!
            return days(first, now, "this month")
        }
        return nil
    }

    /// The day a journal note is for, from its file name (`Journal/user/2026-11-24.md`).
    static func day(ofNote path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let stem = name.hasSuffix(".md") ? String(name.dropLast(3)) : name
        guard stem.count >= 10, date(String(stem.prefix(10))) != nil else { return nil }
        return String(stem.prefix(10))
    }

    /// "Tuesday 24 November": how a summary heads a day (in words the notes use: "Nov" would be
    /// a word no note holds).
    static func shown(_ day: String) -> String {
        guard let value = date(day) else { return day }
        let weekday = (calendar.component(.weekday, from: value) + 5) % 7
        let month = months[calendar.component(.month, from: value) - 1]
        return "\(weekdays[weekday].capitalized) \(calendar.component(.day, from: value)) \(month.capitalized)"
    }

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func date(_ text: String) -> Date? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
    }

    static func string(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    /// The day a date as written means ("19 November", "Nov 19, 2026", "2026-11-19"); a date
    /// without a year is in `today`'s year.
    static func parse(_ text: String, today: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let iso = date(String(trimmed.prefix(10))), trimmed.count >= 10 { return iso }
        let words = trimmed.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
        guard let monthIndex = words.firstIndex(where: { word in word.count >= 3 && months.contains { $0.hasPrefix(word) } }) else { return nil }
        let month = months.firstIndex { $0.hasPrefix(words[monthIndex]) }! + 1
        let numbers: [(Int, Int)] = words.enumerated().compactMap { item in
            item.offset == monthIndex ? nil : Int(item.element.filter(\.isNumber)).map { (item.offset, $0) }
        }
        guard let day = numbers.first(where: { (1...31).contains($0.1) && $0.0 != monthIndex })?.1 else { return nil }
        let year = numbers.first { $0.1 > 1000 }?.1 ?? date(today).map { calendar.component(.year, from: $0) } ?? 2026
        return calendar.date(from: DateComponents(year: year, month: month, day: day))
    }

    /// Whole days from `from` to `to` (negative when `to` is earlier).
    static func days(from: Date, to: Date) -> Int {
        calendar.dateComponents([.day], from: calendar.startOfDay(for: from), to: calendar.startOfDay(for: to)).day ?? 0
    }
}
