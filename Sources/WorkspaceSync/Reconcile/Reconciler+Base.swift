import WorkspaceCore

/// The base of a path both sides changed: by version vectors when the replicas ever agreed on
/// it, else by content — the template every Relay embeds, and any version both have held.
extension Reconciler {
    /// What both sides of a concurrently changed path have in common.
    enum CommonVersion {
        /// One side's current bytes are a version the other held and moved past: that side
        /// (`true`: here) only catches up — a copy, no merge, no conflict.
        case behind(Bool)
        /// Merge from this content (nil: none known, a concurrent creation).
        case base([UInt8]?)
    }

    /// The files of the template built into this binary, path → bytes: the first version of
    /// each of them on every replica `relay init` made, so a version every replica has in common.
    public static let builtInTemplate: [String: [UInt8]] = {
        var files: [String: [UInt8]] = [:]
        for file in WorkspaceTemplate.embedded.files { files[file.path] = file.bytes }
        return files
    }()

    /// The version of `path` to merge from. When the two replicas recorded a common version
    /// whose vector both current vectors include, the latest of those (`vectoredBases`; the
    /// pair's own last agreement as the fallback), as before. When they never did — two
    /// replicas made apart (`relay init` on each machine, a workspace copied with `.relay/`)
    /// meeting for the first time, or records lost — by content:
    ///
    /// 1. a side whose current bytes the other side held, and which does not hold the other
    ///    side's, is behind (`relay init`'s template counts as held by both);
    /// 2. the pair's last agreement recorded without a vector (an older index, or the bytes a
    ///    copied workspace had when `relay init --new-replica` made it a replica of its own);
    /// 3. the newest version both have held (each side's order by its sequence, ranks summed,
    ///    so either side running the sync picks the same), the template's bytes the oldest.
    func commonVersion(_ path: String, _ a: Side, _ b: Side, _ ea: SyncIndex.Entry, _ eb: SyncIndex.Entry) throws -> CommonVersion {
        let vectored = try vectoredBases(path, a, b, ea.vector, eb.vector)
        let pairBase = try a.endpoint.base(peer: b.replica, path: path) ?? b.endpoint.base(peer: a.replica, path: path)
        if !vectored.isEmpty {
            for hash in vectored + [pairBase].compactMap({ $0 }) {
                if let content = try load(hash, path, a, b) { return .base(content) }
            }
            return .base(nil)
        }
        let template = options.template[path]
        let templateHash = template.map { ContentHash(of: $0).hex }
        func held(_ side: Side, current: String) throws -> [String: Int64] {
            var versions: [String: Int64] = [:]
            for version in try side.endpoint.heldVersions(path: path) { versions[version.hash] = max(versions[version.hash] ?? .min, version.sequence) }
            versions[current] = max(versions[current] ?? .min, .max)
            if let templateHash, versions[templateHash] == nil { versions[templateHash] = -1 }
            return versions
        }
        let heldA = try held(a, current: ea.hash), heldB = try held(b, current: eb.hash)
        let aBehind = heldB[ea.hash] != nil, bBehind = heldA[eb.hash] != nil
        if aBehind != bBehind { return .behind(aBehind) }
        if let pairBase {
            if pairBase == ea.hash { return .behind(true) }
            if pairBase == eb.hash { return .behind(false) }
            if let content = try load(pairBase, path, a, b) { return .base(content) }
        }
        for hash in Self.newestFirst(Set(heldA.keys).intersection(heldB.keys), heldA, heldB) {
            if hash == templateHash, let template { return .base(template) }
            if let content = try load(hash, path, a, b) { return .base(content) }
        }
        return .base(nil)
    }

    /// `common` ordered newest first: each side ranks them by the sequence it last held them
    /// at; the sums of the two ranks decide, then the hash (the same order from either side).
    static func newestFirst(_ common: Set<String>, _ heldA: [String: Int64], _ heldB: [String: Int64]) -> [String] {
        func ranks(_ held: [String: Int64]) -> [String: Int] {
            let ordered = common.sorted { (held[$0]!, $0) < (held[$1]!, $1) }
            return Dictionary(uniqueKeysWithValues: ordered.enumerated().map { ($1, $0) })
        }
        let rankA = ranks(heldA), rankB = ranks(heldB)
        return common.sorted { (rankA[$0]! + rankB[$0]!, $0) > (rankA[$1]! + rankB[$1]!, $1) }
    }

    /// A stored version's bytes, from either side's object store (or the template's).
    private func load(_ hash: String, _ path: String, _ a: Side, _ b: Side) throws -> [UInt8]? {
        if let template = options.template[path], ContentHash(of: template).hex == hash { return template }
        return try a.endpoint.loadObject(hash) ?? b.endpoint.loadObject(hash)
    }

    /// The latest versions of `path` both sides' versions descend from: of every version either
    /// side ever had in common with any peer, those whose vector both current vectors include,
    /// the ones no other such version follows (ties: the larger vector, then hash, so either
    /// side picks the same). Two replicas that both got a third's edit from the third, not from
    /// each other, merge from that edit instead of their own older agreement.
    func vectoredBases(_ path: String, _ a: Side, _ b: Side, _ va: VersionVector, _ vb: VersionVector) throws -> [String] {
        let candidates = Set(try a.endpoint.mergeBases(path: path) + b.endpoint.mergeBases(path: path)).filter {
            $0.vector.compare(to: va) != .after && $0.vector.compare(to: va) != .concurrent
                && $0.vector.compare(to: vb) != .after && $0.vector.compare(to: vb) != .concurrent
        }
        return candidates.filter { candidate in
            !candidates.contains { $0.vector != candidate.vector && $0.vector.dominates(candidate.vector) }
        }.sorted { lhs, rhs in
            let l = lhs.vector.counters.values.reduce(0, +), r = rhs.vector.counters.values.reduce(0, +)
            return l != r ? l > r : (lhs.vector.description, lhs.hash) > (rhs.vector.description, rhs.hash)
        }.map(\.hash)
    }
}
