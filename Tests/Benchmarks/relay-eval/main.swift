// relay-eval: `make eval`, a scored, reproducible evaluation of the agents on a real model
// (docs/eval.md). It drives the real `relay` binary as a person would — `relay init`, notes in
// Journal/user/, lines added to context.md, files moved into Research/ under `relay watch`,
// `relay ask --json`, follow-up questions written into one Chats/NAME.md — and scores what comes
// out: fact recall of each summary, its length, the precision of its numbers and names, the
// facts that reached context.md, questions answered (each by the rule of its kind: a value, a
// list, yes/no, a sum, a summary, a draft, "the workspace does not say", a labelled answer not
// from the workspace), names invented in answers, seconds and tokens per task. For
// each configuration: the workspace as `relay init` makes it ("relay"), the same workspace whose
// chat relay is a routed relay ("route") or a plan relay ("plan"), and one plain agent ("solo");
// then the ratios.
//
// It knows the engine only through its files and its command line (run.json, journal.jsonl,
// the chat markers, `relay ask --json`), never through its code, so it measures whatever the
// current engine does.
//
//   relay-eval [--model NAME] [--url URL] [--configs relay,route,plan,solo] [--tasks id,id] [--keep]
//              [--timeout SECONDS] [--json PATH] [--relay PATH] [--tasks-dir DIR] [--out DIR]
//   relay-eval --self-test        checks the scorer itself and the task sets (no model, no relay)
//   relay-eval --report FILE… [--rescore] [--brief]   the tables (or one line per set) of earlier results

import Foundation
import Glibc

// MARK: - The task set

struct Fact: Codable, Sendable {
    var fact: String
    var all: [String]?
    var any: [[String]]?
    /// The sets of strings, one of which must appear whole in one line or sentence.
    var alternatives: [[String]] { any ?? [all ?? []] }
}

struct DocumentTask: Codable, Sendable {
    var id: String
    var kind: String
    var file: String
    /// "pdf": the text file is turned into a PDF at eval time and dropped as NAME.pdf.
    var dropAs: String?
    var facts: [Fact]
}

struct ContextLines: Codable, Sendable {
    var section: String
    var lines: [String]
}

/// What a request asks for (issue 32); each kind is scored by its own rule (docs/eval.md,
/// "Scores per kind"). A question without a kind is a lookup (the public set's 35).
enum QuestionKind: String, Codable, Sendable, CaseIterable {
    case lookup, list, yesno, compute, compare, summarise, draft, twohop, notfound, general
}

/// What an answer must hold, by kind. Only the fields its kind uses are set (the self-test
/// checks each question has them): `accept` (lookup, twohop, compute, compare, yesno, draft:
/// the person the draft is for), `all` and `not` (list), `verdict` (yesno), `items` and
/// `maxLines` (summarise), `absent` (notfound: strings the workspace must not hold, checked by
/// the self-test), `reject` (any kind: strings that make the answer wrong outside its quotes).
struct Expectation: Sendable {
    var kind: QuestionKind
    var accept: [[String]]? = nil
    var all: [[String]]? = nil
    var not: [[String]]? = nil
    var verdict: String? = nil
    var items: [Fact]? = nil
    var maxLines: Int? = nil
    var reject: [[String]]? = nil
    var absent: [[String]]? = nil
}

struct Question: Codable, Sendable {
    var id: String
    var from: String
    var question: String
    var kind: String? = nil
    var accept: [[String]]? = nil
    var all: [[String]]? = nil
    var not: [[String]]? = nil
    var verdict: String? = nil
    var items: [Fact]? = nil
    var maxLines: Int? = nil
    var reject: [[String]]? = nil
    var absent: [[String]]? = nil

    var expectation: Expectation {
        Expectation(kind: kind.flatMap(QuestionKind.init(rawValue:)) ?? .lookup, accept: accept, all: all, not: not, verdict: verdict,
                    items: items, maxLines: maxLines, reject: reject, absent: absent)
    }
}

struct ChatTurn: Codable, Sendable {
    var question: String
    var kind: String? = nil
    var accept: [[String]]? = nil
    var all: [[String]]? = nil
    var not: [[String]]? = nil
    var verdict: String? = nil
    var reject: [[String]]? = nil

    var expectation: Expectation {
        Expectation(kind: kind.flatMap(QuestionKind.init(rawValue:)) ?? .lookup, accept: accept, all: all, not: not, verdict: verdict,
                    items: nil, maxLines: nil, reject: reject, absent: nil)
    }
}

struct ChatTask: Codable, Sendable {
    var id: String
    var from: String
    var turns: [ChatTurn]
}

struct TaskSet: Codable, Sendable {
    /// The set's label in the report ("general-dev"); nil for the public set.
    var name: String? = nil
    /// "dev" (tuned on) or "held-out" (committed before tuning, run only to report: the report
    /// shows its ids and scores, not its questions' answers); nil for the public set.
    var split: String? = nil
    /// The date "today" means for the engine (YYYY-MM-DD), given to every relay process as
    /// RELAY_TODAY, so "this week" and "yesterday" stay fixed against the notes' dates.
    var today: String? = nil
    var documents: [DocumentTask]
    var journal: [String]
    var context: [ContextLines]
    var questions: [Question]
    var chats: [ChatTask]

    var label: String { name ?? "public" }
    var isHeldOut: Bool { split == "held-out" }

    /// Reads a tasks.json; a `today` that is not a real YYYY-MM-DD date, or a question kind not
    /// known, is an error naming the file and the field.
    static func load(_ path: String) throws -> TaskSet {
        guard let data = FileManager.default.contents(atPath: path) else { throw EvalError("cannot read \(path)") }
        let tasks: TaskSet
        do { tasks = try JSONDecoder().decode(TaskSet.self, from: data) } catch { throw EvalError("\(path): \(error)") }
        if let today = tasks.today, TaskSet.day(today) == nil {
            throw EvalError("\(path): \"today\": '\(today)' is not a date written YYYY-MM-DD")
        }
        for question in tasks.questions {
            if let kind = question.kind, QuestionKind(rawValue: kind) == nil {
                throw EvalError("\(path): question \(question.id): \"kind\": '\(kind)' is not one of \(QuestionKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        for chat in tasks.chats {
            for (index, turn) in chat.turns.enumerated() {
                if let kind = turn.kind, QuestionKind(rawValue: kind) == nil {
                    throw EvalError("\(path): chat \(chat.id), turn \(index + 1): \"kind\": '\(kind)' is not a known kind")
                }
            }
        }
        return tasks
    }

    /// A YYYY-MM-DD day that exists (not 2027-02-30), or nil.
    static func day(_ text: String) -> DateComponents? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: dayOfMonth)
        guard let date = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        return back.year == year && back.month == month && back.day == dayOfMonth ? components : nil
    }
}

// MARK: - Text: normalising and matching

enum Text {
    static func regex(_ pattern: String, _ options: NSRegularExpression.Options = []) -> NSRegularExpression {
        // The patterns are constants of this file; a bad one is a bug found by --self-test.
        try! NSRegularExpression(pattern: pattern, options: options)
    }

    static func replace(_ text: String, _ pattern: NSRegularExpression, _ template: String) -> String {
        pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
    }

    static func matches(_ text: String, _ pattern: NSRegularExpression) -> [String] {
        pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }

    static let numberWords: [String: String] = [
        "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
        "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
        "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
        "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    ]

    private static let markdownCharacters = regex(#"[*_`#|>~\[\]()]"#)
    private static let ampersand = regex(#"\s*&\s*"#)
    private static let thousands = regex(#"(?<=\d),(?=\d{3}(?!\d))"#)
    private static let ordinal = regex(#"(\d+)(st|nd|rd|th)\b"#)
    private static let perCent = regex(#"\s*%|\bper cent\b"#)
    private static let numberWord = regex(#"\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b"#)
    private static let digitLetter = regex(#"(\d)([a-z])"#)
    private static let letterDigit = regex(#"([a-z])(\d)"#)
    private static let spaces = regex(#"\s+"#)

    /// The form both sides of a match are compared in: lower case; typographic quotes, dashes and
    /// spaces made plain; markdown emphasis, headings, tables and brackets removed; "&" = "and";
    /// thousands separators dropped (4,200 = 4200); ordinals plain (19th = 19); "%" and "per cent"
    /// = "percent"; number words up to twenty and the tens as digits (seven = 7); a space between
    /// digits and letters (12.5km = 12.5 km); whitespace collapsed.
    static func normalize(_ text: String) -> String {
        var s = text.lowercased()
        s = String(s.map { character -> Character in
            switch character {
            case "\u{2019}", "\u{2018}", "\u{02BC}": return "'"
            case "\u{201C}", "\u{201D}": return "\""
            case "\u{2013}", "\u{2014}", "\u{2212}", "\u{2010}", "\u{2011}": return "-"
            case "\u{00A0}", "\u{2009}", "\u{202F}", "\u{2007}": return " "
            default: return character
            }
        })
        s = replace(s, markdownCharacters, " ")
        s = replace(s, ampersand, " and ")
        s = replace(s, thousands, "")
        s = replace(s, ordinal, "$1")
        s = replace(s, perCent, " percent")
        var words = s
        for match in numberWord.matches(in: s, range: NSRange(s.startIndex..., in: s)).reversed() {
            guard let range = Range(match.range, in: words) else { continue }
            words.replaceSubrange(range, with: numberWords[String(words[range])] ?? String(words[range]))
        }
        s = words
        s = replace(s, digitLetter, "$1 $2")
        s = replace(s, letterDigit, "$1 $2")
        s = replace(s, spaces, " ")
        return s.trimmingCharacters(in: .whitespaces)
    }

    /// Whether `needle` occurs in `haystack` (both normalised) as whole words and whole numbers:
    /// "48" is not found in "480" nor in "4.48", "pell" not in "pellucid".
    static func containsWhole(_ haystack: String, _ needle: String) -> Bool {
        guard !needle.isEmpty else { return true }
        let hay = Array(haystack), pin = Array(needle)
        guard pin.count <= hay.count else { return false }
        func isWord(_ c: Character) -> Bool { c.isLetter || c.isNumber }
        var start = 0
        while start + pin.count <= hay.count {
            if hay[start] == pin[0], Array(hay[start..<(start + pin.count)]) == pin {
                let before = start - 1, after = start + pin.count
                var ok = true
                if before >= 0 {
                    if isWord(hay[before]) && isWord(pin[0]) { ok = false }
                    // "4.48": a digit, a point or comma, then our digits.
                    if (hay[before] == "." || hay[before] == ","), before >= 1, hay[before - 1].isNumber, pin[0].isNumber { ok = false }
                }
                if after < hay.count {
                    if isWord(hay[after]) && isWord(pin[pin.count - 1]) { ok = false }
                    if (hay[after] == "." || hay[after] == ","), after + 1 < hay.count, hay[after + 1].isNumber, pin[pin.count - 1].isNumber { ok = false }
                }
                if ok { return true }
            }
            start += 1
        }
        return false
    }

    private static let sentenceEnd = regex(#"(?<=[.!?])\s+"#)

    private static let blockStart = regex(#"^\s*([-*+•]\s|\d{1,3}[.)]\s|#|\||>|<!--)"#)

    /// The blocks of a text: a list item, a heading, a table row, or a paragraph whose wrapped
    /// lines are joined (a blank line or the next item ends it).
    static func blocks(_ text: String) -> [String] {
        var result: [String] = []
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                if let c = current { result.append(c) }
                current = nil
            } else if current == nil || blockStart.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                if let c = current { result.append(c) }
                current = trimmed
            } else {
                current! += " " + trimmed
            }
        }
        if let c = current { result.append(c) }
        return result
    }

    /// The units a fact must fit in: each sentence of each block (a point, "!" or "?" followed
    /// by a space ends one; "4.2" does not). A line of a list or a table is a block of its own;
    /// the wrapped lines of a paragraph are one.
    static func units(_ text: String) -> [String] {
        var result: [String] = []
        for line in blocks(text) {
            let marked = replace(line, sentenceEnd, "\u{1E}")
            for sentence in marked.split(separator: "\u{1E}") {
                let trimmed = sentence.trimmingCharacters(in: .whitespaces)
                if trimmed.contains(where: { $0.isLetter || $0.isNumber }) { result.append(trimmed) }
            }
        }
        return result
    }

    /// Whether a fact is in the text: all strings of one of its alternatives in one unit.
    static func found(_ fact: Fact, in text: String) -> Bool {
        found(fact.alternatives, inUnitsOf: text)
    }

    static func found(_ alternatives: [[String]], inUnitsOf text: String) -> Bool {
        let units = Text.units(text).map(normalize)
        return alternatives.contains { strings in
            let needles = strings.map(normalize)
            return units.contains { unit in needles.allSatisfy { containsWhole(unit, $0) } }
        }
    }

    static func found(_ alternatives: [[String]], anywhereIn text: String) -> Bool {
        let hay = normalize(text)
        return alternatives.contains { strings in strings.map(normalize).allSatisfy { containsWhole(hay, $0) } }
    }

    static func wordCount(_ text: String) -> Int {
        text.split(whereSeparator: { $0.isWhitespace }).filter { $0.contains(where: { $0.isLetter || $0.isNumber }) }.count
    }

    /// The text of an HTML document (tags, scripts, styles and comments removed; entities for
    /// the usual characters decoded), for the length and the precision of a summary of it.
    static func htmlText(_ html: String) -> String {
        var s = replace(html, regex(#"<(script|style)[\s\S]*?</\1>"#, [.caseInsensitive]), " ")
        s = replace(s, regex(#"<!--[\s\S]*?-->"#), " ")
        s = replace(s, regex(#"<(br|p|div|h[1-6]|li|tr|header|footer|main|ul|ol)\b[^>]*>"#, [.caseInsensitive]), "\n")
        // A table's cells stay apart: "<td>16:40</td><td>18:45</td>" is "16:40 18:45", not "16:4018:45".
        s = replace(s, regex(#"<(td|th)\b[^>]*>"#, [.caseInsensitive]), " ")
        s = replace(s, regex(#"<[^>]+>"#), "")
        for (entity, character) in [("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&nbsp;", " ")] {
            s = s.replacingOccurrences(of: entity, with: character)
        }
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false).map { replace(String($0), regex(#"[ \t]+"#), " ").trimmingCharacters(in: .whitespaces) }
        return replace(lines.joined(separator: "\n"), regex(#"\n{3,}"#), "\n\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

// MARK: - Precision: the numbers and names of an output, against its sources

/// The claims extractor. Its rules (docs/eval.md, "Precision"):
/// - What is not prose is dropped first: HTML comments and tags, URLs, paths and file names
///   (anything with a "/" or ending in .md, .html, .pdf, .txt, .json), markdown link targets.
/// - Each line loses its list or heading marker ("- ", "* ", "1. ", "2) ", "#", ">"); table
///   cells, and the text after ". ", "! ", "? ", ": " and "; ", start a new sentence.
/// - A number is a run of digits with inner decimal points or thousands commas ("4.2",
///   "1,275" = 1275); "06:40" and "2026-11-10" are several numbers; leading zeros are dropped.
///   Numbers written as words are not claims in an output (they are too often "one of …"), but
///   in a source they support their digits ("seven goats" supports 7); "X million" in a source
///   supports X·1,000,000.
/// - A name is a capitalised word (a hyphen or apostrophe inside it allowed, "'s" dropped). It
///   is not counted when its lower-case form is a common word of the built-in list, a word of the
///   roster (agents' names and ids, system prompts, the research request), or appears in lower
///   case elsewhere in the same output (title case of an ordinary word). A sentence's first word
///   is also not counted when it appears in lower case in the sources.
/// - A number is supported when the sources hold the same number; a name when the sources hold
///   the same word in any case (each part of a hyphenated name).
/// - precision = supported / counted; an output with nothing to count has no precision (n/a).
enum Claims {
    struct Result: Codable, Sendable {
        var supported: Int
        var counted: Int
        var unsupported: [String]
        /// supported / counted; nil when there was nothing to count.
        var precision: Double?

        init(supported: Int, counted: Int, unsupported: [String]) {
            self.supported = supported
            self.counted = counted
            self.unsupported = unsupported
            precision = counted == 0 ? nil : Double(supported) / Double(counted)
        }
    }

    /// Words that are never names: sentence starters, function words, headings the agents write,
    /// months' neighbours that are ordinary words, the roster's vocabulary.
    static let commonWords: Set<String> = Set("""
        a about above after again against all also although am an and another any are around as at be because been before \
        being below between both but by can could did do does doing down during each either else enough even ever every few \
        first for from further had has have having he her here hers him his how however i if in into is it its itself just \
        last least less let like many may maybe me might more most much must my neither next no nor not now of off often on \
        once one only or other others otherwise our ours out over overall own perhaps please rather same second she should \
        since so some still such than that the their theirs them then there therefore these they third this those though \
        through thus to too under until up upon us very was we well were what whatever when where whether which while who \
        whom whose why will with within without would yes yet you your yours finally firstly secondly lastly today tomorrow \
        yesterday sure okay ok hello hi dear thanks thank note notes summary summaries key facts fact points point figures \
        figure details detail overview conclusion conclusions highlights highlight main takeaway takeaways information info \
        answer answers question questions important report document documents file files source sources introduction \
        background title date dates people person names name numbers number places place location locations cost costs price \
        prices budget schedule timeline steps step action actions item items recommendation recommendations finding findings \
        result results description features feature specification specifications specs ingredients ingredient method \
        instructions general knowledge found unclear plan review reviewer writer planner researcher request user assistant \
        agent agents helper helpers team approved revision revisions based according here's there's it's i'm i'll we'll \
        you're they're let's don't doesn't isn't aren't can't won't unknown none total totals additional other context \
        workspace research chats journal markdown bullet list section sections heading paragraph topic topics purpose goal \
        goals decision decisions preferences open relay yes no true false yours sincerely regards best kind faithfully \
        cheers hey hiya love warmly warm wishes greetings speak talk soon hope looking forward
        """.split(whereSeparator: { $0.isWhitespace }).map(String.init))

    private static let comment = Text.regex(#"<!--[\s\S]*?-->"#)
    private static let tag = Text.regex(#"</?[A-Za-z][^>]*>"#)
    private static let url = Text.regex(#"https?://\S+"#)
    private static let linkTarget = Text.regex(#"\]\([^)]*\)"#)
    private static let pathLike = Text.regex(#"\S*/\S*|\S+\.(md|html?|pdf|txt|jsonl?|docx|odt|csv)\b"#, [.caseInsensitive])
    private static let lineMarker = Text.regex(#"^\s*((#{1,6}\s*)|([-*+•]\s+)|(\d{1,3}[.)]\s+)|(>\s*))+"#)
    private static let emphasis = Text.regex(#"[*_`~]"#)
    private static let sentenceBreak = Text.regex(#"(?<=[.!?:;])\s+|\|"#)
    private static let token = Text.regex(#"[A-Za-z\u00C0-\u024F][A-Za-z\u00C0-\u024F'’\-]*|\d+(?:[.,]\d+)*"#)

    /// The vocabulary a text uses, lower case (hyphenated words also by part).
    static func words(_ text: String) -> Set<String> {
        var set = Set<String>()
        for token in Text.matches(text, token) where token.first?.isLetter == true {
            let word = clean(token).lowercased()
            set.insert(word)
            for part in word.split(separator: "-") { set.insert(String(part)) }
        }
        return set
    }

    /// Words written in lower case in a text.
    static func lowerCaseWords(_ text: String) -> Set<String> {
        Set(Text.matches(text, token).filter { $0.first?.isLowercase == true }.map { clean($0).lowercased() })
    }

    static func clean(_ word: String) -> String {
        var w = word
        for suffix in ["'s", "’s"] where w.hasSuffix(suffix) { w = String(w.dropLast(2)) }
        while let last = w.last, last == "-" || last == "'" || last == "’" { w.removeLast() }
        return w
    }

    /// "1,275" → "1275", "06" → "6", "3,5" → ["3", "5"].
    static func numbers(in token: String) -> [String] {
        var parts: [String] = []
        var current = ""
        let characters = Array(token)
        var index = 0
        while index < characters.count {
            let c = characters[index]
            if c == "," {
                // A thousands separator: exactly three digits follow.
                var digits = 0
                var look = index + 1
                while look < characters.count, characters[look].isNumber { digits += 1; look += 1 }
                if digits == 3 { index += 1; continue }
                parts.append(current); current = ""
            } else {
                current.append(c)
            }
            index += 1
        }
        parts.append(current)
        return parts.filter { !$0.isEmpty }.map { part in
            var p = part
            if let dot = p.firstIndex(of: ".") {
                var integer = String(p[..<dot])
                while integer.count > 1, integer.first == "0" { integer.removeFirst() }
                p = integer + p[dot...]
            } else {
                while p.count > 1, p.first == "0" { p.removeFirst() }
            }
            return p
        }
    }

    /// The numbers a source supports: its digits, its number words, and "X million" expanded.
    static func sourceNumbers(_ text: String) -> Set<String> {
        var set = Set<String>()
        for token in Text.matches(text, token) where token.first?.isNumber == true { set.formUnion(numbers(in: token)) }
        for word in Text.matches(text.lowercased(), Text.regex(#"\b[a-z]+\b"#)) { if let digits = Text.numberWords[word] { set.insert(digits) } }
        for match in Text.matches(text.lowercased(), Text.regex(#"\d+(?:\.\d+)?\s+million"#)) {
            if let value = Double(match.split(separator: " ")[0]) { set.insert(String(Int((value * 1_000_000).rounded()))) }
        }
        return set
    }

    /// The sentences of an output with its non-prose dropped (see the rules above).
    static func sentences(_ text: String) -> [String] {
        var s = Text.replace(text, comment, " ")
        s = Text.replace(s, tag, " ")
        s = Text.replace(s, url, " ")
        s = Text.replace(s, linkTarget, "]")
        s = Text.replace(s, pathLike, " ")
        var result: [String] = []
        for line in Text.blocks(s) {
            var l = Text.replace(String(line), lineMarker, "")
            l = Text.replace(l, emphasis, "")
            l = l.replacingOccurrences(of: "[", with: " ").replacingOccurrences(of: "]", with: " ")
            let marked = Text.replace(l, sentenceBreak, "\u{1E}")
            for sentence in marked.split(separator: "\u{1E}") {
                let t = sentence.trimmingCharacters(in: .whitespaces)
                if !t.isEmpty { result.append(t) }
            }
        }
        return result
    }

    /// Scores `output` against `sources`. `roster` is the vocabulary of the agents (names, ids,
    /// prompts, requests): never a name.
    /// Capitalised words seen inside a sentence (not as its first word), lower case.
    static func capitalisedInside(_ texts: [String]) -> Set<String> {
        var set = Set<String>()
        for text in texts {
            for sentence in sentences(text) {
                for (index, raw) in Text.matches(sentence, token).enumerated() where index > 0 && raw.first?.isUppercase == true {
                    set.insert(clean(raw).lowercased())
                }
            }
        }
        return set
    }

    /// Whether a capitalised word is never a name: a common or roster word (also before an
    /// apostrophe: "You've", "Wren's"), or the output's own lower-case word.
    static func ordinary(_ lower: String, roster: Set<String>, outputLower: Set<String>) -> Bool {
        if lower.count < 2 { return true }  // an initial, "A", "I"
        if commonWords.contains(lower) || roster.contains(lower) || outputLower.contains(lower) { return true }
        if let apostrophe = lower.firstIndex(where: { $0 == "'" || $0 == "’" }) {
            let stem = String(lower[..<apostrophe])
            if commonWords.contains(stem) || roster.contains(stem) || stem.count < 2 { return true }
        }
        return lower.split(separator: "-").allSatisfy { commonWords.contains(String($0)) || roster.contains(String($0)) }
    }

    static func score(_ output: String, sources: [String], roster: Set<String>) -> Result {
        let source = sources.joined(separator: "\n")
        let sourceWords = words(source)
        let sourceLower = lowerCaseWords(source)
        let sourceNumbers = sourceNumbers(source)
        let outputLower = lowerCaseWords(output)
        let knownCapitalised = capitalisedInside(sources + [output])
        var supported = 0, counted = 0
        var unsupported: [String] = []
        for sentence in sentences(output) {
            let tokens = Text.matches(sentence, token)
            for (index, raw) in tokens.enumerated() {
                if raw.first?.isNumber == true {
                    for number in numbers(in: raw) {
                        counted += 1
                        if sourceNumbers.contains(number) { supported += 1 } else { unsupported.append(number) }
                    }
                    continue
                }
                guard raw.first?.isUppercase == true else { continue }
                let word = clean(raw)
                let lower = word.lowercased()
                if ordinary(lower, roster: roster, outputLower: outputLower) { continue }
                if index == 0 {
                    // A sentence's first word is capitalised anyway: it counts as a name only when
                    // the sources do not use it in lower case and it is seen capitalised inside a
                    // sentence somewhere, or a name follows it ("Marcus Whitfield leads it").
                    if sourceLower.contains(lower) { continue }
                    let next = index + 1 < tokens.count ? tokens[index + 1] : ""
                    let nameFollows = next.first?.isUppercase == true && !ordinary(clean(next).lowercased(), roster: roster, outputLower: outputLower)
                    if !knownCapitalised.contains(lower) && !nameFollows { continue }
                }
                counted += 1
                let parts = lower.split(separator: "-").map(String.init)
                if sourceWords.contains(lower) || parts.allSatisfy({ sourceWords.contains($0) }) {
                    supported += 1
                } else {
                    unsupported.append(word)
                }
            }
        }
        return Result(supported: supported, counted: counted, unsupported: unsupported)
    }
}

// MARK: - Scoring a summary and an answer

struct SummaryScore: Codable, Sendable {
    var factsFound: [Bool]
    var rawRecall: Double
    /// The recall that counts: 0 when the summary is longer than half its source.
    var recall: Double
    var characters: Int
    var sourceCharacters: Int
    var lengthRatio: Double
    var overLong: Bool
    var precision: Claims.Result
}

enum AnswerVerdict: String, Codable, Sendable {
    case answered
    case tooLong = "too long"
    case wrong
}

struct AnswerScore: Codable, Sendable {
    var verdict: AnswerVerdict
    var sentences: Int
    var words: Int
    var precision: Claims.Result
    /// The kind it was scored as (nil in results written before kinds).
    var kind: String? = nil
    /// Why it is not answered, or what the kind's rule counted ("items 2/3", "verdict no").
    var why: String? = nil
}

enum Scorer {
    static let maximumLengthRatio = 0.5
    static let maximumSentences = 2
    static let maximumWords = 60

    static func summary(_ text: String, source: String, facts: [Fact], roster: Set<String>) -> SummaryScore {
        let found = facts.map { Text.found($0, in: text) }
        let raw = facts.isEmpty ? 0 : Double(found.filter { $0 }.count) / Double(facts.count)
        let characters = text.trimmingCharacters(in: .whitespacesAndNewlines).count
        let sourceCharacters = max(1, source.trimmingCharacters(in: .whitespacesAndNewlines).count)
        let ratio = Double(characters) / Double(sourceCharacters)
        let overLong = ratio > maximumLengthRatio
        return SummaryScore(factsFound: found, rawRecall: raw, recall: overLong || characters == 0 ? 0 : raw, characters: characters,
                            sourceCharacters: sourceCharacters, lengthRatio: ratio, overLong: overLong,
                            precision: Claims.score(text, sources: [source], roster: roster))
    }

    /// The value an answer of the form "value — “quote” (source)" states; nil for any other form.
    static func statedValue(of text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let dash = trimmed.range(of: " — “") else { return nil }
        let value = trimmed[..<dash.lowerBound]
        guard !value.isEmpty, !value.contains("\n"), Text.wordCount(String(value)) <= 12 else { return nil }
        return String(value)
    }

    /// A lookup: an accepted answer, in at most 2 sentences and 60 words.
    static func answer(_ text: String, accept: [[String]], sources: [String], roster: Set<String>) -> AnswerScore {
        answer(text, expect: Expectation(kind: .lookup, accept: accept), sources: sources, roster: roster)
    }

    // The rules per kind (docs/eval.md, "Scores per kind"). Each says what substance the kind
    // demands, not a format: the engine's forms (`VALUE — “quote” (path:line)`, `- item
    // (path:line)`, "Yes …", "The workspace does not say …", "Not from the workspace …") pass,
    // and so does any other text that holds the same substance within the length.
    /// At most this many sentences for a twohop answer: its value, and the two lines it joined.
    static let maximumTwoHopSentences = 3
    /// A list may have a line for each item, plus two (a heading, a closing remark).
    static let extraListLines = 2
    /// A summary answers when this share of its key items is in it …
    static let summaryItemShare = 0.6
    /// … in at most `maxLines` lines (8 unless the question says).
    static let defaultSummaryLines = 8
    static let maximumDraftWords = 120
    /// A quotation of at most this many words counts as one sentence of evidence in the length
    /// of a one-value answer (the value is the answer; a longer "quote" is a dump).
    static let maximumQuoteWords = 40
    static let notFoundPhrases = ["the workspace does not say", "the workspace doesn't say"]
    static let generalLabel = "not from the workspace"

    /// Words of asking for a draft, not of what the draft is about.
    static let draftRequestWords: Set<String> = ["draft", "write", "compose", "prepare", "note", "message", "text", "email", "letter", "reply",
                                                 "short", "quick", "asking", "checking", "please", "before", "after", "while", "still"]

    static func answer(_ text: String, expect: Expectation, sources: [String], roster: Set<String>, question: String? = nil) -> AnswerScore {
        var sources = sources
        // A computed value is the engine's arithmetic, not an invention: the expected result is
        // a source of a compute answer (its operands are in the notes already).
        if expect.kind == .compute { sources += (expect.accept ?? []).flatMap { $0 } }
        let precision = Claims.score(withoutCitations(text), sources: sources, roster: roster)
        let measured = quotesAsOneSentence(text)
        let count = Text.units(measured).count
        let words = Text.wordCount(measured)
        let lines = text.split(whereSeparator: \.isNewline).filter { $0.contains(where: { $0.isLetter || $0.isNumber }) }.count
        let normalized = Text.normalize(text)
        var hit: Bool
        var short: Bool
        var why: String?
        switch expect.kind {
        case .lookup, .twohop, .compute, .compare:
            // "value — “quote” (path:line)": the value is the answer, the quote only its evidence, so
            // "Damaris Oyelaran — “…chief executive of Kestrelmoor Robotics.”" does not answer
            // "Which company…?" however the quote reads.
            // (A citation's line number is no value: "(Journal/user/2028-03-04.md:3)" does not answer "3".)
            hit = Text.found(expect.accept ?? [], anywhereIn: statedValue(of: text) ?? withoutCitations(text))
            short = count <= (expect.kind == .twohop ? maximumTwoHopSentences : maximumSentences) && words <= maximumWords
        case .yesno:
            let first = Text.matches(normalized, Text.regex(#"^[a-z]+"#)).first ?? ""
            let wanted = (expect.verdict ?? "").lowercased()
            hit = first == wanted && (expect.accept.map { Text.found($0, anywhereIn: text) } ?? true)
            if first != wanted { why = first == "yes" || first == "no" ? "verdict \(first)" : "no verdict first" }
            short = count <= maximumSentences && words <= maximumWords
        case .list:
            let items = expect.all ?? []
            let listed = items.filter { Text.found([$0], inUnitsOf: text) }.count
            let wrongly = (expect.not ?? []).filter { Text.found([$0], anywhereIn: withoutCitations(text)) }
            hit = listed == items.count && wrongly.isEmpty
            why = "items \(listed)/\(items.count)" + (wrongly.isEmpty ? "" : ", lists what it must not: \(wrongly.map { $0.joined(separator: " ") }.joined(separator: "; "))")
            short = lines <= items.count + extraListLines
        case .summarise:
            let items = expect.items ?? []
            let found = items.filter { Text.found($0, in: text) }.count
            hit = !items.isEmpty && Double(found) / Double(items.count) >= summaryItemShare
            why = "key items \(found)/\(items.count)"
            short = lines <= (expect.maxLines ?? defaultSummaryLines)
        case .draft:
            let names = Text.found(expect.accept ?? [], anywhereIn: text)
            // A draft speaks of what it was asked to say (a word of the request's own, beyond
            // whom it is for and the words of asking), and is not the request repeated.
            let asked: Set<String> = question.map { Claims.words($0).filter { $0.count >= 4 && !draftRequestWords.contains($0) } } ?? []
            let named = Set((expect.accept ?? []).flatMap { $0 }.flatMap { Claims.words($0) })
            let purpose = asked.subtracting(named)
            let aboutIt = purpose.isEmpty || !purpose.isDisjoint(with: Claims.words(text))
            // The request repeated: it opens with the request's first word and holds most of its words.
            let echoes = question.map { q in
                let askedWords = Claims.words(q), first = { (s: String) in Text.normalize(s).split(separator: " ").first.map(String.init) ?? "" }
                return !askedWords.isEmpty && first(text) == first(q)
                    && Double(askedWords.intersection(Claims.words(text)).count) >= 0.7 * Double(askedWords.count)
            } ?? false
            // A message to a person holds no prompt markers ("[User Request — Remy]:") and cites
            // no source as the agents do ("(Journal/user/…)"): such text is the agents' notes.
            let lowered = text.lowercased()
            let notes = ["[user request", "[previous agent", "(journal/", "(research/", "(context.md", "(chats/"].contains { lowered.contains($0) }
            hit = names && aboutIt && !echoes && !notes && precision.unsupported.isEmpty
            if !names { why = "does not name whom it is for" } else if !aboutIt { why = "says nothing of what it was asked to say" }
            else if echoes { why = "repeats the request" } else if notes { why = "holds the prompt's markers or the agents' source citations, not a message" } else if !precision.unsupported.isEmpty { why = "invents \(precision.unsupported.joined(separator: ", "))" }
            short = Text.wordCount(text) <= maximumDraftWords
        case .notfound:
            let says = notFoundPhrases.contains { normalized.contains(Text.normalize($0)) }
            hit = says && precision.unsupported.isEmpty
            if !says { why = "does not say the workspace does not say" } else if !precision.unsupported.isEmpty { why = "invents \(precision.unsupported.joined(separator: ", "))" }
            short = true
        case .general:
            let labelled = normalized.contains(generalLabel)
            let rest = normalized.replacingOccurrences(of: generalLabel, with: " ")
            hit = labelled && Text.wordCount(rest) >= 3
            if !labelled { why = "not labelled as not from the workspace" } else if !hit { why = "empty" }
            short = true
        }
        // An answer that says the workspace does not say has not answered a question the
        // workspace can answer, whatever its closest line quotes (that line may hold the value).
        if ![.notfound, .general].contains(expect.kind), notFoundPhrases.contains(where: { normalized.contains(Text.normalize($0)) }) {
            hit = false
            why = "says the workspace does not say"
        }
        // A value the question must not get (another person's phone number for one the notes
        // lack), stated outside the answer's quotations, makes any answer wrong.
        if let reject = expect.reject, Text.found(reject, anywhereIn: outsideQuotes(text)) {
            hit = false
            why = "states a rejected value"
        }
        let verdict: AnswerVerdict = !hit ? .wrong : (short ? .answered : .tooLong)
        return AnswerScore(verdict: verdict, sentences: count, words: words, precision: precision, kind: expect.kind.rawValue, why: why)
    }

    private static let quotation = Text.regex(#"“[^”]*”"#)

    /// `text` with each quotation of at most `maximumQuoteWords` words written as one word: a
    /// line quoted as evidence is one sentence of the answer, whatever its own sentences.
    static func quotesAsOneSentence(_ text: String) -> String {
        var result = text
        for match in quotation.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            guard let range = Range(match.range, in: result), Text.wordCount(String(result[range])) <= maximumQuoteWords else { continue }
            result.replaceSubrange(range, with: "“quote”")
        }
        return result
    }

    /// What an answer states in its own words: without its quotations and citations.
    static func outsideQuotes(_ text: String) -> String {
        Text.replace(withoutCitations(text), quotation, " ")
    }

    /// `text` without its "(path:line)" citations: the line number says where the quote is, it
    /// is no claim about the world (whether the quote is really there is a separate matter: a
    /// quote's numbers and names are scored like any other).
    static func withoutCitations(_ text: String) -> String {
        text.replacingOccurrences(of: #"\((?:[^()\s/]+/)*[^()\s/]+\.(?:md|txt|markdown|json|html|pdf):\d+\)"#, with: "", options: .regularExpression)
    }
}

// MARK: - A PDF made at eval time (no converter needed: one Helvetica text page per 60 lines)

enum PDFMaker {
    static func pdf(from text: String) -> [UInt8] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            String(line.unicodeScalars.map { $0.isASCII ? Character($0) : "?" })
                .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "(", with: "\\(").replacingOccurrences(of: ")", with: "\\)")
        }
        let perPage = 60
        let pages = stride(from: 0, to: max(lines.count, 1), by: perPage).map { Array(lines[$0..<min($0 + perPage, lines.count)]) }
        var objects: [String] = []
        // 1 catalog, 2 pages, 3 font, then a page and its content per page.
        let pageIDs = pages.indices.map { 4 + 2 * $0 }
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        objects.append("<< /Type /Pages /Kids [\(pageIDs.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(pages.count) >>")
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        for (index, page) in pages.enumerated() {
            var stream = "BT /F1 10 Tf 13 TL 56 790 Td\n"
            for line in page { stream += "(\(line)) Tj T*\n" }
            stream += "ET"
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents \(pageIDs[index] + 1) 0 R >>")
            objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
        }
        var out = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(out.utf8.count)
            out += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = out.utf8.count
        out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { out += String(format: "%010d 00000 n \n", offset) }
        out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(out.utf8)
    }
}

// MARK: - Processes

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// The children alive (relay watch, relay ask), so that Ctrl-C or SIGTERM of the harness stops
/// them too instead of leaving a daemon behind.
nonisolated(unsafe) var livingChildren: [pid_t] = []

func stopChildrenOnSignals() {
    for number in [SIGINT, SIGTERM, SIGHUP] {
        signal(number) { received in
            for pid in livingChildren where pid > 0 { kill(pid, SIGTERM) }
            _exit(128 + received)
        }
    }
}

/// A child process started with posix_spawn (standard output and error to files), polled with
/// waitpid: Foundation's Process notices an exit only on a run loop's turn.
final class Child {
    let pid: pid_t
    private(set) var status: Int32?

    init(_ arguments: [String], environment: [String: String], stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let variables = environment.map { "\($0.key)=\($0.value)" }
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = variables.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, &argv, &envp)
        guard result == 0 else { throw EvalError("cannot start \(arguments[0]): \(String(cString: strerror(result)))") }
        self.pid = pid
        livingChildren.append(pid)
    }

    private func reaped() { livingChildren.removeAll { $0 == pid } }

    var isRunning: Bool {
        if status != nil { return false }
        var raw: Int32 = 0
        let r = waitpid(pid, &raw, WNOHANG)
        if r == pid {
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            reaped()
            return false
        }
        return r == 0
    }

    /// Waits until the child exits or `seconds` pass; true when it exited.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        let deadline = now() + seconds
        while isRunning {
            if now() > deadline { return false }
            usleep(50_000)
        }
        return true
    }

    func signal(_ signal: Int32) { if status == nil { kill(pid, signal) } }

    /// SIGTERM, then SIGKILL if it has not stopped within `grace` seconds.
    func stop(grace: Double = 30) {
        signal(SIGTERM)
        if !wait(seconds: grace) {
            signal(SIGKILL)
            wait(seconds: 5)
        }
    }
}

struct EvalError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command to its end and returns its status and standard output.
func run(_ arguments: [String], environment: [String: String], scratch: String, timeout: Double = 120) throws -> (Int32, String) {
    let out = scratch + "/cmd-\(UUID().uuidString).out", err = scratch + "/cmd.err"
    let child = try Child(arguments, environment: environment, stdout: out, stderr: err)
    if !child.wait(seconds: timeout) { child.stop(grace: 5) }
    let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(atPath: out)
    return (child.status ?? -1, text)
}

// MARK: - Reading a workspace's runs (files only: run.json, journal.jsonl)

struct RunInfo {
    var id: String
    var manifest: [String: Any]
    var triggerPath: String? { manifest["triggerPath"] as? String }
    var chatFile: String? { manifest["chatFile"] as? String }
    var skipped: Bool { manifest["skipped"] as? Bool ?? false }
}

struct JournalState {
    /// "finished", "failed", "interrupted", or nil while the run goes on.
    var end: String?
    var message: String?
    var promptTokens = 0
    var completionTokens = 0
    var tokens: Int { promptTokens + completionTokens }
    var responses = 0
}

struct RunFolder {
    let workspace: String
    var folder: String { workspace + "/.relay/runs" }

    func ids() -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0 != "by-trigger" && FileManager.default.fileExists(atPath: folder + "/" + $0 + "/run.json")
        })
    }

    func info(_ id: String) -> RunInfo? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + id + "/run.json"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return RunInfo(id: id, manifest: object)
    }

    func journal(_ id: String) -> JournalState {
        var state = JournalState()
        guard let data = FileManager.default.contents(atPath: folder + "/" + id + "/journal.jsonl") else { return state }
        for line in data.split(separator: 0x0A) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let type = object["type"] as? String else { continue }
            switch type {
            case "response":
                state.responses += 1
                if let usage = object["usage"] as? [String: Any] {
                    state.promptTokens += (usage["promptTokens"] as? Int) ?? 0
                    state.completionTokens += (usage["completionTokens"] as? Int) ?? 0
                }
            case "finished", "failed", "interrupted":
                state.end = type
                state.message = object["message"] as? String
            default: break
            }
            // A failed or interrupted run that goes on (the daemon resumes it once the model
            // answers again) is not over: only a last record ends it.
            if !["finished", "failed", "interrupted"].contains(type) { state.end = nil }
        }
        return state
    }

    var daemonLog: String { workspace + "/.relay/log/watch.log" }

    /// The size of the daemon's log now: where to look for what it says next.
    func daemonLogOffset() -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: daemonLog))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Whether the daemon has said, since `offset`, that it is done with the trigger of `path`.
    func daemonFinished(_ path: String, since offset: UInt64) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: daemonLog) else { return false }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").contains { $0.contains("trigger finished") && $0.contains("relay.path=\(path) ") }
    }

    /// Waits for a new run (not in `known`) that `matches`, then for it to end: its journal's
    /// last record is `finished`, or `failed`/`interrupted` and the daemon says it is done with
    /// the trigger (under `relay watch` a run that failed on a busy model server is resumed, so
    /// `failed` alone is not the end).
    func waitForRun(known: Set<String>, timeout: Double, path: String? = nil, logOffset: UInt64 = 0,
                    matches: (RunInfo) -> Bool) -> (RunInfo?, JournalState, Double, Bool) {
        let start = now(), deadline = start + timeout
        var found: RunInfo?
        while now() < deadline {
            if found == nil {
                for id in ids().subtracting(known).sorted() { if let info = info(id), matches(info) { found = info; break } }
            }
            if let run = found {
                let state = journal(run.id)
                if state.end == "finished" || (state.end != nil && (path == nil || daemonFinished(path!, since: logOffset))) {
                    return (run, state, now() - start, false)
                }
            }
            usleep(250_000)
        }
        return (found, found.map { journal($0.id) } ?? JournalState(), now() - start, true)
    }
}

// MARK: - The chat file's markers

enum ChatFile {
    /// The text of the last `### ` section of run `id`'s block in a chat file, or nil when the
    /// block or its end marker is not there yet.
    static func lastSection(_ text: String, run id: String) -> String? {
        guard let begin = text.range(of: "<!-- relay:turn \(id) -->"),
              let end = text.range(of: "<!-- relay:end \(id)", range: begin.upperBound..<text.endIndex) else { return nil }
        let block = String(text[begin.upperBound..<end.lowerBound])
        var sections: [String] = []
        var current: [Substring]?
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") {
                if let current { sections.append(current.joined(separator: "\n")) }
                current = []
            } else {
                current?.append(line)
            }
        }
        if let current { sections.append(current.joined(separator: "\n")) }
        guard var last = sections.last else { return "" }
        last = last.replacingOccurrences(of: "_… the relay is still working …_", with: "")
        return last.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every section of run `id`'s block, joined (to see whether the answer was anywhere in the turn).
    static func wholeTurn(_ text: String, run id: String) -> String {
        guard let begin = text.range(of: "<!-- relay:turn \(id) -->"),
              let end = text.range(of: "<!-- relay:end \(id)", range: begin.upperBound..<text.endIndex) else { return "" }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    /// `Chats/NAME.json`, the transcript beside `Chats/NAME.md`.
    static func transcript(of chatFile: String) -> String { String(chatFile.dropLast(3)) + ".json" }

    /// The messages of run `id` in a transcript.
    static func messages(transcript path: String, run id: String) -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: path),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let messages = root["messages"] as? [[String: Any]] else { return [] }
        return messages.filter { $0["turn"] as? String == id }
    }

    /// Why a routed turn's agent was selected (its message's `selectedBy`).
    static func selection(transcript path: String, run id: String) -> String? {
        messages(transcript: path, run: id).lazy.compactMap { $0["selectedBy"] as? String }.first
    }

    /// A plan turn's subtasks (its workers' messages, in plan order).
    static func subtasks(transcript path: String, run id: String) -> [String]? {
        let subtasks = messages(transcript: path, run: id).compactMap { $0["subtask"] as? String }
        return subtasks.isEmpty ? nil : subtasks
    }
}

// MARK: - Results

struct DocumentResult: Codable, Sendable {
    var id: String
    var kind: String
    var dropped: String
    var state: String
    var seconds: Double
    var tokens: Int
    var summary: String
    var score: SummaryScore?
    var factsInContext: [Bool]
    var run: String?
    var error: String?
}

struct QuestionResult: Codable, Sendable {
    var id: String
    var from: String
    /// The question's kind (lookup when the task set gives none).
    var kind: String? = nil
    var question: String
    var via: String
    var state: String
    var seconds: Double
    var tokens: Int
    var answer: String
    var score: AnswerScore
    /// Whether an accepted answer was anywhere in the turn (any agent's message): a diagnostic,
    /// not a score — a user reads the answer, not the whole turn.
    var anywhereInTurn: Bool
    var run: String?
    var error: String?
    /// A routed turn: who was selected and why (the `selected` event, or the transcript's `selectedBy`).
    var selection: String? = nil
    /// A plan turn: the planner's subtasks (the `planned` event).
    var subtasks: [String]? = nil
}

struct Totals: Codable, Sendable {
    var documents: Int
    var recall: Double
    var rawRecall: Double
    var overLong: Int
    var meanLengthRatio: Double
    var summaryPrecision: Double?
    var answerPrecision: Double?
    var factsInContext: Int
    var facts: Int
    var questions: Int
    var answered: Int
    var tooLong: Int
    var wrong: Int
    var medianSecondsPerDocument: Double
    var meanSecondsPerDocument: Double
    var medianSecondsPerQuestion: Double
    var meanTokensPerDocument: Double
    var meanTokensPerQuestion: Double
    var totalSeconds: Double
    var totalTokens: Int
    /// Questions and answered questions per kind ("lookup" → [asked, answered]).
    var byKind: [String: [Int]]? = nil
    /// Numbers and names found nowhere in the workspace (notes, context.md, documents, the
    /// question), over all answers but those of kind general (labelled as not from the workspace).
    var invented: Int? = nil
    var inventedValues: [String]? = nil
    /// Questions the workspace cannot answer, and how many got "the workspace does not say"
    /// with nothing invented.
    var notFound: [Int]? = nil
    /// Turns of the chat files (follow-ups), and how many were answered.
    var chatTurns: [Int]? = nil
}

struct ConfigResult: Codable, Sendable {
    var config: String
    /// The task set's label ("public", "general-dev", "general-heldout") and split.
    var taskSet: String? = nil
    var split: String? = nil
    var workspace: String
    var documents: [DocumentResult]
    var questions: [QuestionResult]
    var totals: Totals
    /// What the scores were computed against, so `--report --rescore` can score the same texts
    /// again with a changed scorer: the roster's vocabulary and the sources of the answers.
    var rosterWords: [String]? = nil
    var answerSources: [String]? = nil
}

struct EvalResults: Codable, Sendable {
    var format = "relay-eval-results-1"
    var model: String
    var url: String?
    var date: String
    var commit: String?
    var tasks: [String]
    var configs: [ConfigResult]
    /// relay/solo.
    var ratios: [String: Double?]
    /// The agentic modes against the template's relay: "route/relay", "plan/relay" → the same keys as `ratios`.
    var modeRatios: [String: [String: Double?]]? = nil
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

func microPrecision(_ results: [Claims.Result]) -> Double? {
    let counted = results.reduce(0) { $0 + $1.counted }
    return counted == 0 ? nil : Double(results.reduce(0) { $0 + $1.supported }) / Double(counted)
}

func totals(_ documents: [DocumentResult], _ questions: [QuestionResult], seconds: Double) -> Totals {
    let scores = documents.compactMap(\.score)
    let grounded = questions.filter { $0.score.kind != QuestionKind.general.rawValue }
    let notFound = questions.filter { $0.score.kind == QuestionKind.notfound.rawValue }
    let chat = questions.filter { $0.via != "relay ask" }
    return Totals(
        documents: documents.count,
        recall: mean(documents.map { $0.score?.recall ?? 0 }),
        rawRecall: mean(documents.map { $0.score?.rawRecall ?? 0 }),
        overLong: scores.filter(\.overLong).count,
        meanLengthRatio: mean(scores.map(\.lengthRatio)),
        summaryPrecision: microPrecision(scores.map(\.precision)),
        answerPrecision: microPrecision(questions.filter { $0.score.kind != QuestionKind.general.rawValue }.map(\.score.precision)),
        factsInContext: documents.reduce(0) { $0 + $1.factsInContext.filter { $0 }.count },
        facts: documents.reduce(0) { $0 + $1.factsInContext.count },
        questions: questions.count,
        answered: questions.filter { $0.score.verdict == .answered }.count,
        tooLong: questions.filter { $0.score.verdict == .tooLong }.count,
        wrong: questions.filter { $0.score.verdict == .wrong }.count,
        medianSecondsPerDocument: median(documents.map(\.seconds)),
        meanSecondsPerDocument: mean(documents.map(\.seconds)),
        medianSecondsPerQuestion: median(questions.map(\.seconds)),
        meanTokensPerDocument: mean(documents.map { Double($0.tokens) }),
        meanTokensPerQuestion: mean(questions.map { Double($0.tokens) }),
        totalSeconds: seconds,
        totalTokens: documents.reduce(0) { $0 + $1.tokens } + questions.reduce(0) { $0 + $1.tokens },
        byKind: byKind(questions),
        invented: grounded.reduce(0) { $0 + $1.score.precision.unsupported.count },
        inventedValues: grounded.flatMap(\.score.precision.unsupported),
        notFound: [notFound.count, notFound.filter { $0.score.verdict == .answered }.count],
        chatTurns: [chat.count, chat.filter { $0.score.verdict == .answered }.count])
}

/// Asked and answered per kind; a question scored before kinds is a lookup.
func byKind(_ questions: [QuestionResult]) -> [String: [Int]] {
    var result: [String: [Int]] = [:]
    for question in questions {
        let kind = question.score.kind ?? question.kind ?? QuestionKind.lookup.rawValue
        var tally = result[kind] ?? [0, 0]
        tally[0] += 1
        if question.score.verdict == .answered { tally[1] += 1 }
        result[kind] = tally
    }
    return result
}

/// "lookup 3/5 · list 1/2 …", in the kinds' order.
func kindLine(_ byKind: [String: [Int]]) -> String {
    QuestionKind.allCases.compactMap { kind in byKind[kind.rawValue].map { "\(kind.rawValue) \($0[1])/\($0[0])" } }.joined(separator: " · ")
}

// MARK: - Options

struct Options {
    var model = "smollm2"
    var url: String?
    var configs = ["relay", "route", "plan", "solo"]
    var tasks: Set<String>?
    var keep = false
    var timeout = 300.0
    var json: String?
    var relay: String?
    var tasksDir: String?
    var out: String?
    var selfTest = false
    /// Print the tables of earlier results (results.json or partial-CONFIG.json files) and exit.
    var reports: [String] = []
    var rescore = false
    /// With --report: one headline line per configuration and task set, nothing else.
    var brief = false

    static let knownConfigs = ["relay", "route", "plan", "solo"]

    static let usage = """
        usage: relay-eval [--model NAME] [--url URL] [--configs relay,route,plan,solo] [--tasks id,id] [--keep]
                          [--timeout SECONDS] [--json PATH] [--relay PATH] [--tasks-dir DIR] [--out DIR]
               relay-eval --self-test
               relay-eval --report FILE [FILE…] [--rescore] [--brief] [--json PATH]
          --model NAME      a label for the model (results go to .build/eval/NAME/); default smollm2
          --url URL         the model server (sets RELAY_MODEL_URL for every relay process)
          --configs LIST    which configurations to run: relay (the template), route (its chat relay routed to
                            one agent), plan (its chat relay planned: planner, parallel workers, coordinator),
                            solo (one plain agent); default all four
          --tasks LIST      only these tasks: document ids, question ids, chat ids (tasks.json)
          --keep            keep the workspaces (default: removed; results.json holds every output)
          --timeout S       per task (a drop, a question, a chat turn); default 300
          --json PATH       also write the results there
          --relay PATH      the relay binary (default: the one next to relay-eval)
          --tasks-dir DIR   the task set (default: Tests/Eval)
          --self-test       check the scorer on made-up texts and exit
          --report FILE…    print the tables of earlier results (results.json, partial-CONFIG.json) and exit;
                            with --rescore, score their texts again with this scorer; with --tasks, only those
                            tasks of each; with --json, write them merged; with --brief, one line per
                            configuration and task set (what `make eval` prints last)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw EvalError("\(arguments[index - 1]) needs a value\n\(usage)") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--model": options.model = try value()
            case "--url": options.url = try value()
            case "--configs": options.configs = try value().split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            case "--tasks": options.tasks = Set(try value().split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) })
            case "--keep": options.keep = true
            case "--timeout": guard let t = Double(try value()), t > 0 else { throw EvalError("--timeout needs seconds") }; options.timeout = t
            case "--json": options.json = try value()
            case "--relay": options.relay = try value()
            case "--tasks-dir": options.tasksDir = try value()
            case "--out": options.out = try value()
            case "--self-test": options.selfTest = true
            case "--rescore": options.rescore = true
            case "--brief": options.brief = true
            case "--report":
                options.reports.append(try value())
                while index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") { index += 1; options.reports.append(arguments[index]) }
            case "-h", "--help": print(usage); exit(0)
            default: throw EvalError("unknown option \(arguments[index])\n\(usage)")
            }
            index += 1
        }
        for config in options.configs where !Options.knownConfigs.contains(config) {
            throw EvalError("unknown configuration '\(config)' (\(Options.knownConfigs.joined(separator: ", ")))")
        }
        guard options.model.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }), !options.model.isEmpty else {
            throw EvalError("--model: letters, digits, '-', '_' and '.' only")
        }
        return options
    }
}

// MARK: - The harness

/// The solo baseline: one agent, a plain prompt, the reading tools Remy has (so it can look in
/// the workspace as the relay can), the template's research request, nothing else.
enum Solo {
    static let rosterFile = "SoloAgent.json"
    static let agentID = "assistant"
    static var roster: [[String: Any]] { [[
        "id": agentID, "name": "Solo", "emoji": "🤖", "color": "#7F8C8D",
        "systemPrompt": "You are a helpful assistant.", "order": 0,
        "tools": ["read_file", "list_files", "search_files"],
    ]] }
    static let defaultResearchRequest = "A file arrived in the workspace: {path}. Summarise what it says, for the people who keep this workspace."

    static func relayJSON(researchRequest: String) -> [String: Any] {
        [
            "version": 1,
            "model": ["temperature": 0],
            "relays": [
                "chat": ["roster": rosterFile, "input": "chat"],
                "research": ["roster": rosterFile, "input": "file", "request": researchRequest,
                             "agents": [agentID: ["output": ["write": "Research/{name}/summary.md"]]]],
            ],
            "triggers": [
                ["pattern": "Research/**", "exclude": ["**/README.md", "Research/*/summary.md"], "relay": "research"],
                ["pattern": "Chats/*.md", "exclude": ["Chats/README.md"], "relay": "chat"],
            ],
        ]
    }
}

/// The agentic modes (issue 19) on the same workspace as "relay": the template's research relay
/// and triggers unchanged, its chat relay (questions through `relay ask`, chat files under
/// `relay watch`) replaced by a routed or a plan relay over a roster written here. The template
/// does not ship these: its three agents are one pipeline (lines → answer → check), not
/// alternatives to route between nor roles of a plan, and on SmolLM2 neither mode answers more
/// than the template's relay (docs/eval.md), so they are measured, not the default.
enum Orchestrated {
    static let researcherPrompt = "Relay searched the workspace for the request and shows you the best matching lines, numbered, each with its file and line."

    /// Two alternatives: Remy answers from the workspace on its own (the value of a retrieved
    /// line, chosen under a grammar), Wren writes new text; rules for writing requests, then the
    /// classifier under an enum of the two names, then Remy.
    static let routeRosterFile = "RouteAgents.json"
    static var routeRoster: [[String: Any]] { [
        ["id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "order": 0, "tools": [String](),
         "systemPrompt": "You are Remy. You answer questions about what the workspace holds: the person's notes, the documents dropped in Research/, context.md. "
             + researcherPrompt + " Give the name, number or date the question asks for.",
         "retrieve": 6, "extract": "answer"],
        ["id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "order": 1, "tools": [String](),
         "systemPrompt": "You are Wren. You write new text a person asks for: a poem, a letter, an e-mail, a draft, a rewrite. Write it briefly.",
         "route": ["keywords": ["write", "draft", "poem", "rewrite", "compose"]]],
    ] }

    /// Paige splits the question into look-ups, a Remy per look-up chooses workspace lines for it
    /// (two at a time: `make model`'s two slots), Wren answers from all their lines in plan order.
    static let planRosterFile = "PlanAgents.json"
    static var planRoster: [[String: Any]] { [
        ["id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "order": 0, "tools": [String](),
         "systemPrompt": "You are Paige, the Planner. You split the person's question into small questions that can each be looked up in the workspace on its own: one for each person, thing, number or date the question needs."],
        ["id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "order": 1, "tools": [String](),
         "systemPrompt": "You are Remy, the Researcher. You look up one small question of a plan. " + researcherPrompt
             + " Choose the lines that answer your subtask: the ones that name the person, thing, number or date it asks about.",
         "retrieve": 6, "extract": "lines"],
        ["id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "order": 2, "tools": [String](),
         "systemPrompt": "You are Wren, the Writer. You receive the user's request and the researchers' notes: lines from the workspace's files, one group per subtask. Give the answer the notes hold: the name, number or date the request asks for.",
         "extract": "answer"],
    ] }

    /// The chat relay of `config` ("route" or "plan").
    static func chatRelay(_ config: String) -> (roster: [[String: Any]], file: String, relay: [String: Any]) {
        if config == "route" {
            return (routeRoster, routeRosterFile, ["roster": routeRosterFile, "input": "chat", "mode": "route", "classifier": true,
                                                   "description": "Answers messages: one agent per turn (rules, then a classifier)"])
        }
        return (planRoster, planRosterFile, ["roster": planRosterFile, "input": "chat", "mode": "plan", "planner": "planner", "worker": "researcher",
                                             "coordinator": "writer", "minWorkers": 2, "maxWorkers": 3, "parallel": 2,
                                             "description": "Answers messages: a plan of look-ups, done in parallel, combined"])
    }
}

func jsonData(_ object: Any) throws -> Data {
    try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
}

func write(_ path: String, _ text: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Moves a file into place the way a person's save or `mv` does: written whole elsewhere first.
func drop(_ bytes: [UInt8], at path: String, scratch: String) throws {
    let temporary = scratch + "/drop-\(UUID().uuidString)"
    try Data(bytes).write(to: URL(fileURLWithPath: temporary))
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    guard rename(temporary, path) == 0 else { throw EvalError("cannot move \(temporary) to \(path): \(String(cString: strerror(errno)))") }
}

/// Adds lines under a `## section` of context.md (before the next heading), as a person would;
/// a section the file lacks is added at the end.
func addToContext(_ text: String, _ additions: [ContextLines]) -> String {
    var lines = text.components(separatedBy: "\n")
    for addition in additions {
        if let heading = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "## " + addition.section }) {
            var end = lines[(heading + 1)...].firstIndex(where: { $0.hasPrefix("## ") }) ?? lines.count
            while end > heading + 1, lines[end - 1].trimmingCharacters(in: .whitespaces).isEmpty { end -= 1 }
            lines.insert(contentsOf: [""] + addition.lines, at: end)
        } else {
            while let last = lines.last, last.isEmpty { lines.removeLast() }
            lines += ["", "## " + addition.section, ""] + addition.lines
        }
    }
    var result = lines.joined(separator: "\n")
    if !result.hasSuffix("\n") { result += "\n" }
    return result
}

final class Harness {
    let options: Options
    let tasks: TaskSet
    let tasksDir: String
    let relay: String
    let outRoot: String
    var environment: [String: String]
    private var currentRoster: Set<String> = []
    private var currentSources: [String] = []

    init(options: Options, tasks: TaskSet, tasksDir: String, relay: String, outRoot: String) {
        self.options = options
        self.tasks = tasks
        self.tasksDir = tasksDir
        self.relay = relay
        self.outRoot = outRoot
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "RELAY_WORKSPACE")
        if let url = options.url { environment["RELAY_MODEL_URL"] = url }
        // The task set's "today" is the engine's today in every relay process (issue 32): the
        // notes' "this week" and "yesterday" stay where the set was written.
        if let today = tasks.today { environment["RELAY_TODAY"] = today } else { environment.removeValue(forKey: "RELAY_TODAY") }
        self.environment = environment
    }

    func selected<T>(_ items: [T], id: (T) -> String) -> [T] {
        guard let wanted = options.tasks else { return items }
        return items.filter { wanted.contains(id($0)) }
    }

    func read(_ relative: String) throws -> String {
        let path = tasksDir + "/" + relative
        guard let data = FileManager.default.contents(atPath: path) else { throw EvalError("cannot read \(path)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The text a document's summary is measured against: Markdown and text as they are, HTML
    /// without its markup, the PDF's source text.
    func sourceText(_ document: DocumentTask) throws -> String {
        let raw = try read(document.file)
        return document.file.hasSuffix(".html") || document.file.hasSuffix(".htm") ? Text.htmlText(raw) : raw
    }

    func dropName(_ document: DocumentTask) -> String {
        let file = (document.file as NSString).lastPathComponent
        if let kind = document.dropAs { return (file as NSString).deletingPathExtension + "." + kind }
        return file
    }

    func dropBytes(_ document: DocumentTask) throws -> [UInt8] {
        let raw = try read(document.file)
        if document.dropAs == "pdf" { return PDFMaker.pdf(from: raw) }
        return Array(raw.utf8)
    }

    func log(_ line: String) {
        print(line)
        fflush(nil)
    }

    /// The vocabulary of a workspace's agents: never counted as names.
    func rosterWords(_ workspace: String) -> Set<String> {
        var texts: [String] = []
        for file in ["AgentConfiguration.json", Solo.rosterFile, Orchestrated.routeRosterFile, Orchestrated.planRosterFile, "relay.json"] {
            guard let data = FileManager.default.contents(atPath: workspace + "/" + file) else { continue }
            texts.append(String(decoding: data, as: UTF8.self))
        }
        texts.append(Solo.defaultResearchRequest)
        var words = Claims.words(texts.joined(separator: "\n"))
        words.formUnion(["relay", "solo", "assistant"])
        return words
    }

    /// Makes the workspace of one configuration: `relay init`, the configuration's relay.json
    /// (and roster), the person's notes and context lines.
    func makeWorkspace(_ config: String, at workspace: String, scratch: String) throws {
        try? FileManager.default.removeItem(atPath: workspace)
        try FileManager.default.createDirectory(atPath: (workspace as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (status, output) = try run([relay, "init", workspace], environment: environment, scratch: scratch)
        guard status == 0 else { throw EvalError("relay init \(workspace) failed (\(status)): \(output)") }
        let relayJSONPath = workspace + "/relay.json"
        guard let data = FileManager.default.contents(atPath: relayJSONPath),
              var configuration = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EvalError("relay init made no readable relay.json in \(workspace)")
        }
        let relays = configuration["relays"] as? [String: Any]
        let researchRequest = ((relays?["research"] as? [String: Any])?["request"] as? String) ?? Solo.defaultResearchRequest
        switch config {
        case "relay", "route", "plan":
            var model = configuration["model"] as? [String: Any] ?? [:]
            model["temperature"] = 0
            configuration["model"] = model
            if config != "relay" {
                let (roster, file, chat) = Orchestrated.chatRelay(config)
                try jsonData(roster).write(to: URL(fileURLWithPath: workspace + "/" + file))
                var relays = configuration["relays"] as? [String: Any] ?? [:]
                relays["chat"] = chat
                configuration["relays"] = relays
            }
            try jsonData(configuration).write(to: URL(fileURLWithPath: relayJSONPath))
        default:
            try jsonData(Solo.roster).write(to: URL(fileURLWithPath: workspace + "/" + Solo.rosterFile))
            try jsonData(Solo.relayJSON(researchRequest: researchRequest)).write(to: URL(fileURLWithPath: relayJSONPath))
        }
        for note in tasks.journal {
            try write(workspace + "/Journal/user/" + (note as NSString).lastPathComponent, try read(note))
        }
        let contextPath = workspace + "/context.md"
        let context = (try? String(contentsOfFile: contextPath, encoding: .utf8)) ?? "# Context\n"
        try write(contextPath, addToContext(context, tasks.context))
        let (agentsStatus, agentsOutput) = try run([relay, "agents", "-w", workspace], environment: environment, scratch: scratch)
        guard agentsStatus == 0 else { throw EvalError("relay agents rejects the \(config) workspace: \(agentsOutput)") }
    }

    func runConfig(_ config: String) throws -> ConfigResult {
        let started = now()
        let workspace = outRoot + "/" + config
        let scratch = outRoot + "/scratch-" + config
        try? FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        log("── \(config): workspace \(workspace)")
        try makeWorkspace(config, at: workspace, scratch: scratch)
        let roster = rosterWords(workspace)
        let runs = RunFolder(workspace: workspace)

        // Sources every answer may draw on: the notes, context.md as the person left it, the documents.
        var answerSources: [String] = try tasks.journal.map { try read($0) }
        answerSources.append((try? String(contentsOfFile: workspace + "/context.md", encoding: .utf8)) ?? "")
        answerSources += try tasks.documents.map { try sourceText($0) }
        currentRoster = roster
        currentSources = answerSources

        let watchLog = outRoot + "/\(config)-watch.log"
        let watch = try Child([relay, "watch", "-w", workspace], environment: environment, stdout: watchLog, stderr: watchLog)
        defer { watch.stop() }
        // The daemon is ready once its first start has taken the folder as the baseline (what is
        // there then starts nothing, so a drop must come after): its log says so.
        var ready = false
        for _ in 0..<300 {
            if !watch.isRunning { throw EvalError("relay watch exited at once (\(watch.status ?? -1)); see \(watchLog)") }
            let daemonLog = (try? String(contentsOfFile: workspace + "/.relay/log/watch.log", encoding: .utf8)) ?? ""
            if daemonLog.contains("baseline") { ready = true; break }
            usleep(100_000)
        }
        if !ready { log("   (the daemon's log never mentioned its baseline; going on)") }
        sleep(1)

        var documents: [DocumentResult] = []
        for document in selected(tasks.documents, id: \.id) {
            let name = dropName(document)
            let target = "Research/" + name
            let known = runs.ids()
            let source = try sourceText(document)
            let logOffset = runs.daemonLogOffset()
            try drop(try dropBytes(document), at: workspace + "/" + target, scratch: scratch)
            let (info, state, seconds, timedOut) = runs.waitForRun(known: known, timeout: options.timeout, path: target, logOffset: logOffset) { $0.triggerPath == target }
            var result = DocumentResult(id: document.id, kind: document.kind, dropped: target, state: "", seconds: seconds, tokens: state.tokens,
                                        summary: "", score: nil, factsInContext: [], run: info?.id, error: nil)
            if timedOut {
                result.state = info == nil ? "no run" : "timeout"
                result.error = info == nil ? "no run started for \(target) within \(Int(options.timeout)) s" : "the run did not finish within \(Int(options.timeout)) s"
                if let id = info?.id {
                    // Let it finish before the next drop, so it does not slow the next task; the
                    // summary it then writes is scored (its state says it came late), and the
                    // seconds are the whole time it took.
                    let (_, late, more, stillRunning) = runs.waitForRun(known: known, timeout: options.timeout, path: target, logOffset: logOffset) { $0.id == id }
                    result.seconds += more
                    result.tokens = late.tokens
                    if !stillRunning { result.state = "late " + (late.end ?? "?") }
                }
            } else {
                result.state = info?.skipped == true ? "skipped" : (state.end ?? "?")
                if state.end != "finished" { result.error = state.message }
            }
            let stem = (name as NSString).deletingPathExtension
            let summary = (try? String(contentsOfFile: workspace + "/Research/\(stem)/summary.md", encoding: .utf8)) ?? ""
            result.summary = summary
            result.score = Scorer.summary(summary, source: source, facts: document.facts, roster: roster)
            documents.append(result)
            savePartial(config, documents, [], started: started)
            let score = result.score!
            log(String(format: "[%@] doc %@ %@recall %d/%d%@  length %5.2f  precision %@  %6.1f s  %6d tokens",
                       config, pad(document.id, 13), result.state == "finished" ? "" : "(\(result.state)) ",
                       score.factsFound.filter { $0 }.count, document.facts.count, score.overLong ? " (over-long: 0)" : "",
                       score.lengthRatio, percent(score.precision.precision), seconds, state.tokens))
        }
        let context = (try? String(contentsOfFile: workspace + "/context.md", encoding: .utf8)) ?? ""
        for index in documents.indices {
            let facts = tasks.documents.first { $0.id == documents[index].id }?.facts ?? []
            documents[index].factsInContext = facts.map { Text.found($0, in: context) }
        }

        var questions: [QuestionResult] = []
        for question in selected(tasks.questions, id: \.id) {
            let result = try ask(question, workspace: workspace, scratch: scratch, runs: runs, sources: answerSources, roster: roster)
            questions.append(result)
            logQuestion(config, result)
            savePartial(config, documents, questions, started: started)
        }
        for chat in selected(tasks.chats, id: \.id) {
            for result in try converse(chat, workspace: workspace, scratch: scratch, runs: runs, sources: answerSources, roster: roster) {
                questions.append(result)
                logQuestion(config, result)
            }
            savePartial(config, documents, questions, started: started)
        }
        watch.stop()
        if !options.keep { try? FileManager.default.removeItem(atPath: workspace) }
        return ConfigResult(config: config, taskSet: tasks.label, split: tasks.split, workspace: workspace, documents: documents, questions: questions,
                            totals: totals(documents, questions, seconds: now() - started),
                            rosterWords: roster.sorted(), answerSources: answerSources)
    }

    /// What a configuration has so far, written after every task: a run cut short still leaves its figures.
    func savePartial(_ config: String, _ documents: [DocumentResult], _ questions: [QuestionResult], started: Double) {
        let partial = ConfigResult(config: config, taskSet: tasks.label, split: tasks.split, workspace: outRoot + "/" + config, documents: documents, questions: questions,
                                   totals: totals(documents, questions, seconds: now() - started),
                                   rosterWords: currentRoster.sorted(), answerSources: currentSources)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try? encoder.encode(partial).write(to: URL(fileURLWithPath: outRoot + "/partial-\(config).json"))
    }

    func logQuestion(_ config: String, _ result: QuestionResult) {
        // A held-out set's answers stay out of the log (they would show its questions to whoever
        // tunes the engine); results.json keeps them for the report.
        let answer = tasks.isHeldOut ? "" : result.answer.split(whereSeparator: \.isNewline).joined(separator: " ")
        log(String(format: "[%@] ask %@ %@ %@ precision %@  %6.1f s  %6d tokens  %@", config, pad(result.id, 22), pad(result.kind ?? "lookup", 9),
                   pad(result.score.verdict.rawValue, 9), percent(result.score.precision.precision), result.seconds, result.tokens, String(answer.prefix(70))))
    }

    /// One question through `relay ask --json`: the answer is the `final` event's text.
    func ask(_ question: Question, workspace: String, scratch: String, runs: RunFolder, sources: [String], roster: Set<String>) throws -> QuestionResult {
        let out = scratch + "/ask-\(question.id).jsonl"
        let started = now()
        let child = try Child([relay, "ask", "-w", workspace, "--json", question.question], environment: environment,
                              stdout: out, stderr: scratch + "/ask-\(question.id).err")
        let finished = child.wait(seconds: options.timeout)
        if !finished { child.stop(grace: 10) }
        let seconds = now() - started
        var answer = "", runID: String?, error: String?, selection: String?, subtasks: [String]?
        var turn: [String] = []
        for line in ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n") {
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            switch event["event"] as? String {
            case "runStarted": runID = event["run"] as? String
            case "agentFinished": turn.append(event["text"] as? String ?? "")
            case "final": answer = event["text"] as? String ?? ""
            case "error": error = event["message"] as? String
            case "selected": selection = event["reason"] as? String
            case "planned": subtasks = event["subtasks"] as? [String]
            default: break
            }
        }
        if error == nil, child.status != 0 {
            error = finished ? "relay ask exited \(child.status ?? -1): " + ((try? String(contentsOfFile: scratch + "/ask-\(question.id).err", encoding: .utf8)) ?? "") : "timeout"
        }
        let state = runID.map { runs.journal($0) } ?? JournalState()
        let expect = question.expectation
        return QuestionResult(id: question.id, from: question.from, kind: expect.kind.rawValue, question: question.question, via: "relay ask",
                              state: !finished ? "timeout" : (state.end ?? (error == nil ? "?" : "failed")), seconds: seconds, tokens: state.tokens,
                              answer: answer, score: Scorer.answer(answer, expect: expect, sources: sources + [question.question], roster: roster, question: question.question),
                              anywhereInTurn: inTurn(expect, turn.joined(separator: "\n")), run: runID, error: error.map { String($0.prefix(400)) },
                              selection: selection, subtasks: subtasks)
    }

    /// Whether what the answer needed appeared anywhere in the turn (a diagnostic): an accepted
    /// value, or every item of a list.
    func inTurn(_ expect: Expectation, _ text: String) -> Bool {
        if let accept = expect.accept { return Text.found(accept, anywhereIn: text) }
        if let all = expect.all { return all.allSatisfy { Text.found([$0], anywhereIn: text) } }
        if let items = expect.items { return items.contains { Text.found($0.alternatives, anywhereIn: text) } }
        return false
    }

    /// A follow-up conversation written into one Chats/NAME.md under `relay watch`: each turn is
    /// the person's message at the end of the file; the answer is the last `### ` section of
    /// that turn's block.
    func converse(_ chat: ChatTask, workspace: String, scratch: String, runs: RunFolder, sources: [String], roster: Set<String>) throws -> [QuestionResult] {
        let chatFile = "Chats/eval-\(chat.id).md"
        let path = workspace + "/" + chatFile
        var results: [QuestionResult] = []
        var asked: [String] = []
        for (index, turn) in chat.turns.enumerated() {
            let known = runs.ids()
            var text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if !text.isEmpty {
                if !text.hasSuffix("\n") { text += "\n" }
                text += "\n"
            }
            text += turn.question + "\n"
            let logOffset = runs.daemonLogOffset()
            try drop(Array(text.utf8), at: path, scratch: scratch)
            asked.append(turn.question)
            let (info, state, seconds, timedOut) = runs.waitForRun(known: known, timeout: options.timeout, path: chatFile, logOffset: logOffset) { $0.chatFile == chatFile }
            let file = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            let answer = info.flatMap { ChatFile.lastSection(file, run: $0.id) } ?? ""
            let whole = info.map { ChatFile.wholeTurn(file, run: $0.id) } ?? ""
            let expect = turn.expectation
            results.append(QuestionResult(
                id: "\(chat.id)#\(index + 1)", from: chat.from, kind: expect.kind.rawValue, question: turn.question, via: chatFile,
                state: timedOut ? (info == nil ? "no run" : "timeout") : (state.end ?? "?"), seconds: seconds, tokens: state.tokens, answer: answer,
                score: Scorer.answer(answer, expect: expect, sources: sources + asked, roster: roster, question: turn.question),
                anywhereInTurn: inTurn(expect, whole), run: info?.id,
                error: timedOut ? "no answer within \(Int(options.timeout)) s" : (state.end == "finished" ? nil : state.message),
                selection: info.flatMap { ChatFile.selection(transcript: workspace + "/" + ChatFile.transcript(of: chatFile), run: $0.id) },
                subtasks: info.flatMap { ChatFile.subtasks(transcript: workspace + "/" + ChatFile.transcript(of: chatFile), run: $0.id) }))
            if timedOut, let id = info?.id { _ = runs.waitForRun(known: known, timeout: options.timeout, path: chatFile, logOffset: logOffset) { $0.id == id } }
        }
        return results
    }
}

func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text : text + String(repeating: " ", count: width - text.count) }

func percent(_ value: Double?) -> String {
    guard let value else { return "  n/a" }
    return String(format: "%4.0f%%", value * 100)
}

// MARK: - Scoring stored outputs again

/// Scores the stored summaries and answers of a result again with this scorer (after a change
/// of the scorer or of the key facts); seconds and tokens stay as measured.
func rescore(_ result: ConfigResult, tasks: TaskSet, harness: Harness) throws -> ConfigResult {
    if let set = result.taskSet, set != tasks.label {
        throw EvalError("--rescore: the \(result.config) results are of the task set \(set), not \(tasks.label): rescore them with --tasks-dir of their own set")
    }
    var result = result
    let roster = result.rosterWords.map(Set.init) ?? harness.rosterWords(result.workspace)
    var sources = result.answerSources ?? []
    if sources.isEmpty {
        sources = try tasks.journal.map { try harness.read($0) } + tasks.context.flatMap(\.lines) + tasks.documents.map { try harness.sourceText($0) }
        if let context = try? String(contentsOfFile: result.workspace + "/context.md", encoding: .utf8) { sources.append(context) }
    }
    for index in result.documents.indices {
        guard let task = tasks.documents.first(where: { $0.id == result.documents[index].id }) else { continue }
        result.documents[index].score = Scorer.summary(result.documents[index].summary, source: try harness.sourceText(task), facts: task.facts, roster: roster)
        if result.documents[index].factsInContext.count != task.facts.count {
            result.documents[index].factsInContext = [Bool](repeating: false, count: task.facts.count)
        }
    }
    for index in result.questions.indices {
        let id = result.questions[index].id
        var expect: Expectation?
        var asked = [result.questions[index].question]
        if let question = tasks.questions.first(where: { $0.id == id }) {
            expect = question.expectation
        } else if let hash = id.lastIndex(of: "#"), let chat = tasks.chats.first(where: { $0.id == String(id[..<hash]) }),
                  let turn = Int(id[id.index(after: hash)...]), turn >= 1, turn <= chat.turns.count {
            expect = chat.turns[turn - 1].expectation
            asked = chat.turns.prefix(turn).map(\.question)
        }
        guard let expect else { continue }
        result.questions[index].kind = expect.kind.rawValue
        result.questions[index].score = Scorer.answer(result.questions[index].answer, expect: expect, sources: sources + asked, roster: roster,
                                                      question: result.questions[index].question)
    }
    result.totals = totals(result.documents, result.questions, seconds: result.totals.totalSeconds)
    result.taskSet = result.taskSet ?? tasks.label
    result.split = result.split ?? tasks.split
    return result
}

// MARK: - Report

func table(_ rows: [[String]]) -> String {
    var widths = [Int](repeating: 0, count: rows.map(\.count).max() ?? 0)
    for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    return rows.map { row in
        row.enumerated().map { index, cell in index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0) }
            .joined(separator: "  ")
    }.joined(separator: "\n")
}

/// "general-heldout (held-out: report only, never tuned on)", "general-dev (dev)", "public".
func setLabel(_ result: ConfigResult) -> String {
    let name = result.taskSet ?? "public"
    switch result.split {
    case "held-out": return name + " (held-out: report only, never tuned on)"
    case let split?: return name + " (\(split))"
    case nil: return name
    }
}

func report(_ result: ConfigResult) -> String {
    let heldOut = result.split == "held-out"
    var lines = ["", "═══ \(result.config) · \(setLabel(result)) ═══", ""]
    var rows = [["DOCUMENT", "KIND", "STATE", "RECALL", "RAW", "LENGTH", "PRECISION", "SECONDS", "TOKENS", "UNSUPPORTED"]]
    for document in result.documents {
        let score = document.score
        let found = score?.factsFound.filter { $0 }.count ?? 0, all = score?.factsFound.count ?? 0
        rows.append([document.id, String(document.kind.prefix(22)), document.state,
                     score.map { String(format: "%.2f", $0.recall) } ?? "-", "\(found)/\(all)",
                     score.map { String(format: "%.2f%@", $0.lengthRatio, $0.overLong ? " over" : "") } ?? "-",
                     percent(score?.precision.precision), String(format: "%.1f", document.seconds), "\(document.tokens)",
                     (score?.precision.unsupported.prefix(6).joined(separator: ", ")) ?? ""])
    }
    lines.append(table(rows))
    lines.append("")
    rows = [["QUESTION", "KIND", "FROM", "VIA", "RESULT", "IN TURN", "PRECISION", "SECONDS", "TOKENS", heldOut ? "WHY" : "ANSWER"]]
    for question in result.questions {
        // A held-out set's answers are not printed (they would show its questions); why one is
        // not answered is (the rule it failed), and results.json keeps every text.
        let answer = heldOut ? (question.score.why ?? "") : question.answer.split(whereSeparator: \.isNewline).joined(separator: " ")
        rows.append([question.id, question.score.kind ?? question.kind ?? "lookup", question.from, question.via == "relay ask" ? "ask" : "chat",
                     question.score.verdict.rawValue, question.anywhereInTurn ? "yes" : "no", percent(question.score.precision.precision),
                     String(format: "%.1f", question.seconds), "\(question.tokens)", String(answer.prefix(60))])
    }
    lines.append(table(rows))
    let t = result.totals
    let selections = result.questions.compactMap(\.selection)
    if !selections.isEmpty {
        var kinds: [String: Int] = [:]
        for reason in selections { kinds[String(reason.prefix { $0 != ":" }), default: 0] += 1 }
        let chosen = Dictionary(grouping: selections) { reason -> String in
            let words = reason.split(separator: " ")
            return words.count > 2 && reason.hasPrefix("classifier") ? String(words[2]) : ""
        }.filter { !$0.key.isEmpty }.map { "\($0.key) \($0.value.count)" }.sorted()
        lines.append("")
        lines.append("selected by: " + kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                     + (chosen.isEmpty ? "" : " (the classifier chose: \(chosen.joined(separator: ", ")))"))
    }
    let plans = result.questions.compactMap(\.subtasks)
    if !plans.isEmpty {
        lines.append("")
        lines.append(String(format: "plans: %d, %.1f subtasks each on average; a subtask that copies the question: %d of %d",
                            plans.count, Double(plans.map(\.count).reduce(0, +)) / Double(plans.count),
                            zip(result.questions.filter { $0.subtasks != nil }, plans).map { question, subtasks in
                                subtasks.filter { Text.normalize($0) == Text.normalize(question.question) }.count
                            }.reduce(0, +), plans.map(\.count).reduce(0, +)))
    }
    lines.append("")
    lines.append(String(format: "recall %.2f (raw %.2f; %d of %d summaries over half their source) · summary precision %@ · answer precision %@",
                        t.recall, t.rawRecall, t.overLong, t.documents, percent(t.summaryPrecision), percent(t.answerPrecision)))
    lines.append(String(format: "facts in context.md %d/%d · answered %d/%d (too long %d, wrong %d)",
                        t.factsInContext, t.facts, t.answered, t.questions, t.tooLong, t.wrong))
    let kinds = t.byKind ?? byKind(result.questions)
    lines.append("answered by kind: " + kindLine(kinds))
    if let notFound = t.notFound, notFound[0] > 0 {
        lines.append("unanswerable questions answered \"the workspace does not say\" with nothing invented: \(notFound[1])/\(notFound[0])")
    }
    if let chat = t.chatTurns, chat[0] > 0 { lines.append("chat turns (follow-ups in one chat file) answered: \(chat[1])/\(chat[0])") }
    if let invented = t.invented {
        let values = heldOut ? "" : (t.inventedValues ?? []).prefix(12).joined(separator: ", ")
        lines.append("names invented in answers (numbers and names found nowhere in the workspace; kind general not counted): \(invented)"
                     + (values.isEmpty ? "" : " — \(values)"))
    }
    lines.append(String(format: "seconds per document: median %.1f, mean %.1f · per question: median %.1f · tokens per document %.0f, per question %.0f · total %.0f s, %d tokens",
                        t.medianSecondsPerDocument, t.meanSecondsPerDocument, t.medianSecondsPerQuestion, t.meanTokensPerDocument,
                        t.meanTokensPerQuestion, t.totalSeconds, t.totalTokens))
    return lines.joined(separator: "\n")
}

/// One line for a configuration of a task set: what `make eval` prints last, a line per set.
func headline(_ result: ConfigResult) -> String {
    let t = result.totals
    let kinds = t.byKind ?? byKind(result.questions)
    var parts = ["answered \(t.answered)/\(t.questions)" + (kinds.isEmpty ? "" : " (" + kindLine(kinds) + ")")]
    if let notFound = t.notFound, notFound[0] > 0 { parts.append("not found \(notFound[1])/\(notFound[0])") }
    if let chat = t.chatTurns, chat[0] > 0 { parts.append("chat turns \(chat[1])/\(chat[0])") }
    parts.append("invented \(t.invented.map(String.init) ?? "n/a")")
    parts.append(String(format: "summaries: recall %.2f, %d/%d over half, precision %@", t.recall, t.overLong, t.documents,
                        percent(t.summaryPrecision).trimmingCharacters(in: .whitespaces)))
    parts.append(String(format: "median %.1f s/question", t.medianSecondsPerQuestion))
    return "\(pad(setLabel(result), 24))  \(pad(result.config, 5))  " + parts.joined(separator: " · ")
}

/// `a`/`b` for each headline figure.
func ratios(_ a: Totals, _ b: Totals) -> [String: Double?] {
    func ratio(_ x: Double?, _ y: Double?) -> Double? {
        guard let x, let y, y != 0 else { return nil }
        return x / y
    }
    return [
        "recall": ratio(a.recall, b.recall),
        "rawRecall": ratio(a.rawRecall, b.rawRecall),
        "summaryPrecision": ratio(a.summaryPrecision, b.summaryPrecision),
        "answerPrecision": ratio(a.answerPrecision, b.answerPrecision),
        "factsInContext": ratio(Double(a.factsInContext), Double(b.factsInContext)),
        "answered": ratio(Double(a.answered), Double(b.answered)),
        "medianSecondsPerDocument": ratio(a.medianSecondsPerDocument, b.medianSecondsPerDocument),
        "medianSecondsPerQuestion": ratio(a.medianSecondsPerQuestion, b.medianSecondsPerQuestion),
        "tokensPerDocument": ratio(a.meanTokensPerDocument, b.meanTokensPerDocument),
        "tokensPerQuestion": ratio(a.meanTokensPerQuestion, b.meanTokensPerQuestion),
    ]
}

/// relay/solo (the headline of `make eval` since issue 17).
func ratios(_ configs: [ConfigResult]) -> [String: Double?] {
    guard let relay = configs.first(where: { $0.config == "relay" })?.totals, let solo = configs.first(where: { $0.config == "solo" })?.totals else { return [:] }
    return ratios(relay, solo)
}

/// The agentic modes against the template's relay: "route/relay", "plan/relay".
func modeRatios(_ configs: [ConfigResult]) -> [String: [String: Double?]] {
    guard let relay = configs.first(where: { $0.config == "relay" })?.totals else { return [:] }
    var result: [String: [String: Double?]] = [:]
    for config in configs where config.config == "route" || config.config == "plan" {
        result["\(config.config)/relay"] = ratios(config.totals, relay)
    }
    return result
}

/// One table: every configuration's figures side by side, then the ratios — each agentic mode
/// against the template's relay, and the relay against solo.
func ratioReport(_ configs: [ConfigResult]) -> String {
    guard configs.count > 1 else { return "" }
    let order = Options.knownConfigs.filter { name in configs.contains { $0.config == name } }
    let totals = order.compactMap { name in configs.first { $0.config == name }?.totals }
    var pairs: [(String, [String: Double?])] = []
    if let relay = configs.first(where: { $0.config == "relay" })?.totals {
        for name in ["route", "plan"] {
            if let mode = configs.first(where: { $0.config == name })?.totals { pairs.append(("\(name)/relay", ratios(mode, relay))) }
        }
        if let solo = configs.first(where: { $0.config == "solo" })?.totals { pairs.append(("relay/solo", ratios(relay, solo))) }
    }
    func p(_ v: Double?) -> String { percent(v).trimmingCharacters(in: .whitespaces) }
    func row(_ label: String, _ key: String?, _ value: (Totals) -> String) -> [String] {
        [label] + totals.map(value) + pairs.map { pair in key.flatMap { (pair.1[$0] ?? nil).map { String(format: "%.2f×", $0) } } ?? (key == nil ? "" : "n/a") }
    }
    let rows = [
        [""] + order + pairs.map(\.0),
        row("recall (over-long = 0)", "recall") { String(format: "%.2f", $0.recall) },
        row("recall (raw)", "rawRecall") { String(format: "%.2f", $0.rawRecall) },
        row("summaries over half their source", nil) { "\($0.overLong)/\($0.documents)" },
        row("mean length (summary/source)", nil) { String(format: "%.2f", $0.meanLengthRatio) },
        row("summary precision", "summaryPrecision") { p($0.summaryPrecision) },
        row("answer precision", "answerPrecision") { p($0.answerPrecision) },
        row("facts in context.md", "factsInContext") { "\($0.factsInContext)/\($0.facts)" },
        row("questions answered", "answered") { "\($0.answered)/\($0.questions)" },
        row("median seconds per document", "medianSecondsPerDocument") { String(format: "%.1f", $0.medianSecondsPerDocument) },
        row("median seconds per question", "medianSecondsPerQuestion") { String(format: "%.1f", $0.medianSecondsPerQuestion) },
        row("tokens per document", "tokensPerDocument") { String(format: "%.0f", $0.meanTokensPerDocument) },
        row("tokens per question", "tokensPerQuestion") { String(format: "%.0f", $0.meanTokensPerQuestion) },
    ]
    return "\n═══ \(order.joined(separator: " · ")) ═══\n\n" + table(rows)
}

// MARK: - Self-test of the scorer

/// Checks one task set (its folder): each key fact is in one sentence of its document (a summary
/// that copied the document would find them all), each question has the fields its kind needs and
/// its expected strings are in the workspace (or, for an unanswerable one, its `absent` strings
/// are not); a general set also has what issue 32 asks of it. A held-out set's messages name its
/// ids only: the self-test runs in `make eval`, in front of whoever tunes the engine.
@discardableResult
func checkTaskSet(_ folder: String, options: Options, roster: Set<String>, check: (Bool, String) -> Void) -> TaskSet? {
    let tasks: TaskSet
    do { tasks = try TaskSet.load(folder + "/tasks.json") } catch { check(false, "\(error)"); return nil }
    let label = tasks.label
    let heldOut = tasks.isHeldOut
    func named(_ id: String, _ question: String) -> String { heldOut ? "\(label) \(id)" : "\(label) \(id) ('\(question)')" }
    let harness = Harness(options: options, tasks: tasks, tasksDir: folder, relay: "", outRoot: "")
    do {
        let notes = try tasks.journal.map { try harness.read($0) }
        var sources = notes + tasks.context.flatMap(\.lines)
        var documentTexts: [(DocumentTask, String)] = []
        for document in tasks.documents {
            let text = try harness.sourceText(document)
            sources.append(text)
            documentTexts.append((document, text))
            check((3...8).contains(document.facts.count), "\(label) \(document.id): 3 to 8 key facts")
            for (index, fact) in document.facts.enumerated() {
                check(Text.found(fact, in: text), "\(label) \(document.id): \(heldOut ? "fact \(index + 1)" : "'\(fact.fact)'") is in one sentence of the document")
            }
            let own = Claims.score(text, sources: [text], roster: roster)
            check(own.precision == nil || own.precision == 1, "\(label) \(document.id): the document is fully supported by itself")
        }
        let all = sources.joined(separator: "\n")
        func checkExpectation(_ id: String, _ question: String, _ expect: Expectation) {
            let what = named(id, question)
            switch expect.kind {
            case .lookup, .twohop, .compare:
                check(!(expect.accept ?? []).isEmpty, "\(what): a \(expect.kind.rawValue) question has accept")
                check(Text.found(expect.accept ?? [], anywhereIn: all), "\(what): an accepted answer is in the workspace")
            case .compute:
                // The result is computed, so it need not be in the workspace; it must be given.
                check(!(expect.accept ?? []).isEmpty, "\(what): a compute question has accept (the result)")
            case .yesno:
                check(expect.verdict == "yes" || expect.verdict == "no", "\(what): a yesno question has verdict yes or no")
                if let accept = expect.accept { check(Text.found(accept, anywhereIn: all), "\(what): the deciding line's strings are in the workspace") }
            case .list:
                check(!(expect.all ?? []).isEmpty, "\(what): a list question has all (its items)")
                for item in (expect.all ?? []) + (expect.not ?? []) { check(Text.found([item], anywhereIn: all), "\(what): a list item (or an item it must not list) is in the workspace") }
            case .summarise:
                check((expect.items ?? []).count >= 3, "\(what): a summarise question has at least 3 key items")
                for item in expect.items ?? [] { check(Text.found(item, in: all), "\(what): a key item is in one line of the workspace") }
                check((expect.maxLines ?? 1) > 0, "\(what): maxLines is positive")
            case .draft:
                check(Text.found(expect.accept ?? [], anywhereIn: all) && !(expect.accept ?? []).isEmpty, "\(what): the person the draft is for is in the workspace")
            case .notfound:
                check(expect.accept == nil, "\(what): an unanswerable question has no accept")
                for absent in expect.absent ?? [] { check(!Text.found([absent], anywhereIn: all), "\(what): what it asks about is nowhere in the workspace") }
            case .general:
                check(expect.accept == nil, "\(what): a request not about the workspace has no accept")
            }
        }
        for question in tasks.questions { checkExpectation(question.id, question.question, question.expectation) }
        for chat in tasks.chats {
            for (index, turn) in chat.turns.enumerated() { checkExpectation("\(chat.id)#\(index + 1)", turn.question, turn.expectation) }
        }
        guard tasks.name != nil else {
            check(tasks.documents.contains { (try? harness.sourceText($0).count) ?? 0 >= 20_000 }, "\(label): a document longer than 20,000 characters")
            return tasks
        }
        // A general set (issue 32): the shape it promises.
        let noteDays = tasks.journal.compactMap { TaskSet.day(String(($0 as NSString).lastPathComponent.prefix(10))) }
        check(noteDays.count == tasks.journal.count && noteDays.count >= 8, "\(label): at least 8 notes, each named by its date")
        if let today = tasks.today.flatMap(TaskSet.day), let calendar = Optional(Calendar(identifier: .gregorian)),
           let todayDate = calendar.date(from: today), let last = noteDays.compactMap({ calendar.date(from: $0) }).max() {
            let gap = calendar.dateComponents([.day], from: last, to: todayDate).day ?? -1
            check((1...3).contains(gap), "\(label): today is a day or three after the last note (\(gap) days)")
        } else {
            check(false, "\(label): a general set gives today (YYYY-MM-DD)")
        }
        let journal = notes.joined(separator: "\n")
        check(journal.contains("TODO:") && journal.contains("- [ ]") && journal.lowercased().contains("need to") && journal.contains("- [x]"),
              "\(label): the notes hold open tasks (TODO:, - [ ], need to) and done ones (- [x])")
        let people = tasks.context.first { $0.section == "People" }?.lines.joined(separator: "\n") ?? ""
        check(!Text.matches(people, Text.regex(#"\b\d{3,5}[ -]?\d{3}[ -]?\d{3}\b"#)).isEmpty, "\(label): ## People holds phone numbers")
        check(!Text.matches(people, Text.regex(#"[A-Za-z0-9.+-]+@[A-Za-z0-9-]+\.[A-Za-z.]+"#)).isEmpty, "\(label): ## People holds email addresses")
        check(!Text.matches(people, Text.regex(#"\b\d+ [A-Z][a-z]+ (Street|Road|Lane|Row|Close|Terrace|Cut|Yard|Walk|Avenue|Way|Place)\b"#)).isEmpty,
              "\(label): ## People holds street addresses")
        check(tasks.documents.count >= 5, "\(label): at least 5 documents")
        check(documentTexts.contains { $0.1.count >= 32_768 && Text.matches($0.1, Text.regex(#"(?m)^#{2,3} "#)).count >= 10 },
              "\(label): a report longer than two 4,096-token windows (32,768 characters) with at least 10 section headings")
        check(documentTexts.contains { Text.matches($0.1, Text.regex(#"(?m)^>+ "#)).count >= 3 }, "\(label): an email thread with quoted replies")
        check(documentTexts.contains { !Text.matches($0.1, Text.regex(#"(?m)^## \d+\.\d+(\.\d+)? \(\d{1,2} [A-Z][a-z]+ \d{4}\)"#)).isEmpty },
              "\(label): release notes or a changelog with headings like '## 4.3 (12 October 2026)'")
        check(tasks.documents.contains { $0.file.hasSuffix(".html") }, "\(label): an HTML document")
        check(documentTexts.contains { Text.matches($0.1, Text.regex(#"(?m)^(\|.*\||[^,\n]+(,[^,\n]*){3,})$"#)).count >= 4 }, "\(label): a table (Markdown or comma-separated rows)")
        let kinds = Set(tasks.questions.map(\.expectation.kind))
        for kind in QuestionKind.allCases { check(kinds.contains(kind), "\(label): a question of kind \(kind.rawValue)") }
        check(tasks.questions.count >= 20, "\(label): at least 20 questions")
        check(tasks.questions.filter { $0.expectation.kind == .notfound }.count >= 2, "\(label): at least 2 questions the workspace cannot answer")
        check(tasks.chats.contains { $0.turns.count >= 2 }, "\(label): a chat with a follow-up")
    } catch {
        check(false, "\(label): \(error)")
    }
    return tasks
}

/// The scores per kind move the right way on made-up answers (docs/eval.md, "Scores per kind").
func checkKinds(roster: Set<String>, check: (Bool, String) -> Void) {
    let notes = """
        - Lent my camping stove to Ruairi Maddox.
        - Picked up the bike: 46 euros.
        - Hamid Corless came to service the boiler: 118 euros, and he found no fault. He thinks it will do another winter.
        - [x] Paid the council tax: 212 euros.
        - [ ] Book the chimney sweep.
        - TODO: send the deposit of 35 euros to Priya.
        - Need to buy a present for Fenna.
        - Ruairi Maddox: 9 Tallow Row, Larchford. Phone 0419 305 774.
        - Odile Brackenridge's notes. Priya Lanternfield leads the choir.
        - Monday: swam 1,500 metres. Tuesday: cycled to Brask. Wednesday: sofa email. Thursday: chess with Benedek. Friday: dinner with Ruairi.
        """
    func score(_ text: String, _ expect: Expectation) -> AnswerScore { Scorer.answer(text, expect: expect, sources: [notes], roster: roster) }

    // Lookups: a line quoted as evidence is one sentence, whatever its own sentences.
    let cost = Expectation(kind: .lookup, accept: [["118 euros"]])
    check(score("118 euros — “Hamid Corless came to service the boiler: 118 euros, and he found no fault. He thinks it will do another winter.” (Journal/user/2027-03-03.md:3)", cost).verdict == .answered,
          "a value with a quoted line of two sentences is answered")
    check(Scorer.answer("101 — 47 of + 54 players (Journal/user/2028-03-04.md:3), added by Relay's calculator",
                        expect: Expectation(kind: .compute, accept: [["3"]]), sources: [], roster: []).verdict == .wrong,
          "a citation's line number is no value of the answer")
    check(score("Hamid Corless — “Hamid Corless came to service the boiler: 118 euros.” (Journal/user/2027-03-03.md:3)", cost).verdict == .wrong,
          "a lookup's value is what is scored, not its quote")
    check(score("The boiler service cost 118 euros. " + notes, cost).verdict == .tooLong, "a lookup answered with a dump of the notes is too long")

    // Two hops: the value, with the two lines it joined.
    let twoHop = Expectation(kind: .twohop, accept: [["9 Tallow Row"]])
    check(score("9 Tallow Row — “Ruairi Maddox: 9 Tallow Row, Larchford.” (context.md:40)\n“Lent my camping stove to Ruairi Maddox.” (Journal/user/2027-03-01.md:4)", twoHop).verdict == .answered,
          "a twohop answer with both lines is answered")
    check(score("Ruairi Maddox — “Lent my camping stove to Ruairi Maddox.” (Journal/user/2027-03-01.md:4)", twoHop).verdict == .wrong,
          "a twohop answer that stops at the first hop (the person, not the address) is wrong")

    // Lists: every item, nothing done, at most items + 2 lines.
    let todo = Expectation(kind: .list, all: [["chimney"], ["deposit"], ["present"]], not: [["council tax"]])
    let list = "- Book the chimney sweep (Journal/user/2027-03-03.md:4)\n- Send the deposit of 35 euros to Priya (Journal/user/2027-03-09.md:4)\n- Buy a present for Fenna (Journal/user/2027-03-11.md:3)"
    check(score(list, todo).verdict == .answered, "a list of every open task is answered")
    check(score("Your open tasks:\n" + list + "\nThat is all.", todo).verdict == .answered, "a list may have a heading and a closing line")
    check(score(String(list.split(separator: "\n").dropLast().joined(separator: "\n")), todo).verdict == .wrong, "a list missing an item is wrong")
    check(score(list + "\n- Pay the council tax (Journal/user/2027-03-03.md:2)", todo).verdict == .wrong, "a list with a done task is wrong")
    check(score("Tasks:\n" + list + "\n- Groceries\n- Laundry\n- Rain", todo).verdict == .tooLong, "a list longer than its items + 2 lines is too long")
    check(score("You need to book the chimney sweep, send Priya the deposit and buy Fenna a present.", todo).verdict == .answered,
          "a list in one sentence is a list too (the substance, not the format)")

    // Yes/no: the verdict first.
    let paid = Expectation(kind: .yesno, accept: [["212"], ["paid"]], verdict: "yes")
    check(score("Yes — “- [x] Paid the council tax: 212 euros.” (Journal/user/2027-03-03.md:2)", paid).verdict == .answered, "yes, with its line, is answered")
    check(score("**Yes**, you paid it.", paid).verdict == .answered, "yes in bold, with what decides it, is answered")
    check(score("No — the council tax is still open.", paid).verdict == .wrong, "the wrong verdict is wrong")
    check(score("You paid the council tax: 212 euros. Yes.", paid).verdict == .wrong, "a verdict not first is wrong")
    check(score("Yes.", paid).verdict == .wrong, "a bare verdict without what decides it is wrong")

    // Compute: the result is the engine's arithmetic, not an invention.
    let sum = Expectation(kind: .compute, accept: [["164"]])
    let computed = score("164 euros — 46 euros (Journal/user/2027-03-01.md:5) + 118 euros (Journal/user/2027-03-03.md:3)", sum)
    check(computed.verdict == .answered && computed.precision.unsupported.isEmpty, "a computed sum is answered and invents nothing (\(computed.precision.unsupported))")
    check(score("163 euros", sum).verdict == .wrong, "a wrong sum is wrong")

    // Summaries: a share of the key items, in at most maxLines lines.
    let week = Expectation(kind: .summarise, items: [Fact(fact: "swim", any: [["swam"], ["1,500"]]), Fact(fact: "Brask", all: ["Brask"]),
                                                     Fact(fact: "sofa", all: ["sofa"]), Fact(fact: "chess", all: ["chess"]), Fact(fact: "Ruairi", all: ["Ruairi"])],
                           maxLines: 6)
    check(score("- Monday: swam 1,500 metres\n- Tuesday: cycled to Brask\n- Thursday: chess with Benedek", week).verdict == .answered,
          "a summary with 3 of 5 key items (0.6) is answered")
    check(score("- Monday: swam 1,500 metres\n- Tuesday: cycled to Brask", week).verdict == .wrong, "a summary with 2 of 5 key items is wrong")
    check(score(notes, week).verdict == .tooLong, "the notes pasted whole are too long for a summary")
    check(score("Brask, a place name from a line of a report.", week).verdict == .wrong, "a place name is not a summary of the week")

    // Drafts: name the person, invent nothing, at most 120 words.
    let draft = Expectation(kind: .draft, accept: [["Priya"]])
    check(score("Hi Priya, I will send you the choir trip deposit of 35 euros on Monday. Best wishes, Odile", draft).verdict == .answered,
          "a short grounded draft to the person is answered")
    let invention = score("Hi Priya, I will send you the deposit of 40 euros on Monday with Marcus. Best, Odile", draft)
    check(invention.verdict == .wrong && invention.precision.unsupported.contains("40"), "a draft with an invented number or name is wrong (\(invention.precision.unsupported))")
    check(score("Hi there, I will send the deposit on Monday.", draft).verdict == .wrong, "a draft that does not name the person is wrong")
    let asked = "Write a note to Priya about the choir trip deposit"
    check(Scorer.answer("Hi Priya, the choir trip deposit goes out on Monday.", expect: draft, sources: [notes], roster: roster, question: asked).verdict == .answered,
          "a draft about what was asked is answered")
    check(Scorer.answer("Priya, I hope your work goes well and that you are doing fine.", expect: draft, sources: [notes], roster: roster, question: asked).verdict == .wrong,
          "a draft that says nothing of what it was asked to say is wrong")
    check(Scorer.answer("Write a note to Priya about the choir trip deposit.\n\nYour previous output was: none", expect: draft, sources: [notes], roster: roster,
                        question: asked).verdict == .wrong, "a draft that repeats the request is wrong")
    check(Scorer.answer("Write to Priya about the choir trip deposit.", expect: draft, sources: [notes], roster: roster,
                        question: "Write a short note to Priya about the choir trip deposit").verdict == .wrong, "a request repeated with a word left out is wrong")
    check(score("Hi Priya, " + String(repeating: "I will send it soon, ", count: 30), draft).verdict == .tooLong, "a draft over 120 words is too long")
    check(score("Hey Priya, the deposit comes on Monday. Cheers, Odile", draft).verdict == .answered, "a greeting or sign-off before a name is not a name")
    check(score("Priya Lanternfield — “Priya Lanternfield leads the choir.” (context.md:41)", draft).verdict == .wrong,
          "a quoted line with its source is the agents' notes, not a draft")
    check(score("Hi Priya,\n\n[User Request — Remy]:\nThe deposit goes out on Monday.", draft).verdict == .wrong,
          "a draft holding the prompt's markers is wrong")

    // Not found: the words, nothing invented, no rejected value.
    let dentist = Expectation(kind: .lookup, accept: [["22", "October"]])
    check(score("The workspace does not say: no line mentions the appointment.\nThe closest line: “Dentist on 22 October at 09:15.” (Journal/user/2026-10-05.md:3)", dentist).verdict == .wrong,
          "a not-found answer to an answerable question is wrong, though its closest line holds the value")
    let phone = Expectation(kind: .notfound, reject: [["0419 305 774"]])
    check(score("The workspace does not say Benedek's phone number. The closest line: “Ruairi Maddox: 9 Tallow Row, Larchford. Phone 0419 305 774.” (context.md:40)", phone).verdict == .answered,
          "not found, with the closest line quoted, is answered")
    check(score("the workspace doesn't say.", phone).verdict == .answered, "not found, in other case and with doesn't, is answered")
    check(score("0419 305 774", phone).verdict == .wrong, "another person's number stated as the answer is wrong")
    check(score("The workspace does not say. It is probably 0419 305 774.", phone).verdict == .wrong, "a rejected value outside the quotes is wrong, even after the words")
    let invented = score("The workspace does not say; try 0412 555 019.", phone)
    check(invented.verdict == .wrong && !invented.precision.unsupported.isEmpty, "not found with an invented number is wrong")
    check(score("Benedek's phone number is not known.", phone).verdict == .wrong, "not found in other words is not the promised answer")

    // General: labelled, not empty.
    let rivers = Expectation(kind: .general)
    check(score("Not from the workspace: rivers flow downhill to the sea; the Nile is among the longest; rivers carve valleys.", rivers).verdict == .answered,
          "a labelled general answer is answered")
    check(score("Rivers flow downhill to the sea; the Nile is among the longest.", rivers).verdict == .wrong, "an unlabelled general answer is wrong")
    check(score("Not from the workspace.", rivers).verdict == .wrong, "the label alone is not an answer")

    // Totals: per kind, unanswerable questions, invented values (general answers not counted).
    func result(_ id: String, _ text: String, _ expect: Expectation) -> QuestionResult {
        QuestionResult(id: id, from: "x", kind: expect.kind.rawValue, question: "?", via: "relay ask", state: "finished", seconds: 1, tokens: 1,
                       answer: text, score: score(text, expect), anywhereInTurn: false)
    }
    let questions = [
        result("a", "118 euros", cost), result("b", "Hamid Corless", cost), result("c", list, todo),
        result("d", "The workspace does not say; try 0412 555 019.", phone), result("e", "The workspace does not say.", phone),
        result("f", "Not from the workspace: the Nile and the Amazon are long rivers.", rivers),
    ]
    let t = totals([], questions, seconds: 1)
    check(t.byKind?["lookup"] == [2, 1] && t.byKind?["list"] == [1, 1] && t.byKind?["notfound"] == [2, 1] && t.byKind?["general"] == [1, 1],
          "answered counts per kind (\(t.byKind ?? [:]))")
    check(t.notFound == [2, 1], "unanswerable questions: asked and answered with the promised words")
    var turn = result("g#2", "118 euros", cost)
    turn.via = "Chats/eval-g.md"
    check(totals([], questions + [turn], seconds: 1).chatTurns == [1, 1], "chat turns counted apart")
    check(t.invented == 3 && !(t.inventedValues ?? []).contains("Nile"), "invented values counted over all answers but general ones (\(t.inventedValues ?? []))")
    check(kindLine(t.byKind ?? [:]) == "lookup 1/2 · list 1/1 · notfound 1/2 · general 1/1", "the kind line in the kinds' order")
    let heldOutResult = ConfigResult(config: "relay", taskSet: "general-heldout", split: "held-out", workspace: "", documents: [], questions: questions, totals: t)
    let printed = report(heldOutResult)
    check(printed.contains("held-out") && !printed.contains("Hamid") && printed.contains("names invented in answers") && !printed.contains("0412"),
          "a held-out set's report names it and prints no answer text")
    check(headline(heldOutResult).contains("general-heldout (held-out") && headline(heldOutResult).contains("notfound 1/2"), "the headline line names the set and its kinds")

    // Today: a real date, given to every relay process.
    check(TaskSet.day("2027-03-13") != nil && TaskSet.day("2027-02-30") == nil && TaskSet.day("13 March 2027") == nil, "today must be a real YYYY-MM-DD date")
    let dated = TaskSet(today: "2027-03-13", documents: [], journal: [], context: [], questions: [], chats: [])
    check(Harness(options: Options(), tasks: dated, tasksDir: "", relay: "", outRoot: "").environment["RELAY_TODAY"] == "2027-03-13",
          "the set's today is RELAY_TODAY for every relay process")
    check(Harness(options: Options(), tasks: TaskSet(documents: [], journal: [], context: [], questions: [], chats: []), tasksDir: "", relay: "", outRoot: "").environment["RELAY_TODAY"] == nil,
          "a set without today sets no RELAY_TODAY (not even the caller's)")
    let badDir = NSTemporaryDirectory() + "relay-eval-selftest-\(getpid())"
    try? FileManager.default.createDirectory(atPath: badDir, withIntermediateDirectories: true)
    try? Data(#"{"today": "2027-3-13", "documents": [], "journal": [], "context": [], "questions": [], "chats": []}"#.utf8).write(to: URL(fileURLWithPath: badDir + "/tasks.json"))
    do { _ = try TaskSet.load(badDir + "/tasks.json"); check(false, "a bad today is refused") } catch {
        check("\(error)".contains("tasks.json") && "\(error)".contains("today"), "a bad today is refused, naming the file and the field (\(error))")
    }
    try? Data(#"{"documents": [], "journal": [], "context": [], "questions": [{"id": "q", "from": "x", "question": "?", "kind": "poem"}], "chats": []}"#.utf8).write(to: URL(fileURLWithPath: badDir + "/tasks.json"))
    do { _ = try TaskSet.load(badDir + "/tasks.json"); check(false, "an unknown kind is refused") } catch {
        check("\(error)".contains("question q") && "\(error)".contains("kind"), "an unknown kind is refused, naming the question and the field")
    }
    try? FileManager.default.removeItem(atPath: badDir)
}

func selfTest(_ options: Options) -> Bool {
    var failures = 0
    var checks = 0
    func check(_ condition: Bool, _ what: String) {
        checks += 1
        if !condition { failures += 1; print("FAIL: \(what)") }
    }
    let roster: Set<String> = Claims.words("Paige Remy Wren Vera planner researcher writer reviewer Relay You are Wren, the Writer.")
    let source = """
        # Progress report: the Brindle footbridge
        The total cost of the bridge is now estimated at 4.2 million crowns. Oksana Pell leads the build.
        The main contractor is Veltrane Works. The bridge opens on 14 March 2027. It has a span of 38 metres.
        A petition was signed by seven residents and 4,200 visitors.
        """
    let facts = [
        Fact(fact: "cost", all: ["4.2 million"]), Fact(fact: "lead", all: ["Pell"]), Fact(fact: "opening", all: ["14", "March"]),
        Fact(fact: "visitors", all: ["4,200"]),
    ]
    // Normalising.
    check(Text.found([["4,200"]], inUnitsOf: "About 4200 visitors came."), "4,200 = 4200")
    check(Text.found([["4200"]], inUnitsOf: "About 4,200 visitors came."), "4200 = 4,200")
    check(Text.found([["7 goats"]], inUnitsOf: "He lost seven goats."), "seven = 7")
    check(Text.found([["14", "march"]], inUnitsOf: "It opens on March 14th, 2027."), "ordinals and order")
    check(!Text.found([["48"]], inUnitsOf: "He ordered 480 panels and 4.48 litres."), "48 is not 480 nor 4.48")
    check(!Text.found([["pell"]], inUnitsOf: "The Pellucid 3 robot."), "Pell is not Pellucid")
    check(Text.found([["ember & sand"]], inUnitsOf: "Her studio, **Ember and Sand**, is open."), "& = and, markdown ignored")
    check(!Text.found([["14", "march"]], inUnitsOf: "It opens on the 14th. The steel arrives in March."), "a fact's strings must share one sentence")
    check(Text.found([["11 percent"]], inUnitsOf: "Leakage fell to 11%."), "% = percent")

    // Recall and the over-long rule.
    let good = "The Brindle footbridge costs 4.2 million crowns. Oksana Pell leads it; it opens on 14 March 2027."
    let goodScore = Scorer.summary(good, source: source, facts: facts, roster: roster)
    check(goodScore.rawRecall == 0.75 && goodScore.recall == 0.75, "a short faithful summary keeps its recall (\(goodScore.recall))")
    let dump = source + "\n" + source
    let dumpScore = Scorer.summary(dump, source: source, facts: facts, roster: roster)
    check(dumpScore.rawRecall == 1 && dumpScore.recall == 0 && dumpScore.overLong, "a summary longer than half its source counts 0 in the headline (raw \(dumpScore.rawRecall))")
    let worse = "The Brindle footbridge costs 4.2 million crowns."
    check(Scorer.summary(worse, source: source, facts: facts, roster: roster).recall < goodScore.recall, "dropping a fact lowers recall")
    check(Scorer.summary("", source: source, facts: facts, roster: roster).recall == 0, "no summary, no recall")

    // Precision.
    let faithful = Claims.score(good, sources: [source], roster: roster)
    check(faithful.precision == 1, "a faithful summary has precision 1 (unsupported: \(faithful.unsupported))")
    let inventedNumber = Claims.score(good + " It is 52 metres long.", sources: [source], roster: roster)
    check((inventedNumber.precision ?? 1) < 1 && inventedNumber.unsupported.contains("52"), "an invented number lowers precision (\(inventedNumber.unsupported))")
    let inventedName = Claims.score(good + " The engineer is Marcus Whitfield.", sources: [source], roster: roster)
    check((inventedName.precision ?? 1) < 1 && inventedName.unsupported.contains("Whitfield"), "an invented name lowers precision (\(inventedName.unsupported))")
    let moreInvented = Claims.score(good + " The engineer is Marcus Whitfield. It is 52 metres long.", sources: [source], roster: roster)
    check((moreInvented.precision ?? 1) < (inventedName.precision ?? 1), "more invented claims, lower precision")
    let plain = Claims.score("""
        ## Summary
        1. The Brindle footbridge costs 4.2 million crowns.
        2. However, Paige and Wren said it opens in March.
        - Overall, Research/brindle-footbridge-report.md says Oksana Pell leads it.
        """, sources: [source], roster: roster)
    check(plain.precision == 1, "list numbering, headings, sentence starters, paths and agents' names are not claims (\(plain.unsupported))")
    check(Claims.score("4,200 visitors and 7 residents came.", sources: [source], roster: roster).precision == 1, "number formats and number words in the source")
    let starters = Claims.score("Extracting the key facts: the cost is 4.2 million crowns. You've got Oksana Pell.", sources: [source], roster: roster)
    check(starters.precision == 1, "ordinary sentence starters are not names (\(starters.unsupported))")
    let initialName = Claims.score("Marcus Whitfield leads it. Oksana Pell does not.", sources: [source], roster: roster)
    check(initialName.unsupported == ["Marcus", "Whitfield"], "a name that starts a sentence is still a name (\(initialName.unsupported))")
    let known = Claims.score("Whitfield leads it, says the report. The report thanks Whitfield.", sources: [source], roster: roster)
    check(known.unsupported == ["Whitfield", "Whitfield"], "a first word seen capitalised inside a sentence is a name (\(known.unsupported))")
    check(Claims.score("The cost was 4200000 crowns.", sources: [source], roster: roster).precision == 1, "4.2 million = 4200000")

    // Answers.
    let notes = "- Started the Fennick greenhouse with Bram Otieno today.\n- Greenhouse budget: 3,150 crowns."
    let accept = [["Bram"], ["Otieno"]]
    check(Scorer.answer("You are building it with Bram Otieno.", accept: accept, sources: [notes], roster: roster).verdict == .answered, "a short right answer is answered")
    check(Scorer.answer("**Bram Otieno**", accept: accept, sources: [notes], roster: roster).verdict == .answered, "a bare name is answered")
    let long = "Here is what your notes say. " + notes + " Rain all day. Did the laundry. Groceries: oats, lentils, coffee. The bin goes out on Tuesday."
    check(Scorer.answer(long, accept: accept, sources: [notes], roster: roster).verdict == .tooLong, "a dump of the notes containing the answer is too long")
    let manyWords = "You are building the Fennick greenhouse with Bram Otieno, " + String(repeating: "and you both agreed on a lean-to design against the wall ", count: 6) + "."
    check(Scorer.answer(manyWords, accept: accept, sources: [notes], roster: roster).verdict == .tooLong, "more than 60 words is too long")
    check(Scorer.answer("APPROVED: the answer is clear and short.", accept: accept, sources: [notes], roster: roster).verdict == .wrong, "an answer without it is wrong")
    check(Scorer.answer("Bram Otieno — “Started it with Bram Otieno.” (Journal/user/2026-11-02.md:4)", accept: accept, sources: [notes], roster: roster).verdict == .answered,
          "a value with its quote is answered")
    check(Scorer.answer("Bram Otieno — “Started it with Bram Otieno.” (Journal/user/2026-11-02.md:44)", accept: accept, sources: [notes], roster: roster).precision.unsupported.isEmpty,
          "a citation's line number is no claim")
    check(Scorer.answer("Bram Otieno paid 77 — (Journal/user/2026-11-02.md:44)", accept: accept, sources: [notes], roster: roster).precision.unsupported == ["77"],
          "a number outside the citation still counts")
    check(Scorer.answer("Fennick — “Started it with Bram Otieno.” (Journal/user/2026-11-02.md:4)", accept: accept, sources: [notes], roster: roster).verdict == .wrong,
          "a wrong value is wrong even when its quote holds the answer")
    check(Scorer.answer("", accept: accept, sources: [notes], roster: roster).verdict == .wrong, "no answer is wrong")
    let invented = Scorer.answer("You are building it with Bram Otieno and Karl Jensen.", accept: accept, sources: [notes], roster: roster)
    check((invented.precision.precision ?? 1) < 1, "an invented name in an answer lowers its precision (\(invented.precision.unsupported))")

    // The chat file's markers.
    let chat = """
        Who leads it?

        <!-- relay:turn 20261122-154012-a3f9 -->
        ### 📋 Paige · planner

        Plan: find the lead.

        ### ✍️ Wren · writer

        Oksana Pell leads it.

        <!-- relay:end 20261122-154012-a3f9 · write your next message below this line -->
        """
    check(ChatFile.lastSection(chat, run: "20261122-154012-a3f9") == "Oksana Pell leads it.", "the answer in a chat file is the turn's last section")
    check(ChatFile.lastSection(chat, run: "20261122-000000-0000") == nil, "another run's block is not there")

    // Context lines go under their sections.
    let context = addToContext("# Context\n\n## Goals\n\n*What we want.*\n\n## Decisions\n\n*Newest first.*\n",
                               [ContextLines(section: "Goals", lines: ["- Finish it."]), ContextLines(section: "Other", lines: ["- x"])])
    check(context.contains("*What we want.*\n\n- Finish it.\n\n## Decisions") && context.hasSuffix("## Other\n\n- x\n"), "context lines under their section")

    // The PDF maker makes something pdftotext reads, when it is installed.
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/pdftotext") {
        let pdfPath = NSTemporaryDirectory() + "relay-eval-selftest-\(getpid()).pdf"
        try? Data(PDFMaker.pdf(from: "Rent: 1,275 crowns (a month) from 1 March 2027.\nSigned, Hester Quayle")).write(to: URL(fileURLWithPath: pdfPath))
        let (status, text) = (try? run(["/usr/bin/pdftotext", "-layout", pdfPath, "-"], environment: ProcessInfo.processInfo.environment,
                                        scratch: NSTemporaryDirectory())) ?? (-1, "")
        try? FileManager.default.removeItem(atPath: pdfPath)
        check(status == 0 && text.contains("1,275 crowns (a month)") && text.contains("Hester Quayle"), "pdftotext reads the PDF made at eval time")
    }

    // The task sets themselves: the one --tasks-dir names (Tests/Eval by default) and, beside
    // the public one, its general parts (general-dev … general-dev4: tuned on; general-heldout,
    // general-heldout2: run only to report).
    if let tasksDir = try? locate(options, needRelay: false).tasksDir {
        var folders = [tasksDir]
        let parts = ((try? FileManager.default.contentsOfDirectory(atPath: tasksDir)) ?? []).filter { $0.hasPrefix("general-") }.sorted()
        for part in parts where FileManager.default.fileExists(atPath: tasksDir + "/" + part + "/tasks.json") {
            folders.append(tasksDir + "/" + part)
        }
        let sets = folders.compactMap { checkTaskSet($0, options: options, roster: roster, check: check) }
        let general = sets.filter { $0.name != nil }
        let heldOut = general.filter { $0.split == "held-out" }, dev = general.filter { $0.split == "dev" }
        if !general.isEmpty {
            // Issue 32: together at least 10 documents of new kinds, 40 questions, 4 unanswerable;
            // no held-out part shares a question or a document with any dev part, nor with another
            // held-out part (each was written on its own, so each measures on its own). There may be
            // several held-out parts: a new one is written when an old one has been tuned on or read.
            check(general.reduce(0) { $0 + $1.documents.count } >= 10, "the general sets hold at least 10 documents")
            check(general.reduce(0) { $0 + $1.questions.count } >= 40, "the general sets hold at least 40 questions")
            check(general.reduce(0) { $0 + $1.questions.filter { $0.expectation.kind == .notfound }.count } >= 4, "the general sets hold at least 4 unanswerable questions")
            check(!heldOut.isEmpty && heldOut.count + dev.count == general.count,
                  "at least one general set is held out, and every other is a dev part (split \"held-out\" or \"dev\")")
            func asked(_ set: TaskSet) -> Set<String> {
                Set(set.questions.map { Text.normalize($0.question) } + set.chats.flatMap { $0.turns.map { Text.normalize($0.question) } })
            }
            func files(_ set: TaskSet) -> Set<String> { Set(set.documents.map { ($0.file as NSString).lastPathComponent }) }
            // Messages name the sets only, never a shared question (it would show a held-out one).
            for (index, held) in heldOut.enumerated() {
                for part in dev + heldOut[(index + 1)...] {
                    let pair = "\(held.label) and \(part.label)"
                    check(asked(held).isDisjoint(with: asked(part)), "\(pair) share no question")
                    check(files(held).isDisjoint(with: files(part)), "\(pair) share no document")
                }
            }
        }
    }

    checkKinds(roster: roster, check: check)

    // The agentic modes: accepted as configurations, compared with the relay in the ratio table.
    check((try? Options.parse(["--configs", "relay,route,plan,solo"]))?.configs == ["relay", "route", "plan", "solo"], "route and plan are configurations")
    check((try? Options.parse(["--configs", "relay,swarm"])) == nil, "an unknown configuration is refused")
    check(Orchestrated.chatRelay("route").relay["mode"] as? String == "route" && Orchestrated.chatRelay("plan").relay["mode"] as? String == "plan",
          "the route and plan configurations' chat relays have their modes")
    func made(_ config: String, answered: Int, seconds: Double) -> ConfigResult {
        let totals = Totals(documents: 1, recall: 1, rawRecall: 1, overLong: 0, meanLengthRatio: 0.3, summaryPrecision: 1, answerPrecision: 1,
                            factsInContext: 1, facts: 1, questions: 4, answered: answered, tooLong: 0, wrong: 4 - answered,
                            medianSecondsPerDocument: 10, meanSecondsPerDocument: 10, medianSecondsPerQuestion: seconds, meanTokensPerDocument: 100,
                            meanTokensPerQuestion: 100, totalSeconds: 60, totalTokens: 500)
        return ConfigResult(config: config, workspace: "", documents: [], questions: [], totals: totals)
    }
    let compared = [made("relay", answered: 4, seconds: 10), made("plan", answered: 2, seconds: 30), made("solo", answered: 1, seconds: 5)]
    let ratioText = ratioReport(compared)
    check(ratioText.contains("plan/relay") && ratioText.contains("relay/solo") && !ratioText.contains("route/relay"), "the ratio table has a column per measured pair")
    check((modeRatios(compared)["plan/relay"]?["answered"] ?? nil) == 0.5 && (modeRatios(compared)["plan/relay"]?["medianSecondsPerQuestion"] ?? nil) == 3,
          "plan/relay: half the answers at three times the seconds")

    print("self-test: \(checks - failures) passed, \(failures) failed")
    return failures == 0
}

// MARK: - Main

func locate(_ options: Options, needRelay: Bool = true) throws -> (tasksDir: String, relay: String) {
    let fm = FileManager.default
    let binFolder = URL(fileURLWithPath: (CommandLine.arguments[0] as NSString).deletingLastPathComponent,
                        relativeTo: URL(fileURLWithPath: fm.currentDirectoryPath + "/")).standardizedFileURL.path
    let relay = options.relay ?? binFolder + "/relay"
    guard !needRelay || fm.isExecutableFile(atPath: relay) else { throw EvalError("no relay binary at \(relay) (build it, or pass --relay PATH)") }
    var candidates = [options.tasksDir ?? "Tests/Eval"]
    if options.tasksDir == nil { candidates.append(binFolder + "/../../../Tests/Eval") }
    guard let tasksDir = candidates.first(where: { fm.fileExists(atPath: $0 + "/tasks.json") }) else {
        throw EvalError("no tasks.json in \(candidates.joined(separator: " or ")) (run from the repository, or pass --tasks-dir)")
    }
    return (URL(fileURLWithPath: tasksDir).standardizedFileURL.path, URL(fileURLWithPath: relay).standardizedFileURL.path)
}

func main() -> Int32 {
    do {
        let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
        if options.selfTest { return selfTest(options) ? 0 : 1 }
        if !options.reports.isEmpty {
            var configs: [ConfigResult] = []
            for path in options.reports {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                if let results = try? JSONDecoder().decode(EvalResults.self, from: data) {
                    configs += results.configs
                } else {
                    configs.append(try JSONDecoder().decode(ConfigResult.self, from: data))
                }
            }
            if let wanted = options.tasks {
                // The same subset from every result, so that the ratios compare like with like.
                func keep(_ id: String) -> Bool { wanted.contains(id) || wanted.contains(id.split(separator: "#").first.map(String.init) ?? id) }
                configs = configs.map { config in
                    var config = config
                    config.documents = config.documents.filter { keep($0.id) }
                    config.questions = config.questions.filter { keep($0.id) }
                    config.totals = totals(config.documents, config.questions, seconds: config.totals.totalSeconds)
                    return config
                }
            }
            if options.rescore {
                let (tasksDir, _) = try locate(options, needRelay: false)
                let tasks = try TaskSet.load(tasksDir + "/tasks.json")
                let harness = Harness(options: options, tasks: tasks, tasksDir: tasksDir, relay: "", outRoot: "")
                configs = try configs.map { try rescore($0, tasks: tasks, harness: harness) }
            }
            if options.brief {
                for config in configs { print(headline(config)) }
                return 0
            }
            for config in configs { print(report(config)) }
            print(ratioReport(configs))
            if let path = options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                let merged = EvalResults(model: options.model, url: nil, date: ISO8601DateFormatter().string(from: Date()), commit: nil,
                                         tasks: ["from " + options.reports.joined(separator: ", ")], configs: configs, ratios: ratios(configs), modeRatios: modeRatios(configs))
                try encoder.encode(merged).write(to: URL(fileURLWithPath: path))
            }
            return 0
        }
        let (tasksDir, relay) = try locate(options)
        stopChildrenOnSignals()
        let tasks = try TaskSet.load(tasksDir + "/tasks.json")
        print("task set: \(tasks.label)\(tasks.split.map { " (\($0))" } ?? "") from \(tasksDir)\(tasks.today.map { "; today (RELAY_TODAY) is \($0)" } ?? "")")
        if let wanted = options.tasks {
            let known = Set(tasks.documents.map(\.id) + tasks.questions.map(\.id) + tasks.chats.map(\.id))
            let unknown = wanted.subtracting(known)
            guard unknown.isEmpty else { throw EvalError("unknown task ids: \(unknown.sorted().joined(separator: ", ")) (known: \(known.sorted().joined(separator: ", ")))") }
        }
        let outRoot = URL(fileURLWithPath: options.out ?? ".build/eval/\(options.model)").standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: outRoot, withIntermediateDirectories: true)
        // One eval per results folder: a second would remove the first one's workspaces under it.
        let lockFD = open(outRoot + "/.eval-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFD >= 0, flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: outRoot + "/.eval-lock", encoding: .utf8)) ?? "?"
            throw EvalError("another relay-eval (pid \(holder.trimmingCharacters(in: .whitespacesAndNewlines))) is using \(outRoot); wait for it, or give another --model label")
        }
        _ = ftruncate(lockFD, 0)
        _ = "\(getpid())\n".withCString { pwrite(lockFD, $0, strlen($0), 0) }
        // Say which model answers, before minutes of work.
        var environment = ProcessInfo.processInfo.environment
        if let url = options.url { environment["RELAY_MODEL_URL"] = url }
        let (doctorStatus, doctor) = try run([relay, "doctor"], environment: environment, scratch: outRoot, timeout: 240)
        print(doctor.trimmingCharacters(in: .whitespacesAndNewlines))
        if doctorStatus == 1 { throw EvalError("the model server does not answer (relay doctor exited 1); start it (make model) or pass --url") }
        if doctorStatus != 0 { print("(relay doctor exited \(doctorStatus); going on: a busy server answers slowly)") }
        let harness = Harness(options: options, tasks: tasks, tasksDir: tasksDir, relay: relay, outRoot: outRoot)
        let started = now()
        var configs: [ConfigResult] = []
        for config in options.configs { configs.append(try harness.runConfig(config)) }
        for config in configs { print(report(config)) }
        let ratioTable = ratios(configs)
        print(ratioReport(configs))
        print("")
        for config in configs { print(headline(config)) }
        let formatter = ISO8601DateFormatter()
        let (_, commit) = (try? run(["/usr/bin/git", "rev-parse", "--short", "HEAD"], environment: environment, scratch: outRoot, timeout: 10)) ?? (1, "")
        let results = EvalResults(model: options.model, url: options.url, date: formatter.string(from: Date()),
                                  commit: commit.trimmingCharacters(in: .whitespacesAndNewlines).nilIfEmpty,
                                  tasks: options.tasks.map { $0.sorted() } ?? ["all"], configs: configs, ratios: ratioTable, modeRatios: modeRatios(configs))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(results)
        try json.write(to: URL(fileURLWithPath: outRoot + "/results.json"))
        if let path = options.json { try json.write(to: URL(fileURLWithPath: path)) }
        print(String(format: "\nthe whole eval took %.0f s; results: %@/results.json%@", now() - started, outRoot, options.json.map { " and \($0)" } ?? ""))
        return 0
    } catch {
        FileHandle.standardError.write(Data("relay-eval: error: \(error)\n".utf8))
        return 1
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

exit(main())
