/// Which bytes go when some units of a text are removed, so that what is left is still the
/// same Markdown: a block (paragraph, list item, heading, row) that loses every unit goes with
/// its whole lines — and a paragraph or heading standing between blank lines with one of them
/// — while a block that keeps a unit loses each removed one with the space after it (or,
/// for its last, the space before), its bullet and the rest of its text kept.
enum UnitRemoval {
    /// The byte ranges to delete, sorted and not overlapping.
    static func deletions(of removed: [Bool], units: [TextUnit], in bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var index = 0
        while index < units.count {
            var end = index
            while end < units.count, units[end].block == units[index].block { end += 1 }
            let block = Array(units[index..<end])
            let flags = Array(removed[index..<end])
            index = end
            guard flags.contains(true) else { continue }
            if !flags.contains(false) {
                ranges.append(wholeLines(of: block[0], in: bytes))
                continue
            }
            for (position, unit) in block.enumerated() where flags[position] {
                if position + 1 < block.count {
                    ranges.append(unit.range.lowerBound..<block[position + 1].range.lowerBound)
                } else {
                    ranges.append(block[position - 1].range.upperBound..<unit.range.upperBound)
                }
            }
        }
        return merged(ranges)
    }

    /// A block's lines, with one blank line next to them when a paragraph or heading stands
    /// between blank lines (or the text's edge), so no double blank line is left behind.
    private static func wholeLines(of unit: TextUnit, in bytes: [UInt8]) -> Range<Int> {
        let lines = unit.lines
        guard unit.kind == .prose || unit.kind == .heading else { return lines }
        let blankBefore = lines.lowerBound == 0 || blankLine(endingAt: lines.lowerBound, in: bytes) != nil
        let after = blankLine(startingAt: lines.upperBound, in: bytes)
        if blankBefore, let after { return lines.lowerBound..<after }
        if lines.upperBound == bytes.count, let before = blankLine(endingAt: lines.lowerBound, in: bytes) {
            return before..<lines.upperBound
        }
        return lines
    }

    /// The end of the blank line starting at `start`, if one does.
    private static func blankLine(startingAt start: Int, in bytes: [UInt8]) -> Int? {
        var index = start
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0D { index += 1 }
        guard index < bytes.count, bytes[index] == 0x0A else { return nil }
        return index + 1
    }

    /// The start of the blank line ending (with its newline) at `end`, if one does.
    private static func blankLine(endingAt end: Int, in bytes: [UInt8]) -> Int? {
        guard end > 0, bytes[end - 1] == 0x0A else { return nil }
        var index = end - 1
        while index > 0, bytes[index - 1] == 0x20 || bytes[index - 1] == 0x09 || bytes[index - 1] == 0x0D { index -= 1 }
        guard index == 0 || bytes[index - 1] == 0x0A else { return nil }
        return index
    }

    private static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
