import Foundation
import RelaySQLite
import WorkspaceCore

/// A replica's sync index, `.relay/sync.sqlite`: per path the content hash, stamp, version
/// vector and tombstone, and per (peer, path) the last version both had (the merge base, its
/// content kept in the object store). `refresh` brings it up to date with the disk.
///
/// Every row carries this replica's local sequence: each write of a row takes the next number
/// of one counter (`meta.sequence`, allocated inside the write transaction, so two processes
/// never hand out the same one). A peer that saw the index up to sequence N asks only for rows
/// above N (`changes(since:)`). `meta.epoch`, a random id made with the index, names this
/// index's history: a deleted or replaced index has another one, and peers read it whole.
public final class SyncIndex {
    public struct Entry: Sendable, Equatable, Codable {
        public var path: String
        /// SHA-256 hex of the content; "" for a tombstone.
        public var hash: String
        public var stamp: FileStamp
        public var vector: VersionVector
        public var deleted: Bool
        /// When the scan that recorded the stamp ran (ns since 1970): a file modified within
        /// the timestamp granularity of that moment is "racy" and re-hashed next time.
        public var scanned: Int64
        /// The replica's sequence number of the write that made this row (set by `put`, which
        /// ignores the value it is given).
        public var sequence: Int64

        public init(path: String, hash: String, stamp: FileStamp, vector: VersionVector, deleted: Bool, scanned: Int64, sequence: Int64 = 0) {
            self.path = path
            self.hash = hash
            self.stamp = stamp
            self.vector = vector
            self.deleted = deleted
            self.scanned = scanned
            self.sequence = sequence
        }
    }

    let database: SQLiteDatabase

    public let workspace: Workspace

    public let replica: String

    /// When on, writes go into one open transaction until `commitWrites()` (a sync commits
    /// once per batch of files instead of once per row); when off, each write commits alone.
    public var batchesWrites = false

    private var inTransaction = false

    private var statements: [String: SQLiteDatabase.Statement] = [:]

    /// Which paths keep their content as merge bases (relay.json's `sync.merge` over the defaults).
    public let mergeRules: MergeRules

    /// This index's identity: made at random when the index was created (or first migrated),
    /// so a replica whose index was deleted or replaced by another file is recognised.
    public let epoch: String

    /// How many bytes of the files a refresh reads (new or changed ones) it keeps for its caller
    /// (`keptContent`), beyond the merge bases: a sync about to copy those very files takes
    /// them from there instead of reading them again (a first sync read every file twice).
    /// 0, the default, keeps none.
    public var keepsContentUpTo = 0

    /// What the last refresh read and kept (`keepsContentUpTo`), by path: the file's stamp,
    /// hash and bytes as one stable read of it found them. The caller takes it.
    public var keptContent: [String: KeptContent] = [:]

    /// One file as a refresh read it.
    public struct KeptContent: Sendable {
        public var stamp: FileStamp
        public var hash: ContentHash
        public var bytes: [UInt8]
    }

    /// Runs once before the next `commitWrites` commits anything: a wait for what the rows to be
    /// committed may name (`LocalEndpoint`'s merge bases, stored on another thread).
    public var beforeCommittingWrites: (() throws -> Void)?

    /// How close to a scan a modification time may be before the stamp cannot be trusted
    /// (kernel timestamps move in ticks of up to 10 ms).
    static let racyWindowNanoseconds: Int64 = 20_000_000

    /// Opens (creating or migrating) the workspace's index.
    /// - throws: `SyncError` `.database` when SQLite fails, `WorkspaceError` for the replica id.
    public convenience init(workspace: Workspace) throws {
        let opened = try SyncError.wrappingDatabase { try Opened(workspace: workspace) }
        self.init(opened)
    }

    private init(_ opened: Opened) {
        workspace = opened.workspace
        mergeRules = opened.mergeRules
        replica = opened.replica
        database = opened.database
        epoch = opened.epoch
    }

    /// What opening the index reads, before the index exists.
    private struct Opened {
        let workspace: Workspace
        let mergeRules: MergeRules
        let replica: String
        let database: SQLiteDatabase
        let epoch: String

        init(workspace: Workspace) throws {
            self.workspace = workspace
            var timings = SyncTimings("index opening")
            self.mergeRules = MergeRules.loadOrDefaults(from: workspace)
            timings.mark("merge rules")
            self.replica = try workspace.replicaID()
            timings.mark("replica id")
            let database = try SQLiteDatabase(file: workspace.layout.state + "/sync.sqlite")
            timings.mark("database opened")
            // A sync's files are durable (WriteBatch) before their rows are written; an index that
            // lost its last commits to a power cut is what a sync killed before its index commit
            // leaves, which the next sync resumes (same content: vectors joined, nothing moves; a
            // peer's copy with a sequence gone back or a digest that differs is read whole). So the
            // checkpoint and its two fsyncs need not happen at every close (every sync that wrote
            // anything): SQLite does it as the log grows.
            try database.leaveLogAtClose()
            // Whoever opens the index reads most of it soon (a refresh reads every row): the
            // kernel starts reading it now, where on a machine that had dropped the pages each
            // lookup waited for the disk (193 reads of ~50 µs in one sync's server).
            for file in [database.file, database.file + "-wal"] { StateFile.readAhead(file) }
            // A read first: an index already in this format is opened without taking the write
            // lock (a sync may hold it for a while).
            let format = try database.prepare("PRAGMA user_version").rows([]) { $0.integer(0) }.first ?? 0
            if format < SyncIndex.format {
                try database.transaction { try SyncIndex.createOrMigrate(database) }
            }
            timings.mark("format read")
            self.database = database
            epoch = try database.prepare("SELECT value FROM meta WHERE key = 'epoch'").rows([]) { $0.text(0) }.first ?? ""
            timings.mark("epoch read")
        }
    }

    /// A prepared statement, compiled once per connection.
    func statement(_ sql: String) throws -> SQLiteDatabase.Statement {
        if let prepared = statements[sql] { return prepared }
        let prepared = try database.prepare(sql)
        statements[sql] = prepared
        return prepared
    }

    /// Checkpoints the index's log (`SQLiteDatabase.checkpoint`): call it where nobody waits —
    /// a server after its client said bye, a client over ssh while ssh connects. The log then
    /// starts this side's next sync nearly empty, and SQLite's own checkpoint (~5–10 ms with
    /// four fdatasyncs, inside every other change set's sync before) stays out of it.
    public func checkpoint() throws { try database.checkpoint() }

    /// `checkpoint()`, and the log truncated to nothing (`SQLiteDatabase.checkpointAndTruncate`):
    /// for a process about to end (a server after bye), so that the next one to open this
    /// index, often the next sync's server, does not first read the log this one left.
    @discardableResult
    public func checkpointAndTruncate() throws -> Bool { try database.checkpointAndTruncate() }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e9) }

    /// Runs `body` in one transaction (inside the open batch, when there is one).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if inTransaction { return try body() }
        inTransaction = true
        defer { inTransaction = false }
        return try database.transaction(body)
    }

    func willWrite() throws {
        guard batchesWrites, !inTransaction else { return }
        try database.execute("BEGIN IMMEDIATE")
        inTransaction = true
    }

    /// Drops the writes batched since the last commit, as a process killed before committing
    /// them would (what the next sync resumes from).
    public func abandonWrites() {
        guard batchesWrites, inTransaction else { return }
        try? database.execute("ROLLBACK")
        inTransaction = false
    }

    /// Commits the writes batched since the last commit.
    public func commitWrites() throws {
        guard batchesWrites, inTransaction else { return }
        if let settle = beforeCommittingWrites {
            beforeCommittingWrites = nil
            try settle()
        }
        try database.execute("COMMIT")
        inTransaction = false
    }
}
