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
    /// The relay's shape: `sequence` (default), `route` or `plan`.
    public var mode: RelayMode = .sequence
    /// For `route`: history window and classifier.
    public var route = RouteSettings()
    /// For `plan`: roles, limits and parallelism.
    public var plan = PlanSettings()
    /// Where it was read ("relay.json:4:5: relays.ask"), for messages about its agents.
    var location = ""
    /// "relay.json:7:18: relays.ask, field planner: " for each role field given.
    var fieldLines: [String: String] = [:]

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
        let roster = try Roster.load(relay.rosterFile, in: workspace, overrides: relay.overrides)
        try relay.validate(roster)
        return roster
    }

    /// Reads relay.json (no file, or no `"relays"`: ``fallback``).
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line and the field.
    public static func load(from workspace: Workspace) throws -> RelayConfiguration {
        guard let root = try workspace.relayJSON() else { return fallback }
        return try parse(root)
    }

    public static func parse(_ bytes: [UInt8], file: String) throws -> RelayConfiguration {
        try parse(try ConfigurationObject(parsing: bytes, file: file))
    }

    /// The `"relays"` of relay.json's parsed document.
    public static func parse(_ root: ConfigurationObject) throws -> RelayConfiguration {
        var contextTokens = 4096
        if let model = try root.optionalObject("model"), let tokens = try model.optionalInteger("contextTokens", in: 512...1_048_576) {
            contextTokens = tokens
        }
        var relays: [RelayDefinition] = []
        for (name, object) in try root.objectMembers("relays") {
            try object.allowOnly(["roster", "description", "input", "request", "agents", "mode", "maxMessages", "classifier",
                                  "planner", "worker", "coordinator", "maxWorkers", "minWorkers", "parallel", "maxCalls"])
            guard name.range(of: #"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"#, options: .regularExpression) != nil else {
                throw object.failure("'\(name)' is not a usable relay name (letters, digits, '_' and '-')")
            }
            var relay = RelayDefinition(name: name)
            relay.location = "\(root.file):\(object.line):\(object.column): relays.\(name)"
            try relay.readMode(from: object)
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
                override.location = "\(root.file):\(agent.line):\(agent.column): relays.\(name).agents.\(id)"
                relay.overrides[id] = override
            }
            relays.append(relay)
        }
        return relays.isEmpty ? RelayConfiguration(relays: fallback.relays, contextTokens: contextTokens)
            : RelayConfiguration(relays: relays, contextTokens: contextTokens)
    }
}

extension RelayDefinition {
    /// relay.json's mode fields of a relay; a field of another mode than the relay's is an error
    /// (it would be silently ignored otherwise).
    mutating func readMode(from object: ConfigurationObject) throws {
        if let mode = try object.optionalString("mode") {
            guard let known = RelayMode(rawValue: mode) else {
                throw object.failure(at: "mode", "'\(mode)' is not a relay mode (modes: \(RelayMode.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            self.mode = known
        }
        let routeFields = ["maxMessages", "classifier"], planFields = ["planner", "worker", "coordinator", "maxWorkers", "minWorkers", "parallel", "maxCalls"]
        for field in routeFields where mode != .route && object.contains(field) {
            throw object.failure(at: field, "'\(field)' is for relays with \"mode\": \"route\" (this one is \(mode.rawValue))")
        }
        for field in planFields where mode != .plan && object.contains(field) {
            throw object.failure(at: field, "'\(field)' is for relays with \"mode\": \"plan\" (this one is \(mode.rawValue))")
        }
        if let most = try object.optionalInteger("maxMessages", in: 0...10_000) { route.maxMessages = most }
        if let classifier = try object.optionalBool("classifier") { route.classifier = classifier }
        plan.planner = try object.optionalString("planner")
        plan.worker = try object.optionalString("worker")
        plan.coordinator = try object.optionalString("coordinator")
        if let most = try object.optionalInteger("maxWorkers", in: 1...16) { plan.maxWorkers = most }
        if let least = try object.optionalInteger("minWorkers", in: 1...16) {
            guard least <= plan.maxWorkers else { throw object.failure(at: "minWorkers", "\(least) is more than maxWorkers (\(plan.maxWorkers))") }
            plan.minWorkers = least
        }
        if let parallel = try object.optionalInteger("parallel", in: 1...16) { plan.parallel = parallel }
        plan.maxCalls = try object.optionalInteger("maxCalls", in: 3...1_000)
        // Fields are only known to be agents once the roster is read: `validate(_:)`.
        fieldLines = Dictionary(uniqueKeysWithValues: ["planner", "worker", "coordinator"].filter(object.contains).map { ($0, object.failure(at: $0, "").message) })
    }

    /// Checks the relay's agent ids against its roster.
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the relay, the field and the agents there are.
    func validate(_ roster: Roster) throws {
        guard mode == .plan else { return }
        for (field, id) in [("planner", plan.planner), ("worker", plan.worker), ("coordinator", plan.coordinator)] {
            guard let id, !roster.agents.contains(where: { $0.id == id }) else { continue }
            let at = fieldLines[field].map { String($0.dropLast(2)) } ?? "\(location): \(field)"
            throw WorkspaceError(.invalidInput, "\(at): no agent '\(id)' in \(roster.file) (its agents: \(roster.agents.map(\.id).joined(separator: ", ")))", path: "relay.json")
        }
    }
}
