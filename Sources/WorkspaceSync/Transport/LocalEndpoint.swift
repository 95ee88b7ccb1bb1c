// The replica in a folder on this machine: reads and writes through WorkspaceCore's sandbox,
// copies staged into write batches, and the index rows that record them.

import Foundation
import WorkspaceCore

/// The replica in a folder on this machine.
public final class LocalEndpoint: ReplicaEndpoint {
    public let workspace: Workspace
    public let index: SyncIndex
    public var syncIndex: SyncIndex? { index }
    public var replica: String { index.replica }
    public var location: String { workspace.root }

    private var batch: WriteBatch
    /// A batch committing on another thread while `batch` is staged into
    /// (`flushInBackground`); its work gives the rows it wrote and committed.
    private var committing: (work: BackgroundWork<[String: SyncIndex.Entry?]>, batch: WriteBatch)?
    /// The index under a lock, with the rows a batch's outcomes make (`IndexRows`): the batch
    /// committing in the background writes its rows on its own thread while the caller stages
    /// the next one.
    private let rows: IndexRows
    /// The batch that committed last in the background, staged into next: two batches take
    /// turns, each keeping its own lock and the folders it found.
    private var spare: WriteBatch?
    /// How many batches `flushInBackground` handed to another thread (for tests).
    private(set) var batchesCommittedInBackground = 0
    private var staged: [String: VersionVector] = [:]
    private var removing: Set<String> = []
    /// The peer each staged copy becomes the merge base with (`stage(basePeer:)`).
    private var stagedBases: [String: String] = [:]

    /// Whether the folder was made a new replica for this sync (`Workspace.openOrStartReplica`):
    /// a server says so in its answer to hello.
    public var startedReplica = false

    /// A walk of the tree begun when the endpoint was made, for its first refresh.
    private var walkAhead: SyncIndex.Walk?
    /// The files this sync will read here, read and hashed ahead on a thread of their own
    /// (`prefetch`, `ReadAhead`).
    private var readAhead: ReadAhead?
    /// What the refresh read of the new and changed files here, up to `keptBudget` bytes
    /// (`SyncIndex.keepsContentUpTo`): those the sync then copies are taken from here, not read
    /// a second time; the rest are let go at `prefetch`.
    private var kept: [String: SyncIndex.KeptContent] = [:]
    /// 64 MiB: a first sync of 10,000 files of a few kilobytes reads each once.
    static let keptBudget = 64 << 20
    /// The rows of the last refresh, until `expectWrites` has used them (then let go, so the
    /// reconciler's copy of them is the only one).
    private var refreshedRows: [String: SyncIndex.Entry]?

    /// - parameter walkAhead: begin walking the tree now, for a refresh that is about to come
    ///   (a sync, a server about to be asked): the walk runs while the index opens.
    public init(workspace: Workspace, walkAhead: Bool = false) throws {
        var workspace = workspace
        // Files that arrive through sync are not triggers on the receiving replica.
        workspace.writesTrigger = false
        self.workspace = workspace
        if walkAhead { self.walkAhead = SyncIndex.Walk(workspace, inBackground: true) }
        self.index = try SyncIndex(workspace: workspace)
        index.batchesWrites = true
        index.keepsContentUpTo = Self.keptBudget
        rows = IndexRows(index)
        batch = WriteBatch(workspace, operation: "sync")
    }

    public func stage(_ path: String, bytes: [UInt8], hash: String?, expected: String?, vector: VersionVector, basePeer: String?) throws {
        // The batch resolves the path in the sandbox itself (`refusedBySandbox`).
        try checkExcluded(path)
        // The file is checked against its stamp in the index, fresh from this sync's refresh:
        // the version it displaces is not read (on a disk whose cache went cold, the reads
        // of the old versions were most of a receiving batch's install).
        let known = try expected.flatMap { hash in try rows.locked { try index.vouchedStamp(path, hash: hash) } }
        var made: ContentHash?
        try refusedBySandbox {
            made = try batch.stage(path, bytes: bytes, hash: hash.flatMap { ContentHash(hex: $0) },
                                   expected: expected.flatMap { ContentHash(hex: $0) }, knownStamp: known, overwrite: false)
        }
        // The copy is the next merge base: keep it, in the same flush (hashed once, by the
        // stage or by the read that gave `hash`).
        if let made, index.mergeRules.kind(of: path) != .binary { try batch.storeObject(bytes, hash: made) }
        staged[path] = vector
        stagedBases[path] = basePeer
    }

    public func expectWrites(_ paths: [String], contents: [String]) {
        // Only reads ahead, and only the lock files of paths this replica has a row for: one it
        // never had has no lock file (a write batch makes none for a new path), and looking
        // for each of a first sync's thousands was a tenth of a core's work.
        let rows = refreshedRows.take()
        let known = rows.map { rows in paths.filter { rows[$0] != nil } } ?? paths
        workspace.prefetchForWrites(paths: known, contents: contents.compactMap(ContentHash.init(hex:)))
    }

    public func stageRemoval(_ path: String, expected: String, vector: VersionVector) throws {
        try checkExcluded(path)
        guard let hash = ContentHash(hex: expected) else { throw SyncError.transport("'\(expected)' is not a content hash") }
        let known = try rows.locked { try index.vouchedStamp(path, hash: expected) }
        try refusedBySandbox { try batch.stageRemoval(path, expected: hash, knownStamp: known) }
        staged[path] = vector
        removing.insert(path)
    }

    /// A batch still committing in the background is let finish (and its rows committed with
    /// it, once its files are durable); a sync killed between a batch's renames and its index
    /// commit leaves files without rows, which the next sync resumes.
    deinit {
        readAhead?.stop()
        _ = try? committing?.work.wait()
    }

    /// The files the sync will read here, in order: a thread reads and hashes them ahead
    /// while the sync writes the previous ones on the other side.
    public func prefetch(_ wanted: [(path: String, expected: String, size: Int)]) {
        readAhead?.stop()
        if !kept.isEmpty {
            let paths = Set(wanted.map(\.path))
            kept = kept.filter { paths.contains($0.key) }
        }
        let unread = kept.isEmpty ? wanted : wanted.filter { kept[$0.path] == nil }
        readAhead = unread.isEmpty ? nil : ReadAhead(workspace, paths: unread.map(\.path))
    }

    public var flushesInBackground: Bool { true }

    public func flushInBackground() throws -> [String: SyncIndex.Entry?] {
        let results = try finishCommitting()
        guard !staged.isEmpty else { return results }
        // The refresh's merge bases are committed first, as by `flush` (one batch commits at a
        // time; its flushes are the file system's).
        try settleBases()
        let vectors = staged, removals = removing, basePeers = stagedBases
        staged = [:]
        removing = []
        stagedBases = [:]
        let full = batch
        batch = spare.take() ?? WriteBatch(workspace, operation: "sync")
        // As `flush` does, rows and all, on another thread while the caller stages the next
        // copies (writing the rows on the caller's thread once it had waited for the batch was
        // a sixth of that thread's work on a first sync). The work holds the rows, not this
        // endpoint: an endpoint let go while its batch commits ends (`deinit`, which waits for
        // the batch) on the thread that let it go, never on the batch's own.
        committing = (BackgroundWork { [rows] in
            var results: [String: SyncIndex.Entry?] = [:]
            try rows.commit(full, vectors: vectors, removals: removals, basePeers: basePeers, into: &results)
            return results
        }, full)
        batchesCommittedInBackground += 1
        return results
    }

    /// Waits for the batch committing in the background, if any: the rows it wrote and
    /// committed, by path (empty when there was none).
    private func finishCommitting() throws -> [String: SyncIndex.Entry?] {
        guard let done = committing.take() else { return [:] }
        var timings = SyncTimings("endpoint finish committing")
        defer { spare = done.batch }
        let results = try done.work.wait()
        timings.mark("waited for the batch")
        return results
    }

    public func flush() throws -> [String: SyncIndex.Entry?] {
        try settleBases()
        var results = try finishCommitting()
        let vectors = staged, removals = removing, basePeers = stagedBases
        staged = [:]
        removing = []
        stagedBases = [:]
        var timings = SyncTimings("endpoint flush")
        try rows.commit(batch, vectors: vectors, removals: removals, basePeers: basePeers, into: &results)
        timings.mark("batch and rows committed")
        return results
    }

    public func refresh() throws -> [String: SyncIndex.Entry] {
        try refreshSnapshot().entries
    }

    public private(set) var refreshedSequence: Int64?

    /// Whether the merge bases a refresh finds are stored at once (`refreshSnapshot`); a dry run
    /// (`Reconciler`) turns it off: it stores nothing.
    public var storesBasesAtOnce = true

    /// The refreshed index and the sequence it is complete up to (what a client over the
    /// protocol is told it has seen).
    public func refreshSnapshot() throws -> SyncIndex.Snapshot {
        // The new versions it keeps as merge bases are stored by a batch of their own, committed
        // on another thread at once (a client over ssh does it while ssh connects) instead of in
        // this sync's first flush: that flush's `syncfs` was the client's longest wait there,
        // and on a shared disk it slowed the peer's. No row that may name one of them is
        // committed before they are stored (`beforeCommittingWrites`).
        guard storesBasesAtOnce else {
            // A dry run's: kept in this sync's batch, which it never commits.
            return took(try index.refreshed(storingBasesIn: batch, walk: walkAhead.take()))
        }
        let bases = WriteBatch(workspace, operation: "sync")
        let snapshot = took(try index.refreshed(storingBasesIn: bases, walk: walkAhead.take()))
        if bases.count > 0 {
            let versions = bases.versionsToStore
            let storing = BackgroundWork { _ = try bases.commit() }
            storingBases = (storing, versions)
            let earlier = index.beforeCommittingWrites
            index.beforeCommittingWrites = {
                try earlier?()
                try storing.wait()
            }
        }
        return snapshot
    }

    /// The merge bases the last refresh is storing, until a flush or the sync's end waits for
    /// them (a sync that commits no row still ends with them stored).
    private var storingBases: (work: BackgroundWork<Void>, versions: Set<ContentHash>)?
    /// The versions the refresh's merge bases put in the store: `setBase` needs no look in the
    /// store for them (two `lstat`s per file a first sync copies, on its busiest thread).
    private var basesStored: Set<ContentHash> = []

    private func settleBases() throws {
        guard let storing = storingBases.take() else { return }
        try storing.work.wait()
        basesStored.formUnion(storing.versions)
    }

    /// What a refresh gave that this endpoint keeps: the sequence, the reads it kept, its rows.
    private func took(_ snapshot: SyncIndex.Snapshot) -> SyncIndex.Snapshot {
        refreshedSequence = snapshot.sequence
        kept = index.keptContent
        index.keptContent = [:]
        refreshedRows = snapshot.entries
        return snapshot
    }

    public func finish() throws {
        // What was read ahead and not asked for (the sync skipped it) is let go.
        readAhead?.stop()
        readAhead = nil
        kept = [:]
        try settleBases()
        basesStored = []
    }

    public func syncMark(peer: String) throws -> SyncMark? { try rows.locked { try index.syncMark(peer: peer) } }

    public func setSyncMark(_ mark: SyncMark, peer: String) throws {
        try rows.locked {
            try index.setSyncMark(mark, peer: peer)
            try index.commitWrites()
        }
    }

    /// Paths from elsewhere go through the sandbox before anything is done with them.
    public func check(_ path: String) throws {
        try checkExcluded(path)
        try refusedBySandbox { _ = try workspace.resolve(path) }
    }

    /// Relay's state and temporary files are never synced, whatever the sandbox would say.
    private func checkExcluded(_ path: String) throws {
        if SyncIndex.isExcluded(path) { throw SyncError.refused("refused path '\(path)': .relay/ and temporary files are never synced", path: path) }
    }

    /// Runs `body`, whose path the workspace resolves in its sandbox: a refusal (outside the
    /// root, a link out, a file where a folder must be) is the peer's path refused.
    private func refusedBySandbox(_ body: () throws -> Void) throws {
        do { try body() } catch let error as WorkspaceError where error.code == .pathRefused || error.code == .notADirectory {
            throw SyncError.refused(error.message, path: error.path, cause: error)
        }
    }

    public func read(_ path: String, expected: String) throws -> [UInt8] {
        // The read resolves the path in the sandbox itself.
        try checkExcluded(path)
        var read: (bytes: [UInt8], hash: ContentHash)?
        // As the refresh read it, one stable read of the file this sync reconciles on (a change
        // made since is a newer version, for the next sync).
        if let content = kept.removeValue(forKey: path), content.hash.hex == expected { return content.bytes }
        try refusedBySandbox { read = try readAhead?.take(path)?.get() ?? workspace.readHashed(path) }
        // The hash the read computed: hashing the bytes again was a second pass over every
        // file a first sync copies.
        guard let read, read.hash.hex == expected else { throw SyncError.changed(path) }
        return read.bytes
    }

    public func install(_ path: String, bytes: [UInt8], expected: String?, overwrite: Bool, vector: VersionVector) throws -> SyncIndex.Entry {
        try check(path)
        struct Changed: Error {}
        do {
            try workspace.update(path, operation: "sync") { old in
                if !overwrite && old.map({ ContentHash(of: $0).hex }) != expected { throw Changed() }
                return bytes
            }
        } catch is Changed {
            throw SyncError.changed(path)
        }
        var entry = SyncIndex.Entry(path: path, hash: ContentHash(of: bytes).hex,
                                    stamp: workspace.stamp(ofFileAt: path) ?? FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0),
                                    vector: vector, deleted: false, scanned: SyncIndex.now())
        entry.sequence = try rows.locked { try index.put(entry) }
        return entry
    }

    public func remove(_ path: String, expected: String, vector: VersionVector) throws -> SyncIndex.Entry {
        try check(path)
        do {
            guard try workspace.remove(path, expected: ContentHash(hex: expected), operation: "sync-delete") else { throw SyncError.changed(path) }
        } catch let error as WorkspaceError where error.code == .notFound {
            // Already gone: fine, record the tombstone.
        }
        var entry = SyncIndex.Entry(path: path, hash: "", stamp: FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0),
                                    vector: vector, deleted: true, scanned: SyncIndex.now())
        entry.sequence = try rows.locked { try index.put(entry) }
        return entry
    }

    public func record(_ entry: SyncIndex.Entry) throws {
        try check(entry.path)
        var entry = entry
        if !entry.deleted, let stamp = workspace.stamp(ofFileAt: entry.path) { entry.stamp = stamp }
        entry.sequence = try rows.locked { try index.put(entry) }
    }

    /// The merge bases with each peer, read in one query once a sync has asked for more than
    /// `basesReadOneByOne` of them (a sync that looks at every path asks for each); until then
    /// each is read by itself: a sync after a clean one asks for the few paths written since,
    /// and reading all 10,000 bases for them took ~6 ms of its critical path (the cache is
    /// `IndexRows.bases`).
    static let basesReadOneByOne = 256

    public func base(peer: String, path: String) throws -> String? {
        try rows.locked {
            if let known = rows.bases[peer] { return known[path] }
            rows.basesAsked[peer, default: 0] += 1
            guard rows.basesAsked[peer]! > Self.basesReadOneByOne else { return try index.base(peer: peer, path: path) }
            rows.bases[peer] = try index.bases(peer: peer)
            return rows.bases[peer]?[path]
        }
    }

    public func mergeBases(path: String) throws -> [MergeBase] { try rows.locked { try index.mergeBases(path: path) } }

    public func heldVersions(path: String) throws -> [HeldVersion] { try rows.locked { try index.heldVersions(path: path) } }

    public func setBase(peer: String, path: String, hash: String, vector: VersionVector, content: [UInt8]?) throws {
        try rows.locked {
            try index.setBase(peer: peer, path: path, hash: hash, vector: vector)
            rows.bases[peer]?[path] = hash
        }
        guard index.mergeRules.kind(of: path) != .binary else { return }
        if let content {
            try batch.storeObject(content)
        } else if let wanted = ContentHash(hex: hash), !basesStored.contains(wanted), !workspace.objects.contains(wanted),
                  let bytes = try? workspace.read(path), ContentHash(of: bytes) == wanted {
            // The refresh that found this version keeps it through the sync's flush; a dry run,
            // or a sync cut short before its flush, dropped it. Kept now while the file has it.
            try batch.storeObject(bytes, hash: wanted)
        }
    }

    public func loadObject(_ hash: String) throws -> [UInt8]? {
        guard let hash = ContentHash(hex: hash), workspace.objects.contains(hash) else { return nil }
        return try workspace.objects.load(hash)
    }

    public func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        try rows.locked { try index.recordConflict(path: path, copy: copy, kept: kept, copied: copied) }
    }
}

/// A local endpoint's index under a lock, with the merge bases it caches (`LocalEndpoint.base`):
/// every use of either holds the lock, from the sync's thread or from a batch committing in the
/// background.
final class IndexRows: @unchecked Sendable {
    let index: SyncIndex
    private let lock = NSLock()
    /// The merge bases with each peer once read whole, and how many were asked for one by one
    /// (`LocalEndpoint.base`); guarded by `lock`.
    var bases: [String: [String: String]] = [:]
    var basesAsked: [String: Int] = [:]

    init(_ index: SyncIndex) { self.index = index }

    /// `body` holding the lock.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Commits `batch` and then its rows: written while the batch's last flush waits for the
    /// disk and committed once it is done (`commit(whileFlushing:)`), so no row describes a
    /// file not yet durable. If either fails, none of the rows is committed (what the open
    /// transaction holds goes too): the batch's files may be in place and not durable.
    func commit(_ batch: WriteBatch, vectors: [String: VersionVector], removals: Set<String>, basePeers: [String: String],
                into results: inout [String: SyncIndex.Entry?]) throws {
        do {
            try batch.commit { outcomes in
                try locked { try record(outcomes, vectors: vectors, removals: removals, basePeers: basePeers, into: &results) }
            }
            try locked { try index.commitWrites() }
        } catch {
            locked { index.abandonWrites() }
            throw error
        }
    }

    /// The index rows of a batch's outcomes, written together (`SyncIndex.put(_:)`) in the open
    /// transaction, with the merge bases of the copies; `results` gets each path's new row, or
    /// nil for a path left alone. The caller holds the lock.
    private func record(_ outcomes: [WriteBatch.Outcome], vectors: [String: VersionVector], removals: Set<String>,
                        basePeers: [String: String], into results: inout [String: SyncIndex.Entry?]) throws {
        var rows: [SyncIndex.Entry] = []
        for outcome in outcomes {
            if removals.contains(outcome.path) {
                guard outcome.removed, let vector = vectors[outcome.path] else {
                    results[outcome.path] = .some(nil)
                    continue
                }
                rows.append(SyncIndex.Entry(path: outcome.path, hash: "", stamp: FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0),
                                            vector: vector, deleted: true, scanned: SyncIndex.now()))
                continue
            }
            guard let result = outcome.result, let stamp = outcome.stamp, let vector = vectors[outcome.path] else {
                results[outcome.path] = .some(nil)
                continue
            }
            rows.append(SyncIndex.Entry(path: outcome.path, hash: result.hash.hex, stamp: stamp, vector: vector,
                                        deleted: false, scanned: SyncIndex.now()))
        }
        let sequences = try index.put(rows.map { ($0, false) })
        for (var entry, sequence) in zip(rows, sequences) {
            entry.sequence = sequence
            results[entry.path] = entry
            // Its content went to the store when it was staged (for the kinds that merge).
            if !entry.deleted, let peer = basePeers[entry.path] {
                try index.setBase(peer: peer, path: entry.path, hash: entry.hash, vector: entry.vector)
                bases[peer]?[entry.path] = entry.hash
            }
        }
    }
}
