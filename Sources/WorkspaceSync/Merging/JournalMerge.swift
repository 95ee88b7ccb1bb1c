/// Journals (`Journal/**`) grow by appending. When both sides only appended to the common
/// base, the result is the base followed by both sides' new entries, ordered by time and then
/// by replica — nothing is a conflict. An entry is a line that starts with a bullet (`- `,
/// `* `), a heading or a time, with the lines that follow it up to the next such line; its
/// time is the `HH:MM[:SS]` (or ISO date-time) it starts with, or, without one, the time of the
/// entry before it on its side. The two sides are merged like two sorted runs — each side's
/// own entries keep their order — so every replica computes the same bytes. When a side did
/// more than append, this returns nil and the caller falls back to the three-way merge.
public enum JournalMerge {
    public static func merge(base: String, ours: String, oursReplica: String, theirs: String, theirsReplica: String) -> String? {
        let baseBytes = Array(base.utf8)
        let ourBytes = Array(ours.utf8), theirBytes = Array(theirs.utf8)
        guard ourBytes.starts(with: baseBytes), theirBytes.starts(with: baseBytes) else { return nil }
        var ourEntries = String(decoding: ourBytes[baseBytes.count...], as: UTF8.self)
        var theirEntries = String(decoding: theirBytes[baseBytes.count...], as: UTF8.self)
        if ourEntries == theirEntries { return ours }
        if ourEntries.isEmpty { return theirs }
        if theirEntries.isEmpty { return ours }
        // Entries are whole lines: end each block with a newline so they never run together.
        var head = base
        if !head.isEmpty && !head.hasSuffix("\n") { head += "\n" }
        if !ourEntries.hasSuffix("\n") { ourEntries += "\n" }
        if !theirEntries.hasSuffix("\n") { theirEntries += "\n" }
        var first = entries(ourEntries)[...], second = entries(theirEntries)[...]
        var (firstReplica, secondReplica) = (oursReplica, theirsReplica)
        if (theirsReplica, theirEntries) < (oursReplica, ourEntries) {
            swap(&first, &second)
            swap(&firstReplica, &secondReplica)
        }
        // `first` takes ties: it has the smaller replica (or, on one replica, the smaller text).
        var result = head
        while let a = first.first, let b = second.first {
            if b.time < a.time {
                result += b.text
                second = second.dropFirst()
            } else {
                result += a.text
                first = first.dropFirst()
            }
        }
        for entry in first + second { result += entry.text }
        return result
    }

    struct Entry {
        var time: String
        var text: String
    }

    /// A block of appended lines as entries, each with its (inherited) time.
    static func entries(_ block: String) -> [Entry] {
        var result: [Entry] = []
        var time = ""
        for line in LineDiff.lines(block[...]) {
            let starts = line.hasPrefix("- ") || line.hasPrefix("* ") || line.hasPrefix("#") || line.first?.isNumber == true
            if starts || result.isEmpty {
                if let stamp = leadingTime(line) { time = stamp }
                result.append(Entry(time: time, text: String(line)))
            } else {
                result[result.count - 1].text += line
            }
        }
        return result
    }

    /// "HH:MM[:SS]" or "YYYY-MM-DD[T ]HH:MM[:SS]" after an optional bullet, as sortable text
    /// (a one-digit hour gets its zero).
    static func leadingTime(_ line: Substring) -> String? {
        var rest = line
        if rest.hasPrefix("- ") || rest.hasPrefix("* ") { rest = rest.dropFirst(2) }
        while rest.first == " " || rest.first == "*" || rest.first == "_" || rest.first == "[" { rest = rest.dropFirst() }
        let digits = { (text: Substring) in text.prefix { $0.isASCII && $0.isNumber } }
        var date = ""
        if rest.count >= 10, digits(rest).count == 4, rest.dropFirst(4).first == "-" {
            date = String(rest.prefix(10))
            rest = rest.dropFirst(10)
            guard rest.first == "T" || rest.first == " " else { return date }
            rest = rest.dropFirst()
        }
        let hour = digits(rest)
        guard (1...2).contains(hour.count), rest.dropFirst(hour.count).first == ":" else { return date.isEmpty ? nil : date }
        rest = rest.dropFirst(hour.count + 1)
        let minute = digits(rest)
        guard minute.count == 2 else { return date.isEmpty ? nil : date }
        var time = date + (hour.count == 1 ? "0" : "") + hour + ":" + minute
        rest = rest.dropFirst(2)
        if rest.first == ":" {
            let second = digits(rest.dropFirst())
            if second.count == 2 { time += ":" + second }
        }
        return time
    }
}
