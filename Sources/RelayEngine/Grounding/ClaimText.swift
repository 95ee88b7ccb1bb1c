/// A whitespace-separated piece of a line, its surrounding punctuation set apart: `(€3.50),`
/// is core `€3.50`, leading `(`, trailing `),`. Claims are found in runs of chunks.
struct ClaimChunk {
    var core: String
    var leading: String
    var trailing: String
    /// First in its line, table cell or list item, or after `.` `!` `?` `:`, an opening bracket
    /// or a quote: where a capitalised common word is just the start of a sentence.
    var startsUnit: Bool
    var inHeading: Bool
    /// Where the core starts in the text scanned, in UTF-8 bytes: which unit holds the claim.
    var offset: Int = 0
}

/// How a text is cut into lines and chunks for claim finding: Markdown markers (heading
/// hashes, list bullets and numbers, quote marks, table pipes, link targets) are taken off,
/// fenced code and HTML comments (the engine's turn markers) are skipped.
enum ClaimText {
    /// Runs of chunks within which a date or a name may continue (a line, or a table cell),
    /// with the numbers that Markdown markers held (list numbers, heading numbers) apart: an
    /// output's list numbering is no claim, but a source's still supports a number.
    static func segments(of text: String) -> (segments: [[ClaimChunk]], markerNumbers: [String]) {
        var segments: [[ClaimChunk]] = []
        var markerNumbers: [String] = []
        var inFence = false
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n")) {
            var line = Substring(rawLine).drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
            if line.hasPrefix("```") || line.hasPrefix("~~~") { inFence.toggle(); continue }
            if inFence || line.isEmpty || line.hasPrefix("<!--") { continue }
            var inHeading = false
            let hashes = line.prefix { $0 == "#" }.count
            if hashes > 0, hashes <= 6, line.dropFirst(hashes).first.map({ $0 == " " || $0 == "\t" }) ?? true {
                inHeading = true
                line = line.dropFirst(hashes).drop { $0 == " " || $0 == "\t" }
                if let number = sectionNumber(line) {
                    markerNumbers.append(number.value)
                    line = line.dropFirst(number.length).drop { $0 == " " || $0 == "\t" }
                }
            }
            while line.first == ">" { line = line.dropFirst().drop { $0 == " " || $0 == "\t" } }
            if let marker = listMarker(line) {
                if let number = marker.number { markerNumbers.append(number) }
                line = line.dropFirst(marker.length).drop { $0 == " " || $0 == "\t" }
                for box in ["[ ] ", "[x] ", "[X] "] where line.hasPrefix(box) { line = line.dropFirst(box.count) }
            }
            let cells = line.hasPrefix("|") ? line.split(separator: "|") : [line]
            for cell in cells {
                let base = text.utf8.distance(from: text.utf8.startIndex, to: cell.utf8.startIndex)
                let chunks = chunks(of: cell, inHeading: inHeading, offset: base)
                if !chunks.isEmpty { segments.append(chunks) }
            }
        }
        return (segments, markerNumbers)
    }

    /// A list marker at the start of `line`: `-`, `*`, `+` or `•` and a space, or a number of at
    /// most three digits with `.` or `)` ("1.", "2)").
    static func listMarker(_ line: Substring) -> (length: Int, number: String?)? {
        guard let first = line.first else { return nil }
        let second = line.dropFirst().first
        if "-*+•".contains(first), second == " " || second == "\t" { return (1, nil) }
        let digits = line.prefix { $0.isASCII && $0.isNumber }
        guard (1...3).contains(digits.count) else { return nil }
        let rest = line.dropFirst(digits.count)
        guard let mark = rest.first, mark == "." || mark == ")" else { return nil }
        let after = rest.dropFirst().first
        guard after == nil || after == " " || after == "\t" else { return nil }
        return (digits.count + 1, NumberValue.normalisedInteger(String(digits)))
    }

    /// A heading's section number ("2.", "2.1", "3)"), never a bare year ("## 2024 in review").
    private static func sectionNumber(_ line: Substring) -> (length: Int, value: String)? {
        let token = line.prefix { !($0 == " " || $0 == "\t") }
        guard token.count >= 2, token.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." || $0 == ")" }),
              token.first?.isNumber == true else { return nil }
        let body = token.hasSuffix(".") || token.hasSuffix(")") ? token.dropLast() : token
        guard body.count < token.count || body.contains(Character(".")) else { return nil }
        return (token.count, String(body))
    }

    /// Opening punctuation that may stand before a word, as UTF-8.
    static let openers: [[UInt8]] = ["(", "[", "{", "\"", "'", "\u{201C}", "\u{2018}", "\u{00AB}", "*", "_", "`", "~", "<"].map { Array($0.utf8) }
    /// Closing punctuation that may stand after a word, as UTF-8.
    static let closers: [[UInt8]] = [")", "]", "}", "\"", "'", "\u{201D}", "\u{2019}", "\u{00BB}", ".", ",", ";", ":", "!", "?",
                                     "*", "_", "`", "~", ">", "\u{2026}"].map { Array($0.utf8) }
    private static let quotesAndBrackets: [[UInt8]] = ["(", "[", "{", "\"", "'", "\u{201C}", "\u{2018}", "\u{00AB}"].map { Array($0.utf8) }

    /// The chunks of one line or cell, whose first byte is at `offset` in the text scanned. Cut
    /// from the UTF-8 bytes: this runs over every source. A Markdown link's target is skipped
    /// (`[Lisbon](https://x/2024)` is the chunk `[Lisbon]`).
    static func chunks<S: StringProtocol>(of text: S, inHeading: Bool, offset: Int = 0) -> [ClaimChunk] {
        var result: [ClaimChunk] = []
        var previousEndsSentence = true
        let bytes = Array(text.utf8)
        var index = 0
        var skipTo = 0
        while index < bytes.count {
            if index < skipTo { index = skipTo; continue }
            if let width = separator(bytes, index) { index += width; continue }
            var end = index
            while end < bytes.count, separator(bytes, end) == nil {
                if bytes[end] == UInt8(ascii: "]"), end + 1 < bytes.count, bytes[end + 1] == UInt8(ascii: "("),
                   let close = linkTargetEnd(bytes, from: end + 2) {
                    skipTo = close
                    end += 1
                    break
                }
                end += 1
            }
            var lower = index, upper = end
            var quoteOrBracket = false
            while lower < upper, let width = match(openers, bytes, at: lower) {
                if match(quotesAndBrackets, bytes, at: lower) != nil { quoteOrBracket = true }
                lower += width
            }
            while upper > lower, let width = match(closers, bytes, endingAt: upper, from: lower) { upper -= width }
            let trailing = bytes[upper..<end]
            result.append(ClaimChunk(core: string(bytes[lower..<upper]), leading: string(bytes[index..<lower]), trailing: string(trailing),
                                     startsUnit: previousEndsSentence || quoteOrBracket, inHeading: inHeading, offset: offset + lower))
            previousEndsSentence = trailing.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "!") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: ":") }
                || (lower == upper && lower > index)
            index = end
        }
        return result
    }

    /// Just past the `)` that closes a link target starting at `start`; nil when white space or
    /// the end comes first (then it is no link: "see [1](and more").
    private static func linkTargetEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count, separator(bytes, index) == nil {
            if bytes[index] == UInt8(ascii: ")") { return index + 1 }
            index += 1
        }
        return nil
    }

    /// The width of white space at `index` (space, tab, carriage return, no-break space).
    private static func separator(_ bytes: [UInt8], _ index: Int) -> Int? {
        switch bytes[index] {
        case 0x20, 0x09, 0x0D: return 1
        case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0xA0: return 2
        default: return nil
        }
    }

    /// The width of the first of `marks` that starts at `index`.
    private static func match(_ marks: [[UInt8]], _ bytes: [UInt8], at index: Int) -> Int? {
        for mark in marks where index + mark.count <= bytes.count && bytes[index..<(index + mark.count)].elementsEqual(mark) {
            return mark.count
        }
        return nil
    }

    /// The width of the first of `marks` that ends at `end` (not before `lower`).
    private static func match(_ marks: [[UInt8]], _ bytes: [UInt8], endingAt end: Int, from lower: Int) -> Int? {
        for mark in marks where end - mark.count >= lower && bytes[(end - mark.count)..<end].elementsEqual(mark) {
            return mark.count
        }
        return nil
    }

    private static func string(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.isEmpty ? "" : String(decoding: bytes, as: UTF8.self)
    }
}
