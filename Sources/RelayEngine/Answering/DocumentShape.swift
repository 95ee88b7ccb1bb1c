import Foundation

/// A dropped document as its key sentences are chosen from, by what kind of document it is:
/// an email thread's quoted replies are context, not news (the newest message comes first); a
/// table's rows are facts of their own, read as "first cell: the other cells"; a heading that
/// holds no date is a signpost, not a fact. Pure functions of their arguments.
enum DocumentShape {
    /// Lines that open a quoted earlier message in an email thread.
    static let replyOpenings = ["-----original message-----", "---------- forwarded message", "begin forwarded message"]

    /// `document` as its key sentences are chosen from: an email thread's newest message first
    /// and its quoted earlier messages after it, as context (their quote marks and separators
    /// left out: they still hold the facts the newest message does not repeat — the hotel
    /// booked, the outbound flight); greetings and sign-offs left out; mail headers one to a
    /// line, bold or not; table rows written as "first cell: cell, cell" (the header and the
    /// rule dropped).
    static func prepared(_ document: String) -> String {
        var lines = document.components(separatedBy: "\n").map { line in
            // "**From:** Ada" is a header as "From: Ada" is.
            let plain = line.replacingOccurrences(of: "**", with: "")
            return emailHeader(plain.trimmingCharacters(in: .whitespaces)) != nil ? plain : line
        }
        let quoted = lines.indices.filter { isQuoted(lines, at: $0) }
        let kept = lines.indices.filter { !quoted.contains($0) && Evidence.isStatement(lines[$0]) }
        if !quoted.isEmpty, kept.count >= 3 {
            let earlier = quoted.map { unquoted(lines[$0]) }.filter { line in
                !replyOpenings.contains { line.lowercased().contains($0) } && !line.trimmingCharacters(in: .whitespaces).hasPrefix("-----")
            }
            lines = lines.indices.filter { !quoted.contains($0) }.map { lines[$0] } + ["", "## Earlier in the thread", ""] + earlier
        }
        var result: [String] = []
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if isGreeting(trimmed) { continue }
            // A mail header is a unit of its own (not one run-on "sentence" with the next
            // headers); who it went to says nothing a reader looks for.
            if let field = emailHeader(trimmed) {
                if !["to", "cc", "bcc"].contains(field) { result.append("- " + trimmed) }
                continue
            }
            guard trimmed.hasPrefix("|") else { result.append(line); continue }
            if Evidence.isTableRule(trimmed) { continue }
            // The header row (the row before a rule) says what the columns are: it heads the table once.
            if index + 1 < lines.count, Evidence.isTableRule(lines[index + 1].trimmingCharacters(in: .whitespaces)) { continue }
            if let row = row(trimmed, header: header(ofRowAt: index, in: lines)) { result.append(row) }
        }
        return result.joined(separator: "\n")
    }

    /// The rows of the Markdown tables of `document`, as ``prepared`` writes them.
    static func tableRows(of document: String) -> [String] {
        let lines = document.components(separatedBy: "\n")
        return lines.indices.compactMap { index -> String? in
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|"), !Evidence.isTableRule(trimmed),
                  !(index + 1 < lines.count && Evidence.isTableRule(lines[index + 1].trimmingCharacters(in: .whitespaces))) else { return nil }
            return row(trimmed, header: header(ofRowAt: index, in: lines))
        }
    }

    /// The header cells of the table the row at `index` is in (the row above its rule).
    static func header(ofRowAt index: Int, in lines: [String]) -> [String]? {
        var start = index
        while start > 0, lines[start - 1].trimmingCharacters(in: .whitespaces).hasPrefix("|") { start -= 1 }
        guard start + 1 < lines.count, start < index, Evidence.isTableRule(lines[start + 1].trimmingCharacters(in: .whitespaces)) else { return nil }
        return cells(lines[start].trimmingCharacters(in: .whitespaces), keepingEmpty: true)
    }

    private static func cells(_ trimmed: String, keepingEmpty: Bool) -> [String] {
        var inner = Substring(trimmed)
        if inner.hasPrefix("|") { inner = inner.dropFirst() }
        if inner.hasSuffix("|") { inner = inner.dropLast() }
        let all = inner.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        return keepingEmpty ? all : all.filter { !$0.isEmpty }
    }

    /// "| Northgate | 2,950 | April |" as "- Northgate: 2,950, April". A row that opens with a
    /// number or a time (not a date) names no thing ("| 07:10 | 08:15 |" as "07:10: 08:15" says nothing): it
    /// is written with its header, "- From Harwick: 07:10; From Brill: 08:15".
    static func row(_ trimmed: String, header: [String]? = nil) -> String? {
        let all = cells(trimmed, keepingEmpty: true)
        let cells = all.filter { !$0.isEmpty }
        guard let first = cells.first else { return nil }
        // (A date names its row well enough: "02 Jan: Greenway Lets - rent, 950.00".)
        if first.first?.isNumber == true, Claims.extract(from: first).first?.kind != .date, let header, header.count == all.count,
           !header.contains(where: \.isEmpty) {
            return "- " + zip(header, all).filter { !$0.1.isEmpty }.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
        }
        return "- " + first + (cells.count > 1 ? ": " + cells.dropFirst().joined(separator: ", ") : "")
    }

    /// A quoted line without its quote marks ("> > text" → "text").
    static func unquoted(_ line: String) -> String {
        var text = Substring(line.trimmingCharacters(in: .whitespaces))
        while text.hasPrefix(">") { text = text.dropFirst().drop { $0 == " " } }
        return String(text)
    }

    /// "Dear Sanne,", "Hi all,", "Kind regards,", "Best,": a letter's greeting or sign-off, which
    /// says nothing a reader of a summary looks for.
    static func isGreeting(_ line: String) -> Bool {
        let lowered = line.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: " ,.!"))
        guard !lowered.isEmpty, lowered.split(separator: " ").count <= 4, line.hasSuffix(",") || signOffs.contains(lowered) else { return false }
        return ["dear ", "hi ", "hello ", "hey ", "good morning", "good afternoon", "morning ", "afternoon ", "evening "].contains { lowered.hasPrefix($0) }
            || signOffs.contains(lowered)
    }

    static let signOffs: Set<String> = ["kind regards", "best regards", "regards", "best", "best wishes", "thanks", "thank you", "many thanks",
                                        "cheers", "yours sincerely", "yours faithfully", "yours", "with apologies", "all the best", "warm regards",
                                        "with thanks", "love"]

    /// The field of a mail header line ("from" of "From: Ada <ada@…>"), lowercased.
    static func emailHeader(_ line: String) -> String? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let field = line[..<colon].lowercased()
        return ["from", "to", "cc", "bcc", "sent", "date", "subject", "reply-to"].contains(field) ? field : nil
    }

    /// A line that is a field of a form or schedule, "Policy number: TM-208817": a short
    /// capitalised label, a colon, a value. A unit of its own, never part of a sentence.
    static func isField(_ line: String) -> Bool {
        guard let colon = line.firstIndex(of: ":"), line.first?.isUppercase == true else { return false }
        let label = line[..<colon]
        let after = line[line.index(after: colon)...]
        return after.hasPrefix(" ") && !after.trimmingCharacters(in: .whitespaces).isEmpty && label.count <= 32
            && label.split(separator: " ").count <= 4 && label.allSatisfy { $0.isLetter || $0 == " " || $0 == "-" || $0 == "'" || $0 == "(" || $0 == ")" }
    }

    /// The number a clause opens with ("3.1" of "3.1 You pay the first 300 crowns"), or nil.
    static func clauseNumber(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let match = trimmed.range(of: #"^\d{1,2}(\.\d{1,2})+\.? +(?=[A-Z])"#, options: .regularExpression) else { return nil }
        return trimmed[match].trimmingCharacters(in: CharacterSet(charactersIn: ". "))
    }

    /// A line of a quoted earlier message: "> …", "On … wrote:", and everything after an
    /// "-----Original Message-----" line.
    static func isQuoted(_ lines: [String], at index: Int) -> Bool {
        let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix(">") { return true }
        let lowered = trimmed.lowercased()
        if lowered.hasPrefix("on "), lowered.hasSuffix("wrote:") { return true }
        return lines[..<index].contains { line in replyOpenings.contains { line.lowercased().contains($0) } }
            || replyOpenings.contains { lowered.contains($0) }
    }
}
