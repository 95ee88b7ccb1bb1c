import Foundation
import WorkspaceCore

/// One relay of relay.json's `"relays"`: which roster runs, and what its input is.
///
/// ```json
/// "relays": {
///   "chat":     {"roster": "AgentConfiguration.json", "input": "chat"},
///   "research": {"roster": "AgentConfiguration.json", "input": "file",
///                "agents": {"writer": {"output": {"write": "Research/{name}/summary.md"}}}}
/// }
/// ```
public struct RelayDefinition: Sendable, Equatable {
    /// What a triggered run is about.
    public enum Input: String, Sendable, Codable, CaseIterable {
        /// A chat file (`Chats/NAME.md`): the request is the person's newest message in it, and
        /// the answers are written into it.
        case chat
        /// Any dropped file: the request is ``RelayDefinition/request`` with the file's text.
        case file
    }

    public var name: String
    public var description: String
    public var rosterFile: String
    public var input: Input
    /// For `file` input: the request, with `{path}` (the file) and `{name}`; the file's text
    /// follows it.
    public var request: String
    /// Optional agent fields laid over the roster's for this relay, by agent id.
    public var overrides: [String: AgentOverride]

    public static let defaultRequest = "A file arrived in the workspace: {path}. Read it and do your part of the work on it."

    public init(name: String, description: String = "", rosterFile: String = "AgentConfiguration.json", input: Input = .chat,
                request: String = RelayDefinition.defaultRequest, overrides: [String: AgentOverride] = [:]) {
        self.name = name
        self.description = description
        self.rosterFile = rosterFile
        self.input = input
        self.request = request
        self.overrides = overrides
    }
}

/// The relays of a workspace (relay.json's `"relays"`), validated.
///
/// For example:
/// ```swift
/// let relays = try RelayConfiguration.load(from: workspace)
/// let roster = try relays.roster(for: "research", in: workspace)
/// ```
public struct RelayConfiguration: Sendable, Equatable {
    public var relays: [RelayDefinition]
    /// The model's context window (relay.json's `model.contextTokens`), every agent's default budget.
    public var contextTokens: Int

    public init(relays: [RelayDefinition], contextTokens: Int = 4096) {
        self.relays = relays
        self.contextTokens = contextTokens
    }

    /// What a workspace without a `"relays"` section gets: one `chat` relay of the default roster.
    public static let fallback = RelayConfiguration(relays: [RelayDefinition(name: "chat", description: "The default roster")])

    public func relay(named name: String) -> RelayDefinition? { relays.first { $0.name == name } }

    /// The relay `relay ask` uses without `--relay`: `chat` when there is one, else the first.
    public var defaultRelay: RelayDefinition { relay(named: "chat") ?? relays[0] }

    /// The validated roster of a relay, with its overrides.
    public func roster(for relay: RelayDefinition, in workspace: Workspace) throws -> Roster {
        try Roster.load(relay.rosterFile, in: workspace, overrides: relay.overrides)
    }

    /// Reads relay.json (no file, or no `"relays"`: ``fallback``).
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line and the field.
    public static func load(from workspace: Workspace) throws -> RelayConfiguration {
        let bytes: [UInt8]
        do { bytes = try workspace.read("relay.json") } catch let error as WorkspaceError where error.code == .notFound {
            return fallback
        }
        return try parse(bytes, file: "relay.json")
    }

    public static func parse(_ bytes: [UInt8], file: String) throws -> RelayConfiguration {
        let root = try ConfigurationObject(parsing: bytes, file: file)
        var contextTokens = 4096
        if let model = try root.optionalObject("model"), let tokens = try model.optionalInteger("contextTokens", in: 512...1_048_576) {
            contextTokens = tokens
        }
        var relays: [RelayDefinition] = []
        for (name, object) in try root.objectMembers("relays") {
            try object.allowOnly(["roster", "description", "input", "request", "agents"])
            guard name.range(of: #"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"#, options: .regularExpression) != nil else {
                throw object.failure("'\(name)' is not a usable relay name (letters, digits, '_' and '-')")
            }
            var relay = RelayDefinition(name: name)
            relay.description = try object.optionalString("description") ?? ""
            relay.rosterFile = try object.optionalString("roster") ?? "AgentConfiguration.json"
            if let problem = AgentOverride.problem(inOutputPath: relay.rosterFile), !relay.rosterFile.contains("{") {
                throw object.failure(at: "roster", problem)
            }
            if let input = try object.optionalString("input") {
                guard let kind = RelayDefinition.Input(rawValue: input) else {
                    throw object.failure(at: "input", "'\(input)' is not an input kind (\(RelayDefinition.Input.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                relay.input = kind
            } else {
                relay.input = name == "chat" ? .chat : .file
            }
            if let request = try object.optionalString("request") { relay.request = request }
            for (id, agent) in try object.objectMembers("agents") {
                try agent.allowOnly(Roster.optionalFields)
                var override = try AgentOverride.read(from: agent)
                override.location = "\(file):\(agent.line):\(agent.column): relays.\(name).agents.\(id)"
                relay.overrides[id] = override
            }
            relays.append(relay)
        }
        return relays.isEmpty ? RelayConfiguration(relays: fallback.relays, contextTokens: contextTokens)
            : RelayConfiguration(relays: relays, contextTokens: contextTokens)
    }
}
