import Foundation
import Logging
import WorkspaceCore

/// What a sync did (or, with a dry run, would do).
public struct SyncSummary: Sendable, Codable, Equatable {
    public var copied = 0
    public var merged = 0
    public var deleted = 0
    public var conflicts = 0
    public var bytes = 0
    /// Paths left for the next sync because somebody changed them while this one ran.
    public var skipped: [String] = []
    /// One line per change, for --dry-run and logs: "copy → peer: notes.md".
    public var actions: [String] = []
    public init() {}
    public var transferred: Int { copied + merged + deleted }
}

/// Why a sync stopped before changing anything.
public struct SyncError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Reconciles two replicas of a workspace that are both reachable as folders (the local-path
/// transport). Per path, version vectors decide: one side newer → copy; both changed → merge by
/// kind (text: three-way; journals: union of appends; chat transcripts: union of messages;
/// anything else: a deterministic winner plus a conflict copy); delete against edit keeps the
/// edit. Both replicas end with the same bytes and the same vectors.
///
/// For example:
/// ```swift
/// let summary = try Reconciler(local: laptop, peer: backupDisk).run()
/// print(summary.copied, summary.merged, summary.conflicts)
/// ```
public final class Reconciler {
    public struct Options: Sendable {
        public var dryRun = false
        /// Propagate a mass deletion anyway.
        public var force = false
        /// More than this share of a replica's files deleted at once is a mass deletion.
        public var massDeletionShare = 0.5
        public init() {}
    }

    struct Side {
        var workspace: Workspace
        var index: SyncIndex
        var entries: [String: SyncIndex.Entry]
        var name: String
    }

    let local: Workspace
    let peer: Workspace
    let options: Options
    let logger: Logger

    public init(local: Workspace, peer: Workspace, options: Options = Options(), logger: Logger = Workspace.silentLogger) {
        var local = local, peer = peer
        // Files that arrive through sync are not triggers on the receiving replica.
        local.writesTrigger = false
        peer.writesTrigger = false
        self.local = local
        self.peer = peer
        self.options = options
        self.logger = logger
    }

    /// Runs one reconciliation. `progress` gets (paths done, paths to do) as it goes.
    public func run(progress: (Int, Int) -> Void = { _, _ in }) throws -> SyncSummary {
        guard local.root != peer.root else { throw SyncError(message: "\(peer.root) is this workspace itself") }
        let localIndex = try SyncIndex(workspace: local), peerIndex = try SyncIndex(workspace: peer)
        guard localIndex.replica != peerIndex.replica else {
            throw SyncError(message: "\(peer.root) has the same replica id as this workspace (\(localIndex.replica)); was it copied with .relay/? Remove its .relay/replica-id and run `relay init` there")
        }
        try localIndex.refresh()
        try peerIndex.refresh()
        var a = Side(workspace: local, index: localIndex, entries: try localIndex.entries(), name: "here")
        var b = Side(workspace: peer, index: peerIndex, entries: try peerIndex.entries(), name: "peer")
        let paths = Set(a.entries.keys).union(b.entries.keys).sorted()
        try guardMassDeletion(a, b, paths: paths)

        var summary = SyncSummary()
        for (done, path) in paths.enumerated() {
            progress(done, paths.count)
            do {
                try reconcile(path, &a, &b, &summary)
            } catch let skip as Skip {
                summary.skipped.append(path)
                logger.notice("changed during sync; left for the next one", metadata: ["relay.path": "\(path)", "relay.reason": "\(skip.reason)"])
            }
        }
        progress(paths.count, paths.count)
        return summary
    }

    struct Skip: Error { var reason: String }

    // MARK: One path

    private func reconcile(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        let aLive = ea.map { !$0.deleted } ?? false, bLive = eb.map { !$0.deleted } ?? false
        let va = ea?.vector ?? VersionVector(), vb = eb?.vector ?? VersionVector()

        if aLive == bLive && (!aLive || ea?.hash == eb?.hash) {
            // Same content (or gone on both): only the vectors may need joining.
            if va != vb && !options.dryRun {
                let joined = va.merged(with: vb)
                try record(path, on: &a, hash: ea?.hash ?? "", vector: joined, deleted: !aLive)
                try record(path, on: &b, hash: eb?.hash ?? "", vector: joined, deleted: !bLive)
            }
            if aLive, let hash = ea?.hash, !options.dryRun { try setBases(path, hash: hash, a, b) }
            return
        }
        switch va.compare(to: vb) {
        case .after: try propagate(path, from: &a, to: &b, &summary)
        case .before: try propagate(path, from: &b, to: &a, &summary)
        case .equal, .concurrent: try resolve(path, &a, &b, &summary)
        }
    }

    /// The newer side wins outright: its content (or its deletion) goes to the other side.
    private func propagate(_ path: String, from source: inout Side, to target: inout Side, _ summary: inout SyncSummary) throws {
        let entry = source.entries[path]!
        let expected = target.entries[path].flatMap { $0.deleted ? nil : $0.hash }
        if entry.deleted {
            guard expected != nil else {
                if !options.dryRun { try record(path, on: &target, hash: "", vector: entry.vector, deleted: true) }
                return
            }
            summary.deleted += 1
            summary.actions.append("delete (\(target.name)): \(path)")
            if options.dryRun { return }
            guard try target.workspace.remove(path, expected: ContentHash(hex: expected!), operation: "sync-delete") else {
                throw Skip(reason: "edited on \(target.name) during the sync")
            }
            try record(path, on: &target, hash: "", vector: entry.vector, deleted: true)
            return
        }
        let bytes = try source.workspace.read(path)
        guard ContentHash(of: bytes).hex == entry.hash else { throw Skip(reason: "edited on \(source.name) during the sync") }
        summary.copied += 1
        summary.bytes += bytes.count
        summary.actions.append("copy → \(target.name): \(path)")
        if options.dryRun { return }
        try install(path, bytes: bytes, on: &target, expected: expected, vector: entry.vector)
        try setBases(path, hash: entry.hash, source, target, content: bytes)
    }

    /// Both sides changed the path since they last agreed.
    private func resolve(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        var vector = (ea?.vector ?? VersionVector()).merged(with: eb?.vector ?? VersionVector())
        vector.increment(a.index.replica)
        let aLive = ea.map { !$0.deleted } ?? false
        let bLive = eb.map { !$0.deleted } ?? false
        if !aLive || !bLive {
            // Delete against edit keeps the edit.
            let (liveSide, deadSide) = aLive ? (a, b) : (b, a)
            let bytes = try liveSide.workspace.read(path)
            guard ContentHash(of: bytes).hex == liveSide.entries[path]!.hash else { throw Skip(reason: "edited during the sync") }
            summary.copied += 1
            summary.bytes += bytes.count
            summary.actions.append("keep edit over delete → \(deadSide.name): \(path)")
            if options.dryRun { return }
            if aLive {
                try install(path, bytes: bytes, on: &b, expected: nil, vector: vector)
                try record(path, on: &a, hash: ea!.hash, vector: vector, deleted: false)
            } else {
                try install(path, bytes: bytes, on: &a, expected: nil, vector: vector)
                try record(path, on: &b, hash: eb!.hash, vector: vector, deleted: false)
            }
            try setBases(path, hash: ContentHash(of: bytes).hex, a, b, content: bytes)
            return
        }

        let ours = try a.workspace.read(path), theirs = try b.workspace.read(path)
        guard ContentHash(of: ours).hex == ea!.hash, ContentHash(of: theirs).hex == eb!.hash else {
            throw Skip(reason: "edited during the sync")
        }
        // The winner of whatever cannot be merged: the larger hash, the same from either side.
        let winner: ThreeWayMerge.Side = ea!.hash > eb!.hash ? .ours : .theirs
        let baseHash = try a.index.base(peer: b.index.replica, path: path) ?? b.index.base(peer: a.index.replica, path: path)
        let base: [UInt8]? = baseHash.flatMap { hash in
            ContentHash(hex: hash).flatMap { try? a.workspace.objects.load($0) ?? b.workspace.objects.load($0) }
        }
        let (merged, conflicted) = Self.merge(path: path, base: base, ours: ours, oursReplica: a.index.replica,
                                             theirs: theirs, theirsReplica: b.index.replica, winner: winner)
        summary.merged += 1
        summary.bytes += merged.count
        summary.actions.append("merge (\(MergeKind.of(path).rawValue))\(conflicted ? ", conflict copy" : ""): \(path)")
        if conflicted { summary.conflicts += 1 }
        if options.dryRun { return }

        let mergedHash = ContentHash(of: merged).hex
        try install(path, bytes: merged, on: &a, expected: ea!.hash, vector: vector)
        try install(path, bytes: merged, on: &b, expected: eb!.hash, vector: vector)
        try setBases(path, hash: mergedHash, a, b, content: merged)
        if conflicted {
            let (loser, loserReplica) = winner == .ours ? (theirs, b.index.replica) : (ours, a.index.replica)
            let copy = ConflictNames.relayCopy(of: path, replica: loserReplica, date: Date())
            var copyVector = VersionVector()
            copyVector.increment(a.index.replica)
            for side in [0, 1] {
                if side == 0 { try install(copy, bytes: loser, on: &a, expected: nil, vector: copyVector, overwrite: true) }
                else { try install(copy, bytes: loser, on: &b, expected: nil, vector: copyVector, overwrite: true) }
            }
            try setBases(copy, hash: ContentHash(of: loser).hex, a, b, content: loser)
            for index in [a.index, b.index] {
                try index.recordConflict(path: path, copy: copy, kept: winner == .ours ? a.index.replica : b.index.replica, copied: loserReplica)
            }
            logger.notice("conflict: kept one version, the other is in a conflict copy", metadata: ["relay.path": "\(path)", "relay.copy": "\(copy)"])
        }
    }

    /// The merged bytes, and whether part of one side went to a conflict copy instead.
    static func merge(path: String, base: [UInt8]?, ours: [UInt8], oursReplica: String, theirs: [UInt8], theirsReplica: String,
                      winner: ThreeWayMerge.Side) -> ([UInt8], Bool) {
        let winnerBytes = winner == .ours ? ours : theirs
        let kind = MergeKind.of(path)
        if kind == .transcript, let merged = TranscriptMerge.merge(ours: ours, theirs: theirs, winner: winner) {
            return (merged, false)
        }
        guard kind != .binary, kind != .transcript,
              let ourText = String(validating: ours, as: UTF8.self), let theirText = String(validating: theirs, as: UTF8.self) else {
            return (winnerBytes, true)
        }
        var baseText = base.flatMap { String(validating: $0, as: UTF8.self) } ?? ""
        if kind == .journal && base == nil {
            // Started on both sides independently (the same day's file): what they share at the
            // start, in whole lines, is the base both appended to.
            baseText = commonLinePrefix(ourText, theirText)
        }
        if kind == .journal,
           let merged = JournalMerge.merge(base: baseText, ours: ourText, oursReplica: oursReplica, theirs: theirText, theirsReplica: theirsReplica) {
            return (Array(merged.utf8), false)
        }
        let result = ThreeWayMerge.merge(base: baseText, ours: ourText, theirs: theirText, winner: winner)
        return (Array(result.text.utf8), result.conflicts > 0)
    }

    static func commonLinePrefix(_ a: String, _ b: String) -> String {
        var result = ""
        for (x, y) in zip(LineDiff.lines(a[...]), LineDiff.lines(b[...])) {
            guard x == y, x.hasSuffix("\n") else { break }
            result += x
        }
        return result
    }

    // MARK: Applying

    /// Writes `bytes` at `path` on `side` if the file is still what its index says (`expected`
    /// hash, nil: absent), atomically and under the file's lock, then records it.
    private func install(_ path: String, bytes: [UInt8], on side: inout Side, expected: String?, vector: VersionVector,
                         overwrite: Bool = false) throws {
        struct Changed: Error {}
        do {
            try side.workspace.update(path, operation: "sync") { old in
                if !overwrite {
                    let current = old.map { ContentHash(of: $0).hex }
                    guard current == expected else { throw Changed() }
                }
                return bytes
            }
        } catch is Changed {
            throw Skip(reason: "edited on \(side.name) during the sync")
        }
        try record(path, on: &side, hash: ContentHash(of: bytes).hex, vector: vector, deleted: false)
    }

    private func record(_ path: String, on side: inout Side, hash: String, vector: VersionVector, deleted: Bool) throws {
        let stamp = deleted ? FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0) : (side.workspace.stamp(ofFileAt: path) ?? FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0))
        let entry = SyncIndex.Entry(path: path, hash: hash, stamp: stamp, vector: vector, deleted: deleted,
                                    scanned: Int64(Date().timeIntervalSince1970 * 1e9))
        try side.index.put(entry)
        side.entries[path] = entry
    }

    /// Both sides now agree on `hash`: it is the base of their next merge of `path`.
    private func setBases(_ path: String, hash: String, _ a: Side, _ b: Side, content: [UInt8]? = nil) throws {
        try a.index.setBase(peer: b.index.replica, path: path, hash: hash)
        try b.index.setBase(peer: a.index.replica, path: path, hash: hash)
        if let content, MergeKind.of(path) != .binary {
            try a.workspace.objects.store(content)
            try b.workspace.objects.store(content)
        }
    }

    // MARK: Safety

    private func guardMassDeletion(_ a: Side, _ b: Side, paths: [String]) throws {
        guard !options.force else { return }
        for (source, target) in [(a, b), (b, a)] {
            let targetLive = target.entries.values.filter { !$0.deleted }.count
            let sourceLive = source.entries.values.filter { !$0.deleted }.count
            let deletions = paths.filter { path in
                guard let s = source.entries[path], s.deleted, let t = target.entries[path], !t.deleted else { return false }
                return s.vector.dominates(t.vector)
            }.count
            let emptied = sourceLive == 0 && targetLive > 0 && deletions > 0
            if emptied || (deletions >= 5 && Double(deletions) > options.massDeletionShare * Double(targetLive)) {
                throw SyncError(message: "refusing to delete \(deletions) of \(targetLive) files on \(target.name == "peer" ? target.workspace.root : "this replica") because they were deleted on \(source.name == "peer" ? source.workspace.root : "this replica")\(emptied ? " (it is empty)" : ""); check that side, then run again with --force if that is what you want")
            }
        }
    }
}
