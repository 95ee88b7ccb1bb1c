import WorkspaceCore

/// How paths merge, from relay.json's `"sync": {"merge": [...]}` on top of the defaults
/// (`MergeKind.of`): the first rule whose pattern matches a path gives its kind, as
/// `.gitattributes` does.
///
/// ```json
/// "sync": {"merge": [
///   {"pattern": "notes/**/*.md", "kind": "journal"},
///   {"pattern": "data/*.csv", "kind": "binary"}
/// ]}
/// ```
public struct MergeRules: Sendable {
    public var rules: [(pattern: Glob, kind: MergeKind)]

    public init(_ rules: [(pattern: Glob, kind: MergeKind)] = []) { self.rules = rules }

    /// The kind of `path`: the first matching rule's, else the default for its path.
    public func kind(of path: String) -> MergeKind {
        rules.first { $0.pattern.matches(path) }?.kind ?? MergeKind.of(path)
    }

    /// Reads relay.json's rules (no file, no rules: the defaults).
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line and the field.
    public static func load(from workspace: Workspace) throws -> MergeRules {
        guard let root = try workspace.relayJSONIfReadable() else { return MergeRules() }
        return try parse(root)
    }

    /// relay.json's rules, or the defaults when relay.json cannot be read — for the places
    /// that only choose what to keep as merge bases (the command checks the file first).
    public static func loadOrDefaults(from workspace: Workspace) -> MergeRules {
        (try? load(from: workspace)) ?? MergeRules()
    }

    public static func parse(_ bytes: [UInt8], file: String) throws -> MergeRules {
        try parse(try ConfigurationObject(parsing: bytes, file: file))
    }

    /// The `"sync"."merge"` rules of relay.json's parsed document.
    public static func parse(_ root: ConfigurationObject) throws -> MergeRules {
        guard let sync = try root.optionalObject("sync") else { return MergeRules() }
        var rules: [(pattern: Glob, kind: MergeKind)] = []
        for rule in try sync.objects("merge") {
            try rule.allowOnly(["pattern", "kind"])
            let text = try rule.string("pattern")
            let pattern: Glob
            do { pattern = try Glob(text) } catch let error as GlobError { throw rule.failure(at: "pattern", error.message) }
            let name = try rule.string("kind")
            guard let kind = MergeKind(rawValue: name) else {
                throw rule.failure(at: "kind", "'\(name)' is not a merge kind (text, journal, transcript, json, binary)")
            }
            rules.append((pattern, kind))
        }
        return MergeRules(rules)
    }
}
