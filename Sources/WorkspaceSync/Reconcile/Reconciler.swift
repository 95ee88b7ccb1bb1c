import Logging
import Synchronization
import WorkspaceCore

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
    var deleteFirst: Set<String> = []
    /// Time per step of the copy loop, reported when timings are on (`RELAY_SYNC_TIMINGS=1`).
    var steps = SyncTimings.Tally("reconciler step")
    let logger: Logger

    public init(local: ReplicaEndpoint, peer: ReplicaEndpoint, options: Options = Options(), logger: Logger = Workspace.silentLogger) {
        self.local = local
        self.peer = peer
        self.options = options
        self.logger = logger
    }

    /// Two workspaces on this machine.
    public convenience init(local: Workspace, peer: Workspace, options: Options = Options(), logger: Logger = Workspace.silentLogger) throws {
        guard local.root != peer.root else { throw SyncError(.stopped, "\(peer.root) is this workspace itself", path: peer.root) }
        self.init(local: try LocalEndpoint(workspace: local), peer: try LocalEndpoint(workspace: peer), options: options, logger: logger)
    }

    /// Runs one reconciliation. `progress` is called before each path and once at the end.
    /// - throws: `SyncError` (a failure of either index's database as `.database`), or the
    ///   `WorkspaceError` of a file operation.
    public func run(progress: (SyncProgress) -> Void = { _ in }) throws -> SyncSummary {
        try SyncError.wrappingDatabase { try reconcile(progress: progress) }
    }

    private func reconcile(progress: (SyncProgress) -> Void) throws -> SyncSummary {
        // A peer over the protocol may not have answered hello yet: it is asked after the refresh.
        if peer.remote == nil { try checkDistinctReplicas() }
        // The peer's index is copied into ours, so the next sync over the protocol asks only
        // for what changed there since.
        if let remote = peer.remote, remote.cache == nil, let index = local.syncIndex {
            remote.cache = index
        }
        var timings = SyncTimings("reconciler")
        // A dry run stores nothing, merge bases included.
        for endpoint in [local, peer] { endpoint.storesBasesAtOnce = !options.dryRun }
        let (localEntries, peerEntries) = try refreshBoth()
        timings.mark("refresh-both")
        if peer.remote != nil { try checkDistinctReplicas() }
        var a = Side(endpoint: local, entries: localEntries, name: "here")
        var b = Side(endpoint: peer, entries: peerEntries, name: "peer")
        var summary = SyncSummary()
        let paths = try plan(&a, &b, &summary, &timings)
        try reconcileAll(paths, &a, &b, &summary, &timings, progress: progress)
        summary.peerIndex = peer.indexTransfer
        summary.peerIndex?.copyRowsRead = b.entries.rowsReadFromCopy
        progress(SyncProgress(pathsDone: paths.count, pathsTotal: paths.count, files: summary.transferred, bytes: summary.bytes))
        if options.leaveIndexesForExit {
            Self.leftForExit.withLock { $0.append(contentsOf: [a.entries, b.entries, localEntries, peerEntries]) }
        }
        return summary
    }

    /// Reconciles `paths` in order, flushing a batch whenever a side's is full, then the last
    /// one; ends the sync on both endpoints and marks it when it was clean.
    private func reconcileAll(_ paths: [String], _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary,
                              _ timings: inout SyncTimings, progress: (SyncProgress) -> Void) throws {
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
                        try steps.time("flush") { try flush(&a, &b, &summary, inBackground: options.overlapBatches) }
                    }
                } catch let error as SyncError {
                    try handle(error, path: path, &summary)
                }
            }
            timings.mark("reconcile-paths")
            steps.report()
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
    }

    /// Whether both indexes are where the last clean sync's mark left them (no new mark needed).
    var markStillHolds = false

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
}
