/// Cutting a text too long for a model's window into pieces that fit, at the most natural
/// boundary available, so a small model reads whole paragraphs or sentences.
enum Chunker {
    /// `text` in chunks of at most `maxTokens` tokens as `FocusedPrompt.estimate` counts them
    /// (`(utf8 count + 2) / 3`), cut at paragraph boundaries, else sentence (or Markdown unit)
    /// boundaries, else word boundaries, and never inside a UTF-8 character. The chunks joined
    /// are the text, byte for byte; a text that fits is one chunk.
    ///
    /// A boundary is used when it leaves the chunk at least a third full; else the latest
    /// boundary of any kind, else the last whole character. White space stays at the end of the
    /// chunk before it. For example, `chunks(of: "One.\n\nTwo.", maxTokens: 3)` is
    /// `["One.\n\n", "Two."]`.
    static func chunks(of text: String, maxTokens: Int) -> [String] {
        guard FocusedPrompt.estimate(text) > maxTokens else { return [text] }
        let bytes = Array(text.utf8)
        // estimate(n bytes) = (n + 2) / 3 <= maxTokens  ⇔  n <= 3 · maxTokens − 2.
        let capacity = max(1, 3 * maxTokens - 2)
        let (paragraphs, sentences) = boundaries(bytes)
        var result: [String] = []
        var start = 0
        while bytes.count - start > capacity {
            let limit = start + capacity
            let floor = start + capacity / 3
            let candidates = [latest(in: paragraphs, after: start, upTo: limit), latest(in: sentences, after: start, upTo: limit),
                              wordBoundary(bytes, after: start, upTo: limit)]
            let cut = candidates.first { ($0 ?? 0) >= floor }.flatMap { $0 }
                ?? candidates.compactMap { $0 }.max()
                ?? characterBoundary(bytes, after: start, upTo: limit)
            result.append(String(decoding: bytes[start..<cut], as: UTF8.self))
            start = cut
        }
        if start < bytes.count { result.append(String(decoding: bytes[start...], as: UTF8.self)) }
        return result
    }

    /// Offsets where a chunk may start: after a blank line (paragraphs), and where a sentence
    /// or a Markdown unit starts (a block's first unit at its line's start, so a bullet stays
    /// with its item). Both sorted.
    private static func boundaries(_ bytes: [UInt8]) -> (paragraphs: [Int], sentences: [Int]) {
        var paragraphs: [Int] = []
        var blank = false
        var lineStart = 0
        for (offset, byte) in bytes.enumerated() where byte == 0x0A {
            let isBlank = bytes[lineStart..<offset].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            if blank && !isBlank { paragraphs.append(lineStart) }
            blank = isBlank
            lineStart = offset + 1
        }
        if blank && lineStart < bytes.count { paragraphs.append(lineStart) }
        var sentences: [Int] = []
        var previousBlock: Int?
        for unit in Sentences.units(of: bytes, keepingFragments: true) {
            sentences.append(unit.block == previousBlock ? unit.range.lowerBound : unit.lines.lowerBound)
            previousBlock = unit.block
        }
        return (paragraphs, Array(Set(sentences)).sorted())
    }

    /// The largest offset in `sorted` within `(start, limit]`.
    private static func latest(in sorted: [Int], after start: Int, upTo limit: Int) -> Int? {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] <= limit { low = middle + 1 } else { high = middle }
        }
        guard low > 0, sorted[low - 1] > start else { return nil }
        return sorted[low - 1]
    }

    /// The largest offset within `(start, limit]` just after white space.
    private static func wordBoundary(_ bytes: [UInt8], after start: Int, upTo limit: Int) -> Int? {
        var cut = limit
        while cut > start {
            if UnitScanner.isSpace(bytes[cut - 1]) && !UnitScanner.isSpace(bytes[cut]) { return cut }
            cut -= 1
        }
        return nil
    }

    /// The largest offset within `(start, limit]` that starts a UTF-8 character, or the end of
    /// the first character when even that one does not fit.
    private static func characterBoundary(_ bytes: [UInt8], after start: Int, upTo limit: Int) -> Int {
        var cut = limit
        while cut > start, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        if cut > start { return cut }
        cut = start + 1
        while cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut += 1 }
        return cut
    }
}
