import Foundation
import LanguageModels

/// Lookup: one value of the kind asked for — a name, a date with its time, a number with its
/// unit, an email address, a phone number, a street address, a web address, a reason. The
/// engine offers only values of that kind from lines about what the question is about; the
/// model chooses among them; the answer quotes the line it came from (and, after two hops, the
/// line that led there). With no such value, the workspace does not say.
extension RunExecutor {
    /// "How many market days have I done so far?" where no line says "7 market days": the rows
    /// of the table the evidence put first (``RelayRunner.retrieve`` chose them), counted.
    func countedRows(question: String, lines: [SourcedLine]) -> String? {
        guard let counted = RequestRules.countedThing(question) else { return nil }
        // "86 adult, 64 under-18 and 19 family tickets": the counts of one thing's kinds, added.
        for line in lines.prefix(2) {
            for clause in line.text.components(separatedBy: CharacterSet(charactersIn: ";:.")) {
                // Words, without the commas that end them ("adult,"); "14,600" stays one number.
                let raw = clause.split(whereSeparator: \.isWhitespace).map(String.init).filter { $0 != "," }
                let tokens = raw.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
                guard let noun = tokens.lastIndex(where: { !counted.isDisjoint(with: SearchTerms.terms(of: $0)) }) else { continue }
                let numbers = tokens.indices.filter { $0 < noun && Int(tokens[$0]) != nil }
                // Each count with its kind between it and the next ("14 600 households" is one number).
                guard numbers.count >= 2, let last = numbers.last, noun - last <= 2,
                      zip(numbers, numbers.dropFirst()).allSatisfy({ $1 - $0 >= 2 }), last + 1 < noun || noun == last + 1 && numbers.count >= 2,
                      numbers.dropLast().allSatisfy({ tokens[$0 + 1].contains(where: \.isLetter) }),
                      // Listed: "86 adult, 64 under-18 and 19 family" — not "47 of 54 players".
                      numbers.dropFirst().allSatisfy({ raw[$0 - 1].hasSuffix(",") || ["and", "plus", "&"].contains(tokens[$0 - 1]) }) else { continue }
                let parts = numbers.map { index in tokens[index...(index == last ? noun : min(index + 1, noun))].joined(separator: " ") }
                let total = numbers.compactMap { Int(tokens[$0]) }.reduce(0, +)
                return "\(total) — " + parts.joined(separator: " + ") + (line.source.map { " (\($0))" } ?? "") + ", added by Relay's calculator"
            }
        }
        // A line that gives the count itself ("23 samples") answers as a value.
        for line in lines {
            let words = line.text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" }).map(String.init)
            if words.indices.dropLast().contains(where: { Double(words[$0]) != nil && !counted.isDisjoint(with: SearchTerms.terms(of: words[$0 + 1])) }) { return nil }
        }
        let path = { (line: SourcedLine) in line.source.map { String($0.prefix { $0 != ":" }) } }
        let chosen = structuralSources
        let rows = lines.filter { Self.cells(of: $0.text) != nil && chosen.contains($0.source ?? "") }
        guard rows.count >= 2, Set(rows.map(path)).count == 1, let first = rows.first?.source, let last = rows.last?.source else { return nil }
        return "\(rows.count) — the rows of the table (\(first) to \(last)), counted by Relay"
    }

    /// Whether `value` (a bare year) is written in `line` only inside a reference code: a token
    /// of letters and digits joined by hyphens ("CRT-2031-40217", "INV2031").
    static func isInsideReference(_ value: String, in line: String) -> Bool {
        guard value.count == 4, value.allSatisfy(\.isNumber) else { return false }
        let tokens = line.split(whereSeparator: { $0.isWhitespace || ",;:()".contains($0) })
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ".")) }.filter { $0.contains(value) }
        return !tokens.isEmpty && tokens.allSatisfy { $0 != value && ($0.contains(where: \.isLetter) || $0.filter { $0 == "-" }.count >= 2) }
    }

    /// Whether `name` stands in `line` only right after a number ("200 Ah", "3 GB").
    static func followsNumber(_ name: String, in line: String) -> Bool {
        let tokens = line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" }).map(String.init)
        let first = name.split(separator: " ").first.map(String.init) ?? name
        let at = tokens.indices.filter { tokens[$0].trimmingCharacters(in: .punctuationCharacters) == first }
        return !at.isEmpty && at.allSatisfy { $0 > 0 && tokens[$0 - 1].first?.isNumber == true && tokens[$0 - 1].last?.isNumber == true }
    }

    /// "Who's the conductor at the recital?" over a table with a "Conductor" column: the value of
    /// that column — of the row that speaks most of the rest of the question, leaving out rows
    /// where it is empty ("none", "-"). Nil when no header is named, or the rows named give
    /// several values.
    func cellAnswer(question: String, lines: [SourcedLine]) -> String? {
        let asked = Set(SearchTerms.terms(of: question))
        var seen: Set<String> = []
        let rows = lines.filter { seen.insert($0.source ?? $0.text).inserted }.prefix(12).compactMap { line in Self.cells(of: line.text).map { (line, $0) } }
        guard !rows.isEmpty else { return nil }
        let headers = Set(rows.flatMap { $0.1.map(\.header) })
        guard let header = headers.first(where: { header in
            let terms = Set(SearchTerms.terms(of: header)).subtracting(Support.askingWords)
            return !terms.isEmpty && terms.isSubset(of: asked)
        }) else { return nil }
        let empty: Set<String> = ["", "none", "-", "—", "n/a", "na", "no", "nil", "tbc", "tba"]
        let filled = rows.compactMap { row -> (SourcedLine, String)? in
            guard let value = row.1.first(where: { $0.header == header })?.value.trimmingCharacters(in: .whitespaces),
                  !empty.contains(value.lowercased()) else { return nil }
            return (row.0, value)
        }
        let rest = Support.topicTerms(of: question).subtracting(SearchTerms.terms(of: header))
        let scored = filled.map { ($0, rest.isEmpty ? 0 : Support.coverage(of: rest, in: $0.0.text)) }
        guard let best = scored.map(\.1).max() else { return nil }
        let top = scored.filter { $0.1 == best }.map(\.0)
        guard Set(top.map(\.1)).count == 1, let (line, value) = top.first else { return nil }
        return "\(value) — “\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
    }

    /// "Which version brought in night mode?": in release notes the version is the heading
    /// of the section the matching item is in ("## 3.2 (9 August 2027)"), not a value of its line.
    /// The first line handed on, of those under a heading that opens with a version number.
    func versionAnswer(question: String, lines: [SourcedLine]) -> String? {
        guard RequestRules.asksVersion(RequestRules.words(of: question).joined(separator: " ")) else { return nil }
        let evidence = Evidence(workspace: workspace)
        // The lines about what the release brought ("night theme"), not the notes' opening
        // that names the app.
        let topic = Support.topicTerms(of: question).subtracting(Support.nameTerms(of: question, ignoring: ignoredNames))
        for line in lines.filter({ Support.coverage(of: topic, in: $0.text) > 0 }).prefix(3) {
            guard let source = line.source, let colon = source.lastIndex(of: ":"), let number = Int(source[source.index(after: colon)...]) else { continue }
            let path = String(source[..<colon])
            guard let heading = Evidence.heading(above: number - 1, in: evidence.lines(of: path)),
                  let version = heading.range(of: #"^v?\d+(\.\d+)+"#, options: .regularExpression).map({ String(heading[$0]) }) else { continue }
            return "\(version) — “\(Self.clip(line.text))” (\(source)), under “\(heading)”"
        }
        return nil
    }

    func answerLookup(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, budget: Int, analysis: RequestAnalysis, lines: [SourcedLine],
                      restored: Bool, tally: inout Tally) async throws -> String {
        let question = evidenceQuestion
        if let gap = unsupported(by: lines) { return gap }
        guard !lines.isEmpty else { return notFound("no line of the workspace matches the request", closest: []) }
        // (Of every line found, not only those handed on: the agent before chose by the words of
        // the question, and a table row names its column only in its header, a release's item
        // its version only in its heading.)
        let found = (manifest.retrieved ?? []).map { SourcedLine(text: $0.text, source: "\($0.path):\($0.line)") }
        if let version = versionAnswer(question: question, lines: lines + found) { return version }
        if let cell = cellAnswer(question: question, lines: lines + found) { return cell }
        if let counted = countedRows(question: question, lines: lines) { return counted }
        let value = analysis.value ?? .phrase
        if value.isSpan {
            return try await answerSpan(step, agent: agent, part: part, budget: budget, value: value, lines: lines, question: question, restored: restored, tally: &tally)
        }
        if value == .reason, let line = lines.first {
            // A reason is a sentence, not a value: the line the previous agent put first.
            return "“\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
        }
        if value == .time, var found = spanOptions(.time, in: lines, question: question).first {
            let line = lines[found.line]
            if let hours = Self.hoursTime(asked: question, in: line.text) { found.text = hours }
            return "\(found.text) — “\(Self.quote(of: found.text, in: line.text))”" + (line.source.map { " (\($0))" } ?? "")
        }
        let earlier = manifest.previousExchange?.message
        let texts = lines.map(\.text)
        var fitting = AnswerCandidates.candidates(for: question, in: texts, ignoring: ignoredNames, previous: earlier,
                                                  limit: Self.answerChoices, fittingOnly: true, asked: value.asked)
        if [.person, .name].contains(value) {
            // "the Sunmark 120 Ah battery, fitted by Jorvik": a word right after a number is its unit.
            fitting = fitting.filter { candidate in !Self.followsNumber(candidate.text, in: lines[candidate.line].text) }
        }
        if value == .person {
            // "Who's putting the battery in?" — "… fitted by Jorvik": the one who did it is named after "by".
            let agents = fitting.filter { lines[$0.line].text.contains(" by " + $0.text) }
            fitting = agents + fitting.filter { candidate in !agents.contains(candidate) }
        }
        if value == .date {
            // "CRT-2031-40217, valid until 4 May 2035": a year inside a reference is no date.
            fitting = fitting.filter { candidate in !Self.isInsideReference(candidate.text, in: lines[candidate.line].text) }
            // "on Saturday 17 and Sunday 18 June 2028": a weekday alone is not the date its line gives.
            let dated = Set(fitting.filter { $0.text.contains(where: \.isNumber) }.map(\.line))
            fitting = fitting.filter { candidate in
                !(DayWords.weekdays.contains(candidate.text.lowercased()) && dated.contains(candidate.line))
            }
        }
        if value == .money {
            // An amount of money says so: a currency sign or word ("42 crowns", "kr 34.75", "€12"),
            // not a bare number ("the 26th").
            // With no amount said to be money, a bare number of a sentence about the question
            // ("the rent is 950 a month") still may be — an ordinal ("the 26th") is not.
            let money = fitting.filter(\.isMoney)
            let topic = Support.topicTerms(of: question)
            // (The line, not only the sentence: "Email from Bertil: the press is delayed. He's
            // knocked the price down to 455 marks" — a currency of the person's own is on no list.)
            // (Nor is a time of day, "10:00", or a date.)
            fitting = !money.isEmpty ? money : fitting.filter { candidate in
                candidate.text.last?.isNumber == true && !candidate.text.contains(":")
                    && !Claims.extract(from: candidate.text).contains(where: { $0.kind == .date })
                    && Support.coverage(of: topic, in: candidate.piece + " " + lines[candidate.line].text) >= 0.5
            }
        }
        if [.money, .number].contains(value) {
            // "How much does Ines get paid?": an amount from a line about Ines, not any amount.
            let named = Support.nameTerms(of: question, ignoring: ignoredNames)
            // (Or from the document named for it: "brill-ferry.html" for "the Brill ferry".)
            func about(_ line: SourcedLine) -> Set<String> {
                Set(SearchTerms.terms(of: line.text + " " + (line.source ?? "").replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "/", with: " ")))
            }
            if !named.isEmpty { fitting = fitting.filter { !named.isDisjoint(with: about(lines[$0.line])) } }
        }
        if fitting.isEmpty, value != .phrase {
            return notFound("the lines found hold no \(value.described.split(separator: " ").dropFirst().joined(separator: " ")) for it", closest: lines)
        }
        let ranked = fitting.isEmpty
            ? AnswerCandidates.candidates(for: question, in: texts, ignoring: ignoredNames, previous: earlier, limit: Self.answerChoices, asked: value.asked)
            : fitting
        guard !ranked.isEmpty else { return notFound("the lines found hold no value that answers it", closest: lines) }
        let candidates = AnswerCandidates.close(ranked)
        let index = try await chooseValue(step, agent: agent, part: part, budget: budget, options: candidates.map(\.text), restored: restored, tally: &tally)
        let chosen = candidates[index]
        let line = lines[chosen.line]
        var shown = chosen.text
        // "When …?": a date keeps the time written next to it ("19 November at 14:30").
        if [.date, .time].contains(value), let time = ValueSpans.time(after: chosen.text, in: line.text) {
            shown += time
        } else if value == .date, Claims.extract(from: chosen.piece).filter({ $0.kind == .date }).count == 1,
                  let time = ValueSpans.find(.time, in: chosen.piece).first, ValueSpans.find(.time, in: chosen.piece).count == 1 {
            // The one time of the sentence that gives the one date ("Thursday 4 June instead,
            // … with the dinner starting at 19:30").
            shown += " at " + time
        }
        if value == .place, let address = ValueSpans.find(.address, in: line.text).first(where: { $0.contains(chosen.text) }) {
            // "Where is my GP's surgery?": the street address the place name is part of.
            shown = address
        }
        if value == .person, let all = Self.coordinated(chosen.text, in: chosen.piece, ignoring: ignoredNames) {
            // "Who have I invited?" — "Saskia, Ines, Bram and Marek": every name of the list
            // the chosen one is in.
            shown = all
        }
        // The sentence the value was found in with the most evidence.
        let quoted = chosen.piece.contains(chosen.text) && line.text.contains(chosen.piece) ? chosen.piece : Self.quote(of: chosen.text, in: line.text)
        return "\(shown) — “\(Self.clip(quoted))”" + (line.source.map { " (\($0))" } ?? "") + via(line: chosen.line, in: lines)
    }

    /// The names joined with `name` by commas and "and" in `piece` ("Saskia, Ines, Bram and
    /// Marek"), as written; nil when `name` stands alone.
    static func coordinated(_ name: String, in piece: String, ignoring: Set<String>) -> String? {
        let bytes = Array(piece.utf8)
        let names = Claims.scan(piece, ignoring: ignoring).filter { $0.claim.kind == .name }
            .map { (start: $0.offset, end: min(bytes.count, $0.offset + $0.claim.text.utf8.count), text: $0.claim.text) }
        guard let index = names.firstIndex(where: { $0.text == name }) else { return nil }
        func joined(_ left: Int, _ right: Int) -> Bool {
            guard names[left].end <= names[right].start else { return false }
            let between = String(decoding: bytes[names[left].end..<names[right].start], as: UTF8.self)
            return [", ", " and ", ", and ", " & ", " or "].contains(between)
        }
        var first = index, last = index
        while first > 0, joined(first - 1, first) { first -= 1 }
        while last + 1 < names.count, joined(last, last + 1) { last += 1 }
        guard first < last else { return nil }
        return String(decoding: bytes[names[first].start..<names[last].end], as: UTF8.self)
    }

    /// An email address, phone number, web or street address: a span of that kind, whole, from
    /// a line about what the question is about (or a line a second hop found).
    private func answerSpan(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, budget: Int, value: ValueKind, lines: [SourcedLine],
                            question: String, restored: Bool, tally: inout Tally) async throws -> String {
        let options = spanOptions(value, in: lines, question: question)
        guard !options.isEmpty else {
            return notFound("the lines found hold no \(value.described.split(separator: " ").dropFirst().joined(separator: " ")) for it", closest: lines)
        }
        let offered = Array(options.prefix(Self.answerChoices))
        let index = try await chooseValue(step, agent: agent, part: part, budget: budget, options: offered.map(\.text), restored: restored, tally: &tally)
        let chosen = offered[index]
        let line = lines[chosen.line]
        return "\(chosen.text) — “\(Self.quote(of: chosen.text, in: line.text))”" + (line.source.map { " (\($0))" } ?? "") + via(line: chosen.line, in: lines)
    }

    /// The spans of `value` in `lines`, in the lines' order, from lines that share a word of
    /// what the question is about or came from a second hop (a line after the first that names
    /// who the first line named).
    func spanOptions(_ value: ValueKind, in lines: [SourcedLine], question: String) -> [(text: String, line: Int)] {
        let topic = Support.topicTerms(of: question)
        // A question that names its subject ("Saskia's email") is answered from lines about it; one
        // that only describes it ("the person I lent my drill to") also from lines about whom the
        // first line names (two hops).
        let namesItsSubject = Claims.extract(from: question, ignoring: ignoredNames).contains { $0.kind == .name }
        let hopNames = namesItsSubject ? [] : lines.first.map { Set(Evidence.newNames(in: $0.text, question: question, ignoring: ignoredNames).flatMap { SearchTerms.terms(of: $0) }) } ?? []
        var result: [(String, Int)] = []
        var seen: Set<String> = []
        for (index, line) in lines.enumerated() {
            let terms = Set(SearchTerms.terms(of: line.text))
            guard topic.isEmpty || !topic.isDisjoint(with: terms) || !hopNames.isDisjoint(with: terms) else { continue }
            for span in ValueSpans.find(value, in: line.text) where seen.insert(span).inserted { result.append((span, index)) }
        }
        return result
    }

    /// Opening hours: for "When does it close on Saturdays?" over "Monday to Friday 09:00 to
    /// 17:00 and Saturday 09:00 to 12:30", the end of the range after the day the question
    /// names (its start for "open"); nil when the line holds no range of times.
    static func hoursTime(asked question: String, in line: String) -> String? {
        let words = Set(RequestRules.words(of: question))
        let closing = !words.isDisjoint(with: ["close", "closes", "closing", "shut", "shuts", "finish", "finishes", "end", "ends", "until", "till"])
        let opening = !words.isDisjoint(with: ["open", "opens", "opening", "start", "starts", "begin", "begins"])
        guard closing || opening else { return nil }
        var text = Substring(line)
        let lowered = line.lowercased()
        // The part of the line from the day the question names.
        if let day = DayWords.weekdays.first(where: { words.contains($0) || words.contains($0 + "s") }), let at = lowered.range(of: day) {
            text = line[at.lowerBound...]
        }
        let range = try! NSRegularExpression(pattern: #"((?:[01]?\d|2[0-3])[:.][0-5]\d(?: ?[ap]\.?m\.?)?|(?:1[0-2]|0?[1-9]) ?[ap]\.?m\.?)\s*(?:to|until|till|–|-)\s*((?:[01]?\d|2[0-3])[:.][0-5]\d(?: ?[ap]\.?m\.?)?|(?:1[0-2]|0?[1-9]) ?[ap]\.?m\.?)"#,
                                             options: [.caseInsensitive])
        let piece = String(text)
        guard let match = range.firstMatch(in: piece, range: NSRange(piece.startIndex..., in: piece)),
              let span = Range(match.range(at: closing ? 2 : 1), in: piece) else { return nil }
        return String(piece[span])
    }

    /// "\nvia “…” (path:line)": the first line, when the answer came from another line that a
    /// name in the first one led to (two hops).
    private func via(line index: Int, in lines: [SourcedLine]) -> String {
        guard index > 0, let first = lines.first, !Evidence.newNames(in: first.text, question: evidenceQuestion, ignoring: ignoredNames).isEmpty,
              Evidence.newNames(in: first.text, question: evidenceQuestion, ignoring: ignoredNames).contains(where: { name in
                  !Set(SearchTerms.terms(of: name)).isDisjoint(with: SearchTerms.terms(of: lines[index].text)) }) else { return "" }
        return "\nvia “\(Self.clip(first.text, 160))”" + (first.source.map { " (\($0))" } ?? "")
    }
}
