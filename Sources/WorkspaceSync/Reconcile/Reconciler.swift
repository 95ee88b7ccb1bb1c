import Foundation
import Logging
import Synchronization
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
    /// Paths the peer sent that the sandbox refuses (`..`, absolute, `.relay/`, links out).
    public var refused: [String] = []
    /// Paths both sides changed that were too large to merge line by line (past
    /// `Options.maximumMergeBytes`, or more edits than a merge takes): both versions are kept,
    /// one in the file and the other in a conflict copy.
    public var tooLargeToMerge: [String] = []
    /// Paths left alone because one side has a file where the other has a folder: the file, and
    /// the other side's files under that folder. A person renames one of them.
    public var clashes: [String] = []
    /// How the peer's index came over the protocol (nil for a folder): rows at refresh,
    /// whether it was the whole index, rows with the closing ack.
    public var peerIndex: IndexTransfer?
    /// Paths this sync looked at. After a clean sync of the same two replicas only those
    /// written on either side since are looked at (see `SyncMark`); the rest are known to be
    /// the same on both.
    public var examined = 0
    /// The peer was a missing or empty folder this sync made a new replica (set by the caller
    /// that started it: `relay sync`).
    public var startedReplica = false
    public init() {}
    public var transferred: Int { copied + merged + deleted }
}

/// How far a sync has come: paths looked at, and files and bytes moved so far.
public struct SyncProgress: Sendable, Equatable {
    public var pathsDone: Int
    public var pathsTotal: Int
    /// Files copied, merged or deleted so far (on either side).
    public var files: Int
    /// Bytes of the files copied and merged so far.
    public var bytes: Int
    public var finished: Bool { pathsDone == pathsTotal }
}

/// Why a sync stopped before changing anything.
public struct SyncError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Reconciles two replicas of a workspace. Per path, version vectors decide: one side newer →
/// copy; both changed → merge by kind (text: three-way; journals: union of appends; chat
/// transcripts: union of messages; anything else: a deterministic winner plus a conflict copy);
/// delete against edit keeps the edit. Both replicas end with the same bytes and vectors.
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
        /// Copies are installed in batches of this many files (or `batchBytes`), each made
        /// durable with two file-system flushes and recorded in one index transaction.
        public var batchFiles = 1_000
        public var batchBytes = 32 * 1024 * 1024
        /// Between two folders on this machine, a full batch commits on another thread while
        /// the next one is staged (`ReplicaEndpoint.flushInBackground`): a first sync's copy loop
        /// no longer stops for each batch's two file-system flushes. Each batch keeps its order
        /// (temporaries durable, renames, renames durable, then its index rows).
        public var overlapBatches = true
        /// How paths merge (relay.json's `sync.merge` over the defaults).
        public var mergeRules = MergeRules()
        /// Look at every path, even after a clean sync (`relay sync --full`).
        public var examineAll = false
        /// For a process that ends right after the sync (`relay sync`): the indexes read into
        /// memory are not freed when `run` returns — freeing two of 100,000 entries took ~50 ms —
        /// but with the process. A caller that goes on (the daemon) leaves this off.
        public var leaveIndexesForExit = false
        /// The template every replica `relay init` made started from, path → bytes: a version
        /// of those paths all replicas have in common (`commonVersion`). Tests may give another.
        public var template: [String: [UInt8]] = Reconciler.builtInTemplate
        /// A path both sides changed whose versions (or base) are larger than this is not merged
        /// line by line, whatever its kind: one version stays in the file and the other goes to
        /// a conflict copy, at once (`SyncSummary.tooLargeToMerge`).
        public var maximumMergeBytes = 8 * 1024 * 1024
        public init() {}
    }

    /// A copy (or a removal) staged on `target`, waiting for its batch to be flushed.
    struct PendingCopy {
        var path: String
        var hash: String
        var vector: VersionVector
        var bytes: Int
        var removal = false
    }

    struct Side {
        var endpoint: ReplicaEndpoint
        var entries: EntryMap
        var name: String
        var pending: [PendingCopy] = []
        var pendingBytes = 0
        /// Copies of a batch committing on another thread (`Options.overlapBatches`), whose
        /// results the endpoint hands back at its next flush.
        var committing: [PendingCopy] = []
        var replica: String { endpoint.replica }
    }

    let local: ReplicaEndpoint
    let peer: ReplicaEndpoint
    let options: Options
    /// Indexes kept until the process ends (`Options.leaveIndexesForExit`).
    private static let leftForExit = Mutex<[EntryMap]>([])
    /// Files whose deletion must be in place before the folder of the same name is filled.
    private var deleteFirst: Set<String> = []
    let logger: Logger

    public init(local: ReplicaEndpoint, peer: ReplicaEndpoint, options: Options = Options(), logger: Logger = Workspace.silentLogger) {
        self.local = local
        self.peer = peer
        self.options = options
        self.logger = logger
    }

    /// Two workspaces on this machine.
    public convenience init(local: Workspace, peer: Workspace, options: Options = Options(), logger: Logger = Workspace.silentLogger) throws {
        guard local.root != peer.root else { throw SyncError(message: "\(peer.root) is this workspace itself") }
        self.init(local: try LocalEndpoint(workspace: local), peer: try LocalEndpoint(workspace: peer), options: options, logger: logger)
    }

    /// Runs one reconciliation. `progress` is called before each path and once at the end.
    public func run(progress: (SyncProgress) -> Void = { _ in }) throws -> SyncSummary {
        // A peer over the protocol may not have answered hello yet: it is asked after the refresh.
        if peer.remote == nil { try checkDistinctReplicas() }
        // The peer's index is copied into ours, so the next sync over the protocol asks only
        // for what changed there since.
        if let remote = peer.remote, remote.cache == nil, let index = local.syncIndex {
            remote.cache = index
        }
        var timings = SyncTimings("reconciler")
        // A dry run stores nothing, merge bases included.
        for endpoint in [local, peer] { (endpoint as? LocalEndpoint)?.storesBasesAtOnce = !options.dryRun }
        let (localEntries, peerEntries) = try refreshBoth()
        timings.mark("refresh-both")
        if peer.remote != nil { try checkDistinctReplicas() }
        var a = Side(endpoint: local, entries: localEntries, name: "here")
        var b = Side(endpoint: peer, entries: peerEntries, name: "peer")
        var summary = SyncSummary()
        // The paths to look at: after a clean sync of these two replicas (the mark both
        // recorded), only those written on either side since; every path otherwise.
        let candidates = try changedSinceLastCleanSync(a, b)
        // Without one, every path is looked at: a peer's index left in its copy is read now.
        if candidates == nil {
            try a.entries.complete()
            try b.entries.complete()
        }
        // The peer's paths are untrusted: check each against our sandbox before anything else.
        // Paths our own index holds came from our own walk or passed this check before (and
        // every write checks its path again).
        // Clashes first: a path under a folder that is a file here is not hostile, only early.
        let (clashing, deleteFirst) = Self.clashes(a.entries, b.entries, among: candidates)
        if let localEndpoint = local as? LocalEndpoint {
            // Only the new paths are sorted (for a stable report order): sorting every path
            // of a 100,000-file index took ~7% of a sync.
            let newPaths = candidates.map { $0.filter { b.entries[$0] != nil } } ?? Array(b.entries.all.keys)
            for path in newPaths.filter({ a.entries[$0] == nil && !clashing.contains($0) }).sorted() {
                // Under a file this side deletes first: checked when it is written, after that.
                if deleteFirst.contains(where: { path.hasPrefix($0 + "/") }) { continue }
                do { try localEndpoint.check(path) } catch let error as EndpointError {
                    summary.refused.append(path)
                    b.entries.removeValue(forKey: path)
                    logger.warning("refused a path from the peer", metadata: ["relay.path": "\(path)", "relay.reason": "\(error)"])
                }
            }
        }
        for path in clashing.sorted() {
            summary.clashes.append(path)
            logger.warning("a file on one side where the other has a folder: left alone; rename one of them", metadata: ["relay.path": "\(path)"])
        }
        self.deleteFirst = deleteFirst
        timings.mark("clashes-and-checks")
        let paths = (candidates ?? Set(a.entries.all.keys).union(b.entries.all.keys)).subtracting(clashing)
            .filter { a.entries[$0] != nil || b.entries[$0] != nil }.sorted()
        summary.examined = paths.count
        timings.mark("union-and-sort")
        try guardMassDeletion(a, b, among: candidates)
        // What this side will read from the peer, in order: whatever the peer has live that
        // this side lacks, unless this side's version is the newer one.
        peer.prefetch(paths.compactMap { path in
            guard let theirs = b.entries[path], !theirs.deleted else { return nil }
            if let mine = a.entries[path] {
                if !mine.deleted && mine.hash == theirs.hash { return nil }
                if theirs.vector.compare(to: mine.vector) == .before { return nil }
            }
            return (path, theirs.hash, theirs.stamp.size)
        })
        if !options.dryRun {
            // What each side will write (a copy or a deletion from the newer side; both sides
            // where both changed): the endpoints read those paths' lock files meanwhile.
            var writesHere: [String] = [], writesThere: [String] = []
            var contentsHere: [String] = [], contentsThere: [String] = []
            for path in paths {
                let mine = a.entries[path], theirs = b.entries[path]
                let mineLive = mine.map { !$0.deleted } ?? false, theirsLive = theirs.map { !$0.deleted } ?? false
                if mineLive == theirsLive && (!mineLive || mine?.hash == theirs?.hash) { continue }
                switch (mine?.vector ?? VersionVector()).compare(to: theirs?.vector ?? VersionVector()) {
                case .after:
                    writesThere.append(path)
                    if mineLive, let hash = mine?.hash { contentsThere.append(hash) }
                case .before:
                    writesHere.append(path)
                    if theirsLive, let hash = theirs?.hash { contentsHere.append(hash) }
                case .equal, .concurrent:
                    writesHere.append(path)
                    writesThere.append(path)
                }
            }
            peer.expectWrites(writesThere, contents: contentsThere)
            local.expectWrites(writesHere, contents: contentsHere)
        }
        timings.mark("prefetch")

        do {
            for (done, path) in paths.enumerated() {
                progress(SyncProgress(pathsDone: done, pathsTotal: paths.count, files: summary.transferred, bytes: summary.bytes))
                do {
                    try reconcile(path, &a, &b, &summary)
                    // A file the other side replaced by a folder of its name goes before anything
                    // is staged into the folder.
                    if deleteFirst.contains(path) {
                        try flush(&a, &b, &summary)
                    } else if a.isFull(options) || b.isFull(options) {
                        try flush(&a, &b, &summary, inBackground: options.overlapBatches)
                    }
                } catch let error as EndpointError {
                    try handle(error, path: path, &summary)
                }
            }
            timings.mark("reconcile-paths")
            try flush(&a, &b, &summary)
            timings.mark("last-flush")
            try local.finish()
            try peer.finish()
            timings.mark("finish")
            try markIfClean(a, b, summary)
        } catch {
            // What is already installed is recorded before the error goes up.
            _ = try? flush(&a, &b, &summary)
            throw error
        }
        summary.peerIndex = peer.indexTransfer
        summary.peerIndex?.copyRowsRead = b.entries.rowsReadFromCopy
        progress(SyncProgress(pathsDone: paths.count, pathsTotal: paths.count, files: summary.transferred, bytes: summary.bytes))
        if options.leaveIndexesForExit {
            Self.leftForExit.withLock { $0.append(contentsOf: [a.entries, b.entries, localEntries, peerEntries]) }
        }
        return summary
    }

    /// The paths written on either side since the last clean sync of these two replicas, or nil
    /// (look at every path) when there is none both sides recorded alike (`SyncMark`): a first
    /// sync, a sync that ended with something left over, an index restored from a backup or
    /// replaced, or `Options.examineAll`.
    private func changedSinceLastCleanSync(_ a: Side, _ b: Side) throws -> Set<String>? {
        markStillHolds = false
        guard !options.examineAll, let here = a.endpoint.refreshedSequence, let there = b.endpoint.refreshedSequence,
              let mine = try a.endpoint.syncMark(peer: b.replica), let theirs = try b.endpoint.syncMark(peer: a.replica),
              mine.id == theirs.id, mine.mine == theirs.theirs, mine.theirs == theirs.mine,
              // A counter below the mark's has gone back (an index restored): not to be trusted.
              here >= mine.mine, there >= mine.theirs else { return nil }
        // Neither index written since: the mark already says what a new one would.
        markStillHolds = here == mine.mine && there == mine.theirs
        return Set(try a.entries.paths(writtenAfter: mine.mine)).union(try b.entries.paths(writtenAfter: mine.theirs))
    }

    /// Whether both indexes are where the last clean sync's mark left them (no new mark needed).
    private var markStillHolds = false

    /// After a sync that left nothing over (nothing skipped, refused or clashing; not a dry
    /// run), both sides record the same new mark with the sequences their refresh read: the
    /// next sync between them looks only at what is written after those.
    private func markIfClean(_ a: Side, _ b: Side, _ summary: SyncSummary) throws {
        guard !options.dryRun, summary.skipped.isEmpty, summary.refused.isEmpty, summary.clashes.isEmpty,
              let here = a.endpoint.refreshedSequence, let there = b.endpoint.refreshedSequence else { return }
        // Nothing was written on either side since that mark (so nothing was to do): it stands.
        if markStillHolds { return }
        let id = SyncIndex.newMarkID()
        try b.endpoint.setSyncMark(SyncMark(id: id, mine: there, theirs: here), peer: a.replica)
        try a.endpoint.setSyncMark(SyncMark(id: id, mine: here, theirs: there), peer: b.replica)
    }

    private func checkDistinctReplicas() throws {
        guard local.replica != peer.replica else {
            throw SyncError(message: "\(peer.location) has the same replica id as this workspace (\(local.replica)); was it copied with .relay/? Run `relay init --new-replica` there: it takes a replica id of its own and keeps its history")
        }
    }

    /// Both refreshes at once — each walks its tree and reads its index, the larger part of a
    /// sync that changes little: a peer over the protocol refreshes from its hello on, while
    /// this side does; two folders refresh on two threads (each side has its own index
    /// connection and object store).
    private func refreshBoth() throws -> (EntryMap, EntryMap) {
        if let remote = peer.remote {
            // The server began its refresh when it answered hello (which this side need not
            // have read yet): it walks its tree while this side walks this one. (Not on a
            // thread: the copy of the peer's index is in this side's index.)
            let mine = try local.refreshMap()
            try remote.requestRefresh()
            return (mine, try peer.refreshMap())
        }
        let peer = self.peer
        let other = BackgroundWork { try peer.refreshMap() }
        let mine: EntryMap
        do { mine = try local.refreshMap() } catch {
            _ = try? other.wait()
            throw error
        }
        return (mine, try other.wait())
    }

    private func handle(_ error: EndpointError, path: String, _ summary: inout SyncSummary) throws {
        switch error {
        case .changed:
            summary.skipped.append(path)
            logger.notice("changed during sync; left for the next one", metadata: ["relay.path": "\(path)"])
        case .refused:
            summary.refused.append(path)
        case .transport:
            throw SyncError(message: "\(error)")
        }
    }

    /// Installs the staged copies on both sides, records them and their merge bases, and
    /// commits both indexes. `inBackground` (two folders): each side's full batch starts
    /// committing on another thread instead, and the results of its previous one are applied.
    private func flush(_ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary, inBackground: Bool = false) throws {
        if options.dryRun { return }
        if inBackground && a.endpoint.flushesInBackground && b.endpoint.flushesInBackground {
            try flushInBackground(&a, &b, &summary)
            return
        }
        // What committed in the background comes back with this flush's results.
        for targetIsA in [true, false] {
            if targetIsA { a.pending = a.committing + a.pending; a.committing = [] } else { b.pending = b.committing + b.pending; b.committing = [] }
        }
        var timings = SyncTimings("reconciler flush")
        // Both sides install at once: a peer over the protocol gets its flush request first and
        // works on it in its own process; a second folder flushes on a thread of its own.
        let peer = b.endpoint
        try peer.beginFlush()
        let peerFlush = peer.remote == nil ? BackgroundWork { try peer.flush() } : nil
        let hereFlush = Result { try a.endpoint.flush() }
        // Both are finished before either's failure goes up.
        let peerFlushed = Result { try peerFlush?.wait() ?? peer.flush() }
        for targetIsA in [true, false] {
            let pending = targetIsA ? a.pending : b.pending
            let results = try targetIsA ? hereFlush.get() : peerFlushed.get()
            timings.mark("\(targetIsA ? "here" : "peer") endpoint flush \(pending.count)")
            if targetIsA { a.pending = []; a.pendingBytes = 0 } else { b.pending = []; b.pendingBytes = 0 }
            try apply(results, of: pending, targetIsA: targetIsA, &a, &b, &summary)
            timings.mark("\(targetIsA ? "here" : "peer") results and bases")
        }
        // The base rows just written.
        _ = try a.endpoint.flush()
        _ = try b.endpoint.flush()
        _ = try reportDeferredFailures(a.endpoint, &summary)
        _ = try reportDeferredFailures(b.endpoint, &summary)
        timings.mark("bases committed")
    }

    /// The results of a side's flushed copies: each path's new entry, or the path skipped
    /// (changed meanwhile); the source side records each copy as the pair's merge base.
    private func apply(_ results: [String: SyncIndex.Entry?], of pending: [PendingCopy], targetIsA: Bool,
                       _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let failed = try reportDeferredFailures((targetIsA ? a : b).endpoint, &summary)
        for copy in pending where !failed.contains(copy.path) {
            guard let result = results[copy.path], let entry = result else {
                summary.skipped.append(copy.path)
                logger.notice("changed during sync; left for the next one", metadata: ["relay.path": "\(copy.path)"])
                continue
            }
            if targetIsA { a.entries[copy.path] = entry } else { b.entries[copy.path] = entry }
            if copy.removal { continue }
            // The copy is now the pair's merge base: the target recorded it in its flush
            // (`stage(basePeer:)`, which stored the content too); the source, which stored
            // it at refresh, records it here.
            let source = targetIsA ? b : a
            try source.endpoint.setBase(peer: (targetIsA ? a : b).replica, path: copy.path, hash: copy.hash,
                                        vector: copy.vector, content: nil)
        }
    }

    /// `flush(inBackground: true)`: a side with copies staged hands them to a batch that
    /// commits on another thread, and gets back the results of the one it handed over before
    /// (committed by now, rows and all). A side with nothing staged or committing commits its
    /// index writes (the merge bases just recorded) as `flush` would, at once: it has no batch
    /// to wait for.
    private func flushInBackground(_ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        var timings = SyncTimings("reconciler flush in background")
        for targetIsA in [true, false] {
            let target = targetIsA ? a : b
            guard !target.pending.isEmpty else { continue }
            let source = targetIsA ? b : a
            // The source's refresh finished storing its merge bases (its flush waits for them):
            // `setBase` then finds them in the store instead of reading the files again.
            if source.pending.isEmpty && source.committing.isEmpty { _ = try source.endpoint.flush() }
            let results = try target.endpoint.flushInBackground()
            let done = target.committing
            if targetIsA {
                a.committing = a.pending; a.pending = []; a.pendingBytes = 0
            } else {
                b.committing = b.pending; b.pending = []; b.pendingBytes = 0
            }
            try apply(results, of: done, targetIsA: targetIsA, &a, &b, &summary)
            timings.mark("\(targetIsA ? "here" : "peer"): \(done.count) applied, \((targetIsA ? a : b).committing.count) committing")
        }
        for side in [a, b] where side.pending.isEmpty && side.committing.isEmpty {
            _ = try side.endpoint.flush()
            _ = try reportDeferredFailures(side.endpoint, &summary)
        }
        timings.mark("bases committed")
    }

    /// Requests an endpoint sent without waiting that failed: the paths skipped or refused,
    /// as if the request had failed at once.
    private func reportDeferredFailures(_ endpoint: ReplicaEndpoint, _ summary: inout SyncSummary) throws -> Set<String> {
        var paths = Set<String>()
        for (path, error) in try endpoint.takeDeferredFailures() {
            paths.insert(path)
            try handle(error, path: path, &summary)
        }
        return paths
    }

    // MARK: One path

    private func reconcile(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        let aLive = ea.map { !$0.deleted } ?? false, bLive = eb.map { !$0.deleted } ?? false
        let va = ea?.vector ?? VersionVector(), vb = eb?.vector ?? VersionVector()

        if aLive == bLive && (!aLive || ea?.hash == eb?.hash) {
            // Same content (or gone on both): only the vectors may need joining.
            let joined = va.merged(with: vb)
            if va != vb && !options.dryRun {
                try record(path, on: &a, like: ea ?? eb!, vector: joined)
                try record(path, on: &b, like: eb ?? ea!, vector: joined)
            }
            if aLive, let hash = ea?.hash, !options.dryRun, try va != vb || a.endpoint.base(peer: b.replica, path: path) != hash {
                try setBases(path, hash: hash, vector: joined, a, b, content: nil)
            }
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
            guard let expected else {
                if !options.dryRun { try record(path, on: &target, like: entry, vector: entry.vector) }
                return
            }
            summary.deleted += 1
            summary.actions.append("delete (\(target.name)): \(path)")
            if options.dryRun { return }
            // Removed with the batch's copies: one flush for all, the file checked just before.
            try target.endpoint.stageRemoval(path, expected: expected, vector: entry.vector)
            target.pending.append(PendingCopy(path: path, hash: "", vector: entry.vector, bytes: 0, removal: true))
            return
        }
        let bytes = try source.endpoint.read(path, expected: entry.hash)
        summary.copied += 1
        summary.bytes += bytes.count
        summary.actions.append("copy → \(target.name): \(path)")
        if options.dryRun { return }
        try target.endpoint.stage(path, bytes: bytes, expected: expected, vector: entry.vector, basePeer: source.replica)
        target.pending.append(PendingCopy(path: path, hash: entry.hash, vector: entry.vector, bytes: bytes.count))
        target.pendingBytes += bytes.count
    }

    /// Both sides changed the path since they last agreed.
    private func resolve(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        var vector = (ea?.vector ?? VersionVector()).merged(with: eb?.vector ?? VersionVector())
        vector.increment(a.replica)
        let aLive = ea.map { !$0.deleted } ?? false
        let bLive = eb.map { !$0.deleted } ?? false
        if !aLive || !bLive {
            // Delete against edit keeps the edit.
            let live = aLive ? ea! : eb!
            let bytes = try (aLive ? a : b).endpoint.read(path, expected: live.hash)
            summary.copied += 1
            summary.bytes += bytes.count
            summary.actions.append("keep edit over delete → \(aLive ? b.name : a.name): \(path)")
            if options.dryRun { return }
            if aLive {
                b.entries[path] = try b.endpoint.install(path, bytes: bytes, expected: nil, overwrite: false, vector: vector)
                try record(path, on: &a, like: live, vector: vector)
            } else {
                a.entries[path] = try a.endpoint.install(path, bytes: bytes, expected: nil, overwrite: false, vector: vector)
                try record(path, on: &b, like: live, vector: vector)
            }
            try setBases(path, hash: live.hash, vector: vector, a, b, content: bytes)
            return
        }

        let kind = options.mergeRules.kind(of: path)
        let base: [UInt8]?
        switch try commonVersion(path, a, b, ea!, eb!) {
        case .behind(let sideA):
            // One side still has a version the other had and moved past: it only catches up.
            if sideA { try catchUp(path, from: &b, to: &a, vector: vector, &summary) } else { try catchUp(path, from: &a, to: &b, vector: vector, &summary) }
            return
        case .base(let content): base = content
        }
        let ours = try a.endpoint.read(path, expected: ea!.hash)
        let theirs = try b.endpoint.read(path, expected: eb!.hash)
        // The winner of whatever cannot be merged: the larger hash, the same from either side.
        let winner: ThreeWayMerge.Side = ea!.hash > eb!.hash ? .ours : .theirs
        // Past the size cap, versions of a kind that merges are kept as a binary's would be.
        let tooLarge = kind != .binary && max(ours.count, theirs.count, base?.count ?? 0) > options.maximumMergeBytes
        let (merged, conflicted, beyondLimit) = tooLarge ? (winner == .ours ? ours : theirs, true, true)
            : Self.merge(path: path, base: base, ours: ours, oursReplica: a.replica,
                         theirs: theirs, theirsReplica: b.replica, winner: winner, kind: kind)
        summary.merged += 1
        summary.bytes += merged.count
        if beyondLimit { summary.tooLargeToMerge.append(path) }
        summary.actions.append("merge (\(kind.rawValue))\(beyondLimit ? ", too large to merge line by line" : "")\(conflicted ? ", conflict copy" : ""): \(path)")
        if conflicted { summary.conflicts += 1 }
        if options.dryRun { return }

        if conflicted {
            // The losing version is made safe in its copy before the merge replaces it, so a sync
            // killed between the two leaves an extra copy, never a lost version.
            let (loser, loserReplica) = winner == .ours ? (theirs, b.replica) : (ours, a.replica)
            try keepConflictCopy(of: path, loser, from: loserReplica, winner: winner == .ours ? a.replica : b.replica, &a, &b, &summary)
        }
        a.entries[path] = try a.endpoint.install(path, bytes: merged, expected: ea!.hash, overwrite: false, vector: vector)
        b.entries[path] = try b.endpoint.install(path, bytes: merged, expected: eb!.hash, overwrite: false, vector: vector)
        try setBases(path, hash: ContentHash(of: merged).hex, vector: vector, a, b, content: merged)
    }

    /// `target` has not changed `path` since a version `source` had and moved past (found by
    /// content: the replicas never agreed on it, as two `relay init` on a first sync): the
    /// source's bytes are copied, both sides get `vector`, and it is their merge base.
    private func catchUp(_ path: String, from source: inout Side, to target: inout Side, vector: VersionVector,
                         _ summary: inout SyncSummary) throws {
        let entry = source.entries[path]!, old = target.entries[path]!
        let bytes = try source.endpoint.read(path, expected: entry.hash)
        summary.copied += 1
        summary.bytes += bytes.count
        summary.actions.append("copy → \(target.name) (unchanged there since a version both had): \(path)")
        if options.dryRun { return }
        target.entries[path] = try target.endpoint.install(path, bytes: bytes, expected: old.hash, overwrite: false, vector: vector)
        try record(path, on: &source, like: entry, vector: vector)
        try setBases(path, hash: entry.hash, vector: vector, source, target, content: bytes)
    }

    /// Puts the version of `path` that lost into a conflict copy on both sides — unless a copy
    /// of `path` with these very bytes is already there (an earlier, interrupted attempt at this
    /// merge made it), which sync then carries like any file. A new copy gets a name neither side
    /// has ever used.
    private func keepConflictCopy(of path: String, _ loser: [UInt8], from loserReplica: String, winner: String,
                                  _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let hash = ContentHash(of: loser).hex
        // Every path of both sides is looked through: a peer's index left in its copy is read.
        try a.entries.complete()
        try b.entries.complete()
        let existing = (Array(a.entries.all.values) + Array(b.entries.all.values)).first {
            !$0.deleted && $0.hash == hash && ConflictNames.original(of: $0.path) == path
        }
        if let existing {
            logger.notice("conflict: the losing version is already in a conflict copy", metadata: ["relay.path": "\(path)", "relay.copy": "\(existing.path)"])
            return
        }
        var date = Date()
        var copy = ConflictNames.relayCopy(of: path, replica: loserReplica, date: date)
        let pending = Set((a.pending + b.pending + a.committing + b.committing).map(\.path))
        while a.entries[copy] != nil || b.entries[copy] != nil || pending.contains(copy) {
            date += 1
            copy = ConflictNames.relayCopy(of: path, replica: loserReplica, date: date)
        }
        var copyVector = VersionVector()
        copyVector.increment(a.replica)
        a.entries[copy] = try a.endpoint.install(copy, bytes: loser, expected: nil, overwrite: false, vector: copyVector)
        b.entries[copy] = try b.endpoint.install(copy, bytes: loser, expected: nil, overwrite: false, vector: copyVector)
        try setBases(copy, hash: hash, vector: copyVector, a, b, content: loser)
        try a.endpoint.recordConflict(path: path, copy: copy, kept: winner, copied: loserReplica)
        try b.endpoint.recordConflict(path: path, copy: copy, kept: winner, copied: loserReplica)
        logger.notice("conflict: kept one version, the other is in a conflict copy", metadata: ["relay.path": "\(path)", "relay.copy": "\(copy)"])
    }

    /// The most lines either side may have inserted or deleted (since the base) for a text merge
    /// (the diff's time grows with N·D); past it, the two versions are kept as a binary's are.
    static let maximumEdits = 20_000

    /// The merged bytes, whether part of one side went to a conflict copy instead, and whether
    /// that was because the edits were past `maximumEdits`.
    static func merge(path: String, base: [UInt8]?, ours: [UInt8], oursReplica: String, theirs: [UInt8], theirsReplica: String,
                      winner: ThreeWayMerge.Side, kind: MergeKind? = nil) -> ([UInt8], Bool, Bool) {
        let winnerBytes = winner == .ours ? ours : theirs
        let kind = kind ?? MergeKind.of(path)
        if kind == .transcript, let merged = TranscriptMerge.merge(base: base, ours: ours, theirs: theirs, winner: winner) {
            return (merged.bytes, merged.conflicts > 0, false)
        }
        guard kind != .binary, kind != .transcript,
              let ourText = String(validating: ours, as: UTF8.self), let theirText = String(validating: theirs, as: UTF8.self) else {
            return (winnerBytes, true, false)
        }
        var baseText = base.flatMap { String(validating: $0, as: UTF8.self) } ?? ""
        if kind == .journal && base == nil {
            // Started on both sides independently (the same day's file): what they share at the
            // start, in whole lines, is the base both appended to.
            baseText = commonLinePrefix(ourText, theirText)
        }
        if kind == .journal,
           let merged = JournalMerge.merge(base: baseText, ours: ourText, oursReplica: oursReplica, theirs: theirText, theirsReplica: theirsReplica) {
            return (Array(merged.utf8), false, false)
        }
        guard let result = ThreeWayMerge.merge(base: baseText, ours: ourText, theirs: theirText, winner: winner,
                                               maximumEdits: maximumEdits) else { return (winnerBytes, true, true) }
        if result.conflicts > 0, kind == .journal,
           let union = JournalMerge.merge(base: commonLinePrefix(ourText, theirText), ours: ourText, oursReplica: oursReplica,
                                          theirs: theirText, theirsReplica: theirsReplica) {
            // A journal whose sides, measured from the base, overlap — a line one side took out
            // (a delete that lost to an edit, a correction) next to the other's new entries — but
            // which both only added to since the lines they share: every entry of both, no copy.
            return (Array(union.utf8), false, false)
        }
        return (Array(result.text.utf8), result.conflicts > 0, false)
    }

    static func commonLinePrefix(_ a: String, _ b: String) -> String {
        var result = ""
        for (x, y) in zip(LineDiff.lines(a[...]), LineDiff.lines(b[...])) {
            guard x == y, x.hasSuffix("\n") else { break }
            result += x
        }
        return result
    }

    // MARK: Recording

    private func record(_ path: String, on side: inout Side, like entry: SyncIndex.Entry, vector: VersionVector) throws {
        var updated = entry
        updated.path = path
        updated.vector = vector
        try side.endpoint.record(updated)
        side.entries[path] = updated
    }

    /// Both sides now agree on `hash`: it is the base of their next merge of `path`.
    private func setBases(_ path: String, hash: String, vector: VersionVector, _ a: Side, _ b: Side, content: [UInt8]?) throws {
        try a.endpoint.setBase(peer: b.replica, path: path, hash: hash, vector: vector, content: content)
        try b.endpoint.setBase(peer: a.replica, path: path, hash: hash, vector: vector, content: content)
    }

    // MARK: Safety

    /// Where one side has a live file at a path the other side uses as a folder. Only paths
    /// live on one side and not the other can be involved (a path live on both has the same
    /// folders above it on both), so this looks at what differs, not at every path. Returns the
    /// paths to leave alone (the file and the other side's files under it) and the files whose
    /// deletion, seen by the other side first, must be made before the folder fills — those
    /// are not a clash.
    ///
    /// `among`: only these paths can be involved (those written since the last clean sync: a
    /// path live on one side only that neither side wrote since would have been copied then,
    /// or that sync would not have been clean); nil: any.
    static func clashes(_ a: EntryMap, _ b: EntryMap, among candidates: Set<String>? = nil) -> (Set<String>, Set<String>) {
        var clashing = Set<String>(), deleteFirst = Set<String>()
        // Folders already found not to be a live file on the side looked at: new files share
        // their folders, and a look-up in a peer's copy is a query.
        var notFiles: [Set<String>] = [[], []]
        func look(at path: String, _ entry: SyncIndex.Entry, mine: EntryMap, theirs: EntryMap, side: Int) {
            guard !entry.deleted, mine[path]?.deleted ?? true else { return }
            var folder = Substring(path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                if notFiles[side].contains(String(folder)) { continue }
                guard let file = mine[String(folder)], !file.deleted else {
                    notFiles[side].insert(String(folder))
                    continue
                }
                let name = String(folder)
                if let gone = theirs[name], gone.deleted, gone.vector.compare(to: file.vector) == .after {
                    deleteFirst.insert(name)
                } else {
                    clashing.insert(name)
                    clashing.insert(path)
                }
            }
        }
        for (side, (mine, theirs)) in [(a, b), (b, a)].enumerated() {
            if let candidates {
                for path in candidates { if let entry = theirs[path] { look(at: path, entry, mine: mine, theirs: theirs, side: side) } }
            } else {
                for (path, entry) in theirs.all { look(at: path, entry, mine: mine, theirs: theirs, side: side) }
            }
        }
        return (clashing, deleteFirst)
    }

    /// `among`: the paths written since the last clean sync, when there is one — only those
    /// can be deletions still to make (two rows neither side wrote since agree).
    private func guardMassDeletion(_ a: Side, _ b: Side, among candidates: Set<String>?) throws {
        guard !options.force else { return }
        for (from, on) in [(a, b), (b, a)] {
            let source = from.entries, target = on.entries
            let targetLive = target.liveCount
            var sourceLive = 0, deletions = 0
            func count(_ s: SyncIndex.Entry) {
                if let t = target[s.path], !t.deleted, s.vector.dominates(t.vector) { deletions += 1 }
            }
            if let candidates {
                sourceLive = source.liveCount
                for path in candidates { if let s = source[path], s.deleted { count(s) } }
            } else {
                // Read in place (`values[index]`): this runs over every path.
                let all = source.all
                for index in all.values.indices {
                    guard all.values[index].deleted else { sourceLive += 1; continue }
                    count(all.values[index])
                }
            }
            let emptied = sourceLive == 0 && targetLive > 0 && deletions > 0
            if emptied || (deletions >= 5 && Double(deletions) > options.massDeletionShare * Double(targetLive)) {
                throw SyncError(message: "refusing to delete \(deletions) of \(targetLive) files on \(on.endpoint.location) because they were deleted on \(from.endpoint.location)\(emptied ? " (it is empty)" : ""); check that side, then run again with --force if that is what you want")
            }
        }
    }
}

extension Reconciler.Side {
    func isFull(_ options: Reconciler.Options) -> Bool {
        pending.count >= options.batchFiles || pendingBytes >= options.batchBytes
    }
}

