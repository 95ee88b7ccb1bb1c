import Foundation
import LanguageModels

/// Structured extraction (an agent with `"extract"`): instead of free text, the agent chooses
/// numbered units of its input — the sentences of a dropped document, or the workspace lines
/// retrieved for a question — under a JSON schema that llama-server enforces with a grammar, so
/// a model of 135M parameters can only name sentences that exist. The engine renders the chosen
/// units verbatim: what the agent hands on cannot hold an invented number or name.
///
/// A document longer than the window is read in chunks of whole sentences, each chunk its own
/// model call (`step/0`, `step/1`, … in the journal) with the same system prompt and request
/// first, so the server reuses their cached prefix; the choices are combined in document order.
extension RunExecutor {
    /// The most of a document's characters an extraction keeps: a summary is at most half of
    /// what it summarises, and the writer adds a line.
    static let extractionShare = 0.4
    /// The most lines an answer's extraction may choose.
    static let mostLines = 3
    /// … for a list, a summary, a comparison or a computation, whose answer is several lines.
    static let mostListLines = 10

    /// How many of the run's evidence lines `agent` is shown: its `retrieve`, or all of them
    /// (up to `RelayRunner.mostEvidence`) for a request whose answer is several lines.
    func evidenceCount(for agent: AgentDefinition) -> Int {
        let count = agent.retrieve ?? 0
        guard count > 0, let kind = manifest.analysis?.kind, [.list, .summarise, .compare, .compute].contains(kind) else { return count }
        return max(count, manifest.retrieved?.count ?? 0)
    }

    func runExtraction(_ step: Int, agent: AgentDefinition, kind: Extraction, part: FocusedPrompt.Part, requestedBy: AgentDefinition?,
                       revisionRequest: String?) async throws -> AgentMessage {
        let restored = recorded.steps[step] != nil
        let info = AgentInfo(agent)
        let budget = agent.tokenBudget ?? manifest.contextTokens
        if !restored {
            if let worker {
                emit(.workerStarted(step: step, worker: worker.number, of: worker.count, agent: info, subtask: worker.subtask))
            } else {
                emit(.agentStarted(step: step, agent: info, revisionRequestedBy: requestedBy.map(AgentInfo.init), revisionRequest: revisionRequest))
            }
        }
        var tally = Tally()
        var cuts: [String] = []
        let text: String
        switch kind {
        case .sentences:
            text = try await extractSentences(step, agent: agent, budget: budget, restored: restored, tally: &tally, cuts: &cuts)
        case .lines:
            text = try await extractLines(step, agent: agent, part: part, budget: budget, restored: restored, tally: &tally)
        case .answer:
            text = try await chooseAnswer(step, agent: agent, part: part, budget: budget, restored: restored, tally: &tally)
        case .verdict:
            text = ""
        }
        for cut in cuts where !restored { emit(.note("\(agent.label): \(cut)")) }
        if !restored, mode == .live, !text.isEmpty { emit(.textDelta(step: step, agentID: agent.id, text: text)) }
        var message = AgentMessage(
            step: step, agent: info, text: text, revisionRequestedBy: requestedBy?.name, revisionRequest: revisionRequest, toolCalls: [],
            promptTokens: tally.promptTokens, completionTokens: tally.completionTokens, modelCalls: tally.calls, milliseconds: tally.milliseconds,
            started: tally.started ?? manifest.created, cuts: givenCuts + cuts, restored: restored)
        message.worker = worker?.number
        message.subtask = worker?.subtask
        try finishStep(message, agent: agent)
        return message
    }

    struct Tally {
        var calls = 0, promptTokens = 0, completionTokens = 0, milliseconds = 0
        var started: String?

        mutating func add(_ answer: Answer) {
            calls += 1
            started = started ?? answer.started
            milliseconds += answer.milliseconds
            promptTokens += answer.reply.usage?.promptTokens ?? 0
            completionTokens += answer.reply.usage?.completionTokens ?? 0
        }
    }

    // MARK: Sentences of a document

    /// The request an agent sees: the whole request, or — after an agent of the roster has
    /// chosen the document's key sentences — the request without the document, which that
    /// agent's output stands for (fewer tokens, and nothing for a small model to wander in).
    func request(for agent: AgentDefinition) -> String {
        guard let document = manifest.document,
              let position = agents.firstIndex(where: { $0.id == agent.id }),
              agents[..<position].contains(where: { $0.extract == .sentences }) else { return manifest.request }
        let path = manifest.triggerPath ?? "the file"
        return requestLead + "\n\n[\(path): \(document.count) characters; its key sentences are in the previous agent's notes]"
    }

    var requestLead: String { manifest.requestLead }

    private func extractSentences(_ step: Int, agent: AgentDefinition, budget: Int, restored: Bool, tally: inout Tally, cuts: inout [String]) async throws -> String {
        let original = manifest.document ?? manifest.request
        let document = DocumentShape.prepared(original)
        let headings = Self.headings(of: document)
        let sentences = Self.datedHeadingsJoined(Sentences.split(document), headings: headings)
        let rows = Set(Sentences.split(DocumentShape.tableRows(of: manifest.document ?? manifest.request).joined(separator: "\n")))
        // A summary's share is of the source as a reader sees it, never more. A table's text
        // (pipes, rules, padded cells) is longer than what it says, and its rows are written out
        // with their headers: the share shrinks by as much.
        let widening = rows.isEmpty ? 1.0 : min(1.0, Double(Self.visibleLength(of: original)) / Double(max(document.count, 1)))
        guard !sentences.isEmpty else { return "" }
        let system = agent.systemPrompt + "\n\n" + Self.sentenceInstruction
        let where_ = manifest.triggerPath.map { " — \($0)" } ?? ""
        let lead = "[User Request]:\n\(requestLead)\n\n"
        // Room for the numbered sentences of one call.
        let room = max(200, budget - 200 - 48 - FocusedPrompt.estimate(system) - FocusedPrompt.estimate(lead) - 60)
        let groups = Self.groups(of: sentences, tokens: room)
        var chosen: [Int] = []
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] })
        for (index, group) in groups.enumerated() {
            let part = groups.count > 1 ? ", part \(index + 1) of \(groups.count)" : ""
            // The engine ranks the sentences by the checkable facts they carry (numbers, dates,
            // names) and offers the model the best of them, best first: a 135M model's own
            // choice among all sentences is close to random.
            let scored = Self.ranked(group, sentences: sentences, ignoring: ignoring)
            // Sentences without a single fact (a bare heading, "Summary") are offered only when
            // the part has nothing else.
            // A meeting's attendance ("Present: …") says who was there, not what was decided.
            // A decision ("Decided: …", "Agreed: …") with a fact of its own is the news of its
            // item, however few its figures: it counts as much as the richest sentence.
            let richest = scored.map(\.score).max() ?? 0
            func decides(_ number: Int) -> Bool { Evidence.decisionOpenings.contains(where: Self.bare(sentences[number]).lowercased().hasPrefix) }
            let facts = scored.filter { $0.score > 0 && !Evidence.isAttendance(Self.bare(sentences[$0.number])) }.map { entry in
                decides(entry.number) ? (number: entry.number, score: max(entry.score, richest)) : entry
            }
            var ranked = facts.isEmpty ? scored.map(\.number) : Self.spread(facts, sentences: sentences, headings: headings)
            let groupCharacters = group.reduce(0) { $0 + sentences[$1].count }
            let allowance = min(Double(groupCharacters), Double(groupCharacters) * Self.extractionShare * widening)
            // A short table's rows are its facts: every one goes first (a summary of a price list
            // that leaves out a supplier is wrong). A table too long to keep whole (a statement's
            // forty transactions) is not summarised by its first rows: the prose around it goes
            // first, because that is where its totals and terms are, then its richest rows.
            let tableRows = ranked.filter { rows.contains(sentences[$0]) }
            if !tableRows.isEmpty {
                let prose = ranked.filter { !rows.contains(sentences[$0]) }
                let whole = Double(tableRows.reduce(0) { $0 + sentences[$1].count }) <= allowance
                ranked = whole ? tableRows + prose : prose + tableRows
            }
            var fitting: [Int] = []
            var used = 0
            for number in ranked where fitting.isEmpty || Double(used + sentences[number].count) <= allowance {
                fitting.append(number)
                used += sentences[number].count
            }
            let offered = Array(ranked.prefix(max(fitting.count, min(ranked.count, fitting.count * 3 / 2 + 1))))
            var numbered: [String] = []
            for number in offered {
                var sentence = sentences[number]
                if FocusedPrompt.estimate(sentence) > room {
                    let (kept, cut) = FocusedPrompt.fit(sentence, tokens: room - 20, what: "sentence \(number + 1)", budget: budget)
                    sentence = kept
                    if let cut { cuts.append(cut) }
                }
                numbered.append("[\(number + 1)] \(sentence)")
            }
            let most = fitting.count
            let user = lead + "[Document\(where_)\(part) — its sentences with the most facts, numbered]:\n" + numbered.joined(separator: "\n")
                + "\n\nChoose the sentences that hold this part's key facts (at most \(most))."
            var options = ModelOptions(maxTokens: 16 + most * 6)
            options.responseSchema = ResponseSchema(name: "sentences", schema: Self.choiceSchema(key: "sentences", numbers: offered.map { $0 + 1 }, most: most))
            let answer = try await modelCall("\(step)/\(index)", step: step, agent: agent,
                                             request: ModelRequest(messages: [.system(system), .user(user)], options: options), quiet: restored, streams: false)
            tally.add(answer)
            // The model's choices first, then the engine's ranking, within the share: the
            // engine, not the model, keeps the summary short.
            var kept = 0
            var taken: Set<Int> = []
            for number in Self.choices(in: answer.reply.text, key: "sentences", allowed: Set(offered.map { $0 + 1 })).map({ $0 - 1 }) + fitting
            where !taken.contains(number) {
                let length = sentences[number].count
                if kept > 0, Double(kept + length) > allowance { continue }
                kept += length
                taken.insert(number)
                chosen.append(number + 1)
            }
        }
        if groups.count > 1 { cuts.append("read \(document.count) characters in \(groups.count) chunks, one model call each") }
        let picked = Array(Set(chosen)).sorted()
        return picked.map { "- " + Self.bare(sentences[$0 - 1]) }.joined(separator: "\n")
    }

    /// The characters a reader sees of `text`: without a table's rules, pipes and padding.
    static func visibleLength(of text: String) -> Int {
        text.split(separator: "\n").reduce(0) { total, line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !Evidence.isTableRule(trimmed) else { return total }
            let words = trimmed.split(whereSeparator: { $0 == "|" || $0.isWhitespace })
            return total + words.reduce(0) { $0 + $1.count + 1 }
        }
    }

    static let sentenceInstruction = """
        You read a document as numbered sentences and choose the ones a reader must keep: \
        names, numbers, dates, amounts, decisions, results. Reply only with JSON: {"sentences": [numbers]}.
        """

    /// A group's sentence numbers (0-based), best first, with the value each added: greedily,
    /// the sentence whose numbers and dates (2 each) and names (1 each) are not yet covered by
    /// the sentences before it — so five sentences naming the same company do not crowd out the
    /// one with the price. Fragments (a bare heading, "FOR IMMEDIATE RELEASE") count only their
    /// numbers and dates.
    static func ranked(_ group: [Int], sentences: [String], ignoring: Set<String>) -> [(number: Int, score: Int)] {
        let claims = group.map { number -> [Claim] in
            let sentence = sentences[number]
            let found = Claims.extract(from: sentence, ignoring: ignoring)
            let words = sentence.split(whereSeparator: { $0.isWhitespace }).count
            let fragment = sentence.hasPrefix("#") || words < 5 || sentence == sentence.uppercased()
            // A heading is a signpost ("Day notes 3"), a fact only with a date ("4.3 (12 October 2026)").
            let heading = sentence.hasPrefix("#") || (words < 5 && !sentence.contains(":") && !sentence.hasSuffix("."))
            return heading ? found.filter { $0.kind == .date } : fragment ? found.filter { $0.kind != .name } : found
        }
        func weight(_ claim: Claim) -> Int { claim.kind == .name ? 1 : 2 }
        var covered: Set<String> = []
        var left = Array(group.indices)
        var result: [(number: Int, score: Int)] = []
        while !left.isEmpty {
            var best = 0, bestGain = -1
            for (position, index) in left.enumerated() {
                let gain = claims[index].filter { !covered.contains($0.text.lowercased()) }.reduce(0) { $0 + weight($1) }
                if gain > bestGain { best = position; bestGain = gain }
            }
            let index = left.remove(at: best)
            for claim in claims[index] { covered.insert(claim.text.lowercased()) }
            result.append((group[index], bestGain))
        }
        return result
    }

    /// Ranked sentences spread over the document's parts (the text under one heading or
    /// title): a sentence's facts count less for each sentence of its part already taken
    /// (halved, a third…), so a summary of minutes reaches the fifth item rather than the first
    /// item's three sentences, while a part with nothing to say (a title) still waits.
    static func spread(_ ranked: [(number: Int, score: Int)], sentences: [String], headings: Set<String>) -> [Int] {
        var part = 0
        var partOf: [Int: Int] = [:]
        for (number, sentence) in sentences.enumerated() {
            if headings.contains(sentence) { part += 1 }
            partOf[number] = part
        }
        var taken: [Int: Int] = [:]
        var left = ranked
        var result: [Int] = []
        while !left.isEmpty {
            func weight(_ entry: (number: Int, score: Int)) -> Double { Double(entry.score) / Double(1 + taken[partOf[entry.number] ?? 0, default: 0]) }
            var best = 0
            for index in left.indices.dropFirst() where weight(left[index]) > weight(left[best]) { best = index }
            let entry = left.remove(at: best)
            taken[partOf[entry.number] ?? 0, default: 0] += 1
            result.append(entry.number)
        }
        return result
    }

    /// A heading with a date ("## 2.8 (4 May 2031)" of release notes, "## Tuesday 7 July"
    /// of a diary) joined to the first sentence under it: a version's first change, a day's
    /// first event, says when in the same bullet.
    static func datedHeadingsJoined(_ sentences: [String], headings: Set<String>) -> [String] {
        var result: [String] = []
        var index = 0
        while index < sentences.count {
            let sentence = sentences[index]
            if headings.contains(sentence), index + 1 < sentences.count, !headings.contains(sentences[index + 1]),
               Claims.extract(from: bare(sentence)).contains(where: { $0.kind == .date }) {
                result.append(bare(sentence) + " — " + bare(sentences[index + 1]))
                index += 2
                continue
            }
            result.append(sentence)
            index += 1
        }
        return result
    }

    /// The headings of a prepared document as its sentences read them (without their marks):
    /// Markdown headings and a plain-text document's titles ("2. Parking", "ROOF DEFECTS").
    static func headings(of document: String) -> Set<String> {
        let lines = document.components(separatedBy: "\n")
        return Set(lines.indices.filter { lines[$0].hasPrefix("#") || Evidence.isTitle(at: $0, in: lines) }.map { bare(lines[$0]) })
    }

    /// Consecutive sentence numbers (0-based) in groups that fit `tokens`.
    static func groups(of sentences: [String], tokens: Int) -> [[Int]] {
        var groups: [[Int]] = []
        var current: [Int] = []
        var used = 0
        for (number, sentence) in sentences.enumerated() {
            let cost = FocusedPrompt.estimate(sentence) + 3
            if !current.isEmpty, used + cost > tokens {
                groups.append(current)
                current = []
                used = 0
            }
            current.append(number)
            used += cost
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }

    /// A sentence without its Markdown list or heading marker, for a bullet of its own.
    static func bare(_ sentence: String) -> String {
        // A hard-wrapped paragraph's sentence is one line in a bullet.
        let flat = sentence.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        // Bold marks are emphasis, not text: "**Total:** 40" is "Total: 40" (the opening pair
        // would be dropped below and the closing one left behind).
        var text = Substring(flat.replacingOccurrences(of: "**", with: "").trimmingCharacters(in: .whitespaces))
        while let first = text.first, "#*->".contains(first) { text = text.dropFirst() }
        // "1. " and "2) " are list numbers; "4.3 (12 October 2026)" is a version, kept whole.
        if let dot = text.firstIndex(where: { !$0.isNumber }), dot != text.startIndex, [".", ")"].contains(text[dot]),
           text.index(after: dot) == text.endIndex || text[text.index(after: dot)] == " " {
            text = text[text.index(after: dot)...]
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    // MARK: Lines of the workspace

    /// - parameter part: `.subtask` for a plan's worker: it chooses the lines for its subtask
    ///   (a line holding an answer to the subtask or to the request is offered).
    private func extractLines(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, budget: Int, restored: Bool, tally: inout Tally) async throws -> String {
        let retrieved = Array((manifest.retrieved ?? []).prefix(evidenceCount(for: agent)))
        guard !retrieved.isEmpty else { return "Not found: no line of the workspace matches the request." }
        // Lines the workspace's structure gave (the open tasks, the notes of the days asked
        // about, a table's rows) all go on: the request is about each of them.
        if retrieved.allSatisfy({ $0.score >= Evidence.structural }) {
            return retrieved.map { "- \($0.text.trimmingCharacters(in: .whitespaces)) (\($0.path):\($0.line))" }.joined(separator: "\n")
        }
        var subtask: String?
        if case .subtask(_, _, let text) = part { subtask = text }
        // A question that asks for a name, a date or a number is offered the lines that hold one.
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] })
        // A yes/no question asks for no value: its deciding line need hold none ("[x] paid the invoice").
        let holding = manifest.analysis?.kind == .yesNo ? [] : retrieved.filter { line in
            ([manifest.request] + (subtask.map { [$0] } ?? [])).contains { AnswerCandidates.holdsAnswer(to: $0, line: line.text, ignoring: ignoring) }
        }
        // The lines the workspace's structure gave (a table's rows) stay, holding or not.
        let lines = holding.isEmpty ? retrieved : retrieved.filter { line in
            line.score >= Evidence.structural || holding.contains { $0.path == line.path && $0.line == line.line }
        }
        var cuts: [String] = []
        let extras = FocusedPrompt.Extras(retrieved: lines, exchange: manifest.previousExchange)
        var kept = Set(lines.indices.filter { lines[$0].score >= Evidence.structural }.map { $0 + 1 })
        if let kind = manifest.analysis?.kind, [.list, .compute, .compare, .yesNo].contains(kind) {
            // Their answer is made of several lines (a yes/no is decided by the newest of them):
            // every line about what the request names goes on (a 135M model choosing "at most 10"
            // mostly names one).
            let topic = Support.topicTerms(of: manifest.searchQuery(ignoring: ignoring))
            kept.formUnion(lines.indices.filter { !topic.isEmpty && Support.coverage(of: topic, in: lines[$0].withHeading) > 0 }.prefix(Self.mostListLines).map { $0 + 1 })
        }
        let prompt = FocusedPrompt.build(agent: agent, request: manifest.request, context: "", part: subtask == nil ? .relay(previous: nil) : part,
                                         budget: budget, toolCount: 0, extras: extras)
        cuts += prompt.cuts
        let shown = lines.count - cuts.filter { $0.hasPrefix("workspace lines") }.count
        let most = min(manifest.analysis.map { [.list, .summarise, .compare, .compute].contains($0.kind) } == true ? Self.mostListLines : Self.mostLines, lines.count)
        let user = prompt.user + "\n\nChoose the workspace lines that answer \(subtask == nil ? "the request" : "your subtask") (at most \(most))."
        var options = ModelOptions(maxTokens: 16 + most * 6)
        let allowed = Array(1...max(1, min(lines.count, shown)))
        options.responseSchema = ResponseSchema(name: "lines", schema: Self.choiceSchema(key: "lines", numbers: allowed, most: most))
        let system = agent.systemPrompt + "\n\n" + #"Reply only with JSON: {"lines": [numbers]}, the numbers of the lines that answer the request."#
        let answer = try await modelCall("\(step)/0", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(system), .user(user)], options: options), quiet: restored, streams: false)
        tally.add(answer)
        let picked = Self.choices(in: answer.reply.text, key: "lines", allowed: Set(allowed)).prefix(most)
        // The best match always goes on, with what the model chose beside it (measured on SmolLM2:
        // it sometimes names only a weaker line), in the search's order.
        let chosen = Array(Set(picked).union([1]).union(kept)).sorted()
        return chosen.map { number in
            let line = lines[number - 1]
            return "- \(line.text.trimmingCharacters(in: .whitespaces)) (\(line.path):\(line.line))"
        }.joined(separator: "\n")
    }

    // MARK: Schemas

    /// `{"<key>": [n, …]}`: one to `most` of `numbers`.
    static func choiceSchema(key: String, numbers: [Int], most: Int) -> JSONValue {
        [
            "type": "object",
            "properties": .object([
                key: ["type": "array", "items": ["type": "integer", "enum": .array(numbers.map { .number(Double($0)) })],
                      "minItems": 1, "maxItems": .number(Double(max(1, most)))],
            ]),
            "required": [.string(key)],
            "additionalProperties": false,
        ]
    }

    /// The allowed numbers a reply chose, in its order, once each: from `{"key": [..]}`, or
    /// from any numbers in the text when the server did not enforce the schema.
    static func choices(in reply: String, key: String, allowed: Set<Int>) -> [Int] {
        var numbers: [Int] = []
        if let json = try? JSONValue(parsing: reply.trimmingCharacters(in: .whitespacesAndNewlines)), let array = json[key]?.arrayValue {
            numbers = array.compactMap(\.intValue)
        } else {
            var digits = ""
            for character in reply + " " {
                if character.isASCII, character.isNumber { digits.append(character) } else if !digits.isEmpty {
                    if let value = Int(digits) { numbers.append(value) }
                    digits = ""
                }
            }
        }
        var seen: Set<Int> = []
        return numbers.filter { allowed.contains($0) && seen.insert($0).inserted }
    }
}
