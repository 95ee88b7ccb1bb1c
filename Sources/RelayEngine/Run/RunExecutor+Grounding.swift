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
        guard agent.isGrounded, !chose.contains(agent.id), !inputs.isEmpty else { return nil }
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
        if let count = agent.retrieve, count > 0 { extras.retrieved = Array((manifest.retrieved ?? []).prefix(count)) }
        extras.exchange = manifest.previousExchange
        return extras
    }

    // MARK: Verdicts

    /// A reviewer's reply under a grammar: a short check, then approved, or a revision for one
    /// of the agents that may be asked (`revisable`).
    static func verdictSchema(revisable: [String]) -> JSONValue {
        let check: JSONValue = ["type": "string", "maxLength": 240]
        var options: [JSONValue] = [
            ["type": "object", "properties": ["check": check, "verdict": ["type": "string", "enum": ["approved"]]],
             "required": ["check", "verdict"], "additionalProperties": false],
        ]
        if !revisable.isEmpty {
            options.append(["type": "object",
                            "properties": ["check": check, "verdict": ["type": "string", "enum": ["revise"]],
                                           "who": ["type": "string", "enum": .array(revisable.map { .string($0) })]],
                            "required": ["check", "verdict", "who"], "additionalProperties": false])
        }
        return options.count == 1 ? options[0] : ["anyOf": .array(options)]
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
