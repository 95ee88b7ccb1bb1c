/// How long replaced versions and finished runs are kept: relay.json's `"retention"`, in the
/// manner of restic's `--keep-last` / `--keep-within`, with Syncthing's staggered thinning as an
/// option. `relay gc` and the daemon's hourly housekeeping apply it.
///
/// ```json
/// "retention": {
///   "versions": {"keepLast": 10, "keepWithinDays": 30},
///   "runs": {"keepLast": 200, "keepWithinDays": 90, "staggered": true}
/// }
/// ```
///
/// Some things are never pruned whatever the policy says (see `Workspace.pruneVersions`): a
/// version a sync peer needs as a merge base, the bytes of an open conflict copy, what a
/// resumable or unfinished run refers to, and the current version of any file.
public struct RetentionPolicy: Sendable, Equatable {
    /// One kind of state's rule: of each series (a file's versions; the runs), the newest
    /// `keepLast`, and those younger than `keepWithinDays` — all of them, or with `staggered`
    /// one per hour for the last day, one per day for the last 30 days and one per week
    /// before that (Syncthing's intervals).
    public struct Rule: Sendable, Equatable {
        public var keepLast: Int
        public var keepWithinDays: Double
        public var staggered: Bool

        public init(keepLast: Int, keepWithinDays: Double, staggered: Bool = false) {
            self.keepLast = keepLast
            self.keepWithinDays = keepWithinDays
            self.staggered = staggered
        }

        static let hour: Int64 = 3_600_000_000_000
        static let day = 24 * hour

        /// The positions in `times` (nanoseconds since 1970, any order) of what the rule keeps
        /// at `now`.
        ///
        /// For example, with `keepLast: 2, keepWithinDays: 1`, of versions replaced 1 hour,
        /// 2 hours, 3 days and 4 days ago the first two are kept (the newest two, and the two
        /// within a day).
        public func kept(_ times: [Int64], now: Int64) -> Set<Int> {
            let newestFirst = times.indices.sorted { times[$0] > times[$1] }
            var kept = Set(newestFirst.prefix(max(0, keepLast)))
            let window = Int64(keepWithinDays * Double(Self.day))
            var buckets = Set<Int64>()
            for index in newestFirst {
                let age = max(0, now - times[index])
                guard age <= window else { continue }
                guard staggered else { kept.insert(index); continue }
                // The newest version in each bucket stays (newest first, so the first seen).
                let bucket = age < Self.day ? age / Self.hour : age < 30 * Self.day ? 100 + age / Self.day : 1_000 + age / (7 * Self.day)
                if buckets.insert(bucket).inserted { kept.insert(index) }
            }
            return kept
        }
    }

    public var versions = Rule(keepLast: 10, keepWithinDays: 30)
    public var runs = Rule(keepLast: 200, keepWithinDays: 90)

    public init(versions: Rule = Rule(keepLast: 10, keepWithinDays: 30), runs: Rule = Rule(keepLast: 200, keepWithinDays: 90)) {
        self.versions = versions
        self.runs = runs
    }

    /// The workspace's policy: relay.json's `"retention"`, the defaults for what it leaves out.
    ///
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line, the column and
    ///   the field, for an unknown field or a value out of range.
    public static func load(from workspace: Workspace) throws -> RetentionPolicy {
        var policy = RetentionPolicy()
        guard let document = try workspace.relayJSON(), let retention = try document.optionalObject("retention") else { return policy }
        try retention.allowOnly(["versions", "runs"])
        if let versions = try retention.optionalObject("versions") { policy.versions = try rule(versions, defaults: policy.versions) }
        if let runs = try retention.optionalObject("runs") { policy.runs = try rule(runs, defaults: policy.runs) }
        return policy
    }

    private static func rule(_ object: ConfigurationObject, defaults: Rule) throws -> Rule {
        try object.allowOnly(["keepLast", "keepWithinDays", "staggered"])
        var rule = defaults
        if let last = try object.optionalInteger("keepLast", in: 0...10_000_000) { rule.keepLast = last }
        if let days = try object.optionalNumber("keepWithinDays", in: 0...36_500) { rule.keepWithinDays = days }
        if let staggered = try object.optionalBool("staggered") { rule.staggered = staggered }
        return rule
    }
}
