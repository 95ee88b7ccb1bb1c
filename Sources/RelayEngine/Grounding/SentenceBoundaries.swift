/// Where sentences end in a run of prose: at `.` `!` `?` (and the closing quotes, brackets or
/// emphasis after it) followed by white space and a capital letter or a digit (after any
/// opening quote, bracket or emphasis) — but not after an abbreviation, a single initial, or
/// a dotted run of letters ("e.g.", "U.S."). Decimals, URLs and file names have no space after
/// their dots, so they never end a sentence.
enum SentenceBoundaries {
    /// Each end inside `range`: the offset just after the sentence (its closing punctuation
    /// included) and the offset where the next one starts.
    static func ends(in bytes: [UInt8], _ range: Range<Int>) -> [(end: Int, next: Int)] {
        var result: [(end: Int, next: Int)] = []
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: ".") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?") else { index += 1; continue }
            var end = index + 1
            while end < range.upperBound, let width = closer(bytes, end) { end += width }
            var next = end
            while next < range.upperBound, UnitScanner.isSpace(bytes[next]) { next += 1 }
            guard next > end, next < range.upperBound else { index = end; continue }
            var first = next
            while first < range.upperBound, let width = opener(bytes, first) { first += width }
            guard first < range.upperBound, let scalar = scalar(bytes, first),
                  scalar.properties.isUppercase || scalar.properties.numericType != nil else { index = end; continue }
            if byte == UInt8(ascii: "."), isAbbreviation(bytes, range.lowerBound, index, nextIsDigit: scalar.properties.numericType != nil) {
                index = end
                continue
            }
            result.append((end, next))
            index = next
        }
        return result
    }

    /// Words that end in a dot without ending a sentence (lowercased, without their last dot).
    static let abbreviations: Set<String> = [
        "e.g", "i.e", "dr", "mr", "mrs", "ms", "mx", "st", "vs", "etc", "inc", "ltd", "a.m", "p.m", "jr", "sr", "prof",
        "approx", "cf", "fig", "figs", "co", "corp", "mt", "ft", "vol", "dept", "est", "al", "gen", "gov", "rev", "sgt",
        "capt", "lt", "col", "hon", "ave", "rd", "blvd", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
        "oct", "nov", "dec", "ca", "pp", "nos", "op", "ed", "eds", "viz", "resp",
    ]

    /// Whether the word that ends at the dot at `dot` is an abbreviation: in the list, one
    /// letter (an initial), letters with dots between ("U.S", "e.g"), or "No" before a number.
    private static func isAbbreviation(_ bytes: [UInt8], _ lower: Int, _ dot: Int, nextIsDigit: Bool) -> Bool {
        var start = dot
        while start > lower, !UnitScanner.isSpace(bytes[start - 1]), opener(bytes, start - 1) == nil || bytes[start - 1] == UInt8(ascii: ".") { start -= 1 }
        let word = String(decoding: bytes[start..<dot], as: UTF8.self)
        guard !word.isEmpty else { return false }
        let lowered = word.lowercased()
        if abbreviations.contains(lowered) { return true }
        if word == "No" || word == "no" { return nextIsDigit }
        let letters = word.split(separator: ".", omittingEmptySubsequences: false)
        return letters.allSatisfy { $0.count == 1 && $0.first?.isLetter == true }
    }

    /// The width of a closing quote, bracket or emphasis mark at `index`, if one is there.
    private static func closer(_ bytes: [UInt8], _ index: Int) -> Int? {
        if let scalar = scalar(bytes, index), closers.contains(scalar) { return UTF8.width(scalar) }
        return nil
    }

    /// The width of an opening quote, bracket or emphasis mark at `index`, if one is there.
    static func opener(_ bytes: [UInt8], _ index: Int) -> Int? {
        if let scalar = scalar(bytes, index), openers.contains(scalar) { return UTF8.width(scalar) }
        return nil
    }

    private static let closers: Set<Unicode.Scalar> = ["\"", "'", ")", "]", "*", "_", "`", "\u{201D}", "\u{2019}", "\u{00BB}"]
    private static let openers: Set<Unicode.Scalar> = ["\"", "'", "(", "[", "*", "_", "`", "\u{201C}", "\u{2018}", "\u{00AB}"]

    /// The scalar whose UTF-8 starts at `index`, if a whole one does.
    static func scalar(_ bytes: [UInt8], _ index: Int) -> Unicode.Scalar? {
        var iterator = bytes[index...].prefix(4).makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }
}
