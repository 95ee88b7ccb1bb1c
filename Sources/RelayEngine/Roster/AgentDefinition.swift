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
    /// What the agent's text is in a turn (nil: ``AgentRole/work``).
    public var role: AgentRole?
    /// How many workspace lines the engine retrieves for the request and puts in this agent's
    /// prompt with their `path:line` (nil or 0: none).
    public var retrieve: Int?
    /// Structured extraction: the agent answers under a JSON schema by choosing numbered
    /// sentences or lines, and the engine renders the choice (nil: free text).
    public var extract: Extraction?
    /// Whether the engine checks the agent's numbers, dates and names against its inputs
    /// (nil: yes). `false` is for agents asked to invent — a story, a name for a cat.
    public var grounding: Bool?
    /// In a routed relay: the keywords and patterns that send a message to this agent.
    public var route: RouteRule?

    public init(
        id: String, name: String, emoji: String, color: String, systemPrompt: String, order: Int,
        tools: [AgentTool]? = nil, output: DeclaredOutput? = nil, model: String? = nil, tokenBudget: Int? = nil, maxTokens: Int? = nil,
        role: AgentRole? = nil, retrieve: Int? = nil, extract: Extraction? = nil, grounding: Bool? = nil, route: RouteRule? = nil
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
        self.role = role
        self.retrieve = retrieve
        self.extract = extract
        self.grounding = grounding
        self.route = route
    }

    /// Whether the agent's text is checked against its inputs (promise 8).
    public var isGrounded: Bool { grounding ?? true }

    /// Whether the agent reviews (its text is a verdict, not the turn's answer).
    public var isReviewer: Bool { role == .review }

    /// The tools this agent may call.
    public var allowedTools: [AgentTool] { tools ?? AgentTool.defaultTools }

    /// "✍️ Wren", for messages.
    public var label: String { emoji.isEmpty ? name : "\(emoji) \(name)" }
}

/// What an agent's text is in a turn.
public enum AgentRole: String, Sendable, Codable, CaseIterable {
    /// Part of the work: the last working agent's text (after revisions) is the turn's answer.
    case work
    /// A verdict on the previous agent's work: shown as a verdict, never as the answer.
    case review
}

/// How an agent with `"extract"` answers: by choosing, under a JSON schema the server enforces
/// with a grammar, which numbered units of its input matter; the engine renders the chosen
/// units verbatim, so a tiny model cannot invent what it hands on.
public enum Extraction: String, Sendable, Codable, CaseIterable {
    /// The sentences of the input document (a dropped file), numbered; a document longer than
    /// the window is read in chunks, each its own model call, and the choices combined.
    case sentences
    /// The workspace lines retrieved for the request (needs `retrieve`), numbered.
    case lines
    /// A reviewer's verdict: approved, or a revision for a named earlier agent.
    case verdict
    /// The answer among the values (numbers, dates, names) of the previous agent's lines that
    /// fit the question, rendered with the line it comes from; for a dropped file, the
    /// sentence that says what the file is, followed by the previous agent's key sentences.
    /// With nothing to choose from, the agent writes freely.
    case answer
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
    public enum Mode: String, Sendable, Codable {
        case append, write
        /// One line for this run in a section of `context.md` (`path` is the section's
        /// heading), through the coordinated update: what the workspace learned, kept within
        /// its size budget.
        case context
    }

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
