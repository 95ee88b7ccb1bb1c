import WorkspaceCore

/// One entry of `relay.json`'s `"triggers"`: files matching `pattern` (and no `exclude`) that
/// settle start `relay` on the file, or run `command` with the path in the environment.
///
/// ```json
/// "triggers": [
///   {"pattern": "Research/**", "exclude": ["**/README.md"], "relay": "research"},
///   {"pattern": "inbox/*.csv", "command": "python3 tools/import.py \"$RELAY_FILE\"", "concurrency": 2}
/// ]
/// ```
public struct TriggerRule: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case relay(String)
        case command(String)
    }

    /// How the rule is named in the queue and in logs: its `name`, or its pattern.
    public var name: String
    public var pattern: Glob
    public var excludes: [Glob]
    public var action: Action
    /// How many runs of this rule may go at once (default 1).
    public var concurrency: Int

    /// Conflict copies (Relay's `name.conflict-…` and Syncthing's `name.sync-conflict-…`) never
    /// match: they are another version of a file that fires on its own, and Relay or Syncthing
    /// folds them back in.
    public func matches(_ path: String) -> Bool {
        pattern.matches(path) && !excludes.contains { $0.matches(path) } && ConflictNames.original(of: path) == nil
    }
}

/// The watcher's part of `relay.json`: the triggers, and `"watch"` settings.
///
/// ```json
/// "watch": {"settleMilliseconds": 100, "settleLimitSeconds": 30}
/// ```
public struct WatchConfiguration: Sendable, Equatable {
    public var rules: [TriggerRule]
    /// How long a file must stay quiet after it was closed or moved in.
    public var settle: Duration
    /// A file that keeps changing fires anyway after this long.
    public var settleLimit: Duration

    public init(rules: [TriggerRule] = [], settle: Duration = .milliseconds(100), settleLimit: Duration = .seconds(30)) {
        self.rules = rules
        self.settle = settle
        self.settleLimit = settleLimit
    }

    /// The top-level fields relay.json may have.
    public static let topLevelFields = ["version", "model", "relays", "triggers", "watch", "sync", "retention"]

    /// Reads `relay.json` in the workspace (no file: no triggers).
    ///
    /// - throws: `WorkspaceError` `.invalidInput` naming the file, line, column and field.
    public static func load(from workspace: Workspace) throws -> WatchConfiguration {
        guard let root = try workspace.relayJSON() else { return WatchConfiguration() }
        return try parse(root)
    }

    public static func parse(_ bytes: [UInt8], file: String) throws -> WatchConfiguration {
        try parse(try ConfigurationObject(parsing: bytes, file: file))
    }

    /// The triggers and watch settings of relay.json's parsed document.
    public static func parse(_ root: ConfigurationObject) throws -> WatchConfiguration {
        try root.allowOnly(topLevelFields)
        let relayNames = try root.objectMembers("relays").map(\.name)
        var configuration = WatchConfiguration()
        if let watch = try root.optionalObject("watch") {
            try watch.allowOnly(["settleMilliseconds", "settleLimitSeconds"])
            if let ms = try watch.optionalInteger("settleMilliseconds", in: 0...60_000) { configuration.settle = .milliseconds(ms) }
            if let s = try watch.optionalInteger("settleLimitSeconds", in: 1...86_400) { configuration.settleLimit = .seconds(s) }
        }
        var names = Set<String>()
        for object in try root.objects("triggers") {
            try object.allowOnly(["name", "pattern", "exclude", "relay", "command", "concurrency"])
            let patternText = try object.string("pattern")
            let pattern: Glob
            do { pattern = try Glob(patternText) } catch let error as GlobError { throw object.failure("pattern: \(error.message)") }
            let excludes = try object.strings("exclude").map { text -> Glob in
                do { return try Glob(text) } catch let error as GlobError { throw object.failure("exclude: \(error.message)") }
            }
            let relay = try object.optionalString("relay")
            let command = try object.optionalString("command")
            let action: TriggerRule.Action
            switch (relay, command) {
            case (let relay?, nil):
                if !relayNames.isEmpty && !relayNames.contains(relay) {
                    throw object.failure("relay '\(relay)' is not one of the relays defined in \"relays\" (\(relayNames.joined(separator: ", ")))")
                }
                action = .relay(relay)
            case (nil, let command?):
                guard !command.trimmingWhitespace.isEmpty else { throw object.failure("command may not be empty") }
                action = .command(command)
            case (nil, nil): throw object.failure("give either \"relay\" or \"command\"")
            case (.some, .some): throw object.failure("give either \"relay\" or \"command\", not both")
            }
            let name = try object.optionalString("name") ?? patternText
            guard names.insert(name).inserted else {
                throw object.failure("two triggers are named '\(name)'; give one a \"name\"")
            }
            let concurrency = try object.optionalInteger("concurrency", in: 1...64) ?? 1
            configuration.rules.append(TriggerRule(name: name, pattern: pattern, excludes: excludes, action: action, concurrency: concurrency))
        }
        return configuration
    }

    /// The rules a path matches, in the order written.
    public func rules(matching path: String) -> [TriggerRule] { rules.filter { $0.matches(path) } }
}
