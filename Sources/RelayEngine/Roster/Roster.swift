import Foundation
import WorkspaceCore

/// A relay's agents, validated and in running order.
///
/// For example:
/// ```swift
/// let roster = try Roster.parse(bytes, file: "AgentConfiguration.json")
/// roster.agents.map(\.name)          // ["Paige", "Remy", "Wren", "Vera"]
/// roster.agent(named: "wren")?.id    // "writer"
/// ```
public struct Roster: Sendable, Equatable {
    /// The file it came from, relative to the workspace.
    public var file: String
    public var agents: [AgentDefinition]

    public init(file: String, agents: [AgentDefinition]) {
        self.file = file
        self.agents = agents
    }

    /// The agent called `name` (its name or id, any case).
    public func agent(named name: String) -> AgentDefinition? {
        let wanted = name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return agents.first { $0.name.lowercased() == wanted || $0.id.lowercased() == wanted }
    }

    static let seedFields = ["id", "name", "emoji", "color", "systemPrompt", "order"]
    static let optionalFields = ["tools", "output", "model", "tokenBudget", "maxTokens", "role", "retrieve", "extract", "grounding", "route"]

    /// Parses and validates a roster file (the seed's `AgentConfiguration.json` format).
    ///
    /// - parameter overrides: per-agent optional fields from relay.json (`relays.NAME.agents`),
    ///   laid over the file's.
    /// - throws: `WorkspaceError` `.invalidInput` whose message names the file, the line, the
    ///   agent and the field: `AgentConfiguration.json:14:16: agent 'writer', field tools[1]:
    ///   unknown tool 'browse' (tools: read_file, …)`.
    public static func parse(_ bytes: [UInt8], file: String, overrides: [String: AgentOverride] = [:]) throws -> Roster {
        let elements = try ConfigurationObject.array(parsing: bytes, file: file)
        guard !elements.isEmpty else {
            throw WorkspaceError(.invalidInput, "\(file):1:1: the roster has no agents; add at least one {\"id\", \"name\", \"emoji\", \"color\", \"systemPrompt\", \"order\"}", path: file)
        }
        var agents: [AgentDefinition] = []
        var ids: [String: Int] = [:]
        var names: [String: String] = [:]
        for element in elements {
            let id = try element.string("id")
            let object = element.labelled("agent '\(id)'")
            guard id.range(of: #"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"#, options: .regularExpression) != nil else {
                throw object.failure(at: "id", "'\(id)' is not a usable id: letters, digits, '_', '-' and '.', starting with a letter or digit, at most 64")
            }
            if let line = ids[id] {
                throw object.failure(at: "id", "duplicate id '\(id)' (also used by the agent at line \(line)); ids must be unique")
            }
            ids[id] = object.line
            try object.allowOnly(seedFields + optionalFields)
            let name = try object.string("name").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty else { throw object.failure(at: "name", "the name is empty") }
            if let other = names[name.lowercased()] {
                throw object.failure(at: "name", "duplicate name '\(name)' (agent '\(other)' has it); revisions name their target, so names must be unique")
            }
            names[name.lowercased()] = id
            let emoji = try object.string("emoji")
            let color = try object.string("color")
            guard color.range(of: "^#[0-9A-Fa-f]{6}$", options: .regularExpression) != nil else {
                throw object.failure(at: "color", "'\(color)' is not a colour like \"#4A90D9\"")
            }
            let prompt = try object.string("systemPrompt")
            guard !prompt.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw object.failure(at: "systemPrompt", "the system prompt is empty; it is what makes the agent who it is")
            }
            guard let order = try object.optionalInteger("order", in: -1_000_000...1_000_000) else {
                throw object.failure("missing field 'order'")
            }
            var agent = AgentDefinition(id: id, name: name, emoji: emoji, color: color, systemPrompt: prompt, order: order)
            try AgentOverride.read(from: object).apply(to: &agent)
            agents.append(agent)
        }
        for (id, override) in overrides {
            guard let index = agents.firstIndex(where: { $0.id == id }) else {
                throw override.unknownAgent(id: id, roster: file, known: agents.map(\.id))
            }
            override.apply(to: &agents[index])
        }
        for agent in agents where agent.extract == .lines && (agent.retrieve ?? 0) == 0 {
            throw WorkspaceError(.invalidInput, "\(file): agent '\(agent.id)': \"extract\": \"lines\" chooses among the lines retrieved for the request; give it \"retrieve\" (how many lines, e.g. 6)", path: file)
        }
        // A stable sort: equal orders keep the file's order.
        let sorted = agents.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }.map(\.element)
        return Roster(file: file, agents: sorted)
    }

    /// Reads and validates a roster file of the workspace.
    public static func load(_ file: String, in workspace: Workspace, overrides: [String: AgentOverride] = [:]) throws -> Roster {
        let bytes: [UInt8]
        do {
            bytes = try workspace.read(file)
        } catch let error as WorkspaceError where error.code == .notFound {
            throw WorkspaceError(.invalidInput, "\(file): the roster file does not exist (relay.json names it); `relay init` writes the default AgentConfiguration.json", path: file)
        }
        return try parse(bytes, file: file, overrides: overrides)
    }
}

/// The optional agent fields, as they appear in a roster entry or in relay.json's
/// `relays.NAME.agents.ID` (which lays them over the roster's for that relay).
public struct AgentOverride: Sendable, Equatable {
    public var tools: [AgentTool]?
    public var output: DeclaredOutput?
    public var model: String?
    public var tokenBudget: Int?
    public var maxTokens: Int?
    public var role: AgentRole?
    public var retrieve: Int?
    public var extract: Extraction?
    public var grounding: Bool?
    public var route: RouteRule?
    /// Where it was read, for the message about an unknown agent id.
    var location: String = ""

    public init(tools: [AgentTool]? = nil, output: DeclaredOutput? = nil, model: String? = nil, tokenBudget: Int? = nil, maxTokens: Int? = nil,
                role: AgentRole? = nil, retrieve: Int? = nil, extract: Extraction? = nil, grounding: Bool? = nil, route: RouteRule? = nil) {
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

    func apply(to agent: inout AgentDefinition) {
        if let tools { agent.tools = tools }
        if let output { agent.output = output }
        if let model { agent.model = model }
        if let tokenBudget { agent.tokenBudget = tokenBudget }
        if let maxTokens { agent.maxTokens = maxTokens }
        if let role { agent.role = role }
        if let retrieve { agent.retrieve = retrieve }
        if let extract { agent.extract = extract }
        if let grounding { agent.grounding = grounding }
        if let route { agent.route = route }
    }

    func unknownAgent(id: String, roster: String, known: [String]) -> WorkspaceError {
        WorkspaceError(.invalidInput, "\(location): no agent '\(id)' in \(roster) (its agents: \(known.joined(separator: ", ")))", path: roster)
    }

    /// Reads the optional fields of `object` (other fields are the caller's business).
    static func read(from object: ConfigurationObject) throws -> AgentOverride {
        var result = AgentOverride()
        if object.contains("tools") {
            let names = try object.strings("tools")
            var tools: [AgentTool] = []
            for (offset, name) in names.enumerated() {
                guard let tool = AgentTool(rawValue: name) else {
                    throw object.failure(at: "tools", "tools[\(offset)]: unknown tool '\(name)' (tools: \(AgentTool.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                guard !tools.contains(tool) else { throw object.failure(at: "tools", "tools[\(offset)]: '\(name)' is listed twice") }
                tools.append(tool)
            }
            result.tools = tools
        }
        if let output = try object.optionalObject("output") {
            try output.allowOnly(["append", "write", "context"])
            let given = try [DeclaredOutput.Mode.append, .write, .context].compactMap { mode in try output.optionalString(mode.rawValue).map { DeclaredOutput(mode, $0) } }
            guard given.count == 1, let declared = given.first else {
                throw output.failure("give exactly one of \"append\" (add the text to a file, e.g. \"Journal/agent/{date}.md\"), \"write\" (replace a file, e.g. \"Research/{name}/summary.md\") or \"context\" (a line in a section of context.md, e.g. \"Research\")")
            }
            if declared.mode == .context {
                let heading = declared.path.trimmingCharacters(in: .whitespaces)
                guard !heading.isEmpty, !heading.contains("\n"), !heading.hasPrefix("#") else {
                    throw output.failure(at: "context", "'\(declared.path)' is not a section heading; give its words, e.g. \"Research\"")
                }
            } else if let problem = Self.problem(inOutputPath: declared.path) {
                throw output.failure(at: declared.mode.rawValue, problem)
            }
            result.output = declared
        }
        result.model = try object.optionalString("model")
        result.tokenBudget = try object.optionalInteger("tokenBudget", in: 512...1_048_576)
        result.maxTokens = try object.optionalInteger("maxTokens", in: 16...65_536)
        if let role = try object.optionalString("role") {
            guard let known = AgentRole(rawValue: role) else {
                throw object.failure(at: "role", "'\(role)' is not a role (roles: \(AgentRole.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            result.role = known
        }
        result.retrieve = try object.optionalInteger("retrieve", in: 0...40)
        result.grounding = try object.optionalBool("grounding")
        if let route = try object.optionalObject("route") { result.route = try RouteRule.read(from: route) }
        if let extract = try object.optionalString("extract") {
            guard let known = Extraction(rawValue: extract) else {
                throw object.failure(at: "extract", "'\(extract)' is not an extraction (extractions: \(Extraction.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            result.extract = known
        }
        if let budget = result.tokenBudget, let most = result.maxTokens, most > budget / 2 {
            throw object.failure(at: "maxTokens", "\(most) leaves too little of the \(budget)-token budget for the prompt (at most half of it)")
        }
        return result
    }

    /// Why a declared output path cannot be used, or nil. Checked again through the sandbox
    /// when the run writes it.
    static func problem(inOutputPath path: String) -> String? {
        if path.isEmpty { return "the path is empty" }
        if path.hasPrefix("/") || path.hasPrefix("~") { return "'\(path)' must be relative to the workspace" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains("..") { return "'\(path)' must not contain '..'" }
        if parts.first == ".relay" { return "'\(path)' is inside .relay/, the engine's own state" }
        if parts.last?.isEmpty ?? true { return "'\(path)' must name a file, not a folder" }
        var rest = path
        while let open = rest.range(of: "{") {
            guard let close = rest.range(of: "}", range: open.upperBound..<rest.endIndex) else {
                return "'\(path)' has a '{' without '}'"
            }
            let name = String(rest[open.upperBound..<close.lowerBound])
            guard DeclaredOutput.placeholders.contains(name) else {
                return "'{\(name)}' is not a placeholder (placeholders: \(DeclaredOutput.placeholders.map { "{\($0)}" }.joined(separator: ", ")))"
            }
            rest = String(rest[close.upperBound...])
        }
        return nil
    }
}
