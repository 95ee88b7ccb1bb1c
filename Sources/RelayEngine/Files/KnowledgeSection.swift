import Foundation

/// What a relay learned, kept in a section of `context.md` (a `"context"` declared output): one
/// line per source, newest last — `- [tea](Research/tea/summary.md): Green tea is steamed…` —
/// so every later prompt, which holds context.md, and every search finds it. A second run on
/// the same source replaces its line. When context.md grows past its budget, the oldest lines
/// of the section move to an index file (`Research/index.md`), which search still reads.
enum KnowledgeSection {
    /// The most characters of facts one line holds.
    static let lineLimit = 420

    /// `text` (an agent's bullets or sentences) as one line about `name`, linking `link`.
    static func line(name: String, link: String, text: String) -> String {
        let pieces = text.split(separator: "\n").map { piece -> String in
            var line = piece.trimmingCharacters(in: .whitespaces)
            while let first = line.first, "-*#>".contains(first) { line = String(line.dropFirst()).trimmingCharacters(in: .whitespaces) }
            return line
        }.filter { !$0.isEmpty && !$0.hasPrefix("_(") }
        // The pieces with the most facts per character first, then shown in their own order.
        let density = pieces.map { Double(Claims.extract(from: $0).count) / Double(max(1, $0.count)) }
        let order = pieces.indices.sorted { density[$0] != density[$1] ? density[$0] > density[$1] : $0 < $1 }
        var kept: Set<Int> = []
        var length = 0
        for index in order where length + pieces[index].count + 3 <= lineLimit {
            kept.insert(index)
            length += pieces[index].count + 3
        }
        var facts = pieces.indices.filter(kept.contains).map { pieces[$0] }.joined(separator: " · ")
        if facts.isEmpty, let first = pieces.first { facts = cut(first, to: lineLimit) }
        return "- [\(name)](\(link)): \(facts)"
    }

    private static func cut(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        let prefix = text.prefix(limit - 1)
        let boundary = prefix.lastIndex(of: " ") ?? prefix.endIndex
        return String(prefix[..<boundary]) + "…"
    }

    /// The entry lines of the section under `heading` (lines starting with "- ").
    static func entries(in text: String, heading: String) -> [String] {
        guard let range = sectionRange(in: text.components(separatedBy: "\n"), heading: heading) else { return [] }
        return text.components(separatedBy: "\n")[range].filter { $0.hasPrefix("- ") }
    }

    /// `text` with `line` at the end of the section (replacing an entry with the same link), and
    /// without the entries in `moving` (the oldest, moved to the index). The rest of the file —
    /// a person's edits anywhere — is kept as it is.
    static func adding(_ line: String, to text: String, heading: String, removing moving: Set<String> = []) -> String {
        var lines = text.components(separatedBy: "\n")
        let key = linkKey(line)
        guard let range = sectionRange(in: lines, heading: heading) else {
            var result = text
            if !result.isEmpty && !result.hasSuffix("\n") { result += "\n" }
            if !result.isEmpty && !result.hasSuffix("\n\n") { result += "\n" }
            return result + "## \(heading)\n\n\(line)\n"
        }
        var section = Array(lines[range]).filter { !(($0.hasPrefix("- ") && linkKey($0) == key) || moving.contains($0)) }
        // After the section's last entry (or its text), before the blank lines that end it.
        var insert = section.count
        while insert > 0, section[insert - 1].trimmingCharacters(in: .whitespaces).isEmpty { insert -= 1 }
        if insert == 0 { section.insert("", at: 0); insert = 1 }
        section.insert(line, at: insert)
        lines.replaceSubrange(range, with: section)
        return lines.joined(separator: "\n")
    }

    /// The oldest entries to move out so that `text` with `line` added fits `budget` bytes
    /// (never the new line itself).
    static func overflow(adding line: String, to text: String, heading: String, budget: Int) -> [String] {
        var moving: [String] = []
        let candidates = entries(in: text, heading: heading).filter { linkKey($0) != linkKey(line) }
        for entry in candidates {
            let size = adding(line, to: text, heading: heading, removing: Set(moving)).utf8.count
            guard size > budget else { break }
            moving.append(entry)
        }
        return moving
    }

    /// "- [tea](Research/tea/summary.md): …" → "Research/tea/summary.md".
    static func linkKey(_ line: String) -> String? {
        guard let open = line.range(of: "]("), let close = line.range(of: ")", range: open.upperBound..<line.endIndex) else { return nil }
        return String(line[open.upperBound..<close.lowerBound])
    }

    private static func sectionRange(in lines: [String], heading: String) -> Range<Int>? {
        MarkdownSection.range(in: lines, heading: heading)
    }
}

/// A `#` section of a Markdown file (context.md): where it is among the file's lines.
enum MarkdownSection {
    /// 1–6 for a heading line ("## Goals"), nil for any other line.
    static func headingLevel(_ line: String) -> Int? {
        let hashes = line.prefix { $0 == "#" }.count
        guard hashes > 0, hashes <= 6, line.dropFirst(hashes).first == " " else { return nil }
        return hashes
    }

    /// The lines after the heading `heading` (any case) up to the next heading of the same or a
    /// higher level; nil when there is no such heading.
    static func range(in lines: [String], heading: String) -> Range<Int>? {
        let level = headingLevel
        let wanted = heading.lowercased()
        guard let start = lines.firstIndex(where: { level($0) != nil && $0.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces).lowercased() == wanted }),
              let own = level(lines[start]) else { return nil }
        var end = start + 1
        while end < lines.count, level(lines[end]).map({ $0 > own }) ?? true { end += 1 }
        return (start + 1)..<end
    }
}
