import Foundation

/// A table laid out with spaces, as plain-text invoices, statements and `pdftotext -layout`
/// write one:
///
/// ```
/// Qty  Item                               Each      Line
///   1  Smoker fuel pellets, 2 kg bag      6.40      6.40
///   1  Brass padlock, 40 mm, two keys    11.20     11.20
/// ```
///
/// Read as prose, a row is a run of words and numbers with no header: "the dearest thing on the
/// invoice" cannot be told from it. Read here, each row is its cells under the header's names,
/// as a Markdown table's row is (`Evidence.tableRow`), without changing the file or its line
/// numbers (a row is cited by its own line).
///
/// A table is a header line whose words hold no digit, then at least two rows, with no blank
/// line between, each with a digit and as many cells as the header has names (three at least).
/// A row's cells are its text split at runs of two or more spaces; where a converter squeezed
/// the spaces (`pdftotext` writes "11.20 11.20"), the numbers that open and close the row are
/// cells of their own and the words between them one cell. The header's names are its text split
/// at two or more spaces ("Unit price"), or at every space ("Qty Item") where that is what the
/// rows fit. Two cells ("Subtotal  36.80") are a label and a value, not a table.
enum AlignedTable {
    static let leastColumns = 3

    /// The text of `line` split at runs of two or more spaces (or a tab).
    static func spacedCells(_ line: String) -> [String] {
        line.replacingOccurrences(of: "\t", with: "  ")
            .components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The cells of the row `line` under a header of `count` names, or nil when it has not as many.
    /// `framed`: a row whose spaces were squeezed may be read by the numbers that open and close
    /// it (under a header of one-word names, read at every space).
    static func cells(_ line: String, count: Int, framed: Bool = true) -> [String]? {
        let spaced = spacedCells(line)
        if spaced.count == count { return spaced }
        guard framed else { return nil }
        // Numbers that open and close the row, each a cell; the words between, one.
        let tokens = line.split(whereSeparator: \.isWhitespace).map(String.init)
        func isNumber(_ token: String) -> Bool { token.contains(where: \.isNumber) && !token.contains(where: \.isLetter) }
        // The closing numbers are as many as the header leaves ("Ratchet straps, pack of 4  10.25
        // 10.25": the 4 is the item's).
        let lead = Array(tokens.prefix { isNumber($0) })
        let closing = count - lead.count - 1
        guard closing >= 0, tokens.count > lead.count + closing else { return nil }
        let trail = Array(tokens.suffix(closing))
        guard trail.allSatisfy(isNumber) else { return nil }
        return lead + [tokens.dropFirst(lead.count).dropLast(closing).joined(separator: " ")] + trail
    }

    /// The table line `index` belongs to: the header's names, its index and the rows' range; nil
    /// when it is in none (or is the header itself).
    static func table(around index: Int, in lines: [String]) -> (names: [String], header: Int, rows: ClosedRange<Int>)? {
        guard lines.indices.contains(index), lines[index].contains(where: \.isNumber),
              !lines[index].trimmingCharacters(in: .whitespaces).hasPrefix("|") else { return nil }
        func isBlank(_ number: Int) -> Bool { lines[number].trimmingCharacters(in: .whitespaces).isEmpty }
        // The header: the nearest line above with no digit, the rows between it and `index` all
        // holding one.
        var header = index - 1
        while header >= 0, !isBlank(header), lines[header].contains(where: \.isNumber) { header -= 1 }
        guard header >= 0, !isBlank(header) else { return nil }
        let spaced = spacedCells(lines[header])
        let words = lines[header].split(whereSeparator: \.isWhitespace).map(String.init)
        // Of the two ways to read the header, the one more rows fit.
        var best: (names: [String], header: Int, rows: ClosedRange<Int>)?
        for names in [spaced, words] where names.count >= leastColumns {
            let framed = names == words
            var end = header
            while end + 1 < lines.count, !isBlank(end + 1), lines[end + 1].contains(where: \.isNumber),
                  cells(lines[end + 1], count: names.count, framed: framed) != nil {
                end += 1
            }
            if end >= index, end - header >= 2, end - header > best?.rows.count ?? 0 { best = (names, header, (header + 1)...end) }
        }
        return best
    }

    /// Row `index` read with its header: "Qty: 1; Item: Brass padlock, 40 mm, two keys; Each:
    /// 11.20; Line: 11.20"; nil for a line that is no row of such a table.
    static func row(at index: Int, in lines: [String]) -> String? {
        guard let table = table(around: index, in: lines),
              let cells = cells(lines[index], count: table.names.count, framed: table.names == lines[table.header].split(whereSeparator: \.isWhitespace).map(String.init))
        else { return nil }
        return zip(table.names, cells).map { "\($0): \($1)" }.joined(separator: "; ")
    }
}
