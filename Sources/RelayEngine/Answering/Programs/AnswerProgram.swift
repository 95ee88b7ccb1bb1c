import Foundation
import LanguageModels

/// The answering programs: one per ``RequestKind``. An `extract: answer` agent (the template's
/// Wren) runs the program of the request's kind over the lines the agent before it handed on;
/// in each, the model makes a constrained choice (a value, the lines, the deciding line) under
/// a JSON grammar, and the engine does what a 135M model cannot — arithmetic, dates, rendering
/// a list with its sources, and saying "the workspace does not say" when the evidence does not.
///
/// Where a new kind goes: a case in ``RequestKind``, its rules in ``RequestRules``, where its
/// evidence comes from in `RelayRunner.retrieve`, and a file here with its program.
extension RunExecutor {
    /// The text every answer the notes cannot give starts with (the evaluation looks for it).
    static let notFoundOpening = "The workspace does not say"
    /// The label of an answer to a request that is not about the workspace.
    static let generalOpening = "Not from the workspace — the model's own answer, unchecked:"

    /// The program of the request's kind; nil when the kind writes freely (a draft, a request
    /// not about the workspace) or the run has no analysis (a dropped file, an old run).
    func answerProgram(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, lines: [SourcedLine], budget: Int, restored: Bool,
                       tally: inout Tally) async throws -> String? {
        guard let analysis = manifest.analysis, manifest.document == nil else { return nil }
        // Not about the workspace: the model writes, labelled (`writing`, `finishedWriting`).
        if isGeneralRequest { return nil }
        switch analysis.kind {
        case .lookup:
            if analysis.value == .money, let total = totalOfUnitPrice(lines: lines) { return total }
            return try await answerLookup(step, agent: agent, part: part, budget: budget, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .list:
            return try await answerList(step, agent: agent, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .yesNo:
            return try await answerYesNo(step, agent: agent, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .compute:
            return try await answerCompute(step, agent: agent, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .compare:
            if let compared = answerCompare(analysis: analysis, lines: lines) { return compared }
            // Fewer than two things to compare: the one there is, looked up.
            var lookup = analysis
            lookup.kind = .lookup
            lookup.value = lookup.value ?? RequestRules.value(asked: " " + RequestRules.words(of: manifest.requestLead).joined(separator: " ") + " ")
            return try await answerLookup(step, agent: agent, part: part, budget: budget, analysis: lookup, lines: lines, restored: restored, tally: &tally)
        case .summarise:
            return try await answerSummary(step, agent: agent, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .other:
            // About the workspace but of no kind above ("Tell me about the shed"): the
            // lines found, as a short summary with their sources.
            return try await answerSummary(step, agent: agent, analysis: analysis, lines: lines, restored: restored, tally: &tally)
        case .draft:
            return nil
        }
    }

    /// "What did the board come to?" over "4 sheets … 23.50 marks a sheet": the count times
    /// the price of one, by the calculator — unless the request asks the price of one ("How
    /// much is a sheet?", "per sheet", "each").
    /// Of the first `among` lines about the request, the first that prices one of several.
    func totalOfUnitPrice(lines: [SourcedLine], among: Int = 1) -> String? {
        let words = Set(RequestRules.words(of: manifest.requestLead))
        let topic = Support.topicTerms(of: evidenceQuestion)
        guard words.isDisjoint(with: ["a", "an", "one", "per", "each", "apiece", "single"]),
              let (first, found) = lines.prefix(among).lazy.compactMap({ line in
                  Support.coverage(of: topic, in: line.text) > 0 ? Self.unitPriceTotal(in: line.text, context: lines).map { (line, $0) } : nil
              }).first else { return nil }
        let shown = found.price.prefix + Calculator.format(found.total, like: [found.price.number]) + (found.price.unit.map { " " + $0 } ?? "")
        return "\(shown) — \(found.count) × \(found.price.shown) (\(first.source ?? "?")), multiplied by Relay's calculator"
    }

    /// Whether the request's kind has a program that chooses (not a draft, not a request about
    /// something the workspace does not hold).
    var answersByProgram: Bool {
        guard let analysis = manifest.analysis, manifest.document == nil, !isGeneralRequest else { return false }
        return analysis.kind != .draft
    }

    /// A request not about the workspace ("List three facts about rivers", "Why do people say
    /// break a leg?", "How do you get wax out of wool?"): nothing of the person's own in it (no
    /// first person once "tell me", "give me" are read as the polite openings they are), no name
    /// or topic the evidence holds. It gets the model's own answer, labelled. A lookup is general
    /// only when it asks why or how of something in general ("people", "you" — not a name, a
    /// date or an amount, which are facts of the workspace or nothing), and the workspace speaks
    /// of less than half of what it asks about.
    var isGeneralRequest: Bool {
        guard let analysis = manifest.analysis, manifest.document == nil, !analysis.tasks, analysis.days == nil,
              manifest.previousExchange == nil else { return false }
        let lookup = analysis.kind == .lookup && [.reason, .phrase].contains(analysis.value)
        guard [.other, .list].contains(analysis.kind) || lookup else { return false }
        // "How do I get wine out of a carpet?" is personal in form only.
        if RequestRules.isPersonal(manifest.requestLead), !(lookup && RequestRules.asksHowTo(manifest.requestLead)) { return false }
        // Evidence the workspace's structure gave (the section a heading names) is about it.
        if let retrieved = manifest.retrieved, !retrieved.isEmpty, retrieved.allSatisfy({ $0.score >= Evidence.structural }) { return false }
        // "What's on in March according to the traders' newsletter?": a request that names a
        // document of the workspace is about the workspace.
        let topic = Support.topicTerms(of: manifest.requestLead)
        let named = Set((manifest.retrieved ?? []).flatMap { SearchTerms.terms(of: ($0.path as NSString).lastPathComponent.replacingOccurrences(of: "-", with: " ")) })
        if !named.isDisjoint(with: topic) { return false }
        let evidence = (manifest.retrieved ?? []).map(\.withHeading)
        let best = evidence.map { Support.coverage(of: topic, in: $0) }.max() ?? 0
        if lookup {
            return RequestRules.asksInGeneral(manifest.requestLead) && (best < 0.5 || !(analysis.unknown ?? []).isEmpty)
        }
        return Support.gap(question: manifest.requestLead, lines: evidence, ignoring: ignoredNames) != nil || best < 1
    }

    /// The request with the names a follow-up's pronoun points back to ("What is his email?"
    /// after an answer naming Oskar Brandt), as retrieval searched for it.
    var evidenceQuestion: String { manifest.searchQuery(ignoring: ignoredNames) }

    var ignoredNames: Set<String> { Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay"]) }

    /// "The workspace does not say: …" when the run's evidence cannot answer the question at
    /// all (``Support/gap(question:lines:ignoring:)``), before a program looks for a value.
    func unsupported(by lines: [SourcedLine]) -> String? {
        // A line is read with its heading and the name of its file ("choir-committee-agenda.md").
        let pool = (manifest.retrieved ?? []).map { $0.withHeading + " — " + ($0.path as NSString).lastPathComponent.replacingOccurrences(of: "-", with: " ") }
        let gap = Support.gap(question: evidenceQuestion, lines: pool.isEmpty ? lines.map(\.text) : pool, ignoring: ignoredNames)
        // A name no line mentions says it best ("no line of the workspace mentions Zebedee Farrow").
        if let gap, gap.hasPrefix(Support.unmentionedName) { return notFound(gap, closest: lines) }
        // "grade 3" where the lines found speak of grade 2 and of no grade 3: another thing.
        let retrieved = manifest.retrieved ?? []
        for (noun, number) in RequestRules.numberedThings(evidenceQuestion)
        where !retrieved.contains(where: { RequestRules.numbering(of: noun, number, in: $0.text).this })
            && retrieved.contains(where: { RequestRules.numbering(of: noun, number, in: $0.text).other }) {
            return notFound("no line found speaks of “\(noun) \(number)”", closest: lines)
        }
        // What the request is about is not in the workspace: two of its words, and at least half
        // of them, are in no file ("the alarm code at the workshop" where no note mentions
        // alarm). One word alone may be the request's own ("my dentist appointment" where the
        // note says "Booked the dentist").
        let topic = Support.topicTerms(of: evidenceQuestion)
        if let unknown = manifest.analysis?.unknown.map(Set.init)?.intersection(topic), unknown.count >= 2, unknown.count * 2 >= topic.count {
            // As the request wrote them.
            let written = RequestRules.words(of: evidenceQuestion).filter { !unknown.isDisjoint(with: SearchTerms.terms(of: $0)) }
            var seen: Set<String> = []
            let shown = written.filter { seen.insert($0).inserted }.map { "“\($0)”" }
            return notFound("no file of the workspace mentions " + (shown.isEmpty ? unknown.sorted().map { "“\($0)”" } : shown).joined(separator: " or "),
                            closest: lines)
        }
        // Everything the request asks beyond what it names is in no file: "Who insures the
        // Kittiwake?" where the notes speak of the Kittiwake, and nowhere of insuring. (The names
        // the request itself gives: "When's her anniversary?" after an answer naming Perrin names
        // no one, and her line "Perrin married Jon on 7 July 2031" answers it.)
        let named = Support.nameTerms(of: manifest.requestLead, ignoring: ignoredNames)
        let asked = topic.subtracting(named)
        if let unknown = manifest.analysis?.unknown.map(Set.init), !named.isEmpty, !asked.isEmpty, asked.isSubset(of: unknown) {
            let written = RequestRules.words(of: evidenceQuestion).filter { !unknown.isDisjoint(with: SearchTerms.terms(of: $0)) }
            return notFound("no file of the workspace mentions " + written.map { "“\($0)”" }.joined(separator: " or "), closest: lines)
        }
        return gap.map { notFound($0, closest: lines) }
    }

    /// "The workspace does not say: <why>." and the closest line found, with its source.
    func notFound(_ why: String, closest lines: [SourcedLine]) -> String {
        var text = "\(Self.notFoundOpening): \(why)."
        // The closest line is the one most about what was asked (for "Oskar's phone number", a line
        // about Oskar, not another person's number).
        let found = lines.isEmpty ? (manifest.retrieved ?? []).map { SourcedLine(text: $0.text, source: "\($0.path):\($0.line)") } : lines
        let topic = Support.topicTerms(of: evidenceQuestion)
        let closest = found.indices.max { left, right in
            let l = Support.coverage(of: topic, in: found[left].text), r = Support.coverage(of: topic, in: found[right].text)
            return l != r ? l < r : left > right
        }
        if let index = closest {
            let line = found[index]
            text += "\nThe closest line: “\(Self.clip(line.text))”" + (line.source.map { " (\($0))" } ?? "")
        }
        return text
    }

    /// A line as an answer quotes it: at most 300 characters.
    static func clip(_ text: String, _ most: Int = 300) -> String {
        text.count > most ? String(text.prefix(most - 1)) + "…" : text
    }

    /// "- text (path:line)".
    static func bullet(_ line: SourcedLine) -> String {
        "- \(line.text)" + (line.source.map { " (\($0))" } ?? "")
    }

    /// A value among `options` (`{"answer": "…"}` under a grammar that allows only them): the
    /// index of the one the model chose (0 when its reply names none).
    func chooseValue(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, budget: Int, options: [String], restored: Bool,
                     tally: inout Tally) async throws -> Int {
        // Asked even for one option: the step is the agent's, journaled like any other, and a
        // roster's answering agent always makes its call.
        guard !options.isEmpty else { return 0 }
        let prompt = FocusedPrompt.build(agent: agent, request: manifest.request, context: "", part: part, budget: budget, toolCount: 0, extras: extras(for: agent))
        let user = prompt.user + "\n\nWhich of these answers the request: " + options.map { "“\($0)”" }.joined(separator: ", ") + "?"
        let system = agent.systemPrompt + "\n\n" + #"Reply only with JSON: {"answer": "…"}, the value from the notes that answers the request."#
        var modelOptions = ModelOptions(maxTokens: 48)
        modelOptions.responseSchema = ResponseSchema(name: "answer", schema: [
            "type": "object", "properties": ["answer": ["type": "string", "enum": .array(options.map { .string($0) })]],
            "required": ["answer"], "additionalProperties": false,
        ])
        let answer = try await modelCall("\(step)/0", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(system), .user(user)], options: modelOptions), quiet: restored, streams: false)
        tally.add(answer)
        let chosen = (try? JSONValue(parsing: answer.reply.text.trimmingCharacters(in: .whitespacesAndNewlines)))?["answer"]?.stringValue
        return options.firstIndex { $0 == chosen } ?? 0
    }

    /// A choice among `options` under a grammar: the index of the one the model chose (0 when
    /// its reply names none). `question` ends the prompt.
    func choose(_ step: Int, call: Int = 0, agent: AgentDefinition, options: [String], question: String, context: String, restored: Bool,
                tally: inout Tally) async throws -> Int {
        guard options.count > 1 else { return 0 }
        let numbered = options.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "\n")
        let user = "[User Request]:\n\(manifest.requestLead)\n\n" + (context.isEmpty ? "" : context + "\n\n") + numbered + "\n\n" + question
        let system = agent.systemPrompt + "\n\n" + #"Reply only with JSON: {"choice": number}."#
        var modelOptions = ModelOptions(maxTokens: 16)
        modelOptions.responseSchema = ResponseSchema(name: "choice", schema: [
            "type": "object", "properties": ["choice": ["type": "integer", "enum": .array((1...options.count).map { .number(Double($0)) })]],
            "required": ["choice"], "additionalProperties": false,
        ])
        let answer = try await modelCall("\(step)/\(call)", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(system), .user(user)], options: modelOptions), quiet: restored, streams: false)
        tally.add(answer)
        let number = Self.choices(in: answer.reply.text, key: "choice", allowed: Set(1...options.count)).first
            ?? (try? JSONValue(parsing: answer.reply.text))?["choice"]?.intValue ?? 1
        return max(0, min(options.count, number) - 1)
    }

    /// Several of `options` under a grammar (at most `most`), in the options' order; the engine's
    /// `kept` indices always stay.
    func chooseSeveral(_ step: Int, call: Int = 0, agent: AgentDefinition, options: [String], most: Int, question: String, kept: Set<Int>,
                       restored: Bool, tally: inout Tally) async throws -> [Int] {
        guard options.count > 1 else { return Array(options.indices) }
        let numbered = options.enumerated().map { "[\($0.offset + 1)] \($0.element)" }.joined(separator: "\n")
        let user = "[User Request]:\n\(manifest.requestLead)\n\n" + numbered + "\n\n" + question
        let system = agent.systemPrompt + "\n\n" + #"Reply only with JSON: {"lines": [numbers]}."#
        var modelOptions = ModelOptions(maxTokens: 16 + most * 6)
        modelOptions.responseSchema = ResponseSchema(name: "lines", schema: Self.choiceSchema(key: "lines", numbers: Array(1...options.count), most: most))
        let answer = try await modelCall("\(step)/\(call)", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(system), .user(user)], options: modelOptions), quiet: restored, streams: false)
        tally.add(answer)
        let picked = Self.choices(in: answer.reply.text, key: "lines", allowed: Set(1...options.count)).prefix(most).map { $0 - 1 }
        return Array(Set(picked).union(kept)).sorted()
    }
}

extension RunManifest {
    /// The request as retrieval searches for it: a follow-up's pronoun ("What is his email
    /// address?") stands for the names the previous answer gave.
    func searchQuery(ignoring: Set<String>) -> String {
        var query = requestLead
        if let exchange = previousExchange, RequestRules.refersBack(requestLead) {
            let answer = exchange.answer.split(separator: "\n").first.map(String.init) ?? exchange.answer
            // The value the previous answer gave ("Bram — “…”" gives Bram), else the names it holds.
            if let value = RunExecutor.renderedAnswer(answer)?.value {
                query += " " + value
            } else {
                let names = Claims.extract(from: answer, ignoring: ignoring).filter { $0.kind == .name }.map(\.text)
                if !names.isEmpty { query += " " + names.joined(separator: " ") }
            }
        }
        return query
    }
}
