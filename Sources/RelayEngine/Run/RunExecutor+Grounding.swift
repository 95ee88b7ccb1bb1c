import Foundation
import LanguageModels

/// Promise 8 (design §3): numbers, dates and names an agent writes come from its inputs. After
/// each step the engine checks the text against everything the agent was given — its system
/// prompt with `context.md`, the request, the previous agent's output, the workspace lines
/// retrieved for it, its tool results — and, when something is unsupported, asks the agent for
/// one revision naming it (counted against the turn's cap of 3); what the revision still
/// cannot support is removed, sentence by sentence, with a visible mark.
extension RunExecutor {
    /// Who asks for a grounding revision, as the group chat and transcript show it.
    static let groundingChecker = AgentDefinition(
        id: "relay-check", name: "Relay's check", emoji: "🧭", color: "#7F8C8D", systemPrompt: "The engine's grounding check.", order: 0)

    struct GroundingOutcome {
        var note: AgentMessage.GroundingNote
        /// The text without what stays unsupported (nil: unchanged, a revision comes first).
        var cleaned: String?
        var revise: Bool
    }

    /// What the check found in `message` and what to do about it; nil when everything is
    /// supported (or the agent's text is not checked: a reviewer's verdict, an extraction).
    func groundingCheck(of message: AgentMessage, agent: AgentDefinition, inputs: [String], step: Int, alreadyRevised: Bool) -> GroundingOutcome? {
        guard agent.isGrounded, !chose.contains(agent.id), !inputs.isEmpty, !(isGeneralRequest && agent.extract == .answer) else { return nil }
        let text = message.text
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay", "REVISION", "APPROVED"])
        let unsupported = Claims.unsupported(in: text, sources: inputs, ignoring: ignoring)
        guard !unsupported.isEmpty else { return nil }
        let claims = unsupported.map(\.text)
        let info = AgentInfo(agent)
        // A verdict is not worth a revision; an answer is, while the turn has revisions left.
        if !alreadyRevised, !agent.isReviewer, revisionsUsed < Self.maximumRevisions {
            revisionsUsed += 1
            let note = AgentMessage.GroundingNote(
                unsupported: claims, action: .revisionRequested,
                request: "not in \(agent.name)'s inputs: \(claims.joined(separator: ", ")); write it again with only what the inputs hold")
            if !message.restored { emit(.grounding(step: step, agent: info, note: note)) }
            return GroundingOutcome(note: note, cleaned: nil, revise: true)
        }
        let (kept, removed) = Claims.removing(unsupported, from: text)
        var cleaned = kept.trimmingCharacters(in: .whitespacesAndNewlines)
        let count = removed.count
        let note: AgentMessage.GroundingNote
        if cleaned.isEmpty || !cleaned.contains(where: \.isLetter) {
            // Nothing would be left: the whole answer is the model's own (a name for a cat, a
            // packing list). It stays, marked as such, rather than vanish.
            let listed = claims.prefix(6).map { "“\($0)”" }.joined(separator: ", ")
            cleaned = text.trimmingCharacters(in: .whitespacesAndNewlines)
                + "\n\n_(Relay's check: \(listed) \(claims.count == 1 ? "is" : "are") in none of the sources — the model's own suggestion, not a fact from the workspace.)_"
            note = AgentMessage.GroundingNote(unsupported: claims, action: .marked, request: "marked as the model's own: \(claims.joined(separator: ", "))")
        } else {
            cleaned += "\n\n_(Relay removed \(count) statement\(count == 1 ? "" : "s") it could not find in the sources.)_"
            note = AgentMessage.GroundingNote(unsupported: claims, action: .removed, request: "removed what the inputs do not hold: \(claims.joined(separator: ", "))", removed: removed)
        }
        if !message.restored { emit(.grounding(step: step, agent: info, note: note)) }
        return GroundingOutcome(note: note, cleaned: cleaned, revise: false)
    }

    /// The engine's additions to an agent's prompt: its share of the retrieved lines, and the
    /// chat's previous exchange for the agents that see the request's context.
    func extras(for agent: AgentDefinition) -> FocusedPrompt.Extras {
        var extras = FocusedPrompt.Extras()
        if let count = agent.retrieve, count > 0 { extras.retrieved = Array((manifest.retrieved ?? []).prefix(evidenceCount(for: agent))) }
        extras.exchange = manifest.previousExchange
        return extras
    }

    // MARK: Verdicts

    /// A reviewer's reply under a grammar: a check, then approved, or a revision for one of the
    /// agents that may be asked (`revisable`). The check is one of the sentences the engine
    /// verified (`checks`): a 135M model's own "check" was noise ("APPROVED — Shyn"). With no
    /// reason to revise (the engine verified the answer), approving is the only choice.
    static func verdictSchema(revisable: [String], checks: VerdictChecks) -> JSONValue {
        func check(_ sentences: [String]) -> JSONValue { ["type": "string", "enum": .array(sentences.map { .string($0) })] }
        var options: [JSONValue] = [
            ["type": "object", "properties": ["check": check(checks.approve), "verdict": ["type": "string", "enum": ["approved"]]],
             "required": ["check", "verdict"], "additionalProperties": false],
        ]
        if !revisable.isEmpty, !checks.revise.isEmpty {
            options.append(["type": "object",
                            "properties": ["check": check(checks.revise), "verdict": ["type": "string", "enum": ["revise"]],
                                           "who": ["type": "string", "enum": .array(revisable.map { .string($0) })]],
                            "required": ["check", "verdict", "who"], "additionalProperties": false])
        }
        return options.count == 1 ? options[0] : ["anyOf": .array(options)]
    }

    /// What a reviewer's check may say: sentences the engine verified about the text under
    /// review, for approving it, and reasons to revise it.
    struct VerdictChecks: Equatable {
        var approve: [String]
        var revise: [String]
    }

    /// The checks for a reviewer of `previous` (the agent before it and its text), given
    /// everything the reviewer was given (`sources`).
    func verdictChecks(reviewing previous: (name: String, text: String)?, sources: [String]) -> VerdictChecks {
        guard let previous, !previous.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return VerdictChecks(approve: ["There is nothing to check."], revise: ["There is no answer yet."])
        }
        var approve: [String] = []
        var revise = ["It does not answer the request."]
        // Whether the engine verified what the request's kind demands of the answer: then the
        // reviewer chooses among verified sentences only. Offered "It does not answer the
        // request." beside a verified check, SmolLM2 took it for a right answer as often as
        // for a wrong one, and a draft it had approved came back invented.
        var kindVerified = false
        let first = previous.text.split(separator: "\n").first.map(String.init) ?? previous.text
        // What the request's kind demands of the answer.
        if let analysis = manifest.analysis, manifest.document == nil {
            let items = previous.text.split(separator: "\n").filter { $0.hasPrefix("- ") }.count
            if previous.text.hasPrefix(Self.notFoundOpening) {
                approve.append("It says the workspace does not say, with the closest line found.")
                kindVerified = true
            } else if previous.text.hasPrefix(Self.generalOpening) {
                approve.append("It is labelled as the model's own answer, not the workspace's.")
                kindVerified = true
            } else if [.list, .summarise].contains(analysis.kind), items > 0 {
                // No count in words the check reads: a number no source holds would be flagged.
                approve.append(items == 1 ? "It gives a line from the notes, with its source." : "It gives lines from the notes, each with its source.")
                kindVerified = true
            } else if [.compute, .compare].contains(analysis.kind), previous.text.contains("(") {
                approve.append("Relay's calculator worked it out from the lines it cites.")
                kindVerified = true
            } else if analysis.kind == .yesNo, first.hasPrefix("Yes") || first.hasPrefix("No") {
                approve.append("It says \(first.hasPrefix("Yes") ? "yes" : "no"), quoting the line that decides it.")
                kindVerified = true
            } else if analysis.kind == .lookup, let value = analysis.value, value.isSpan, let given = Self.renderedAnswer(first)?.value {
                if ValueSpans.find(value, in: given).isEmpty { revise.insert("It does not give \(value.described), which the request asks for.", at: 0) }
                else { approve.append("It gives \(value.described), as the request asks: “\(given)”."); kindVerified = true }
            } else if analysis.kind == .draft {
                // A draft names whom the request names.
                let named = Claims.extract(from: manifest.requestLead, ignoring: ignoredNames).filter { $0.kind == .name }
                    .compactMap { $0.text.split(separator: " ").first.map(String.init) }
                let missing = named.filter { !previous.text.localizedCaseInsensitiveContains($0) }
                if let who = missing.first { revise.insert("It does not address \(who), whom the request names.", at: 0) }
                else if let who = named.first { approve.append("It is a message to \(who), as the request asks."); kindVerified = true }
            }
        }
        if approve.isEmpty, let answer = Self.renderedAnswer(first) {
            let quoted = (manifest.retrieved ?? []).contains { "\($0.path):\($0.line)" == answer.source && $0.text.contains(answer.quote) }
                || SourceText(workspace: workspace).text(of: String(answer.source.prefix { $0 != ":" }))?.contains(answer.quote) == true
            if quoted, let value = answer.value {
                let judge = AnswerEvidence(question: manifest.requestLead)
                let kind = Claims.extract(from: value).first.flatMap { claim in
                    judge.asked != .any && judge.fits(claim) ? ["name": "a name", "date": "a date", "number": "a number"][claim.kind.rawValue] : nil
                }
                approve.append((kind.map { "It gives \($0), as the request asks: " } ?? "It gives ") + "“\(value)”, from \(answer.source).")
            } else if quoted {
                approve.append("It quotes \(answer.source) word for word.")
            }
        }
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay", "REVISION", "APPROVED"])
        let unsupported = Claims.unsupported(in: previous.text, sources: sources.filter { $0 != previous.text }, ignoring: ignoring)
        if unsupported.isEmpty {
            if !Claims.extract(from: previous.text, ignoring: ignoring).isEmpty { approve.append("Every number, date and name in it is in the sources.") }
            if kindVerified { revise.removeAll { $0 == "It does not answer the request." } }
        } else {
            revise.insert("It holds \(unsupported.prefix(3).map { "“\($0.text)”" }.joined(separator: ", ")), which no source has.", at: 0)
        }
        // The plain sentence only when the engine verified nothing (SmolLM2 took it over "It gives
        // a name, as the request asks: …" when both were offered).
        if approve.isEmpty { approve.append("\(previous.name)'s text answers the request.") }
        return VerdictChecks(approve: approve, revise: revise)
    }

    /// "value — “quote” (path:line)" or "“quote” (path:line)", as `extract: answer` writes an answer.
    static func renderedAnswer(_ line: String) -> (value: String?, quote: String, source: String)? {
        guard line.hasSuffix(")"), let open = line.range(of: " (", options: .backwards) else { return nil }
        let source = String(line[open.upperBound..<line.index(before: line.endIndex)])
        guard source.contains(":"), !source.contains(" ") else { return nil }
        var head = line[..<open.lowerBound]
        guard head.hasSuffix("”"), let start = head.range(of: "“") else { return nil }
        let quote = String(head[start.upperBound..<head.index(before: head.endIndex)]).replacingOccurrences(of: "…", with: "")
        head = head[..<start.lowerBound]
        let value = head.hasSuffix(" — ") ? String(head.dropLast(3)) : nil
        return (value?.isEmpty == false ? value : nil, quote, source)
    }

    /// A verdict reply as the chat shows it: "APPROVED — …" or "REVISION for Wren: …" (the
    /// line the engine reads as a revision request). Text that is not a verdict stays as it is.
    static func renderVerdict(_ reply: String) -> String {
        guard let json = try? JSONValue(parsing: reply.trimmingCharacters(in: .whitespacesAndNewlines)),
              let verdict = json["verdict"]?.stringValue else { return reply }
        let check = (json["check"]?.stringValue ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if verdict == "revise", let who = json["who"]?.stringValue {
            return "REVISION for \(who): \(check.isEmpty ? "please check your part against the request" : check)"
        }
        return "APPROVED" + (check.isEmpty ? "" : " — \(check)")
    }
}
