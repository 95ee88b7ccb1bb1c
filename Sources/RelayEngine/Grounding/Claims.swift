import Foundation

/// A checkable statement in an agent's text: a number, a date or a proper name.
///
/// For example, "Ilse Varga paid €4,200 on 12 March 2024." holds three:
/// `Claim(kind: .name, text: "Ilse Varga")`, `Claim(kind: .number, text: "€4,200")` and
/// `Claim(kind: .date, text: "12 March 2024")`.
public struct Claim: Hashable, Sendable, Codable {
    public enum Kind: String, Sendable, Codable { case number, date, name }
    public var kind: Kind
    /// As written in the output (a possessive left off: "Varga's" is "Varga").
    public var text: String

    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }
}

/// Finding the claims of a text and checking them against sources: how the engine keeps a
/// small model from handing on a year, a price or a person it made up. Everything here is a
/// pure function of its arguments.
enum Claims {
    /// The numbers, dates and proper names in `text`, in order of first appearance,
    /// deduplicated by value ("4,200" and "4200" are one claim, the first spelling kept).
    ///
    /// - parameter ignoring: words that are never names (the agents' names); any case.
    static func extract(from text: String, ignoring: Set<String> = []) -> [Claim] {
        var seen: Set<String> = []
        return scan(text, ignoring: ignoring).compactMap { found in
            seen.insert(found.value.key).inserted ? found.claim : nil
        }
    }

    /// The claims of `output` that none of `sources` supports.
    ///
    /// A number is supported by the same value written as a number in a source (also a list
    /// number, or a part of a date or an identifier there); digits inside a path, version or
    /// address by that text verbatim; a date by the same year, month and day in any of the
    /// forms `DateValue` reads (a month by any date of that month, a day without a year by that
    /// day of any year); a name when every word of it of two letters or more appears in a
    /// source (case and accents aside), so "Varga" and "Ilse Varga" are supported by "Ilse
    /// Varga" and "Ilse Smith" is not. The sources are read once into sets. For example:
    ///
    /// ```swift
    /// Claims.unsupported(in: "Ilse Varga paid €4,200 in 2023.",
    ///                    sources: ["I. Varga paid 4200 euros on 2023-05-02. Ilse is her name."])   // []
    /// Claims.unsupported(in: "Ilse Smith paid €4,300.", sources: ["Ilse Varga paid €4,200."])
    /// // [Claim(kind: .name, text: "Ilse Smith"), Claim(kind: .number, text: "€4,300")]
    /// ```
    static func unsupported(in output: String, sources: [String], ignoring: Set<String> = []) -> [Claim] {
        let found = scan(output, ignoring: ignoring)
        guard !found.isEmpty else { return [] }
        let index = SourceIndex(sources)
        var seen: Set<String> = []
        return found.compactMap { found in
            guard seen.insert(found.value.key).inserted, !index.supports(found.value) else { return nil }
            return found.claim
        }
    }

    /// `output` without the sentences, list items and table rows that carry any of `claims`
    /// (a claim is carried by a unit holding the same value, or — for a name — a longer name
    /// containing it), and the removed units' texts. Only whole units go: a list item or
    /// paragraph that loses every sentence goes with its bullet or its blank line, one that
    /// keeps a sentence keeps its bullet; headings stay unless they carry a claim; fenced code
    /// and HTML comments are never touched.
    static func removing(_ claims: [Claim], from output: String) -> (text: String, removed: [String]) {
        let values = claims.compactMap { ClaimValue(claim: $0) }
        guard !values.isEmpty else { return (output, []) }
        let keys = Set(values.flatMap(\.keys))
        let names = values.compactMap { value -> [String]? in
            if case .name(let words) = value { return words }
            return nil
        }
        let bytes = Array(output.utf8)
        let units = Sentences.units(of: bytes, keepingFragments: true)
        var carries = Array(repeating: false, count: units.count)
        // The claims are found in the whole text, as `extract` finds them, and each is laid at
        // the unit that holds its first byte.
        for found in scan(output, ignoring: []) {
            let matches = found.value.keys.contains { keys.contains($0) }
                || { if case .name(let words) = found.value { names.contains { words.containsRun($0) } } else { false } }()
            guard matches, let unit = unitIndex(holding: found.offset, in: units), units[unit].kind != .code else { continue }
            carries[unit] = true
        }
        guard carries.contains(true) else { return (output, []) }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var position = 0
        for range in UnitRemoval.deletions(of: carries, units: units, in: bytes) {
            kept += bytes[position..<range.lowerBound]
            position = range.upperBound
        }
        kept += bytes[position...]
        let removed = zip(units, carries).filter(\.1).map { $0.0.text(in: bytes) }
        return (String(decoding: kept, as: UTF8.self), removed)
    }

    /// The unit whose text holds byte `offset` (units are in text order and do not overlap),
    /// else a unit of the block whose lines hold it (a claim in a list item's marker).
    private static func unitIndex(holding offset: Int, in units: [TextUnit]) -> Int? {
        var low = 0, high = units.count
        while low < high {
            let middle = (low + high) / 2
            if units[middle].range.lowerBound <= offset { low = middle + 1 } else { high = middle }
        }
        if low > 0, units[low - 1].range.contains(offset) || units[low - 1].lines.contains(offset) { return low - 1 }
        if low < units.count, units[low].lines.contains(offset) { return low }
        return nil
    }

    /// A claim found, with its value.
    struct Found {
        var claim: Claim
        var value: ClaimValue
        /// Where it starts in the text, in UTF-8 bytes.
        var offset: Int
    }

    /// Every claim of `text` in order, duplicates included.
    static func scan(_ text: String, ignoring: Set<String>) -> [Found] {
        let ignored = Set(ignoring.flatMap { $0.lowercased().split(whereSeparator: \.isWhitespace).map(String.init) })
        var result: [Found] = []
        for chunks in ClaimText.segments(of: text).segments {
            var index = 0
            while index < chunks.count {
                if let date = DateValue.match(chunks, at: index) {
                    result.append(Found(claim: Claim(kind: .date, text: date.text), value: .date(date.readings), offset: chunks[index].offset))
                    index += date.used
                } else if chunks[index].core.contains(where: \.isNumber) {
                    for number in NumberValue.parse(chunks[index].core) {
                        result.append(Found(claim: Claim(kind: .number, text: number.text), value: .number(number.value), offset: chunks[index].offset))
                    }
                    index += 1
                } else if let name = NameWords.match(chunks, at: index, ignoring: ignored) {
                    if !name.words.isEmpty {
                        let text = name.words.joined(separator: " ")
                        result.append(Found(claim: Claim(kind: .name, text: text), value: .name(ClaimValue.folded(name.words)),
                                            offset: chunks[index].offset))
                    }
                    index += name.used
                } else {
                    index += 1
                }
            }
        }
        return result
    }
}

/// What a claim says, in the form claims are compared in.
enum ClaimValue: Hashable {
    case number(NumberValue)
    /// Every reading of the date (a slashed date may read two ways).
    case date([DateValue])
    /// The name's words, lowercased and without accents.
    case name([String])

    /// Equal for claims that say the same: the deduplication key (a date's first reading).
    var key: String { keys[0] }

    /// Every key the value can be met by: one, or one per reading of a date. Never empty.
    var keys: [String] {
        switch self {
        case .number(.value(let value)): ["n:" + value]
        case .number(.identifier(let text)): ["i:" + text]
        case .date(let readings): readings.isEmpty ? ["d:"] : readings.map { "d:" + $0.key }
        case .name(let words): ["p:" + words.joined(separator: " ")]
        }
    }

    /// The value of a claim from its kind and text; nil when the text holds no such claim.
    init?(claim: Claim) {
        switch claim.kind {
        case .number:
            guard let first = NumberValue.parse(claim.text).first else { return nil }
            self = .number(first.value)
        case .date:
            let chunks = ClaimText.chunks(of: claim.text, inHeading: false)
            guard !chunks.isEmpty, let date = DateValue.match(chunks, at: 0) else { return nil }
            self = .date(date.readings)
        case .name:
            let words = claim.text.split(whereSeparator: \.isWhitespace).map(String.init)
            guard !words.isEmpty else { return nil }
            self = .name(Self.folded(words))
        }
    }

    /// Words lowercased, accents and typographic apostrophes folded, an initial's dot off: how
    /// names compare.
    static func folded(_ words: [String]) -> [String] {
        words.map { word in
            let bare = word.hasSuffix(".") ? String(word.dropLast()) : word
            return bare.replacingApostrophes().folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
    }
}

extension Array where Element == String {
    /// Whether `run` appears in the array as consecutive elements.
    func containsRun(_ run: [String]) -> Bool {
        guard !run.isEmpty, run.count <= count else { return false }
        return (0...(count - run.count)).contains { start in Array(self[start..<(start + run.count)]) == run }
    }
}
