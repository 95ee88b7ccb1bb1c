import Foundation
import WorkspaceCore

/// Evidence by the workspace's structure, beside retrieval by words: the notes of the days a
/// request names, the open tasks of the notes, a table's rows read with their header, and a
/// second search for a name the first evidence brings in (two hops). Read once when a run is
/// prepared, into `run.json`, so resume and replay see the same lines.
struct Evidence {
    let workspace: Workspace

    /// The score that marks a line found by structure (a note of the day asked about, an open
    /// task): programs keep such lines whatever the model chooses.
    static let structural = 1000.0

    /// Lines that open a task, and lines that close one (a done task is no longer on the list).
    /// Why each: `- [ ]` and `[x]` are Markdown task lists; "TODO"/"To do:" are how people mark
    /// tasks in plain notes; "need to", "have to", "must", "remember to", "don't forget to" and
    /// "should" are how they write one in a sentence.
    static let openTaskMarkers = ["[ ]", "todo", "to do:", "to-do:", "need to ", "needs to ", "have to ", "must ", "remember to ",
                                  "don't forget to ", "do not forget to ", "should ", "still to ", "yet to "]
    static let doneTaskMarkers = ["[x]", "[X]", "done:", "(done)", "✓", "✔", "~~"]

    /// Verbs of a thing done, as a note reports it ("sent Saskia the list", "fixed the latch").
    static let doneVerbs: Set<String> = [
        "fixed", "mended", "repaired", "sent", "posted", "emailed", "paid", "booked", "ordered", "bought", "rang", "called", "phoned",
        "renewed", "cleaned", "wrote", "finished", "done", "sorted", "returned", "collected", "delivered", "cancelled", "replaced",
        "signed", "submitted", "filed", "handed", "picked", "dropped", "changed", "cleared", "painted", "serviced", "checked",
        "found", "got", "heard", "received", "confirmed", "arranged", "organised", "organized", "fetched", "finally",
    ]

    /// Whether `line` reports something done: a verb of ``doneVerbs``, not negated.
    /// Or a line that opens with a verb in the past ("Hung both shelves last night"), one
    /// that did the thing, not one that meant to ("Wanted to fix the gate").
    static func reportsDone(_ line: String) -> Bool {
        let ordered = line.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "'" }).map(String.init)
        let words = Set(ordered)
        guard words.isDisjoint(with: ["not", "didn't", "haven't", "hasn't", "never", "still"]) else { return false }
        if !words.isDisjoint(with: doneVerbs) { return true }
        guard let first = ordered.first(where: { !["x", "finally", "today", "yesterday", "also", "then"].contains($0) }),
              !intentVerbs.contains(first) else { return false }
        return (first.count >= 5 && first.hasSuffix("ed") && !first.hasSuffix("eed")) || SearchTerms.irregular[first] != nil
    }

    /// Past verbs that say a thing was meant, not done.
    static let intentVerbs: Set<String> = ["wanted", "tried", "needed", "planned", "hoped", "meant", "intended", "forgot", "started",
                                           "decided", "promised", "offered", "asked", "thought", "wondered", "agreed"]

    /// Whether `line` is an open task.
    static func isOpenTask(_ line: String) -> Bool {
        let lowered = line.lowercased()
        guard !doneTaskMarkers.contains(where: { line.contains($0) }) else { return false }
        // "I did not need to …", "no need to …": no task. "It should be fine", "as it should be":
        // an expectation, not a task.
        if lowered.contains("no need to") || lowered.contains("didn't need to") || lowered.contains("did not need to") { return false }
        if lowered.contains("should be") || lowered.contains("should have"), !openTaskMarkers.filter({ $0 != "should " }).contains(where: lowered.contains) { return false }
        return openTaskMarkers.contains { lowered.contains($0) }
    }

    /// The person's dated notes, oldest first: `Journal/user/yyyy-MM-dd*.md` and their day.
    func notes() -> [(path: String, day: String)] {
        guard let entries = try? workspace.list("Journal/user", recursive: true) else { return [] }
        return entries.compactMap { entry -> (String, String)? in
            guard entry.kind == .file, entry.path.hasSuffix(".md"), let day = DayWords.day(ofNote: entry.path) else { return nil }
            return (entry.path, day)
        }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
    }

    /// The day of a person's dated note, from its path; nil for any other file.
    static func day(ofNotePath path: String) -> String? {
        path.hasPrefix("Journal/user/") ? DayWords.day(ofNote: path) : nil
    }

    func lines(of path: String) -> [String] {
        SourceText(workspace: workspace).text(of: path)?.components(separatedBy: "\n") ?? []
    }

    /// The statements of the notes of `days` (headings, blank lines and the engine's markers
    /// left out), oldest first.
    func noteLines(in days: RequestAnalysis.DayRange) -> [RetrievedLine] {
        notes().filter { days.contains($0.day) }.flatMap { note in
            lines(of: note.path).enumerated().compactMap { index, line -> RetrievedLine? in
                let text = RunExecutor.bare(line)
                guard Self.isStatement(line), !text.isEmpty else { return nil }
                return RetrievedLine(path: note.path, line: index + 1, text: text, score: Self.structural)
            }
        }
    }

    /// The open tasks of the person's notes (of `days`, when given) and of context.md, oldest
    /// note first, each once: a task written again in a later note, or later marked done, is
    /// one task.
    func openTasks(in days: RequestAnalysis.DayRange?) -> [RetrievedLine] {
        var sources = notes().filter { days?.contains($0.day) ?? true }.map(\.path)
        sources.append("context.md")
        var found: [String: RetrievedLine] = [:]
        var order: [String] = []
        var done: Set<String> = []
        // Notes that say a thing was done, in plain words ("Finally fixed the gate latch."),
        // each with the position of its note: it closes only a task written before it.
        var reported: [(key: String, note: Int)] = []
        for (note, path) in sources.enumerated() {
            // context.md's line for a document ("- [handbook](Research/handbook/summary.md): …
            // must be booked …") is what the research relay learned, not a task of the person's.
            for (index, line) in lines(of: path).enumerated() where Self.isStatement(line) && !Self.isKnowledgeLine(line) {
                let key = Self.taskKey(line)
                guard !key.isEmpty else { continue }
                if Self.doneTaskMarkers.contains(where: { line.contains($0) }) { done.insert(key); continue }
                guard Self.isOpenTask(line) else {
                    if Self.reportsDone(line) { reported.append((key, note)) }
                    continue
                }
                if found[key] == nil { order.append(key) }
                found[key] = RetrievedLine(path: path, line: index + 1, text: RunExecutor.bare(line), score: Self.structural)
            }
        }
        // A task ticked off in other words ("[ ] pay the paint invoice", then "[x] Paid the paint
        // invoice online"): done when a ticked line holds at least two of its words and half of
        // them. A later note that reports it done ("Afternoon at the allotment: finally fixed the
        // gate latch.") holds three of its words, or two and half (it says more besides; "sent"
        // and "July" alone are another errand of July).
        func words(_ key: String) -> Set<String> { Set(key.split(separator: " ").map(String.init).filter { $0.first?.isLetter == true }) }
        let ticked = done.map(words)
        let notePosition = Dictionary(sources.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        func tickedOff(_ key: String) -> Bool {
            let task = words(key)
            if ticked.contains(where: { line in let shared = task.intersection(line).count; return shared >= 2 && shared * 2 >= task.count }) { return true }
            let written = found[key].flatMap { notePosition[$0.path] } ?? 0
            // "Need to find a proper foghorn sound" — "Found a good foghorn": the task's own verb,
            // done, and what it was done to.
            let verb = key.split(separator: " ").first.map(String.init)
            return reported.contains { report in
                let reportWords = words(report.key)
                let shared = task.intersection(reportWords).count
                // The thing done is a thing, not a month or a number ("Sent Saskia the July rota"
                // does not send the show entry form due by 24 July).
                let things = task.intersection(reportWords).filter { word in
                    word != verb && !word.contains(where: \.isNumber) && !DayWords.months.contains(word) && !DayWords.weekdays.contains(word)
                }
                let ownVerb = verb.map { reportWords.contains($0) && !things.isEmpty } ?? false
                return report.note > written && (shared >= 3 || (shared >= 2 && shared * 2 >= task.count) || ownVerb)
            }
        }
        return order.filter { !done.contains($0) && !tickedOff($0) }.compactMap { found[$0] }
    }

    /// A line the research relay writes into context.md for a document: a link to its summary.
    static func isKnowledgeLine(_ line: String) -> Bool {
        line.trimmingCharacters(in: .whitespaces).range(of: #"^- \[[^\]]*\]\(Research/[^)]*\)"#, options: .regularExpression) != nil
    }

    /// What a task is, without its marker, so "- [ ] call the vet" and "- [x] call the vet" meet.
    /// The words of how a task is written, and an aside in brackets ("(about 58 euros worth)"),
    /// are not what it is: "need to call the insurer about the cream (about 58 euros)" and
    /// "[x] Rang the insurer about the cream" are one task.
    static func taskKey(_ line: String) -> String {
        var text = line.lowercased()
        for marker in ["[ ]", "[x]", "todo:", "todo", "to do:", "to-do:", "done:", "(done)", "~~", "✓", "✔"] + openTaskMarkers.filter({ $0.hasSuffix(" ") }) {
            text = text.replacingOccurrences(of: marker, with: " ")
        }
        text = text.replacingOccurrences(of: #"\([^)]*\)"#, with: " ", options: .regularExpression)
        return SearchTerms.terms(of: text).joined(separator: " ")
    }

    /// A line that states something: not blank, not a heading, not a rule, not the engine's marker.
    static func isStatement(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return !trimmed.isEmpty && !trimmed.hasPrefix("#") && !trimmed.hasPrefix("<!--") && !trimmed.hasPrefix("---")
            && !trimmed.hasPrefix("```") && trimmed.contains(where: \.isLetter) && !isTableRule(trimmed)
    }

    static func isTableRule(_ line: String) -> Bool {
        line.hasPrefix("|") && line.allSatisfy { "|-: ".contains($0) }
    }

    /// The nearest Markdown heading above line `index` (without its hashes), if any.
    static func heading(above index: Int, in lines: [String]) -> String? {
        guard lines.indices.contains(index) else { return nil }
        for number in stride(from: index - 1, through: 0, by: -1) {
            let trimmed = lines[number].trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") { return trimmed.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    // MARK: Tables

    /// A Markdown table row read with its header: "| Northgate | 2,950 |" under "| Supplier |
    /// Quote |" is "Supplier: Northgate; Quote: 2,950". Nil for a line that is no table row, or
    /// is the header itself. A table laid out with spaces is read as one (`AlignedTable`).
    static func tableRow(at index: Int, in lines: [String]) -> String? {
        func cells(_ line: String) -> [String]? {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|"), trimmed.count > 1 else { return nil }
            var inner = trimmed.dropFirst()
            if inner.hasSuffix("|") { inner = inner.dropLast() }
            return inner.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        guard lines.indices.contains(index), let row = cells(lines[index]), !isTableRule(lines[index].trimmingCharacters(in: .whitespaces)) else {
            // A table laid out with spaces (a plain-text invoice) is read the same way.
            return AlignedTable.row(at: index, in: lines)
        }
        var start = index
        while start > 0, cells(lines[start - 1]) != nil { start -= 1 }
        guard start + 1 < lines.count, isTableRule(lines[start + 1].trimmingCharacters(in: .whitespaces)), start != index,
              let header = cells(lines[start]) else { return nil }
        let pairs = zip(header, row).compactMap { name, value -> String? in
            value.isEmpty ? nil : name.isEmpty ? value : "\(name): \(value)"
        }
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    /// Every row of the table `line` belongs to (in Markdown, or laid out with spaces), read with the header.
    func tableRows(around line: RetrievedLine) -> [RetrievedLine] {
        let all = lines(of: line.path)
        let index = line.line - 1
        guard all.indices.contains(index), all[index].trimmingCharacters(in: .whitespaces).hasPrefix("|") else {
            guard let table = AlignedTable.table(around: index, in: all) else { return [] }
            return table.rows.compactMap { number in
                AlignedTable.row(at: number, in: all).map {
                    RetrievedLine(path: line.path, line: number + 1, text: $0, score: Self.structural, heading: Self.heading(above: number, in: all))
                }
            }
        }
        var start = index, end = index
        while start > 0, all[start - 1].trimmingCharacters(in: .whitespaces).hasPrefix("|") { start -= 1 }
        while end + 1 < all.count, all[end + 1].trimmingCharacters(in: .whitespaces).hasPrefix("|") { end += 1 }
        return (start...end).compactMap { number in
            Self.tableRow(at: number, in: all).map {
                RetrievedLine(path: line.path, line: number + 1, text: $0, score: Self.structural, heading: Self.heading(above: number, in: all))
            }
        }
    }

    /// The tables of the file at `path`, each as its rows read with the header, in order.
    func tables(in path: String) -> [[RetrievedLine]] {
        let all = lines(of: path)
        var found: [[RetrievedLine]] = []
        var index = 0
        while index < all.count {
            let rows = Self.tableRow(at: index, in: all) == nil ? [] : tableRows(around: RetrievedLine(path: path, line: index + 1, text: all[index], score: 0))
            if rows.count >= 2, let last = rows.last {
                found.append(rows)
                index = last.line
            } else {
                index += 1
            }
        }
        return found
    }

    // MARK: A document the request names

    /// The document of `Research/` a request names ("sum up the traders' newsletter", "what is
    /// the lease about?"): the one whose file name and title hold the most of the request's
    /// topic words, at least half of them and more than any other; nil when none or a tie.
    func document(namedBy topic: Set<String>) -> String? {
        guard !topic.isEmpty, let entries = try? workspace.list("Research", recursive: true) else { return nil }
        var best: (path: String, shared: Int)?
        var tied = false
        for entry in entries where entry.kind == .file {
            let name = (entry.path as NSString).lastPathComponent
            // The engine's own summaries and notes are about a document, not one.
            guard !name.hasPrefix("."), name != "README.md", !entry.path.hasSuffix("/summary.md"),
                  entry.path.split(separator: "/").count == 2 else { continue }
            let shared = topic.intersection(Self.documentTerms(entry.path, lines: lines(of: entry.path))).count
            guard shared > 0 else { continue }
            if shared > best?.shared ?? 0 { best = (entry.path, shared); tied = false } else if shared == best?.shared { tied = true }
        }
        guard let best, !tied, 2 * best.shared >= topic.count else { return nil }
        return best.path
    }

    /// The search terms of what a document says it is: its file name ("mill-row-lease") and its
    /// title ("# Lease: 4 Mill Row").
    static func documentTerms(_ path: String, lines: [String]) -> Set<String> {
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            .replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "_", with: " ")
        return Set(SearchTerms.terms(of: stem + " " + (lines.first { $0.hasPrefix("# ") } ?? "")))
    }

    /// What a summary of document `path` is made of: its own statements, a few from each of
    /// its parts, not its first lines — a summary of minutes that stops at who was there, or of
    /// a specification that stops at its first section, leaves out what a reader asked for.
    /// A part is what a heading opens (a Markdown heading, or a short title line of a plain-text
    /// document: "1. Overall size", "TERMS OF HIRE"), a list or a paragraph under it, or one
    /// message of a mail thread. Each part gives its lead — its decision when it records one
    /// ("Decided: …"), else its first statement — then, while there is room, its next; when
    /// there are more parts than room, those whose leads carry the most facts (names, numbers,
    /// dates). Mail headers, greetings, sign-offs and a meeting's attendance lines say nothing a
    /// summary needs. At most `limit`, in the document's order.
    func summaryLines(of path: String, limit: Int) -> [RetrievedLine] {
        let all = lines(of: path)
        var parts: [[RetrievedLine]] = []
        var key = ""
        var part = 0
        // The parts before the first heading or title that follows a statement: a form's opening.
        var opening: Int?
        for (index, raw) in all.enumerated() {
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let text = DocumentShape.unquoted(trimmed)
            let lowered = text.lowercased()
            let heading = trimmed.hasPrefix("#") || Self.isTitle(at: index, in: all)
            if opening == nil, !parts.isEmpty, heading { opening = parts.count }
            if heading || DocumentShape.emailHeader(text) != nil
                || (lowered.hasPrefix("on ") && lowered.hasSuffix("wrote:")) || DocumentShape.replyOpenings.contains(where: lowered.contains) {
                part += 1
                continue
            }
            guard Self.isStatement(text), !Self.isTableRule(text), !DocumentShape.isGreeting(text) else { continue }
            let statement = Self.tableRow(at: index, in: all).map { RunExecutor.bare($0) } ?? RunExecutor.bare(text)
            guard !statement.isEmpty, !Self.isAttendance(statement) else { continue }
            let depth = trimmed.prefix { $0 == ">" || $0 == " " }.filter { $0 == ">" }.count
            let item = ["- ", "* ", "+ ", "|"].contains { text.hasPrefix($0) } || text.range(of: #"^\d{1,2}[.)] "#, options: .regularExpression) != nil
            let partKey = "\(part)/\(depth)/\(item)"
            if partKey != key { parts.append([]); key = partKey }
            parts[parts.count - 1].append(RetrievedLine(path: path, line: index + 1, text: statement, score: Self.structural))
        }
        // A form's opening fields ("Work order: WO-4471", "Date: …", "Client: …") say which
        // document it is: the first of them says so; the rest are no findings.
        // (A "Date:" field reads as a mail header and splits them: every part of fields before
        // the first finding counts.)
        if let opening, opening < parts.count, parts.prefix(opening).joined().allSatisfy({ DocumentShape.isField($0.text) }) {
            parts.replaceSubrange(0..<opening, with: [[parts[0][0]]])
        }
        // A decision leads its part.
        parts = parts.map { lines in
            guard let decision = lines.firstIndex(where: { line in Self.decisionOpenings.contains { line.text.lowercased().hasPrefix($0) } }) else { return lines }
            var lines = lines
            lines.insert(lines.remove(at: decision), at: 0)
            return lines
        }
        var order = Array(parts.indices)
        if parts.count > limit {
            let leads = parts.map { $0[0].text }
            order = RunExecutor.ranked(Array(parts.indices), sentences: leads, ignoring: []).prefix(limit).map(\.number).sorted()
        }
        var chosen: [RetrievedLine] = []
        var depth = 0
        while chosen.count < limit {
            let round = order.filter { parts[$0].count > depth }
            guard !round.isEmpty else { break }
            chosen += round.prefix(limit - chosen.count).map { parts[$0][depth] }
            depth += 1
        }
        return chosen.sorted { $0.line < $1.line }
    }

    /// The headings of `path` that carry a date ("## 4.3 (12 October 2026)" of release notes,
    /// "## Tuesday 3 March" of a diary): the things a request for the newest or the first of
    /// them compares. The document's title is none of them.
    func datedHeadings(in path: String) -> [RetrievedLine] {
        lines(of: path).enumerated().compactMap { index, line -> RetrievedLine? in
            guard line.hasPrefix("##") else { return nil }
            let text = RunExecutor.bare(line)
            guard Claims.extract(from: text).contains(where: { $0.kind == .date }) else { return nil }
            return RetrievedLine(path: path, line: index + 1, text: text, score: Self.structural)
        }
    }

    /// `names` ordered by how near each stands in `line` to a word of `terms` (in words; a name
    /// the line does not hold, or a line with none of the words, keeps its place).
    static func nearestFirst(_ names: [String], to terms: Set<String>, in line: String) -> [String] {
        let words = line.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        let at = words.indices.filter { !terms.isDisjoint(with: SearchTerms.terms(of: words[$0])) }
        guard !at.isEmpty else { return names }
        func distance(_ name: String) -> Int {
            let first = name.split(separator: " ").first.map(String.init) ?? name
            let own = words.indices.filter { words[$0].trimmingCharacters(in: .punctuationCharacters) == first }
            return own.flatMap { position in at.map { abs($0 - position) } }.min() ?? Int.max
        }
        return names.enumerated().sorted { (distance($0.element), $0.offset) < (distance($1.element), $1.offset) }.map(\.element)
    }

    /// How a line that records a decision opens.
    static let decisionOpenings = ["decided", "agreed", "resolved", "decision:", "we decided", "it was decided", "it was agreed"]

    /// "Present: …", "Apologies: …", "Minutes: Kit": who was at a meeting, not what it did.
    static func isAttendance(_ line: String) -> Bool {
        guard let colon = line.firstIndex(of: ":") else { return false }
        return ["present", "apologies", "attendees", "attending", "in attendance", "absent", "minutes", "minute taker", "chair", "chaired by"]
            .contains(line[..<colon].lowercased().trimmingCharacters(in: .whitespaces))
    }

    /// The lines of `path` that say who was at a meeting ("Present: …", "Attendees: …"; not
    /// the apologies of those who were not).
    func attendance(in path: String) -> [RetrievedLine] {
        lines(of: path).enumerated().compactMap { index, line -> RetrievedLine? in
            let text = RunExecutor.bare(line)
            guard let colon = text.firstIndex(of: ":"),
                  ["present", "attendees", "attending", "in attendance", "attended"].contains(text[..<colon].lowercased().trimmingCharacters(in: .whitespaces))
            else { return nil }
            return RetrievedLine(path: path, line: index + 1, text: text, score: Self.structural)
        }
    }

    /// A plain-text document's title line: short, no sentence's end, numbered ("1. Overall
    /// size") or in capitals ("TERMS OF HIRE"), after a blank line (or first) and before a line
    /// that is no title itself — so that "1. Call the vet" in a numbered list is an item.
    static func isTitle(at index: Int, in lines: [String]) -> Bool {
        func candidate(_ line: String) -> Bool {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let words = trimmed.split(separator: " ")
            guard !words.isEmpty, words.count <= 10, let last = trimmed.last, !".:;,!?".contains(last),
                  trimmed.contains(where: \.isLetter) else { return false }
            // (A letter's date, "7 July 2031", is no numbered title.)
            let numbered = words.count <= 6 && trimmed.range(of: #"^\d{1,2}(\.\d{1,2})*\.? +[A-Z]"#, options: .regularExpression) != nil
                && Claims.extract(from: trimmed).first?.kind != .date
            // ("TAMSWORTH JOINERY - SASH WINDOW REPAIR WORK ORDER": a letterhead in capitals may be longer.)
            let capitals = trimmed.filter(\.isLetter).allSatisfy(\.isUppercase) && trimmed.filter(\.isLetter).count >= 4
            return numbered || capitals
        }
        guard candidate(lines[index]) else { return false }
        let before = index == 0 || lines[index - 1].trimmingCharacters(in: .whitespaces).isEmpty
        guard before, let next = lines[(index + 1)...].first(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else { return false }
        return !candidate(next)
    }

    // MARK: A section the request names

    /// The lines of the section of a document the request names ("What's new in 4.3?" → the
    /// items under "## 4.3 (12 October 2026)"; "the action points from the minutes" → those
    /// under "## Action items"): the heading that shares the most of the request's topic words,
    /// with its document's title and file name counting for the rest, covering at least half of
    /// them and more than any other heading; the items, rows or statements under it up to the
    /// next heading of its level or above. Empty when no heading is named.
    func section(namedBy topic: Set<String>, limit: Int) -> [RetrievedLine] {
        guard !topic.isEmpty, let entries = try? workspace.list(".", recursive: true) else { return [] }
        var best: (path: String, index: Int, score: Int)?
        var tied = false
        for entry in entries where entry.kind == .file && !entry.path.hasSuffix("/summary.md") {
            guard let weight = WorkspaceSearch.weight(of: entry.path), weight == 1 else { continue }
            let all = lines(of: entry.path)
            let documentTerms = Self.documentTerms(entry.path, lines: all)
            for (index, line) in all.enumerated() where line.hasPrefix("##") {
                let heading = Self.headingTerms(line)
                let own = topic.intersection(heading)
                guard !own.isEmpty else { continue }
                let covered = own.union(topic.intersection(documentTerms))
                guard 2 * covered.count >= topic.count else { continue }
                let score = 2 * own.count + covered.count
                if score > best?.score ?? 0 { best = (entry.path, index, score); tied = false } else if score == best?.score { tied = true }
            }
        }
        guard let best, !tied else { return [] }
        let all = lines(of: best.path)
        let level = all[best.index].prefix { $0 == "#" }.count
        var result: [RetrievedLine] = []
        for number in (best.index + 1)..<all.count {
            let line = all[number]
            let hashes = line.prefix { $0 == "#" }.count
            if hashes > 0, hashes <= level { break }
            guard Self.isStatement(line), hashes == 0 else { continue }
            let text = Self.tableRow(at: number, in: all) ?? RunExecutor.bare(line)
            guard !text.isEmpty, !(line.trimmingCharacters(in: .whitespaces).hasPrefix("|") && Self.tableRow(at: number, in: all) == nil) else { continue }
            result.append(RetrievedLine(path: best.path, line: number + 1, text: text, score: Self.structural, heading: RunExecutor.bare(all[best.index])))
        }
        return Array(result.prefix(limit))
    }

    /// What people call a section in other words than its heading's, as search terms: minutes'
    /// "Action items" are "who agreed to do what", "the tasks", "the next steps"; "Present" is
    /// "who was there"; "Decisions" are "what was agreed"; a cast list is "who is playing".
    static let headingSynonyms: [String: Set<String>] = [
        "action": Set(SearchTerms.terms(of: "agreed agree task tasks todo follow-up next steps assigned who does what")),
        "present": Set(SearchTerms.terms(of: "attended attendees there came came")),
        "attendee": Set(SearchTerms.terms(of: "attended present there came")),
        "decision": Set(SearchTerms.terms(of: "decided agreed resolved")),
        "cast": Set(SearchTerms.terms(of: "actor actors playing plays role roles")),
        "change": Set(SearchTerms.terms(of: "new changed fixed")),
    ]

    /// The terms of heading `line`, with the words people use for such a section.
    static func headingTerms(_ line: String) -> Set<String> {
        let terms = Set(SearchTerms.terms(of: line))
        return terms.union(terms.flatMap { headingSynonyms[$0] ?? [] })
    }

    // MARK: Lists of quantities

    /// Whether `line` is a list item that opens with a quantity: "- 450 g white flour", "2. 3 eggs".
    static func isQuantityItem(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let marker = trimmed.range(of: #"^([-*+]|\d{1,3}[.)]) "#, options: .regularExpression) else { return false }
        return trimmed[marker.upperBound...].first?.isNumber == true
    }

    /// Every item of the list `line` belongs to that opens with a quantity, as the evidence
    /// reads them (an ingredients list, a parts list); empty when `line` is no such item. The
    /// list is the run of items around it, up to a blank line or a heading.
    func quantityItems(around line: RetrievedLine) -> [RetrievedLine] {
        let all = lines(of: line.path)
        let index = line.line - 1
        guard all.indices.contains(index), Self.isQuantityItem(all[index]) else { return [] }
        func inList(_ text: String) -> Bool {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("#")
        }
        var start = index, end = index
        while start > 0, inList(all[start - 1]) { start -= 1 }
        while end + 1 < all.count, inList(all[end + 1]) { end += 1 }
        return (start...end).filter { Self.isQuantityItem(all[$0]) }.map { number in
            RetrievedLine(path: line.path, line: number + 1, text: RunExecutor.bare(all[number]), score: Self.structural,
                          heading: Self.heading(above: number, in: all))
        }
    }

    /// The items of a list that each give a price ("Lamp options, from Hanne-Lis:" / "- brass
    /// desk lamp: 34 marks" / "- hire from the prop store: 12 marks a week"), around
    /// `line` — one of them, or the line that introduces them with a colon, which comes first;
    /// empty unless two items at least give one. The list runs up to a blank line or a heading.
    func pricedItems(around line: RetrievedLine) -> [RetrievedLine] {
        let all = lines(of: line.path)
        guard let run = listRun(around: line) else { return [] }
        let (lead, start, end) = (run.lead, run.items.lowerBound, run.items.upperBound)
        let list = (start...end).map { RunExecutor.SourcedLine(text: all[$0], source: nil) }
        let currencies = RunExecutor.currencyWords(in: list)
        let priced = (start...end).filter { number in
            RunExecutor.amounts(in: [RunExecutor.SourcedLine(text: all[number], source: nil)]).contains(where: \.isMoney)
                || !currencies.isDisjoint(with: all[number].lowercased().split(whereSeparator: { !$0.isLetter }).map(String.init))
        }
        guard priced.count >= 2, priced.count * 2 >= end - start + 1 else { return [] }
        // The introducing line goes first: it says what the items are (it holds no price to compare).
        return (lead.map { [$0] } ?? []) + priced.map { number in
            RetrievedLine(path: line.path, line: number + 1, text: RunExecutor.bare(all[number]), score: Self.structural,
                          heading: Self.heading(above: number, in: all))
        }
    }

    /// The list `line` belongs to: the line that introduces it with a colon ("Every stallholder
    /// must bring:"; the items start after it, past one blank line) or one of its items ("- a
    /// float of change;"), with the run of items around it. Nil when `line` is neither.
    func listRun(around line: RetrievedLine) -> (lead: RetrievedLine?, items: ClosedRange<Int>)? {
        let all = lines(of: line.path)
        var index = line.line - 1
        guard all.indices.contains(index) else { return nil }
        var lead: RetrievedLine?
        if !Self.isItem(all[index]) {
            // The introducing line: the list starts after it (past one blank line).
            guard all[index].trimmingCharacters(in: .whitespaces).hasSuffix(":") else { return nil }
            lead = RetrievedLine(path: line.path, line: index + 1, text: RunExecutor.bare(all[index]), score: Self.structural,
                                 heading: Self.heading(above: index, in: all))
            index += 1
            if index < all.count, all[index].trimmingCharacters(in: .whitespaces).isEmpty { index += 1 }
            guard index < all.count, Self.isItem(all[index]) else { return nil }
        }
        var start = index, end = index
        while start > 0, Self.isItem(all[start - 1]) { start -= 1 }
        while end + 1 < all.count, Self.isItem(all[end + 1]) { end += 1 }
        return (lead, start...end)
    }

    /// The items of the list a request's best lines are a list of, when it is introduced by a
    /// line ending in a colon ("Every stallholder must bring, and keep at the stall:") — a list in a
    /// document or a note, not a day's bullets. Empty when none of `lines` is such a list's.
    func introducedItems(around lines: [RetrievedLine]) -> [RetrievedLine] {
        for line in lines {
            guard let run = listRun(around: line), run.items.count >= 2 else { continue }
            let all = self.lines(of: line.path)
            var above = run.items.lowerBound - 1
            if above >= 0, all[above].trimmingCharacters(in: .whitespaces).isEmpty { above -= 1 }
            guard run.lead != nil || (above >= 0 && all[above].trimmingCharacters(in: .whitespaces).hasSuffix(":") && !Self.isItem(all[above])) else { continue }
            return run.items.map { number in
                RetrievedLine(path: line.path, line: number + 1, text: RunExecutor.bare(all[number]), score: Self.structural,
                              heading: Self.heading(above: number, in: all))
            }
        }
        return []
    }

    /// Whether `text` is an item of a Markdown list: "- …", "* …", "+ …", "1. …", "2) …".
    static func isItem(_ text: String) -> Bool { text.trimmingCharacters(in: .whitespaces).range(of: #"^([-*+]|\d{1,3}[.)]) "#, options: .regularExpression) != nil }

    // MARK: Two hops

    /// The names of `line` the question does not hold: "Lent my drill to Oskar Brandt" for
    /// "Where does the person I lent my drill to live?" brings in "Oskar Brandt".
    static func newNames(in line: String, question: String, ignoring: Set<String>) -> [String] {
        let asked = Set(SearchTerms.terms(of: question))
        return Claims.extract(from: AnswerEvidence.withoutPaths(line), ignoring: ignoring).filter { claim in
            claim.kind == .name && !SearchTerms.terms(of: claim.text).contains(where: asked.contains)
                && !DayWords.months.contains(claim.text.lowercased()) && !DayWords.weekdays.contains(claim.text.lowercased())
        }.map(\.text)
    }
}
