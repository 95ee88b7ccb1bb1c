import Foundation

/// A CSV (or TSV) file read as the Markdown table it is, so its summary keeps every row with its
/// header and a question about it is answered from a row ("Which market took the most?" over a
/// column), as for a table written in Markdown. Read as plain text, a CSV is one long sentence.
///
/// RFC 4180 as people export it: fields separated by commas (tabs in a `.tsv`), a field in
/// double quotes may hold the separator, a line break or a doubled quote (`""`); lines end in
/// LF or CRLF. The first row is the header. A file that is no table — fewer than two columns,
/// rows of different lengths, an open quote at the end — stays plain text.
enum CSVTable {
    static let extensions: Set<String> = ["csv", "tsv"]

    static func isTable(_ path: String) -> Bool {
        let lower = path.lowercased()
        guard let dot = lower.lastIndex(of: "."), !lower[dot...].contains("/") else { return false }
        return extensions.contains(String(lower[lower.index(after: dot)...]))
    }

    /// The Markdown table of `text`, or nil when it is no table.
    static func markdown(_ text: String, separator: Character = ",") -> String? {
        guard let rows = parse(text, separator: separator), let header = rows.first, header.count >= 2,
              rows.count >= 2, rows.allSatisfy({ $0.count == header.count }) else { return nil }
        func line(_ cells: [String]) -> String {
            "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ") }.joined(separator: " | ") + " |"
        }
        // Header words as a person reads them: "price_per_jar" is "price per jar".
        let shownHeader = header.map { $0.replacingOccurrences(of: "_", with: " ").trimmingCharacters(in: .whitespaces) }
        return ([line(shownHeader), "|" + String(repeating: "---|", count: header.count)] + rows.dropFirst().map(line)).joined(separator: "\n") + "\n"
    }

    /// The rows of `text`; nil when a quote is left open.
    static func parse(_ text: String, separator: Character) -> [[String]]? {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text)
        if characters.first == "\u{FEFF}" { characters.removeFirst() }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if quoted {
                if character == "\"" {
                    if index + 1 < characters.count, characters[index + 1] == "\"" {
                        field.append("\"")
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" && field.isEmpty {
                quoted = true
            } else if character == separator {
                row.append(field.trimmingCharacters(in: .whitespaces))
                field = ""
            } else if character == "\n" || character == "\r\n" || character == "\r" {
                row.append(field.trimmingCharacters(in: .whitespaces))
                field = ""
                if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }
                row = []
            } else {
                field.append(character)
            }
            index += 1
        }
        guard !quoted else { return nil }
        if !field.isEmpty || !row.isEmpty {
            row.append(field.trimmingCharacters(in: .whitespaces))
            rows.append(row)
        }
        return rows
    }
}
