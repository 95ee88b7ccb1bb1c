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
    /// Something a person should know: input cut or converted, a skipped file, a roster fallback.
    case note(String)
    /// The run is over: the last agent's text and the files it wrote.
    case final(runID: String, text: String, files: [String])
    /// The run stopped on an error; it stays resumable (`relay resume ID`).
    case error(runID: String, message: String)
}
