import Foundation
import LanguageModels

/// Routed relays (`"mode": "route"`, issue 19): one agent answers a turn, chosen by
/// deterministic rules first — the message's @mentions, then the agents' `route` keywords and
/// patterns in roster order — then, if the relay has `"classifier": true`, by a model call whose
/// reply llama-server's grammar limits to the agents' names (a JSON-schema enum: a 135M model can
/// only answer a real name), then the first agent. The classifier's call is journaled like any
/// other (`route/0`), so resume and replay choose the same agent.
///
/// The chosen agent gets its own earlier exchanges in this chat (from the manifest, oldest
/// first, at most `maxMessages` messages, whole pairs) as a conversation before the focused prompt.
extension RunExecutor {
    /// Who asks the classifier's question, as the journal and replay report name it.
    static let router = AgentDefinition(
        id: "relay-router", name: "Relay's router", emoji: "🧭", color: "#7F8C8D",
        systemPrompt: "You route a person's message to the one agent best suited to answer it. Reply only with JSON: {\"agent\": \"NAME\"}.", order: 0)

    /// Chooses the turn's agent(s) and says why (`selected` event; the message's `selectedBy`).
    func selectRoute() async throws {
        let roster = manifest.roster
        guard let first = roster.first else { return }
        let request = manifest.requestLead
        var chosen: [AgentDefinition]
        let reason: String
        if let mentioned = manifest.mentioned, !mentioned.isEmpty {
            chosen = roster.filter { mentioned.contains($0.id) }
            reason = "mention: " + chosen.map { "@\($0.name)" }.joined(separator: ", ")
        } else if let (agent, what) = Self.ruleMatch(request, roster: roster) {
            chosen = [agent]
            reason = "rule: \(agent.name)'s \(what)"
        } else if manifest.routing?.classifier == true {
            if let agent = try await classify(request, roster: roster) {
                chosen = [agent]
                reason = "classifier: chose \(agent.name) among \(roster.map(\.name).joined(separator: ", "))"
            } else {
                chosen = [first]
                reason = "fallback: the classifier named no agent; the first agent answers"
            }
        } else {
            chosen = [first]
            reason = "fallback: no mention or rule matched; the first agent answers"
        }
        selectedAgents = chosen
        for agent in chosen { selection[agent.id] = reason }
        emit(.selected(agents: chosen.map(AgentInfo.init), reason: reason))
    }

    /// The first agent in roster order whose rule matches, and what matched.
    static func ruleMatch(_ message: String, roster: [AgentDefinition]) -> (AgentDefinition, String)? {
        for agent in roster {
            if let what = agent.route?.match(message) { return (agent, what) }
        }
        return nil
    }

    /// `{"agent": one of the names}`.
    static func routeSchema(names: [String]) -> JSONValue {
        ["type": "object", "properties": ["agent": ["type": "string", "enum": .array(names.map { .string($0) })]],
         "required": ["agent"], "additionalProperties": false]
    }

    /// The classifier's choice: the agent its reply names (under the schema, one of them; a
    /// server without grammar may still write a name in prose), or nil.
    private func classify(_ request: String, roster: [AgentDefinition]) async throws -> AgentDefinition? {
        let agent = Self.router
        let descriptions = roster.map { "- \($0.name): \(Self.summary(of: $0.systemPrompt))" }.joined(separator: "\n")
        let (message, _) = FocusedPrompt.fit(request, tokens: manifest.contextTokens / 4, what: "the message", budget: manifest.contextTokens)
        var options = ModelOptions(maxTokens: 32)
        options.responseSchema = ResponseSchema(name: "route", schema: Self.routeSchema(names: roster.map(\.name)))
        let user = "[Agents]:\n\(descriptions)\n\n[Message]:\n\(message)\n\nWhich agent should answer this message?"
        let answer = try await modelCall("route/0", step: 0, agent: agent,
                                         request: ModelRequest(messages: [.system(agent.systemPrompt), .user(user)], options: options),
                                         quiet: true, streams: false)
        let reply = answer.reply.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let wanted = (try? JSONValue(parsing: reply))?["agent"]?.stringValue
        if let wanted, let found = roster.first(where: { $0.name.lowercased() == wanted.lowercased() || $0.id.lowercased() == wanted.lowercased() }) {
            return found
        }
        let words = Set(reply.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init))
        return roster.first { words.contains($0.name.lowercased()) }
    }

    /// The first sentence of a system prompt, at most 160 characters: what the classifier reads of an agent.
    static func summary(of prompt: String) -> String {
        let flat = prompt.split(whereSeparator: \.isNewline).joined(separator: " ")
        let first = Sentences.split(flat).prefix(2).joined(separator: " ")
        let text = first.isEmpty ? flat : first
        return text.count > 160 ? String(text.prefix(157)) + "…" : text
    }

    /// A routed agent's earlier exchanges in this chat, newest kept first, within half of the
    /// room its prompt leaves (older pairs dropped whole, the cut named).
    func routeHistory(for agent: AgentDefinition, room: Int) -> (messages: [ChatMessage], cuts: [String]) {
        guard manifest.shape == .route, worker == nil, let exchanges = manifest.histories?[agent.id], !exchanges.isEmpty else { return ([], []) }
        let share = max(0, room / 2)
        var kept: [RunManifest.Exchange] = []
        var used = 0
        for exchange in exchanges.reversed() {
            let cost = FocusedPrompt.estimate(exchange.message) + FocusedPrompt.estimate(exchange.answer) + 8
            guard used + cost <= share else { break }
            kept.insert(exchange, at: 0)
            used += cost
        }
        let cuts = kept.count < exchanges.count
            ? ["history: \(kept.count) of \(exchanges.count) earlier exchanges with \(agent.name) kept"] : []
        return (kept.flatMap { [ChatMessage.user($0.message), .assistant($0.answer)] }, cuts)
    }

    // MARK: Mentions

    /// Who says that an @mention named no agent, in the chat and transcript.
    static let relayNotice = AgentDefinition(
        id: "relay", name: "Relay", emoji: "ℹ️", color: "#7F8C8D", systemPrompt: "The engine's notices.", order: 0)

    /// A message that mentions an unknown name: no agent is asked; the chat gets the notice.
    func finishWithNotice(_ notice: String) throws {
        let restored = recorded.steps[0] != nil
        let message = AgentMessage(step: 0, agent: AgentInfo(Self.relayNotice), text: notice, toolCalls: [], promptTokens: 0, completionTokens: 0,
                                   modelCalls: 0, milliseconds: 0, started: manifest.created, cuts: [], restored: restored)
        if !restored { emit(.note(notice)) }
        messages.append(message)
        try finishStep(message, agent: Self.relayNotice)
        try finishRun(after: 1, outputs: [:])
    }
}
