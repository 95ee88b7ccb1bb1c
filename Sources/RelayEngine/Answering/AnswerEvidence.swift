import Foundation

/// How strongly a workspace line — and a value in it — answers a one-fact question, so the
/// engine can put the line that holds the answer first instead of the line that merely names
/// what the question is about.
///
/// BM25 ranks "Harbin Motors announces the Vanta 2" above "…said Rhea Castell,
/// chief executive of Harbin Motors" for "Who is the chief executive of Harbin
/// Motors?" when the title is short: every line about the subject shares the subject's words.
/// Evidence counts instead what sits in the same sentence as a value of the kind asked for:
///
/// - the question's words, each weighted by how rare it is among the lines found (a word every
///   found line has — the subject — says little), the words of names the question holds at half
///   weight, and a previous message's words (a follow-up's topic) at a third;
/// - for "how many boxes", the counted noun right after the number ("12 boxes");
/// - for a question about money, distance, time or weight, a unit after the number ("27,900
///   euros", "12.5 km");
/// - a one-word name that opens its sentence ("Walked along the canal") counts half: a capital
///   there says nothing.
///
/// Everything here is a pure function of its arguments.
struct AnswerEvidence {
    let asked: AnswerCandidates.Asked
    /// Each query term and its factor (1 for the question's words, less for names and the previous message).
    let factors: [String: Double]
    /// "How many roof tiles …" → ["roof", "tile"].
    let counted: [String]
    /// Lowercase words a number of the asked kind comes with ("euros", "km").
    let units: Set<String>
    let ignoring: Set<String>
    /// "Where …?": a place, a name after "in", "at", "near".
    let placeAsked: Bool
    /// "Who …?": a person.
    let personAsked: Bool
    /// Whether the question is about a message itself (``mailWords``).
    let asksAboutMail: Bool
    /// Whether it asks how things stand after a change (``nowWords``).
    let asksWhatChanged: Bool
    /// "What protocol …?", "Which cafe …?": the noun after the question word, its stem.
    let askedNoun: String?
    /// The terms of the names the question holds ("Westgate" in "Who am I painting the Westgate
    /// shed with?"): what it is about.
    let nameTerms: Set<String>
    /// Names the lines judged together write inside a sentence ("ask Rufus for the smoker
    /// back"): a name of theirs that opens a sentence ("Rufus borrowed my spare smoker") is a
    /// name all the same, not a capitalised first word.
    var knownNames: Set<String> = []

    /// The factor of a previous message's words, and of the words of a name the question holds.
    static let previousFactor = 1.0 / 3
    static let nameFactor = 0.5
    /// Words that name what is asked rather than what it is about ("What is my sister's
    /// *name*?", "What is our plot *number*?"): the answer's sentence seldom repeats them.
    static let slotWords: Set<String> = ["nam", "call", "number", "dat", "amount", "figure", "valu", "mean", "stand"]
    static let slotFactor = 0.25
    /// A pool of lines counts as at least this many for the rarity of a word, so that among
    /// three lines a word in two of them still counts.
    static let smallestPool = 12.0

    /// - parameter asked: what the request's analysis says is asked for (``ValueKind/asked``);
    ///   nil: read from the question's words.
    init(question: String, previous: String? = nil, ignoring: Set<String> = [], asked: AnswerCandidates.Asked? = nil) {
        self.asked = asked ?? AnswerCandidates.asked(by: question)
        self.ignoring = ignoring
        var factors: [String: Double] = [:]
        for term in previous.map({ SearchTerms.terms(of: $0) }) ?? [] { factors[term] = Self.previousFactor }
        let nameTerms = Set(Claims.extract(from: question, ignoring: ignoring).filter { $0.kind == .name }.flatMap { SearchTerms.terms(of: $0.text) })
        self.nameTerms = nameTerms.intersection(SearchTerms.terms(of: question))
        for term in SearchTerms.terms(of: question) {
            factors[term] = Self.slotWords.contains(term) ? Self.slotFactor : nameTerms.contains(term) ? Self.nameFactor : 1
        }
        self.factors = factors
        counted = Self.countedNoun(in: question)
        let words = question.lowercased().split { !$0.isLetter }.map(String.init)
        placeAsked = words.contains("where")
        personAsked = words.contains("who") || words.contains("whom") || words.contains("whose")
        askedNoun = words.indices.first { ["what", "which"].contains(words[$0]) && $0 + 1 < words.count }
            .flatMap { SearchTerms.terms(of: words[$0 + 1]).first }
        units = self.asked == .number ? Self.units(for: question) : []
        asksAboutMail = !Set(words).isDisjoint(with: Self.mailWords)
        asksWhatChanged = !Set(words).isDisjoint(with: Self.nowWords)
    }

    /// Words of a question about how things stand after a change ("When is the dinner *now*?"),
    /// or about what is coming ("When is the *next* meeting?": if it moved, where it moved to).
    static let nowWords: Set<String> = ["now", "currently", "new", "anymore", "moved", "changed", "rescheduled", "postponed", "next", "upcoming"]
    /// Words of a sentence that gives what replaced something ("I can offer you Friday 27
    /// November *instead*", "the meeting *moves to* Tuesday"): for such a question its value
    /// is the answer, not the one it replaced.
    static let changeWords = ["instead", "moved to", "moves to", "move to", "moving to", "moved it to", "moved them to", "put it back to", "changed to", "changes to", "rescheduled",
                              "postponed", "brought forward", "new date", "new time", "now on", "now at", "now in", "has moved", "is now", "are now"]
    /// Words of a question about a message itself ("When did Saskia write?"): only then does a
    /// mail header's date or name answer it — a header says when a message was sent, not when
    /// the dinner it is about takes place.
    static let mailWords: Set<String> = ["sent", "send", "wrote", "write", "written", "email", "emailed", "mail", "mailed", "message",
                                         "reply", "replied", "received", "letter", "subject"]

    /// The weight of each query term among `pool` (the lines found): BM25's inverse document
    /// frequency within them, times the term's factor.
    func weights(among pool: [String]) -> [String: Double] {
        var frequency: [String: Int] = [:]
        for line in pool {
            for term in Set(SearchTerms.terms(of: line)) where factors[term] != nil { frequency[term, default: 0] += 1 }
        }
        let count = max(Double(pool.count), Self.smallestPool)
        return factors.reduce(into: [:]) { result, entry in
            let df = Double(frequency[entry.key] ?? 0)
            result[entry.key] = entry.value * log(1 + (count - df + 0.5) / (df + 0.5))
        }
    }

    /// The pieces of a line a fact lives in: a knowledge line's " · " parts, then sentences.
    static func pieces(of line: String) -> [String] {
        pieceTexts(of: line).map(withoutPaths)
    }

    /// A path names where a fact is, not the fact: its words are no evidence
    /// ("3 messages in Chats/what-is-our-parking-space-number.md").
    static func withoutPaths(_ text: String) -> String {
        guard text.contains("/") else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { $0.contains("/") ? "" : String($0) }.joined(separator: " ")
    }

    private static func pieceTexts(of line: String) -> [String] {
        var text = line
        if text.hasPrefix("["), let colon = text.range(of: "): ") { text = String(text[colon.upperBound...]) }
        let pieces = text.components(separatedBy: " · ").flatMap { Sentences.split($0) }
        return pieces.isEmpty ? [text] : pieces
    }

    /// A value of a line, with its evidence.
    struct Value {
        var claim: Claim
        /// As the answer gives it: with the words that say what a number counts ("12 boxes",
        /// "3.5 million euros") and the start of a date range ("21 to 24 January 2027"), verbatim.
        var shown: String
        var fits: Bool
        var evidence: Double
        /// The sentence (or knowledge-line part) it is in: what an answer quotes.
        var piece: String = ""
    }

    /// The values of `line` (numbers, dates, names; the question's own and paths left out),
    /// each with its evidence under `weights`, in the line's order.
    func values(in line: String, weights: [String: Double]) -> [Value] {
        var result: [Value] = []
        let questionTerms = Set(factors.filter { $0.value >= Self.nameFactor }.keys)
        let pieces = Self.pieces(of: line)
        let lineTerms = Set(pieces.flatMap { SearchTerms.terms(of: $0) })
        for piece in pieces {
            let pieceTerms = Set(SearchTerms.terms(of: piece))
            let metadata = !asksAboutMail && DocumentShape.emailHeader(piece.trimmingCharacters(in: .whitespaces)) != nil
            let loweredPiece = piece.lowercased()
            let replacing = asksWhatChanged && Self.changeWords.contains { loweredPiece.contains($0) }
            let bytes = Array(piece.utf8)
            let clause = DocumentShape.clauseNumber(piece)
            for found in Claims.scan(piece, ignoring: ignoring) {
                var claim = found.claim
                var offset = found.offset
                // A clause's number ("3.1 You pay …") says where, not how much.
                if let clause, claim.kind == .number, claim.text == clause { continue }
                if claim.kind == .name {
                    // "Tova Lind Office Manager" for "Who is the Office Manager?": the
                    // question's words at either end of a name are what it asks about, not the answer.
                    // Only when a name of two words or more is left: "Corbel Travel" stays whole
                    // for "Which travel agency …?".
                    var words = claim.text.split(separator: " ").map(String.init)
                    var start = offset
                    let asks = { (word: String) in SearchTerms.terms(of: word).contains(where: questionTerms.contains) }
                    while let first = words.first, asks(first) { start += first.utf8.count + 1; words.removeFirst() }
                    while let last = words.last, asks(last) { words.removeLast() }
                    if words.count >= 2 {
                        claim.text = words.joined(separator: " ")
                        offset = start
                    }
                }
                let claimTerms = Set(SearchTerms.terms(of: claim.text))
                if !claimTerms.isEmpty, claimTerms.isSubset(of: questionTerms) { continue }
                // The words of its own sentence, and at half those of the rest of the line (a
                // knowledge line's other facts, a paragraph's other sentences: its subject).
                var evidence = pieceTerms.subtracting(claimTerms).reduce(0) { $0 + (weights[$1] ?? 0) }
                if replacing { evidence += (weights.values.max() ?? 0) + 1 }
                evidence += lineTerms.subtracting(pieceTerms).subtracting(claimTerms).reduce(0) { $0 + (weights[$1] ?? 0) } / 2
                var shown = claim.text
                if claim.kind == .number || claim.kind == .date {
                    let end = min(bytes.count, offset + claim.text.utf8.count)
                    let after = String(decoding: bytes[end...].prefix(48), as: UTF8.self)
                    // "3.5 million euros", "12 boxes": the words that say what the number counts.
                    let words = after.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(after.hasPrefix(" ") ? 1 : 0)
                        .prefix(2).map { $0.trimmingCharacters(in: .punctuationCharacters) }
                    var said: [String] = []
                    for word in words {
                        let lowered = word.lowercased()
                        if said.isEmpty, Self.magnitudes.contains(lowered) { said.append(word); continue }
                        guard Self.anyUnit.contains(lowered) || SearchTerms.terms(of: lowered).contains(where: counted.contains)
                                || (said.isEmpty && Self.isCurrency(lowered, after: claim.text)) else { break }
                        said.append(word)
                    }
                    let unitWord = said.last.map { !Self.magnitudes.contains($0.lowercased()) } ?? false
                    if counted.contains(where: SearchTerms.terms(of: after).prefix(3).contains) {
                        evidence += counted.reduce(0) { $0 + (weights[$1] ?? 0) } + 1
                    }
                    let wordBefore = String(decoding: bytes[..<min(offset, bytes.count)].suffix(8), as: UTF8.self)
                        .split(separator: " ").last.map { $0.lowercased().trimmingCharacters(in: .punctuationCharacters) } ?? ""
                    let currencyBefore = Self.moneyBefore.contains(wordBefore) && offset > 0 && bytes[offset - 1] == UInt8(ascii: " ")
                    let symbol = (claim.text.first.map { "€$£¥".contains($0) } ?? false) || currencyBefore
                    if !units.isEmpty, symbol || (unitWord && units.contains(said.last?.lowercased() ?? "")) { evidence += (weights.values.max() ?? 0) + 1 }
                    if unitWord { shown += " " + said.joined(separator: " ") }
                    // "2 hours 10 minutes", "1 hour and 58 minutes": a duration in two units is one value.
                    if unitWord, Self.duration.contains(said.last?.lowercased() ?? ""),
                       let more = after.range(of: #"^\s*\S+\s+(and\s+)?\d+\s+(minutes?|mins?|seconds?|hours?|days?|weeks?)\b"#, options: [.regularExpression, .caseInsensitive]) {
                        let rest = after[more].split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")
                        shown += " " + rest
                    }
                    if currencyBefore, !unitWord, let original = String(decoding: bytes[..<offset], as: UTF8.self).split(separator: " ").last {
                        shown = original.trimmingCharacters(in: .punctuationCharacters) + " " + shown
                    }
                    if claim.kind == .date || unitWord, let start = Self.rangeStart(before: offset, in: bytes) { shown = start + shown }
                    // "Tuesday 13 July": the weekday before a calendar date is part of it.
                    if claim.kind == .date, let weekday = String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self)
                        .split(separator: " ").last.map({ $0.trimmingCharacters(in: .punctuationCharacters) }),
                       Self.weekdayNames.contains(weekday.lowercased()), weekday.first?.isUppercase == true, !shown.hasPrefix(weekday) {
                        shown = weekday + " " + shown
                        // "Saturday 17 and Sunday 18 June": two days, each with its weekday.
                        let head = String(decoding: bytes[..<min(offset, bytes.count)], as: UTF8.self)
                        let weekdayAt = String(head.reversed().drop(while: { $0 == " " || $0 == "," }).reversed()).utf8.count - weekday.utf8.count
                        if weekdayAt > 0, let start = Self.rangeStart(before: weekdayAt, in: bytes) {
                            let ahead = String(decoding: bytes[..<max(0, weekdayAt - start.utf8.count)], as: UTF8.self)
                                .split(separator: " ").last.map { $0.trimmingCharacters(in: .punctuationCharacters) }
                            shown = (ahead.map { Self.weekdayNames.contains($0.lowercased()) ? $0 + " " : "" } ?? "") + start + shown
                        }
                    }
                    // "minus 41 degrees": the sign is part of the value.
                    let before = String(decoding: bytes[..<min(offset, bytes.count)].suffix(9), as: UTF8.self).lowercased()
                    if claim.kind == .number, before.hasSuffix("minus ") || before.hasSuffix("negative ") { shown = (before.hasSuffix("minus ") ? "minus " : "negative ") + shown }
                }
                if claim.kind == .name {
                    let before = String(decoding: bytes[..<min(offset, bytes.count)].suffix(12), as: UTF8.self).lowercased()
                    let after = String(decoding: bytes[min(bytes.count, offset + claim.text.utf8.count)...].prefix(24), as: UTF8.self)
                    // "Where …?": a name after "in", "at", "near" is a place.
                    let afterPlaceWord = ["in ", "at ", "near ", "to ", "from ", "outside "].contains(where: { before.hasSuffix(" " + $0) || before == $0 })
                        || before.hasSuffix("village of ") || before.hasSuffix("town of ") || before.hasSuffix("city of ")
                    if placeAsked, afterPlaceWord { evidence += (weights.values.max() ?? 0) + 1 }
                    // "Who …?": a place is not a person ("my aunt Marit grew up in the town of Eskdale").
                    if personAsked, afterPlaceWord { evidence /= 2 }
                    // "What protocol …?": the name right before or after the noun asked for ("the Parcelnet protocol").
                    // ("Corbel Travel" for "Which travel agency …?": the noun is the name's own last word.)
                    if let noun = askedNoun, SearchTerms.terms(of: after).prefix(1).contains(noun) || SearchTerms.terms(of: before).suffix(1).contains(noun)
                        || (claim.text.contains(" ") && SearchTerms.terms(of: claim.text).last == noun) {
                        evidence += (weights.values.max() ?? 0) + 1
                    }
                    if !claim.text.contains(" "), Self.opensSentence(offset, in: bytes), !knownNames.contains(claim.text) { evidence *= 0.5 }
                }
                result.append(Value(claim: claim, shown: shown, fits: fits(claim) && !metadata && !(personAsked && Self.notAPerson(claim, offset: offset, in: bytes)),
                                    evidence: evidence, piece: piece))
            }
            if asked == .number, !counted.isEmpty { result += spelledCounts(in: piece, pieceTerms: pieceTerms, weights: weights) }
            if asked == .date { result += weekdays(in: piece, pieceTerms: pieceTerms, weights: weights) }
        }
        return result
    }

    /// "fifteen members" for "How many members …?": a count written in words, followed by
    /// the counted noun (a claim for no check — words are not checked — but an answer).
    func spelledCounts(in piece: String, pieceTerms: Set<String>, weights: [String: Double]) -> [Value] {
        let words = piece.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters) }
        var result: [Value] = []
        for (index, word) in words.enumerated() where index + 1 < words.count {
            let parts = word.lowercased().split(separator: "-").map(String.init)
            guard !parts.isEmpty, parts.allSatisfy(Self.numberWords.contains),
                  SearchTerms.terms(of: words[index + 1]).contains(where: counted.contains) else { continue }
            let shown = word + " " + words[index + 1]
            let evidence = pieceTerms.subtracting(counted).reduce(0) { $0 + (weights[$1] ?? 0) } + counted.reduce(0) { $0 + (weights[$1] ?? 0) } + 1
            result.append(Value(claim: Claim(kind: .number, text: word), shown: shown, fits: true, evidence: evidence, piece: piece))
        }
        return result
    }

    /// "on Friday at 9" for "When does the plumber come?": a weekday (with the time after it, if
    /// any) is a date a note gives without a calendar date.
    func weekdays(in piece: String, pieceTerms: Set<String>, weights: [String: Double]) -> [Value] {
        let words = piece.split(separator: " ").map(String.init)
        var result: [Value] = []
        for (index, raw) in words.enumerated() {
            let word = raw.trimmingCharacters(in: .punctuationCharacters)
            guard Self.weekdayNames.contains(word.lowercased()), word.first?.isUppercase == true else { continue }
            // "Tuesday 13 July": a calendar date follows, and is the value (with its weekday).
            if index + 1 < words.count, words[index + 1].first?.isNumber == true, !raw.hasSuffix("."),
               Claims.extract(from: words[(index + 1)...].prefix(3).joined(separator: " ")).first?.kind == .date { continue }
            var shown = word
            if !raw.hasSuffix(","), !raw.hasSuffix("."), index + 2 < words.count, words[index + 1] == "at",
               let time = words[index + 2].trimmingCharacters(in: .punctuationCharacters).nilIfEmpty, time.first?.isNumber == true {
                shown += " at " + time
            }
            // A calendar date in the same sentence comes first.
            let evidence = pieceTerms.reduce(0) { $0 + (weights[$1] ?? 0) } * 0.9
            result.append(Value(claim: Claim(kind: .date, text: word), shown: shown, fits: true, evidence: evidence, piece: piece))
        }
        return result
    }

    static let weekdayNames: Set<String> = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    static let numberWords: Set<String> = [
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen",
        "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
        "ninety", "hundred", "thousand", "dozen",
    ]

    /// How strongly `line` answers: its best value of the asked kind's evidence; for a question
    /// that asks for no value, its best piece's words (a reason's only if it gives one, with
    /// "because", "so that"…); a line without what is asked for counts half and comes after.
    func evidence(of line: String, weights: [String: Double]) -> (fits: Bool, evidence: Double) {
        // A line that holds none of the names the question is about answers it only by chance
        // ("Ines's partner is Teodor Brask, who paints boats" for "Who am I painting
        // the Westgate shed with?": one shared verb): it counts half.
        let offTopic = !nameTerms.isEmpty && nameTerms.isDisjoint(with: SearchTerms.terms(of: Self.withoutPaths(line)))
        let judged = topicalEvidence(of: line, weights: weights)
        return offTopic ? (judged.fits, judged.evidence / 2) : judged
    }

    private func topicalEvidence(of line: String, weights: [String: Double]) -> (fits: Bool, evidence: Double) {
        if asked != .any, asked != .reason, let best = values(in: line, weights: weights).filter(\.fits).map(\.evidence).max() {
            return (true, best)
        }
        let words = Self.pieces(of: line).map { Set(SearchTerms.terms(of: $0)).reduce(0) { $0 + (weights[$1] ?? 0) } }.max() ?? 0
        let fits = asked == .any || (asked == .reason && AnswerCandidates.givesReason(line))
        return (fits, fits ? words : words / 2)
    }

    /// `lines` (found by BM25, best first) ordered by how strongly they answer, times their
    /// file's weight (an agent's journal a quarter, a chat half); the first `keep`. Lines holding
    /// what is asked for come first; ties keep BM25's order.
    func rerank(_ lines: [RetrievedLine], keep: Int) -> [RetrievedLine] {
        let weights = weights(among: lines.map(\.text))
        var judge = self
        judge.knownNames = Self.namesInsideSentences(lines.map(\.text), ignoring: ignoring)
        let judgedLines = lines.enumerated().map { item -> (Int, RetrievedLine, (fits: Bool, evidence: Double)) in
            var judged = judge.evidence(of: item.element.text, weights: weights)
            judged.evidence *= WorkspaceSearch.weight(of: item.element.path) ?? 1
            return (item.offset, item.element, judged)
        }
        // A thread's earlier message is superseded where the newer message of the same file holds
        // a value of the kind asked ("we can do Thursday 4 June instead" over the quoted
        // "your booking … on Friday 20 November"): it ranks after every line that does.
        let answeredAnew = Set(judgedLines.filter { $0.2.fits && $0.1.quoted != true }.map(\.1.path))
        let superseded = { (line: RetrievedLine) in line.quoted == true && answeredAnew.contains(line.path) }
        let scored = judgedLines.map { item in
            superseded(item.1) ? (item.0, item.1, (fits: false, evidence: item.2.evidence)) : item
        }
        let ranked = scored.sorted { left, right in
            if left.2.fits != right.2.fits { return left.2.fits }
            if abs(left.2.evidence - right.2.evidence) > 1e-9 { return left.2.evidence > right.2.evidence }
            return left.0 < right.0
        }.map(\.1)
        // A summary repeats its document's sentences, and context.md's knowledge line repeats the
        // summary's: a line that says nothing the lines before it did is left out.
        var kept: [RetrievedLine] = []
        var said: Set<String> = []
        for line in ranked where kept.count < keep {
            let pieces = Self.pieces(of: line.text).map { $0.trimmingCharacters(in: .whitespaces) }
            guard !pieces.allSatisfy(said.contains) else { continue }
            said.formUnion(pieces)
            kept.append(line)
        }
        return kept
    }

    /// "21 to " before "24 January 2027", "30 to " before "60 seconds": the range's start, as written.
    static func rangeStart(before offset: Int, in bytes: [UInt8]) -> String? {
        let before = String(decoding: bytes[..<min(offset, bytes.count)].suffix(16), as: UTF8.self)
        for joiner in [" to ", "–", "-", " – ", " and "] where before.hasSuffix(joiner) {
            let head = before.dropLast(joiner.count)
            let digits = head.reversed().prefix { $0.isNumber || $0 == "," || $0 == "." }
            guard (1...9).contains(digits.count), digits.last?.isNumber == true, digits.first?.isNumber == true,
                  head.dropLast(digits.count).last.map({ !$0.isLetter && !$0.isNumber }) ?? true else { continue }
            return String(digits.reversed()) + joiner
        }
        return nil
    }

    /// Every unit a number is given with, whatever the question asked.
    static let anyUnit: Set<String> = money.union(distance).union(duration).union(weight).union(size).union(["degrees", "percent", "mhz", "ghz", "kwh", "litres", "liters"])
        // Engineering units of a job sheet or a spec: "68 Nm", "11.4 bar", "75 kW".
        .union(["nm", "bar", "psi", "kpa", "kw", "hp", "bhp", "rpm", "ah", "mah", "volts", "watts", "amps", "mph", "kph"])

    /// Whether `word` after `number` names a currency: a known one, or any word after an
    /// amount with two decimals that is no unit ("1.50 dalers", "455.00 dalers"): people write
    /// cents for money, and a currency of their own (an invented one, a local one) is on no list.
    static func isCurrency(_ word: String, after number: String) -> Bool {
        if money.contains(word) { return true }
        guard word.count >= 3, word.allSatisfy(\.isLetter), !anyUnit.contains(word), !CommonWords.contains(word),
              let dot = number.lastIndex(where: { $0 == "." || $0 == "," }) else { return false }
        let decimals = number[number.index(after: dot)...]
        return decimals.count == 2 && decimals.allSatisfy(\.isNumber)
    }

    /// Whether a name is written as no person's is, for "Who …?": after "the" ("the Pemberton
    /// Salver", "the Wherry 200", "the AGM": a thing, an event, a work), with a word in
    /// capitals ("Wherry LX", "AGM": a product's code, an acronym), or a sentence's first word
    /// ending like a verb ("Judging", "Booked").
    static func notAPerson(_ claim: Claim, offset: Int, in bytes: [UInt8]) -> Bool {
        guard claim.kind == .name else { return false }
        // "Judging is by the panel", "Booked the hall": a sentence's first word of a verb's form.
        if !claim.text.contains(" "), opensSentence(offset, in: bytes), ["ing", "ed"].contains(where: claim.text.lowercased().hasSuffix) { return true }
        let before = String(decoding: bytes[..<min(offset, bytes.count)].suffix(5), as: UTF8.self).lowercased()
        if before == " the " || (before.hasSuffix("the ") && offset == 4) { return true }
        // "open Fridays", "on Tuesday": the names of the days are no one's. (Not the months':
        // April, May and June are people's too.)
        let lowered = claim.text.lowercased()
        if DayWords.weekdays.contains(lowered) || DayWords.weekdays.contains(String(lowered.dropLast())) { return true }
        return claim.text.split(separator: " ").contains { word in word.count >= 2 && word.allSatisfy { $0.isUppercase || $0.isNumber } && word.contains(where: \.isLetter) }
    }

    static let magnitudes: Set<String> = ["thousand", "million", "billion", "trillion", "hundred", "bn", "mn"]

    func fits(_ claim: Claim) -> Bool {
        switch asked {
        case .name: claim.kind == .name
        case .date: claim.kind == .date || (claim.kind == .number && Self.isYear(claim.text))
        case .number: claim.kind == .number && !Self.isYear(claim.text)
        case .any, .reason: true
        }
    }

    static func isYear(_ text: String) -> Bool {
        guard text.count == 4, let value = Int(text) else { return false }
        // A year a note would name; "FH-2291" or "2291 runners" is no year.
        return (1800...2199).contains(value)
    }

    /// The one-word names `lines` write after a sentence's first word.
    static func namesInsideSentences(_ lines: [String], ignoring: Set<String>) -> Set<String> {
        var names: Set<String> = []
        for line in lines {
            for piece in pieces(of: line) {
                let bytes = Array(piece.utf8)
                for found in Claims.scan(piece, ignoring: ignoring) where found.claim.kind == .name && !found.claim.text.contains(" ")
                    && !opensSentence(found.offset, in: bytes) {
                    names.insert(found.claim.text)
                }
            }
        }
        return names
    }

    private static func opensSentence(_ offset: Int, in bytes: [UInt8]) -> Bool {
        bytes[..<min(offset, bytes.count)].allSatisfy { !(($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 >= 0x80) }
    }

    /// The noun a "how many" counts: the question's words after "how many" up to its verb.
    static func countedNoun(in question: String) -> [String] {
        let words = question.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
        // "How many samples …", and "how much salt goes in …" (a quantity, not "how much did …").
        guard let many = words.indices.first(where: { $0 + 1 < words.count && words[$0] == "how" && ["many", "much"].contains(words[$0 + 1]) }) else { return [] }
        let verbs: Set<String> = ["did", "do", "does", "were", "was", "are", "is", "will", "would", "have", "has", "had", "can", "could", "should", "went", "got",
                                  "goes", "go", "get", "gets", "need", "needs", "use", "uses", "take", "takes", "i", "we", "you", "it"]
        let span = words[(many + 2)...].prefix { !verbs.contains($0) }
        return SearchTerms.terms(of: span.joined(separator: " "))
    }

    static let money: Set<String> = ["crowns", "crown", "euros", "euro", "eur", "dollars", "dollar", "usd", "pounds", "gbp", "francs", "yen",
                                     "kroner", "kronor", "krona", "pesos", "rupees", "cents", "pence", "zloty", "lei", "forint",
                                     "florins", "florin", "guilders", "chf", "sek", "nok", "dkk", "jpy", "cad", "aud", "nzd", "inr", "rand",
                                     "yuan", "rmb", "lira", "lire", "dinars", "dirhams", "riyals", "shillings", "marks", "baht", "won"]
    /// Currency written before the amount ("fl 12.50", "EUR 12", "kr 200", "Rs 500").
    static let moneyBefore: Set<String> = ["fl", "ƒ", "eur", "usd", "gbp", "chf", "sek", "nok", "dkk", "kr", "rs", "inr", "jpy", "cad", "aud",
                                           "nzd", "r", "fr", "sfr"]
    static let distance: Set<String> = ["km", "kilometres", "kilometers", "kilometre", "kilometer", "miles", "mile", "metres", "meters", "metre", "meter", "m", "yards", "feet", "ft"]
    static let duration: Set<String> = ["seconds", "second", "minutes", "minute", "min", "mins", "hours", "hour", "h", "hrs", "days", "day", "weeks", "week",
                                        "months", "month", "years", "year"]
    static let weight: Set<String> = ["kg", "kilograms", "kilogram", "kilos", "grams", "gram", "g", "tonnes", "tonne", "tons", "pounds", "lb", "lbs"]
    static let size: Set<String> = ["metres", "meters", "metre", "meter", "m", "cm", "mm", "feet", "ft", "inches", "square", "hectares", "acres"]

    /// The units a number answering `question` comes with, if the question says.
    static func units(for question: String) -> Set<String> {
        let text = " " + question.lowercased().split { !$0.isLetter }.joined(separator: " ") + " "
        let moneyWords = [" cost ", " costs ", " price ", " priced ", " pay ", " paid ", " spend ", " spent ", " rent ", " budget ", " quote ",
                          " quoted ", " fee ", " fees ", " charge ", " charged ", " charges ", " worth ", " salary ", " fare ", " earn ", " earned ",
                          " owe ", " owes ", " excess ", " premium ", " deposit ", " deductible ", " wage ", " wages "]
        if moneyWords.contains(where: text.contains) { return money }
        if text.contains(" how far ") { return distance }
        if text.contains(" how long ") { return duration.union(distance) }
        if text.contains(" how old ") { return ["years", "year"] }
        if text.contains(" how heavy ") || text.contains(" weigh ") { return weight }
        if text.contains(" how big ") || text.contains(" how tall ") || text.contains(" how wide ") || text.contains(" how deep ")
            || text.contains(" how high ") || text.contains(" how large ") { return size }
        if text.contains(" temperature ") || text.contains(" how hot ") || text.contains(" how cold ") { return ["degrees", "degree", "c", "f", "°c", "°f"] }
        if text.contains(" how fast ") { return ["km", "kph", "mph", "knots", "kilometres", "miles"] }
        if text.contains(" how much ") { return money }
        return []
    }
}
