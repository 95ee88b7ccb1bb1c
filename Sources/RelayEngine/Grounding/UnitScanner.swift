/// One pass over a text's lines that finds its blocks (paragraphs, list items with their
/// indented continuation lines, headings, table rows, quote lines, code lines) and splits the
/// prose in them into sentences.
struct UnitScanner {
    let bytes: [UInt8]
    private(set) var units: [TextUnit] = []
    private var blockCount = 0
    /// The open paragraph or list item: its kind, its first line's start, its text's start and end.
    private var open: (kind: TextUnit.Kind, lineStart: Int, start: Int, end: Int, lineEnd: Int)?

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func scan() {
        var inFence = false
        var lineStart = 0
        while lineStart < bytes.count {
            let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n"))
            let lineEnd = newline.map { $0 + 1 } ?? bytes.count
            var end = newline ?? bytes.count
            while end > lineStart, Self.isSpace(bytes[end - 1]) { end -= 1 }
            var start = lineStart
            while start < end, Self.isSpace(bytes[start]) { start += 1 }
            defer { lineStart = lineEnd }
            let indent = start - lineStart
            if start == end { close(); continue }
            if hasPrefix("```", at: start) || hasPrefix("~~~", at: start) { close(); inFence.toggle(); continue }
            if inFence { line(.code, start..<end, lines: lineStart..<lineEnd); continue }
            if hasPrefix("<!--", at: start) { close(); continue }
            // A rule or a setext underline ("---", "==="): a boundary, not text.
            if bytes[start..<end].allSatisfy({ "-=*_ ".utf8.contains($0) }), end - start >= 3 { close(); continue }
            if let content = headingContent(start, end), indent <= 3 {
                line(.heading, content, lines: lineStart..<lineEnd)
            } else if bytes[start] == UInt8(ascii: "|") {
                line(.tableRow, start..<end, lines: lineStart..<lineEnd)
            } else if bytes[start] == UInt8(ascii: ">") {
                var content = start
                while content < end, bytes[content] == UInt8(ascii: ">") || Self.isSpace(bytes[content]) { content += 1 }
                close()
                open = (.quote, lineStart, content, end, lineEnd)
                close()
            } else if let content = listContent(start, end) {
                close()
                open = (.listItem, lineStart, content, end, lineEnd)
            } else if var current = open, current.kind == .prose || (current.kind == .listItem && indent >= 2) {
                current.end = end
                current.lineEnd = lineEnd
                open = current
            } else {
                close()
                open = (.prose, lineStart, start, end, lineEnd)
            }
        }
        close()
    }

    /// A line that is one unit (a heading, a table row, a code line).
    private mutating func line(_ kind: TextUnit.Kind, _ range: Range<Int>, lines: Range<Int>) {
        close()
        guard !range.isEmpty else { return }
        units.append(TextUnit(kind: kind, range: range, block: blockCount, lines: lines))
        blockCount += 1
    }

    /// Ends the open paragraph or item: its sentences become units.
    private mutating func close() {
        guard let current = open else { return }
        open = nil
        var start = current.start
        for boundary in SentenceBoundaries.ends(in: bytes, current.start..<current.end) {
            append(current, start..<boundary.end)
            start = boundary.next
        }
        append(current, start..<current.end)
        blockCount += 1
    }

    private mutating func append(_ block: (kind: TextUnit.Kind, lineStart: Int, start: Int, end: Int, lineEnd: Int), _ range: Range<Int>) {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, Self.isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, Self.isSpace(bytes[upper - 1]) { upper -= 1 }
        guard lower < upper else { return }
        units.append(TextUnit(kind: block.kind, range: lower..<upper, block: blockCount, lines: block.lineStart..<block.lineEnd))
    }

    /// A heading's text: after one to six `#` and a space, without a closing run of `#`.
    private func headingContent(_ start: Int, _ end: Int) -> Range<Int>? {
        var index = start
        while index < end, bytes[index] == UInt8(ascii: "#") { index += 1 }
        let level = index - start
        guard (1...6).contains(level), index == end || Self.isSpace(bytes[index]) else { return nil }
        while index < end, Self.isSpace(bytes[index]) { index += 1 }
        var upper = end
        while upper > index, bytes[upper - 1] == UInt8(ascii: "#") { upper -= 1 }
        if upper < end, upper > index, !Self.isSpace(bytes[upper - 1]) { upper = end }
        while upper > index, Self.isSpace(bytes[upper - 1]) { upper -= 1 }
        return index..<upper
    }

    /// Where a list item's text starts: after `-`, `*`, `+` or `•` and a space, or one to three
    /// digits with `.` or `)` and a space (or nothing), and a task box (`[ ]`, `[x]`).
    private func listContent(_ start: Int, _ end: Int) -> Int? {
        var index = start
        if "-*+".utf8.contains(bytes[index]) {
            index += 1
        } else if hasPrefix("•", at: index) {
            index += "•".utf8.count
        } else {
            // Three digits at most, as `ClaimText.listMarker` reads them: "2024. A good year." is prose.
            while index < end, index - start < 3, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > start, index < end, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ")") else { return nil }
            index += 1
            if index == end { return index }
        }
        guard index < end, Self.isSpace(bytes[index]) else { return nil }
        while index < end, Self.isSpace(bytes[index]) { index += 1 }
        for box in ["[ ] ", "[x] ", "[X] "] where hasPrefix(box, at: index) { index += box.utf8.count }
        return index
    }

    private func hasPrefix(_ prefix: String, at index: Int) -> Bool {
        let utf8 = Array(prefix.utf8)
        return index + utf8.count <= bytes.count && bytes[index..<(index + utf8.count)].elementsEqual(utf8)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
}
