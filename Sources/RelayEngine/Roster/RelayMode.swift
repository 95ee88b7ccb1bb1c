import Foundation
import WorkspaceCore

/// The shape of a relay (relay.json's `"mode"`).
public enum RelayMode: String, Sendable, Codable, CaseIterable {
    /// Every agent in `order`, each seeing the request and the previous agent's output (the seed's relay).
    case sequence
    /// One agent per turn: chosen by @mentions and the agents' `route` rules, then (if
    /// configured) a classifier call constrained to the agents' names, then the first agent.
    case route
    /// A planner splits the request into subtasks, workers do them in parallel, a coordinator
    /// writes the answer from their results in plan order.
    case plan
}

/// A routed relay's settings (relay.json: `"maxMessages"`, `"classifier"`).
public struct RouteSettings: Sendable, Codable, Equatable {
    /// How many of the selected agent's earlier messages in the chat it gets (requests and its
    /// answers, counted singly, rounded down to an even count so a pair is never split; 0: none).
    public var maxMessages: Int
    /// Whether a model call chooses the agent when no rule does (its reply constrained to the
    /// agents' names by a JSON-schema enum).
    public var classifier: Bool

    public static let defaultMaxMessages = 100

    public init(maxMessages: Int = RouteSettings.defaultMaxMessages, classifier: Bool = false) {
        self.maxMessages = maxMessages
        self.classifier = classifier
    }
}

/// A plan relay's settings (relay.json: `"planner"`, `"worker"`, `"coordinator"`,
/// `"maxWorkers"`, `"parallel"`, `"maxCalls"`).
public struct PlanSettings: Sendable, Codable, Equatable {
    /// Agent ids; nil: the first agent plans, the second works, the last coordinates.
    public var planner: String?
    public var worker: String?
    public var coordinator: String?
    /// The most subtasks a plan may have (the planner's schema allows no more; more is refused).
    public var maxWorkers: Int
    /// The fewest subtasks the planner's schema accepts (default 1). A 135M planner copies the
    /// request as its one subtask; `2` makes it split.
    public var minWorkers: Int
    /// How many workers run at once (the model server's slots: `make model` starts 2).
    public var parallel: Int
    /// The most model calls a turn may make (planner, workers with their tool rounds,
    /// coordinator); nil: what those need at most.
    public var maxCalls: Int?

    public static let defaultMaxWorkers = 4
    public static let defaultParallel = 2

    public init(planner: String? = nil, worker: String? = nil, coordinator: String? = nil, maxWorkers: Int = PlanSettings.defaultMaxWorkers,
                minWorkers: Int = 1, parallel: Int = PlanSettings.defaultParallel, maxCalls: Int? = nil) {
        self.minWorkers = minWorkers
        self.planner = planner
        self.worker = worker
        self.coordinator = coordinator
        self.maxWorkers = maxWorkers
        self.parallel = parallel
        self.maxCalls = maxCalls
    }

    /// The model calls a turn may make: the configured cap, or planner + each worker's rounds
    /// (tool rounds and the answer) + the coordinator and one grounding revision of it.
    public var callCap: Int { maxCalls ?? (1 + maxWorkers * (RunExecutor.maximumToolRounds + 1) + 2 * (RunExecutor.maximumToolRounds + 1)) }

    /// The ids of the three roles in `roster` (defaults filled in).
    func roles(in roster: [AgentDefinition]) -> (planner: String, worker: String, coordinator: String) {
        let first = roster.first?.id ?? ""
        let second = roster.count > 2 ? roster[1].id : (roster.last?.id ?? first)
        return (planner ?? first, worker ?? second, coordinator ?? roster.last?.id ?? first)
    }
}

/// Deterministic routing rules of an agent (a roster entry's `"route"`): a message holding one
/// of the keywords (whole words, any case) or matching one of the patterns (regular
/// expressions, any case) goes to this agent in a routed relay.
///
/// ```json
/// "route": {"keywords": ["poem", "haiku"], "patterns": ["^rewrite\\b"]}
/// ```
public struct RouteRule: Sendable, Codable, Equatable {
    public var keywords: [String]
    public var patterns: [String]

    public init(keywords: [String] = [], patterns: [String] = []) {
        self.keywords = keywords
        self.patterns = patterns
    }

    /// What in `message` matches this rule ("keyword 'poem'"), or nil.
    public func match(_ message: String) -> String? {
        let words = Set(message.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "-" && $0 != "'" }.map(String.init))
        for keyword in keywords {
            let wanted = keyword.lowercased().trimmingCharacters(in: .whitespaces)
            if wanted.contains(" ") ? message.lowercased().contains(wanted) : words.contains(wanted) { return "keyword '\(keyword)'" }
        }
        for pattern in patterns {
            if message.range(of: pattern, options: [.regularExpression, .caseInsensitive]) != nil { return "pattern '\(pattern)'" }
        }
        return nil
    }

    static func read(from object: ConfigurationObject) throws -> RouteRule {
        try object.allowOnly(["keywords", "patterns"])
        var rule = RouteRule()
        if object.contains("keywords") { rule.keywords = try object.strings("keywords") }
        if object.contains("patterns") {
            rule.patterns = try object.strings("patterns")
            for (offset, pattern) in rule.patterns.enumerated() where (try? NSRegularExpression(pattern: pattern)) == nil {
                throw object.failure(at: "patterns", "patterns[\(offset)]: '\(pattern)' is not a regular expression")
            }
        }
        for (offset, keyword) in rule.keywords.enumerated() where keyword.trimmingCharacters(in: .whitespaces).isEmpty {
            throw object.failure(at: "keywords", "keywords[\(offset)] is empty")
        }
        return rule
    }
}
