import Foundation
import LanguageModels

/// `"extract": "answer"`: the answering agent chooses, under a JSON schema, among what the
/// engine found — a value of the previous agent's lines that fits the question, or for a dropped
/// file the sentence that says what it is — and the engine writes the answer with its source.
/// With nothing to choose from (a question the workspace says nothing about), the agent writes
/// freely and the grounding check reads what it wrote.
extension RunExecutor {
    /// A line the previous agent handed on: "- text (path:line)".
    struct SourcedLine {
        var text: String
        var source: String?
    }

    static func sourcedLines(in text: String) -> [SourcedLine] {
        text.split(separator: "\n").compactMap { raw in
            var line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("- ") else { return nil }
            line = String(line.dropFirst(2))
            if line.hasSuffix(")"), let open = line.range(of: " (", options: .backwards) {
                let source = String(line[open.upperBound..<line.index(before: line.endIndex)])
                if source.contains(":"), !source.contains(" ") {
                    return SourcedLine(text: String(line[..<open.lowerBound]), source: source)
                }
            }
            return SourcedLine(text: line, source: nil)
        }
    }

    /// The lines an `answer` agent chooses among: the previous agent's, or — for an answering
    /// agent that speaks first with `retrieve` (a routed relay's one agent) — the workspace lines
    /// retrieved for it, best first.
    func answerLines(_ agent: AgentDefinition, part: FocusedPrompt.Part) -> [SourcedLine]? {
        guard case .relay(let previous) = part else { return nil }
        if let previous { return previous.text.hasPrefix("Not found") ? nil : Self.sourcedLines(in: previous.text) }
        guard manifest.document == nil, let count = agent.retrieve, count > 0 else { return nil }
        let lines = (manifest.retrieved ?? []).prefix(count).map { SourcedLine(text: $0.text.trimmingCharacters(in: .whitespaces), source: "\($0.path):\($0.line)") }
        return lines.isEmpty ? nil : Array(lines)
    }

    /// Whether an `answer` agent has something to choose from in this step.
    func hasAnswerChoices(_ agent: AgentDefinition, part: FocusedPrompt.Part) -> Bool {
        if manifest.analysis != nil, manifest.document == nil {
            // The request's kind has a program (which says when the workspace does not say), or
            // the agent writes (a draft, a request not about the workspace).
            guard case .relay = part else { return false }
            return answersByProgram
        }
        if let document = manifest.document {
            guard case .relay(let previous?) = part, !previous.text.hasPrefix("Not found") else { return false }
            return !Sentences.split(document).isEmpty
        }
        guard let lines = answerLines(agent, part: part)?.map(\.text) else { return false }
        if AnswerCandidates.asked(by: manifest.request) == .reason { return !lines.isEmpty }
        return !AnswerCandidates.candidates(for: manifest.request, in: lines, ignoring: ignoredNames).isEmpty
    }

    func chooseAnswer(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, budget: Int, restored: Bool, tally: inout Tally) async throws -> String {
        if let document = manifest.document {
            guard case .relay(let previous?) = part else { return "" }
            return try await chooseOverview(step, agent: agent, document: document, previous: previous, budget: budget, restored: restored, tally: &tally)
        }
        if manifest.analysis != nil,
           let text = try await answerProgram(step, agent: agent, part: part, lines: answerLines(agent, part: part) ?? [], budget: budget,
                                              restored: restored, tally: &tally) {
            return text
        }
        guard let lines = answerLines(agent, part: part) else { return "" }
        // A run recorded before requests had kinds: its question answered as a lookup.
        var analysis = RequestRules.analyse(manifest.requestLead, today: RelayRunner.today(manifest.localDate))
        analysis.kind = .lookup
        analysis.value = RequestRules.value(asked: " " + RequestRules.words(of: manifest.requestLead).joined(separator: " ") + " ")
        return try await answerLookup(step, agent: agent, part: part, budget: budget, analysis: analysis, lines: lines, restored: restored, tally: &tally)
    }

    /// The part of `line` that holds `value`: its sentence (or, in a knowledge line, its piece),
    /// so an answer quotes one statement, not a paragraph.
    static func quote(of value: String, in line: String) -> String {
        var text = line
        // A knowledge line: "[name](link): fact · fact".
        if text.hasPrefix("["), let colon = text.range(of: "): ") { text = String(text[colon.upperBound...]) }
        let pieces = text.components(separatedBy: " · ").flatMap { Sentences.split($0) }
        let holding = pieces.first { $0.contains(value) } ?? pieces.first ?? text
        return holding.count > 300 ? String(holding.prefix(299)) + "…" : holding
    }

    /// The values an answer is chosen from, best first, at most (and only those close to the
    /// best: `AnswerCandidates.close`). Measured on SmolLM2: among eight it sometimes took the
    /// fourth, a word from an unrelated line.
    static let answerChoices = 3

    /// The opening sentences a document's "what it is" can be chosen from.
    static let overviewChoices = 2

    /// The opening sentences of `document` not already `taken` that may say what it is, best
    /// first, at most ``overviewChoices``: short section headings left out ("What happened",
    /// "Notes of the last session" opened summaries on SmolLM2; the headings only when nothing
    /// else is left), then ranked by the words they share with the document's title and whether
    /// they speak of the document itself ("This report describes …"), earlier first. Offered
    /// five unranked openings, SmolLM2 chose a sentence from the middle of a report's cost section over
    /// its opening "This report describes where the project stands".
    static func overviewCandidates(of document: String, taken: Set<String>) -> [String] {
        let bytes = Array(document.utf8)
        let all = Sentences.units(of: bytes, keepingFragments: false).map { (kind: $0.kind, text: bare($0.text(in: bytes))) }
        let title = Set(all.first.map { SearchTerms.terms(of: $0.text) } ?? [])
        let units = all.filter { !$0.text.isEmpty && !taken.contains($0.text) }
        let statements = units.filter { $0.kind != .heading || $0.text.split(separator: " ").count >= 6 }
        let pool = Array((statements.isEmpty ? units : statements).prefix(8).map(\.text))
        // A sentence that speaks of the document itself: "This <noun> …", "These <noun> …", an
        // announcement. Any noun: a document of a kind never seen before says so the same way.
        let selfWords = ["this is", "we announce", "announces", "here is", "here are"]
        let selfOpening = try! NSRegularExpression(pattern: #"^(this|these) [a-z-]+ (is|are|was|were|describes|describe|sets|set|gives|give|lists|list|records|record|covers|cover|explains|explain|summarises|summarizes|shows|show|reports|report|contains|contain)\b"#)
        let scored = pool.enumerated().map { item -> (Int, String, Double) in
            let lowered = item.element.lowercased()
            var score = Double(Set(SearchTerms.terms(of: item.element)).intersection(title).count)
            if selfWords.contains(where: lowered.contains)
                || selfOpening.firstMatch(in: lowered, range: NSRange(lowered.startIndex..., in: lowered)) != nil { score += 2 }
            return (item.offset, item.element, score - Double(item.offset) * 0.25)
        }
        return scored.sorted { $0.2 != $1.2 ? $0.2 > $1.2 : $0.0 < $1.0 }.prefix(overviewChoices).map(\.1)
    }

    private func chooseOverview(_ step: Int, agent: AgentDefinition, document: String, previous: (name: String, text: String), budget: Int,
                                restored: Bool, tally: inout Tally) async throws -> String {
        let taken = Set(Self.sourcedLines(in: previous.text).map(\.text))
        let opening = Self.overviewCandidates(of: DocumentShape.prepared(document), taken: taken)
        guard !opening.isEmpty else { return previous.text }
        let numbered = opening.enumerated().map { "[\($0.offset + 1)] \(FocusedPrompt.fit($0.element, tokens: 120, what: "the sentence", budget: budget).0)" }
        let path = manifest.triggerPath ?? "the file"
        let user = "[User Request]:\n\(requestLead)\n\n[The opening of \(path), numbered]:\n" + numbered.joined(separator: "\n")
            + "\n\n[Previous Agent — \(previous.name)]:\n" + FocusedPrompt.fit(previous.text, tokens: budget / 3, what: "\(previous.name)'s output", budget: budget).0
            + "\n\nWhich numbered sentence best says what \(path) is?"
        let system = agent.systemPrompt + "\n\n" + #"Reply only with JSON: {"overview": number}, the sentence that best says what the document is."#
        var options = ModelOptions(maxTokens: 16)
        options.responseSchema = ResponseSchema(name: "overview", schema: [
            "type": "object", "properties": ["overview": ["type": "integer", "enum": .array((1...opening.count).map { .number(Double($0)) })]],
            "required": ["overview"], "additionalProperties": false,
        ])
        let answer = try await modelCall("\(step)/0", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(system), .user(user)], options: options), quiet: restored, streams: false)
        tally.add(answer)
        let number = Self.choices(in: answer.reply.text, key: "overview", allowed: Set(1...opening.count)).first
            ?? (try? JSONValue(parsing: answer.reply.text))?["overview"]?.intValue ?? 1
        let overview = Array(opening)[max(0, min(opening.count, number) - 1)]
        return Self.withinHalf(overview: overview, bullets: previous.text, of: document)
    }

    /// The opening sentence and the key sentences as the summary gives them, at most half of
    /// what the document says (`visibleLength`): the extraction keeps within 40%, but the
    /// opening sentence comes on top, and of a short document (a price list of 1,000
    /// characters) it can push the whole past half. Then the bullets carrying the fewest facts
    /// go first, one at a time; the opening and one bullet always stay.
    static func withinHalf(overview: String, bullets text: String, of document: String) -> String {
        let bullets = text.split(separator: "\n").map(String.init)
        let half = visibleLength(of: document) / 2
        func length(_ kept: [Int]) -> Int { visibleLength(of: overview + "\n" + kept.map { bullets[$0] }.joined(separator: "\n")) }
        var kept = Array(bullets.indices)
        for index in ranked(kept, sentences: bullets, ignoring: []).map(\.number).reversed() where length(kept) > half && kept.count > 1 {
            kept.removeAll { $0 == index }
        }
        return overview + "\n\n" + kept.map { bullets[$0] }.joined(separator: "\n")
    }

}
