/// One agent of a roster: the seed's six fields (`id`, `name`, `emoji`, `color`,
/// `systemPrompt`, `order`) and Relay's optional ones.
///
/// For example, in `AgentConfiguration.json`:
/// ```json
/// {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22",
///  "systemPrompt": "You are Wren, the Writer. …", "order": 2,
///  "tools": ["read_file"], "output": {"write": "Research/{name}/summary.md"},
///  "tokenBudget": 4096, "maxTokens": 512}
/// ```
public struct AgentDefinition: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var emoji: String
    /// `#RRGGBB`, the agent's colour in the terminal's group chat.
    public var color: String
    public var systemPrompt: String
    /// Agents run by ascending `order`; equal orders keep the file's order.
    public var order: Int
    /// The tools the agent may call; nil means ``AgentTool/defaultTools``.
    public var tools: [AgentTool]?
    /// Where the agent's final text goes besides the transcript.
    public var output: DeclaredOutput?
    /// A model name overriding relay.json's `model.model` for this agent (same server).
    public var model: String?
    /// The agent's context window in tokens (relay.json's `model.contextTokens` when nil).
    public var tokenBudget: Int?
    /// The most tokens its reply may have (an eighth of the budget, at most 1,024, when nil).
    public var maxTokens: Int?

    public init(
        id: String, name: String, emoji: String, color: String, systemPrompt: String, order: Int,
        tools: [AgentTool]? = nil, output: DeclaredOutput? = nil, model: String? = nil, tokenBudget: Int? = nil, maxTokens: Int? = nil
    ) {
        self.id = id
        self.name = name
        self.emoji = emoji
        self.color = color
        self.systemPrompt = systemPrompt
        self.order = order
        self.tools = tools
        self.output = output
        self.model = model
        self.tokenBudget = tokenBudget
        self.maxTokens = maxTokens
    }

    /// The tools this agent may call.
    public var allowedTools: [AgentTool] { tools ?? AgentTool.defaultTools }

    /// "✍️ Wren", for messages.
    public var label: String { emoji.isEmpty ? name : "\(emoji) \(name)" }
}

/// The tools an agent can be given. Every path goes through the workspace's sandbox.
public enum AgentTool: String, Sendable, Codable, CaseIterable {
    case readFile = "read_file"
    case listFiles = "list_files"
    case searchFiles = "search_files"
    case writeFile = "write_file"
    case appendFile = "append_file"
    case updateContext = "update_context"
    case requestRevision = "request_revision"

    /// What an agent without a `tools` field gets: it may look, and ask for a revision, but
    /// not write. Writing is given by naming the tools.
    public static let defaultTools: [AgentTool] = [.readFile, .listFiles, .searchFiles, .requestRevision]

    /// Whether the tool changes files (its effects are recorded and replayed).
    public var writes: Bool { self == .writeFile || self == .appendFile || self == .updateContext }
}

/// Where an agent's final text goes: appended to a file (a journal) or written as a whole file.
/// Paths may hold `{date}` (YYYY-MM-DD), `{time}` (HH-MM), `{name}` (the dropped file's name
/// without extension, or the conversation), `{relay}`, `{agent}` and `{run}`.
public struct DeclaredOutput: Sendable, Codable, Equatable {
    public enum Mode: String, Sendable, Codable { case append, write }

    public var mode: Mode
    public var path: String

    public init(_ mode: Mode, _ path: String) {
        self.mode = mode
        self.path = path
    }

    /// The placeholders a path may use.
    public static let placeholders = ["date", "time", "name", "relay", "agent", "run"]

    /// The path with its placeholders filled in.
    public func resolvedPath(_ values: [String: String]) -> String {
        var result = path
        for (key, value) in values { result = result.replacingOccurrences(of: "{\(key)}", with: value) }
        return result
    }
}
