/// Cutting text into the units a claim lives in: sentences of prose, and the Markdown lines
/// that are units of their own (headings, list items, table rows, quote lines, code lines).
enum Sentences {
    /// The sentences of `text`, verbatim (trimmed). Prose is split at `.` `!` `?` followed by
    /// white space and a capital or a digit — not inside decimals (4.2), after abbreviations
    /// (e.g., i.e., Dr., Mr., Mrs., Ms., St., No. before a number, vs., etc., Inc., Ltd., a.m.,
    /// p.m.), initials ("J. R. Tolkien"), in URLs or file names. Every Markdown heading, list
    /// item, table row, quote line, code line and blank-line paragraph boundary also ends a unit.
    /// Units shorter than 3 characters or only punctuation are dropped; HTML comments (the
    /// engine's turn markers), fences and rules are no units.
    ///
    /// For example, `"# Tea\n\nDr. Varga paid 4.20 euros. It was cold!\n- Ilse"` gives
    /// `["Tea", "Dr. Varga paid 4.20 euros.", "It was cold!", "Ilse"]` (a heading or list
    /// item without its marker; a table row whole, pipes and all).
    static func split(_ text: String) -> [String] {
        let bytes = Array(text.utf8)
        return units(of: bytes, keepingFragments: false).map { $0.text(in: bytes) }
    }

    /// The units of `bytes` (UTF-8) with where they are. `keepingFragments` keeps the units
    /// `split` drops (shorter than 3 characters, or only punctuation): removal must see "- 42".
    static func units(of bytes: [UInt8], keepingFragments: Bool) -> [TextUnit] {
        var scanner = UnitScanner(bytes: bytes)
        scanner.scan()
        guard !keepingFragments else { return scanner.units }
        return scanner.units.filter { unit in
            let text = unit.text(in: bytes)
            return text.count >= 3 && text.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
        }
    }
}

/// A sentence or a Markdown line unit, by its UTF-8 offsets.
struct TextUnit: Equatable {
    enum Kind: Equatable { case prose, heading, listItem, tableRow, quote, code }
    var kind: Kind
    /// The unit's text, trimmed, without a heading's hashes, a bullet or a quote mark.
    var range: Range<Int>
    /// Units of one paragraph, list item or line share a block.
    var block: Int
    /// The whole lines of the block, the last one's newline included.
    var lines: Range<Int>

    func text(in bytes: [UInt8]) -> String { String(decoding: bytes[range], as: UTF8.self) }
}
