import Foundation

/// Yes/no: the line that decides, and the verdict it gives. The model chooses the deciding line
/// among those about what the question asks; the engine reads its polarity — a negation, or a
/// task still open ("- [ ] pay the plumber" answers "Did I pay the plumber?" with no), says no;
/// a statement of it, or a task ticked off, says yes.
extension RunExecutor {
    func answerYesNo(_ step: Int, agent: AgentDefinition, analysis: RequestAnalysis, lines: [SourcedLine], restored: Bool,
                     tally: inout Tally) async throws -> String {
        let question = evidenceQuestion
        if let gap = unsupported(by: lines) { return gap }
        let topic = Support.topicTerms(of: question)
        let covered: [(index: Int, share: Double)] = lines.indices.map { ($0, Support.coverage(of: topic, in: lines[$0].text)) }
        var about: [Int] = covered.filter { $0.share >= 0.5 }.sorted { $0.share != $1.share ? $0.share > $1.share : $0.index < $1.index }.map(\.index)
        // "Did Anneke find …?": a line about someone else (a handbook's general rule) does not
        // decide what Anneke did — the lines that name her do, when there are any.
        let named = Claims.extract(from: question, ignoring: ignoredNames).filter { $0.kind == .name }.flatMap { SearchTerms.terms(of: $0.text) }
        if !named.isEmpty {
            let naming = about.filter { !Set(SearchTerms.terms(of: lines[$0].text)).isDisjoint(with: named) }
            if !naming.isEmpty { about = naming }
        }
        guard !about.isEmpty else { return notFound("no line found decides it", closest: lines) }
        let words = Set(RequestRules.words(of: manifest.requestLead))
        // "Have I paid the hardware shop yet?", "Has the parcel come yet?": what the person did,
        // and how things stand now, are in the person's dated notes — not in a document about
        // the thing (the invoice's letterhead, a handbook's rule), when a note speaks of it.
        if !words.isDisjoint(with: RequestRules.firstPerson) || !words.isDisjoint(with: Self.stillWords) {
            let own = about.filter { Self.day(of: lines[$0].source) != nil }
            if !own.isEmpty { about = own }
        }
        if !words.isDisjoint(with: Self.stillWords) {
            // "Is the boiler still broken?": how things stand now — the newest note about it
            // decides; one that says the state ended ("fixed the boiler") says no.
            let newest = about.max { (Self.day(of: lines[$0].source) ?? "") < (Self.day(of: lines[$1].source) ?? "") }!
            let line = lines[newest]
            if about.count > 1, !words.isDisjoint(with: ["still", "anymore"]), Self.day(of: line.source) != nil,
               Self.endsAState(line.text, asked: question) {
                return "No — “\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
            }
            // The newest note decides alone: offered older ones beside it, a 135M model as often
            // takes the older state.
            about = Self.day(of: line.source) != nil ? [newest] : [newest] + about.filter { $0 != newest }
        }
        let offered = Array(about.prefix(Self.answerChoices))
        let index = try await choose(step, agent: agent, options: offered.map { lines[$0].text }, question: "Which line decides the question?",
                                     context: "", restored: restored, tally: &tally)
        let line = lines[offered[index]]
        var verdict = Self.polarity(of: line.text, about: topic) ? "Yes" : "No"
        // "Has the extractor come yet?" — "it now comes on Friday 2 July": a day still to come says not yet.
        if verdict == "Yes", !words.isDisjoint(with: ["yet", "already"]), Self.laterThanToday(line.text, today: RelayRunner.today(manifest.localDate)) {
            verdict = "No"
        }
        // "Have I got the ladder back yet?" — "he needs it until the end of the month": a state
        // that lasts until a time says not yet.
        if verdict == "Yes", !words.isDisjoint(with: ["yet", "already"]), [" until ", " till ", " for another ", " for a few more "].contains(where: (" " + line.text.lowercased() + " ").contains) {
            verdict = "No"
        }
        // "Is the dry dock still on 10 April?" — "moved to Tuesday 18 April": a line that gives the
        // thing another day, and not the one asked, says no.
        if verdict == "Yes", Self.givesAnotherDay(line.text, than: question, today: RelayRunner.today(manifest.localDate)) { verdict = "No" }
        return "\(verdict) — “\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
    }

    /// Whether `line` gives days, none of them the one `question` names.
    static func givesAnotherDay(_ line: String, than question: String, today: String) -> Bool {
        func days(_ text: String) -> Set<String> {
            Set(Claims.extract(from: text).compactMap { $0.kind == .date ? DayWords.parse($0.text, today: today).map(DayWords.string) : nil })
        }
        // "ready on Thursday 5 October instead of the 28th": the 28th is the day it no longer is.
        var current = line
        for marker in replacedMarkers {
            while let at = current.range(of: marker, options: .caseInsensitive) {
                let rest = current[at.upperBound...]
                let end = rest.firstIndex(where: { ",;.:)".contains($0) }) ?? rest.endIndex
                current.removeSubrange(at.lowerBound..<end)
            }
        }
        let asked = days(question), given = days(current)
        if asked.isEmpty {
            // "Is it still on the 28th?": a day of the month alone, against the days the line gives.
            func ordinals(_ text: String) -> Set<Int> {
                let regex = try! NSRegularExpression(pattern: #"\bthe (\d{1,2})(?:st|nd|rd|th)\b"#, options: [.caseInsensitive])
                return Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
                    Range(match.range(at: 1), in: text).flatMap { Int(text[$0]) }
                })
            }
            let dayOfMonth = ordinals(question)
            let givenDays = Set(given.compactMap { Int($0.suffix(2)) }).union(ordinals(current))
            return !dayOfMonth.isEmpty && !given.isEmpty && dayOfMonth.isDisjoint(with: givenDays)
        }
        return !given.isEmpty && asked.isDisjoint(with: given)
    }

    /// Words before a day that a line says was replaced: "instead of the 28th", "moved from 10 April".
    static let replacedMarkers = ["instead of ", "rather than ", "moved from ", "put back from ", "brought forward from ", "changed from ", "no longer "]

    /// Whether `line` gives a day after `today` (as `yyyy-MM-dd`).
    static func laterThanToday(_ line: String, today: String) -> Bool {
        guard let now = DayWords.date(today) else { return false }
        return Claims.extract(from: line).contains { claim in
            claim.kind == .date && (DayWords.parse(claim.text, today: today).map { $0 > now } ?? false)
        }
    }

    /// Words that make a line deny what it speaks of. Why each: plain negations; "forgot",
    /// "missed", "cancelled", "postponed", "delayed" and "not yet" deny that a thing was done; an open task
    /// marker says it is still to do.
    static let negations: [String] = [
        " not ", "n't ", " never ", " no ", " none ", " nobody ", " nothing ", " forgot ", " forgotten ", " missed ", " cancelled ",
        " canceled ", " postponed ", " delayed ", " held up ", " not yet ", " failed to ", " unable to ", " without ",
    ]

    /// Words of a question about how things stand now.
    static let stillWords: Set<String> = ["still", "anymore", "now", "yet", "again", "currently"]
    /// Words of a line saying a state has ended: a thing broken is fixed, a thing lent is back,
    /// a bill owed is paid, a thing lost is found.
    static let endedWords: Set<String> = Set(SearchTerms.terms(of: """
        fixed repaired mended working resolved solved sorted replaced returned back found paid settled closed cancelled finished done         recovered healed delivered arrived collected
        """))

    /// Whether `line` says the state asked about ended: a word of ``endedWords`` the question
    /// itself does not use ("fixed" for "still broken?"; "paid" for "Have I paid …?" affirms).
    static func endsAState(_ line: String, asked question: String) -> Bool {
        !Set(SearchTerms.terms(of: line)).intersection(endedWords).subtracting(SearchTerms.terms(of: question)).isEmpty
    }

    /// The day of a dated note, from its path ("Journal/user/2027-02-04.md").
    static func day(of source: String?) -> String? {
        guard let source, let range = source.range(of: #"\d{4}-\d{2}-\d{2}"#, options: .regularExpression) else { return nil }
        return String(source[range])
    }

    /// Whether `line` affirms what it speaks of as far as `topic` goes: a negation counts only in
    /// a clause that holds a word of the topic. "Hive 3: eggs at last, so it's queenright again
    /// and I didn't need to buy a queen" affirms "Is hive 3 queenright?" (the "didn't" is of
    /// another errand); "Anneke came to inspect: no sign of mildew" denies "Did Anneke find
    /// mildew?". A task marker speaks for the whole line.
    static func polarity(of line: String, about topic: Set<String>) -> Bool {
        if Evidence.doneTaskMarkers.contains(where: { line.contains($0) }) || Evidence.isOpenTask(line) || topic.isEmpty { return polarity(of: line) }
        let separators = [";", ",", ":", ". ", " but ", " and ", " so ", " because ", " although ", " though ", " while "]
        var clauses = [line]
        for separator in separators { clauses = clauses.flatMap { $0.components(separatedBy: separator) } }
        let about = clauses.filter { !Set(SearchTerms.terms(of: $0)).isDisjoint(with: topic) }
        return about.isEmpty ? polarity(of: line) : about.allSatisfy { polarity(of: $0) }
    }

    /// Whether `line` affirms what it speaks of.
    static func polarity(of line: String) -> Bool {
        if Evidence.doneTaskMarkers.contains(where: { line.contains($0) }) { return true }
        if Evidence.isOpenTask(line) { return false }
        let lowered = " " + line.lowercased().replacingOccurrences(of: "’", with: "'") + " "
        let spaced = lowered.map { $0.isLetter || $0 == "'" ? String($0) : " " }.joined()
        // "The lane was too muddy": "too" before a word says it could not be (not "came too,").
        if lowered.range(of: #" too (much |many |far |late |early |deep |high |low |small |big |short |long |busy |expensive |dear |tight |wet |cold |hot |full |heavy |[a-z]+ to )"#, options: .regularExpression) != nil { return false }
        return !negations.contains { spaced.contains($0) || lowered.contains($0) }
    }
}
