import Foundation

/// What a set of sources holds, read once, for checking claims against it: the numbers
/// (normalised), the dates (by their parts), the words (lowercased, accents folded) and the
/// lowercased text (for identifiers, which need their exact spelling). Building it is one pass
/// over each source; each check is a set lookup, or a substring search for an identifier.
struct SourceIndex {
    private var numbers: Set<String> = []
    private var days: Set<DateValue> = []
    private var months: Set<DateValue> = []
    private var yearlessDays: Set<DateValue> = []
    private var words: Set<String> = []
    private var texts: [[UInt8]] = []

    init(_ sources: [String]) {
        for source in sources {
            let (segments, markerNumbers) = ClaimText.segments(of: source)
            numbers.formUnion(markerNumbers)
            for chunks in segments { read(chunks) }
            addWords(of: source)
            texts.append(Array(source.lowercased().utf8))
        }
    }

    /// Whether the sources support `value` (the rules are `Claims.unsupported`'s).
    func supports(_ value: ClaimValue) -> Bool {
        switch value {
        case .number(.value(let number)):
            return numbers.contains(number)
        case .number(.identifier(let text)):
            let needle = Array(text.utf8)
            return texts.contains { $0.contains(run: needle) }
        case .date(let readings):
            return readings.contains { date in
                switch (date.year, date.day) {
                case (.some, .some): days.contains(date)
                case (.some, nil): months.contains(date)
                case (nil, _): yearlessDays.contains(date)
                }
            }
        case .name(let nameWords):
            return nameWords.allSatisfy { word in
                word.count < 2 || CommonWords.nameJoiners.contains(word) || words.contains(word)
                    || (word.contains(Character("-")) && word.split(separator: "-").allSatisfy { words.contains(String($0)) })
            }
        }
    }

    /// Numbers and dates of one line or cell. A source's numbers count wherever they are: in
    /// a date, in an identifier, in a range.
    private mutating func read(_ chunks: [ClaimChunk]) {
        var index = 0
        while index < chunks.count {
            if let date = DateValue.match(chunks, at: index) {
                for reading in date.readings { add(reading) }
                index += date.used
                continue
            }
            let core = chunks[index].core
            if core.contains(where: \.isNumber) {
                for number in NumberValue.parse(core) {
                    if case .value(let value) = number.value { numbers.insert(value) }
                }
                // Every digit group too: "Route-66b" or "run 20261122-1015" supports 66 and 1015.
                if NumberValue.isIdentifier(core) || core.contains(where: \.isLetter) {
                    for group in core.split(whereSeparator: { !($0.isASCII && $0.isNumber) }) {
                        numbers.insert(NumberValue.normalisedInteger(String(group)))
                    }
                }
            }
            index += 1
        }
    }

    private mutating func add(_ date: DateValue) {
        if let year = date.year {
            numbers.insert(String(year))
            months.insert(DateValue(year: year, month: date.month, day: nil))
        }
        numbers.insert(String(date.month))
        guard let day = date.day else { return }
        numbers.insert(String(day))
        yearlessDays.insert(DateValue(year: nil, month: date.month, day: day))
        if date.year != nil { days.insert(date) }
    }

    /// Every word of `source`, folded as names are, with its possessive off and, for a
    /// hyphenated or apostrophed word, its parts as well. Words are cut from the UTF-8 bytes
    /// (a hundred kilobytes of sources is read in milliseconds).
    private mutating func addWords(of source: String) {
        let folded = source.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        let bytes = Array(folded.utf8)
        var start = 0, offset = 0
        var joined = false, typographic = false
        func flush(_ end: Int) {
            defer { joined = false; typographic = false }
            guard end > start else { return }
            var word = String(decoding: bytes[start..<end], as: UTF8.self)
            if typographic { word = word.replacingApostrophes() }
            guard joined else { words.insert(word); return }
            let trimmed = word.trimmingEdges { $0 == "-" || $0 == "'" }
            let bare = trimmed.hasSuffix("'s") && trimmed.count > 2 ? trimmed.dropLast(2) : trimmed
            guard !bare.isEmpty else { return }
            words.insert(String(bare))
            for part in bare.split(whereSeparator: { $0 == "-" || $0 == "'" }) { words.insert(String(part)) }
        }
        for scalar in folded.unicodeScalars {
            let width = UTF8.width(scalar)
            defer { offset += width }
            if scalar.isASCII {
                let value = scalar.value
                if (0x61...0x7A).contains(value) || (0x41...0x5A).contains(value) || (0x30...0x39).contains(value) { continue }
                if scalar == "-" || scalar == "'" { joined = true; continue }
            } else if scalar == "\u{2019}" || scalar == "\u{2018}" || scalar == "\u{02BC}" {
                joined = true
                typographic = true
                continue
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                        || scalar.properties.generalCategory == .nonspacingMark {
                continue
            }
            flush(offset)
            start = offset + width
        }
        flush(offset)
    }
}

extension StringProtocol {
    /// The text without its first and last characters that satisfy `predicate`.
    func trimmingEdges(_ predicate: (Character) -> Bool) -> SubSequence {
        let head = drop(while: predicate)
        return head.trimmingSuffix(while: predicate)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the bytes.
    func contains(run needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= count else { return needle.isEmpty }
        var start = 0
        while start + needle.count <= count {
            guard let found = self[start...(count - needle.count)].firstIndex(of: first) else { return false }
            if self[found..<(found + needle.count)].elementsEqual(needle) { return true }
            start = found + 1
        }
        return false
    }
}
