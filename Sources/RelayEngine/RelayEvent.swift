import LanguageModels

/// An agent as events and transcripts show it.
public struct AgentInfo: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var emoji: String
    public var color: String

    init(_ agent: AgentDefinition) {
        id = agent.id
        name = agent.name
        emoji = agent.emoji
        color = agent.color
    }

    public var label: String { emoji.isEmpty ? name : "\(emoji) \(name)" }
}

/// One agent's finished message in a run.
public struct AgentMessage: Sendable, Equatable, Codable {
    public var step: Int
    public var agent: AgentInfo
    public var text: String
    /// Set for a revision: who asked and what.
    public var revisionRequestedBy: String?
    public var revisionRequest: String?
    public var toolCalls: [ToolUse]
    public var promptTokens: Int
    public var completionTokens: Int
    public var modelCalls: Int
    public var milliseconds: Int
    /// When the step started (UTC ISO 8601).
    public var started: String
    /// What was cut to fit the agent's token budget, in words ("previous output: 9,000 of 20,000 characters kept").
    public var cuts: [String]
    /// True when the message comes from the journal (resumed run) rather than a model call just now.
    public var restored: Bool
    /// What the engine's grounding check found in the text and did about it (nil: nothing found).
    public var grounding: GroundingNote?
    /// In a plan relay: the worker's number (1…) and its subtask, in plan order.
    public var worker: Int?
    public var subtask: String?
    /// In a routed relay: why this agent answers ("rule: keyword 'poem'", "classifier", "fallback: …").
    public var selectedBy: String?

    /// Claims of a message that none of the agent's inputs supports, and what the engine did:
    /// asked the agent for a revision, or removed the sentences that carry them.
    public struct GroundingNote: Sendable, Equatable, Codable {
        public enum Action: String, Sendable, Codable {
            case revisionRequested = "revision requested"
            /// The sentences that carry them were removed.
            case removed
            /// Nothing would be left without them: kept, marked as the model's own.
            case marked
        }
        public var unsupported: [String]
        public var action: Action
        /// What the agent was asked (for a revision) or what was removed.
        public var request: String
        public var removed: [String] = []
    }

    /// A tool the agent called, what it was given and what it got back.
    public struct ToolUse: Sendable, Equatable, Codable {
        public var name: String
        public var arguments: String
        public var result: String
        public var isError: Bool
    }
}

/// What a run is doing, as it happens: the same shape as the seed Orchestrator's
/// `AsyncThrowingStream<AgentEvent>`. The terminal shows it as a group chat; `--json` prints
/// each as a line.
public enum RelayEvent: Sendable, Equatable {
    /// The run began (or resumed, with the steps already finished given as `agentFinished`
    /// events marked restored).
    case runStarted(runID: String, relay: String, request: String, agents: [AgentInfo], resumed: Bool)
    /// An agent's fresh session began; for a revision, who asked and what.
    case agentStarted(step: Int, agent: AgentInfo, revisionRequestedBy: AgentInfo?, revisionRequest: String?)
    case textDelta(step: Int, agentID: String, text: String)
    case toolCall(step: Int, agentID: String, name: String, arguments: String)
    case toolResult(step: Int, agentID: String, name: String, result: String, isError: Bool)
    /// An agent asked for a revision; `accepted` is false when the engine refused it (the
    /// cap of 3 per turn, an unknown agent), with the reason.
    case revisionRequested(step: Int, by: AgentInfo, target: String, request: String, accepted: Bool, reason: String?)
    case agentFinished(AgentMessage)
    /// The grounding check found numbers, dates or names in an agent's text that none of its
    /// inputs holds, and asked for a revision or removed them.
    case grounding(step: Int, agent: AgentInfo, note: AgentMessage.GroundingNote)
    /// A routed turn chose its agent(s): by @mention, a rule, the classifier, or the fallback
    /// to the first agent; `reason` says which and what matched.
    case selected(agents: [AgentInfo], reason: String)
    /// A plan relay's planner split the request into these subtasks (workers 1…n, in plan order).
    case planned(step: Int, subtasks: [String])
    /// A worker of a plan relay began its subtask (workers run in parallel; their text is not
    /// streamed — each result comes whole with `agentFinished`, whose message names the worker).
    case workerStarted(step: Int, worker: Int, of: Int, agent: AgentInfo, subtask: String)
    /// The engine refused something an agent tried against a limit (a worker starting workers).
    case refused(step: Int, agent: AgentInfo, error: RelayError)
    /// Something a person should know: input cut or converted, a skipped file, a roster fallback.
    case note(String)
    /// The run is over: the turn's answer (the last working agent's text after revisions, not
    /// a reviewer's verdict) and the files it wrote.
    case final(runID: String, text: String, files: [String])
    /// The run stopped on an error; it stays resumable (`relay resume ID`).
    case error(runID: String, message: String)
}

extension RelayEvent {
    /// The event as one JSON object (`relay ask --json` prints one per line), with `"event"`
    /// naming its kind.
    public var json: JSONValue {
        func agent(_ info: AgentInfo) -> JSONValue {
            ["id": .string(info.id), "name": .string(info.name), "emoji": .string(info.emoji), "color": .string(info.color)]
        }
        switch self {
        case .runStarted(let id, let relay, let request, let agents, let resumed):
            return ["event": "runStarted", "run": .string(id), "relay": .string(relay), "request": .string(request),
                    "agents": .array(agents.map(agent)), "resumed": .bool(resumed)]
        case .agentStarted(let step, let info, let by, let request):
            var object: [String: JSONValue] = ["event": "agentStarted", "step": .number(Double(step)), "agent": agent(info)]
            if let by { object["revisionRequestedBy"] = agent(by) }
            if let request { object["revisionRequest"] = .string(request) }
            return .object(object)
        case .textDelta(let step, let id, let text):
            return ["event": "textDelta", "step": .number(Double(step)), "agent": .string(id), "text": .string(text)]
        case .toolCall(let step, let id, let name, let arguments):
            return ["event": "toolCall", "step": .number(Double(step)), "agent": .string(id), "tool": .string(name), "arguments": .string(arguments)]
        case .toolResult(let step, let id, let name, let result, let isError):
            return ["event": "toolResult", "step": .number(Double(step)), "agent": .string(id), "tool": .string(name), "result": .string(result), "error": .bool(isError)]
        case .revisionRequested(let step, let by, let target, let request, let accepted, let reason):
            var object: [String: JSONValue] = ["event": "revisionRequested", "step": .number(Double(step)), "by": agent(by), "target": .string(target),
                                               "request": .string(request), "accepted": .bool(accepted)]
            if let reason { object["reason"] = .string(reason) }
            return .object(object)
        case .agentFinished(let message):
            var object: [String: JSONValue] = [
                "event": "agentFinished", "step": .number(Double(message.step)), "agent": agent(message.agent), "text": .string(message.text),
                "promptTokens": .number(Double(message.promptTokens)), "completionTokens": .number(Double(message.completionTokens)),
                "modelCalls": .number(Double(message.modelCalls)), "milliseconds": .number(Double(message.milliseconds)), "restored": .bool(message.restored),
            ]
            if let by = message.revisionRequestedBy { object["revisionRequestedBy"] = .string(by) }
            if !message.cuts.isEmpty { object["cuts"] = .array(message.cuts.map { .string($0) }) }
            if let worker = message.worker { object["worker"] = .number(Double(worker)) }
            if let subtask = message.subtask { object["subtask"] = .string(subtask) }
            if let why = message.selectedBy { object["selectedBy"] = .string(why) }
            return .object(object)
        case .grounding(let step, let info, let note):
            return ["event": "grounding", "step": .number(Double(step)), "agent": agent(info), "unsupported": .array(note.unsupported.map { .string($0) }),
                    "action": .string(note.action.rawValue), "request": .string(note.request), "removed": .array(note.removed.map { .string($0) })]
        case .selected(let agents, let reason):
            return ["event": "selected", "agents": .array(agents.map(agent)), "reason": .string(reason)]
        case .planned(let step, let subtasks):
            return ["event": "planned", "step": .number(Double(step)), "subtasks": .array(subtasks.map { .string($0) })]
        case .workerStarted(let step, let worker, let count, let info, let subtask):
            return ["event": "workerStarted", "step": .number(Double(step)), "worker": .number(Double(worker)), "workers": .number(Double(count)),
                    "agent": agent(info), "subtask": .string(subtask)]
        case .refused(let step, let info, let error):
            return ["event": "refused", "step": .number(Double(step)), "agent": agent(info), "code": .string(error.code.rawValue), "message": .string(error.message)]
        case .note(let text):
            return ["event": "note", "text": .string(text)]
        case .final(let id, let text, let files):
            return ["event": "final", "run": .string(id), "text": .string(text), "files": .array(files.map { .string($0) })]
        case .error(let id, let message):
            return ["event": "error", "run": .string(id), "message": .string(message)]
        }
    }
}
