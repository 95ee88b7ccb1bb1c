import Foundation

/// Builds an agent's two messages: its system prompt (with `context.md`) and the focused
/// prompt — the user request and only the previous agent's output (or, for a revision, what
/// was asked, its own output and the requester's) — each cut to fit the agent's token budget.
///
/// ```
/// [User Request]:
/// Plan a weekend in Lisbon.
///
/// [Previous Agent — Remy]:
/// - Trams run until midnight [general knowledge]
/// ```
struct FocusedPrompt: Equatable {
    var system: String
    var user: String
    /// What was cut, in words, for the transcript.
    var cuts: [String]
    /// What the agent was given to work from — everything in the prompt except its own earlier
    /// output and the list of what it could not support — for the grounding check.
    var sources: [String] = []

    /// Tokens estimated for `text`: three bytes a token, on the safe side for small models'
    /// tokenizers (English averages about four).
    static func estimate(_ text: String) -> Int { (text.utf8.count + 2) / 3 }

    /// The tokens a reply may take, given the budget: an eighth of it, at most 1,024, unless
    /// the roster says (512 for the reference 4,096-token model, whose agents each do a small part).
    static func replyTokens(for agent: AgentDefinition, budget: Int) -> Int {
        agent.maxTokens ?? min(1024, budget / 8)
    }

    enum Part {
        case relay(previous: (name: String, text: String)?)
        case revision(own: String, requester: String, request: String, requesterOutput: String)
        /// The engine's grounding check found claims in the agent's output that none of its
        /// inputs holds: the agent gets its inputs again, its output and the list.
        case grounding(previous: (name: String, text: String)?, own: String, unsupported: [String])
        /// A plan relay's worker: the request and its one subtask (`number` of `count`).
        case subtask(number: Int, of: Int, text: String)
    }

    /// What the engine adds to a focused prompt besides the request and the previous agent's
    /// output: the workspace lines retrieved for the request and the chat's previous exchange.
    struct Extras: Equatable {
        var retrieved: [RetrievedLine] = []
        var exchange: RunManifest.Exchange?
    }

    /// `[Previous Exchange]` and `[Workspace Lines]`, each cut to its share of `available`.
    static func extrasText(_ extras: Extras, available: Int, budget: Int, cuts: inout [String]) -> String {
        var text = ""
        if let exchange = extras.exchange {
            let (message, c1) = fit(exchange.message, tokens: available / 16, what: "the previous message", budget: budget)
            let (answer, c2) = fit(exchange.answer, tokens: available / 10, what: "the previous answer", budget: budget)
            cuts += [c1, c2].compactMap { $0 }
            text += "[Previous Exchange in this chat]:\nPerson: \(message)\nAnswer: \(answer)\n\n"
        }
        if !extras.retrieved.isEmpty {
            var lines: [String] = []
            var used = 0
            let share = available / 4
            for (index, line) in extras.retrieved.enumerated() {
                let entry = "[\(index + 1)] \(line.path):\(line.line): \(line.text)"
                guard used + estimate(entry) <= share || lines.isEmpty else {
                    cuts.append("workspace lines: \(index) of \(extras.retrieved.count) kept")
                    break
                }
                lines.append(entry)
                used += estimate(entry)
            }
            text += "[Workspace Lines — the best matches for the request, with path:line]:\n" + lines.joined(separator: "\n") + "\n\n"
        }
        return text
    }

    static func build(agent: AgentDefinition, request: String, context: String, part: Part, budget: Int, toolCount: Int,
                      extras: Extras = Extras()) -> FocusedPrompt {
        let reply = replyTokens(for: agent, budget: budget)
        // Tool schemas and the chat template's framing take room too.
        let framing = 48 + toolCount * 90
        var available = max(256, budget - reply - framing - estimate(agent.systemPrompt))
        var cuts: [String] = []

        // context.md: at most a quarter of what is left.
        var system = agent.systemPrompt
        let trimmedContext = context.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmedContext.isEmpty {
            let (kept, cut) = fit(trimmedContext, tokens: available / 4, what: "context.md", budget: budget)
            if let cut { cuts.append(cut) }
            system += "\n\n[Workspace context — context.md]:\n" + kept
            available -= estimate(kept) + 12
        }

        let lead = extrasText(extras, available: available, budget: budget, cuts: &cuts)
        available -= estimate(lead)

        switch part {
        case .grounding(let previous, let own, let unsupported):
            let (keptOwn, ownCut) = fit(own, tokens: available / 4, what: "your previous output", budget: budget)
            let ask = "Relay could not find these in your inputs: \(unsupported.joined(separator: ", ")). "
                + "Write your answer again using only names, numbers and dates that appear above; leave out what you cannot support."
            var inner = FocusedPrompt.build(agent: agent, request: request, context: "", part: .relay(previous: previous),
                                            budget: max(512, budget - (estimate(system) - estimate(agent.systemPrompt)) - estimate(lead) - estimate(keptOwn) - estimate(ask) - 24),
                                            toolCount: toolCount)
            inner.sources = [system, lead + inner.user]
            inner.user = lead + inner.user + "\n\n[Your Previous Output]:\n\(keptOwn)\n\n[Revision Requested by Relay's grounding check]:\n\(ask)"
            inner.system = system
            inner.cuts = cuts + [ownCut].compactMap { $0 } + inner.cuts
            return inner
        case .relay(let previous):
            guard let previous else {
                let (kept, cut) = fit(request, tokens: available, what: "the request", budget: budget)
                if let cut { cuts.append(cut) }
                let user = lead + "[User Request]:\n" + kept
                return FocusedPrompt(system: system, user: user, cuts: cuts, sources: [system, user])
            }
            // The request gets up to half unless the previous output needs less.
            let previousNeeds = estimate(previous.text)
            let requestShare = max(available / 2, available - previousNeeds)
            let (keptRequest, requestCut) = fit(request, tokens: requestShare, what: "the request", budget: budget)
            let (keptPrevious, previousCut) = fit(previous.text, tokens: available - estimate(keptRequest) - 12, what: "\(previous.name)'s output", budget: budget)
            cuts += [requestCut, previousCut].compactMap { $0 }
            let user = lead + "[User Request]:\n\(keptRequest)\n\n[Previous Agent — \(previous.name)]:\n\(keptPrevious)"
            return FocusedPrompt(system: system, user: user, cuts: cuts, sources: [system, user])
        case .subtask(let number, let count, let task):
            let (keptTask, taskCut) = fit(task, tokens: available / 4, what: "the subtask", budget: budget)
            let (keptRequest, requestCut) = fit(request, tokens: available - estimate(keptTask) - 32, what: "the request", budget: budget)
            cuts += [requestCut, taskCut].compactMap { $0 }
            let user = lead + "[User Request]:\n\(keptRequest)\n\n[Your Subtask — \(number) of \(count)]:\n\(keptTask)\n\n"
                + "Do only this subtask; other agents do the others. Answer with its result."
            return FocusedPrompt(system: system, user: user, cuts: cuts, sources: [system, user])
        case .revision(let own, let requester, let revisionRequest, let requesterOutput):
            let quarter = available / 4
            let (keptRequest, c1) = fit(request, tokens: quarter, what: "the request", budget: budget)
            let (keptAsk, c2) = fit(revisionRequest, tokens: quarter / 2, what: "the revision request", budget: budget)
            let (keptOwn, c3) = fit(own, tokens: quarter + quarter / 2, what: "your previous output", budget: budget)
            let left = available - estimate(keptRequest) - estimate(keptAsk) - estimate(keptOwn) - 24
            let (keptRequester, c4) = fit(requesterOutput, tokens: left, what: "\(requester)'s output", budget: budget)
            cuts += [c1, c2, c3, c4].compactMap { $0 }
            return FocusedPrompt(
                system: system,
                user: lead + """
                    [User Request]:
                    \(keptRequest)

                    [Your Previous Output]:
                    \(keptOwn)

                    [Revision Requested by \(requester)]:
                    \(keptAsk)

                    [\(requester)'s Output]:
                    \(keptRequester)
                    """,
                cuts: cuts, sources: [system, lead, keptRequest, keptAsk, keptRequester])
        }
    }

    /// `text` cut to about `tokens` tokens at a line or word boundary, with a visible mark, and
    /// the cut in words; the text itself when it fits.
    static func fit(_ text: String, tokens: Int, what: String, budget: Int) -> (String, String?) {
        let limit = max(32, tokens) * 3
        guard text.utf8.count > limit else { return (text, nil) }
        let markReserve = 120
        var kept = String(decoding: Array(text.utf8.prefix(max(0, limit - markReserve))), as: UTF8.self)
        // A cut through a multi-byte character decodes to U+FFFD: drop it.
        while kept.unicodeScalars.last == "\u{FFFD}" { kept.unicodeScalars.removeLast() }
        if let newline = kept.lastIndex(of: "\n"), kept.distance(from: newline, to: kept.endIndex) < 400 {
            kept = String(kept[..<newline])
        } else if let space = kept.lastIndex(of: " "), kept.distance(from: space, to: kept.endIndex) < 80 {
            kept = String(kept[..<space])
        }
        let total = text.count, keptCount = kept.count
        let mark = "\n[… cut by Relay: \(total - keptCount) of \(total) characters of \(what) left out to fit the \(budget)-token budget …]"
        return (kept + mark, "\(what): \(keptCount) of \(total) characters kept")
    }
}
