import Foundation
import RelaySQLite
import WorkspaceCore

/// A version both sides of a sync had of a path: its content hash and version vector.
public struct MergeBase: Sendable, Hashable, Codable {
    public var hash: String
    public var vector: VersionVector
    public init(hash: String, vector: VersionVector) {
        self.hash = hash
        self.vector = vector
    }
}

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

    /// A prepared statement, compiled once per connection.
    func statement(_ sql: String) throws -> SQLiteDatabase.Statement {
        if let prepared = statements[sql] { return prepared }
        let prepared = try database.prepare(sql)
        statements[sql] = prepared
        return prepared
    }

    /// How close to a scan a modification time may be before the stamp cannot be trusted
    /// (kernel timestamps move in ticks of up to 10 ms).
    static let racyWindowNanoseconds: Int64 = 20_000_000

    /// Which paths keep their content as merge bases (relay.json's `sync.merge` over the defaults).
    public let mergeRules: MergeRules

    public init(workspace: Workspace) throws {
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
        // Whoever opens the index reads most of it soon (a refresh reads every row).
        database.readAhead()
        // A read first: an index already in this format is opened without taking the write
        // lock (a sync may hold it for a while).
        let format = try database.prepare("PRAGMA user_version").rows([]) { $0.integer(0) }.first ?? 0
        if format < Self.format {
            try database.transaction { try Self.createOrMigrate(database) }
        }
        timings.mark("format read")
        self.database = database
        epoch = try database.prepare("SELECT value FROM meta WHERE key = 'epoch'").rows([]) { $0.text(0) }.first ?? ""
        timings.mark("epoch read")
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

    /// The index format this code writes (`PRAGMA user_version`): 1 has sequences and the
    /// epoch, 2 merge bases with their version vectors, 3 the marks of clean syncs (`synced`),
    /// 4 each peer copy's digest and live count, and its rows indexed by sequence, 5 each row's
    /// part of the digest and their sum (`storedDigest`), 6 every version each path has held
    /// (`held`, kept by triggers on `files`; see `heldVersions`).
    static let format: Int64 = 6

    /// The tables, and what an index made before sequences lacks: the `seq` column (old rows
    /// get 0, below anything a peer can have seen), the counter and the epoch; and before
    /// format 2, the merge bases' `vector` column (old bases get none and serve only as the
    /// pair's fallback). Runs in one transaction, so two processes opening an old index migrate
    /// it once.
    private static func createOrMigrate(_ database: SQLiteDatabase) throws {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS files (
                path TEXT PRIMARY KEY, hash TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
                mtime INTEGER NOT NULL, vector TEXT NOT NULL, deleted INTEGER NOT NULL, scanned INTEGER NOT NULL,
                seq INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE IF NOT EXISTS bases (peer TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, vector TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (peer, path));
            CREATE TABLE IF NOT EXISTS conflicts (
                id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, copy TEXT NOT NULL, time INTEGER NOT NULL,
                kept TEXT NOT NULL, copied TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
            CREATE TABLE IF NOT EXISTS peers (peer TEXT PRIMARY KEY, epoch TEXT NOT NULL, sequence INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS peer_entries (
                peer TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
                mtime INTEGER NOT NULL, vector TEXT NOT NULL, deleted INTEGER NOT NULL, scanned INTEGER NOT NULL,
                seq INTEGER NOT NULL, PRIMARY KEY (peer, path));
            CREATE TABLE IF NOT EXISTS synced (peer TEXT PRIMARY KEY, mark TEXT NOT NULL, mine INTEGER NOT NULL, theirs INTEGER NOT NULL);
            """)
        let columns = try database.prepare("PRAGMA table_info(files)").rows([]) { $0.text(1) }
        if !columns.contains("seq") {
            try database.execute("ALTER TABLE files ADD COLUMN seq INTEGER NOT NULL DEFAULT 0")
        }
        // Merge bases made before they carried their version vector.
        let baseColumns = try database.prepare("PRAGMA table_info(bases)").rows([]) { $0.text(1) }
        if !baseColumns.contains("vector") {
            try database.execute("ALTER TABLE bases ADD COLUMN vector TEXT NOT NULL DEFAULT ''")
        }
        try database.execute("CREATE INDEX IF NOT EXISTS files_seq ON files (seq)")
        // The copy of a peer's index: its digest and live count (NULL for copies made before;
        // the next update counts them once), its rows by sequence.
        let peerColumns = try database.prepare("PRAGMA table_info(peers)").rows([]) { $0.text(1) }
        for column in ["digest", "count", "live"] where !peerColumns.contains(column) {
            try database.execute("ALTER TABLE peers ADD COLUMN \(column) INTEGER")
        }
        try database.execute("CREATE INDEX IF NOT EXISTS peer_entries_seq ON peer_entries (peer, seq)")
        try database.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', ?1)").run([.text(Self.newEpoch())])
        try database.execute("INSERT OR IGNORE INTO meta (key, value) SELECT 'sequence', COALESCE(MAX(seq), 0) FROM files")
        // Each row's part of the digest, and their sum, kept up to date by `put` from here on;
        // computed for every row by any migration (the rows' sequences may just have changed).
        if !columns.contains("digest") {
            try database.execute("ALTER TABLE files ADD COLUMN digest INTEGER NOT NULL DEFAULT 0")
        }
        do {
            var reader = EntryReader()
            let rows = try database.prepare("SELECT \(SyncIndex.columns) FROM files").rows([], { reader.entry($0) })
            let update = try database.prepare("UPDATE files SET digest = ?1 WHERE path = ?2")
            var sum: UInt64 = 0
            for entry in rows {
                let digest = rowDigest(entry)
                sum = sum &+ digest
                try update.run([.integer(Int64(bitPattern: digest)), .text(entry.path)])
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('digest', ?1)").run([.integer(Int64(bitPattern: sum))])
        }
        // After the columns above: the triggers name `seq`.
        try createHeldVersions(database)
        try database.execute("PRAGMA user_version = \(format)")
    }

    static func newEpoch() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }

    /// This index's identity: made at random when the index was created (or first migrated),
    /// so a replica whose index was deleted or replaced by another file is recognised.
    public let epoch: String

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e9) }

    // MARK: Reading

    public func entries() throws -> [String: Entry] {
        var reader = EntryReader()
        // Sized once (growing it row by row rehashed every path ~17 times at 100,000 files), and
        // filled as the rows come, without an array of them first.
        let count = try statement("SELECT COUNT(*) FROM files").rows([]) { $0.integer(0) }.first ?? 0
        var result = [String: Entry](minimumCapacity: Int(count))
        try database.prepare("SELECT \(Self.columns) FROM files").forEachRow([]) { row in
            let entry = reader.entry(row)
            result[entry.path] = entry
        }
        return result
    }

    public func entry(_ path: String) throws -> Entry? {
        try statement("SELECT \(Self.columns) FROM files WHERE path = ?1")
            .rows([.text(path)], Self.entry).first
    }

    /// The stamp of `path`'s live row when it vouches for the file holding `hash`: the scan
    /// that read it came after the racy window of its modification time (the rule a refresh
    /// trusts a stamp by). A write batch then checks the file by its stamp, without reading it.
    public func vouchedStamp(_ path: String, hash: String) throws -> FileStamp? {
        guard let entry = try entry(path), !entry.deleted, entry.hash == hash,
              entry.stamp.modifiedNanoseconds + Self.racyWindowNanoseconds < entry.scanned else { return nil }
        return entry.stamp
    }

    static let columns = "path, hash, inode, size, mtime, vector, deleted, scanned, seq"

    static func entry(_ row: SQLiteDatabase.Row) -> Entry {
        Entry(path: row.text(0), hash: row.text(1),
              stamp: FileStamp(inode: UInt64(bitPattern: row.integer(2)), size: Int(row.integer(3)), modifiedNanoseconds: row.integer(4)),
              vector: VersionVector(text: row.text(5)) ?? VersionVector(), deleted: row.integer(6) != 0, scanned: row.integer(7),
              sequence: row.integer(8))
    }

    /// Reads rows into entries, parsing each distinct vector text once: most rows of an index
    /// share a handful of vectors, and the entries then share their storage too.
    struct EntryReader {
        private var vectors: [String: VersionVector] = [:]
        /// The last row's vector and its text: runs of rows share one, found without a String.
        private var last: (text: [UInt8], vector: VersionVector)?

        mutating func entry(_ row: SQLiteDatabase.Row) -> Entry {
            let vector: VersionVector
            if let last, row.withText(5, { $0.elementsEqual(last.text) }) { vector = last.vector } else {
                let text = row.text(5)
                if let known = vectors[text] { vector = known } else {
                    vector = VersionVector(text: text) ?? VersionVector()
                    vectors[text] = vector
                }
                last = (Array(text.utf8), vector)
            }
            return Entry(path: row.text(0), hash: row.text(1),
                         stamp: FileStamp(inode: UInt64(bitPattern: row.integer(2)), size: Int(row.integer(3)), modifiedNanoseconds: row.integer(4)),
                         vector: vector, deleted: row.integer(6) != 0, scanned: row.integer(7), sequence: row.integer(8))
        }
    }

    static func values(_ entry: Entry) -> [SQLiteDatabase.Statement.Value] {
        [.text(entry.path), .text(entry.hash), .integer(Int64(bitPattern: entry.stamp.inode)), .integer(Int64(entry.stamp.size)),
         .integer(entry.stamp.modifiedNanoseconds), .text(entry.vector.description), .integer(entry.deleted ? 1 : 0),
         .integer(entry.scanned), .integer(entry.sequence)]
    }

    /// The sequence number of the latest write to this index.
    public func sequence() throws -> Int64 {
        try statement("SELECT value FROM meta WHERE key = 'sequence'").rows([]) { $0.integer(0) }.first ?? 0
    }

    /// Every merge base recorded with `peer`, path → hash.
    public func bases(peer: String) throws -> [String: String] {
        let rows = try statement("SELECT path, hash FROM bases WHERE peer = ?1").rows([.text(peer)], { ($0.text(0), $0.text(1)) })
        var result = [String: String](minimumCapacity: rows.count)
        for (path, hash) in rows { result[path] = hash }
        return result
    }

    /// Every merge base of `path` recorded with any peer whose version vector is known: the
    /// candidates for the latest version two replicas have in common.
    public func mergeBases(path: String) throws -> [MergeBase] {
        try statement("SELECT hash, vector FROM bases WHERE path = ?1 AND vector != ''").rows([.text(path)]) { row in
            VersionVector(text: row.text(1)).map { MergeBase(hash: row.text(0), vector: $0) }
        }.compactMap { $0 }
    }

    public func base(peer: String, path: String) throws -> String? {
        try statement("SELECT hash FROM bases WHERE peer = ?1 AND path = ?2").rows([.text(peer), .text(path)]) { $0.text(0) }.first
    }

    // MARK: Writing

    /// Writes the row with the next sequence number, which it returns (the entry as stored
    /// has it). The counter and the row change in one transaction.
    ///
    /// - parameter restamp: the write only records a new stamp and scan time of content the
    ///   row already has (a file touched, or re-hashed because it was racy): when the stored
    ///   row has the same hash, vector and tombstone, it keeps its sequence number, so peers
    ///   are not sent a row in which nothing they reconcile on moved.
    @discardableResult
    public func put(_ entry: Entry, restamp: Bool = false) throws -> Int64 {
        try put([(entry, restamp)])[0]
    }

    /// `put` of many rows in one transaction, in order: the sequences are taken as one block
    /// and the digest's sum written once, so a row costs two statements instead of five (a
    /// first sync writes a row per file on both sides, a change set's flush one per copy).
    /// Returns each row's sequence as stored.
    public func put(_ rows: [(entry: Entry, restamp: Bool)]) throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        try willWrite()
        return try transaction {
            guard let last = try statement("UPDATE meta SET value = value + ?1 WHERE key = 'sequence' RETURNING value")
                .rows([.integer(Int64(rows.count))], { $0.integer(0) }).first else {
                throw SyncError(message: "\(database.file): the sequence counter is missing")
            }
            var next = last - Int64(rows.count) + 1
            // The sum of the rows' digests follows: minus the row replaced, plus the new one (a
            // restamp that keeps the sequence keeps the row's digest too).
            var sum = try storedDigestSum()
            let sumBefore = sum
            var sequences: [Int64] = []
            sequences.reserveCapacity(rows.count)
            let oldDigest = try statement("SELECT digest FROM files WHERE path = ?1")
            let insert = try statement("""
                INSERT INTO files (path, hash, inode, size, mtime, vector, deleted, scanned, seq, digest)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?11)
                ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, inode = excluded.inode, size = excluded.size, mtime = excluded.mtime,
                    vector = excluded.vector, deleted = excluded.deleted, scanned = excluded.scanned,
                    seq = CASE WHEN ?10 AND files.hash = excluded.hash AND files.vector = excluded.vector AND files.deleted = excluded.deleted
                               THEN files.seq ELSE excluded.seq END,
                    digest = CASE WHEN ?10 AND files.hash = excluded.hash AND files.vector = excluded.vector AND files.deleted = excluded.deleted
                               THEN files.digest ELSE excluded.digest END
                RETURNING seq, digest
                """)
            for (entry, restamp) in rows {
                var stored = entry
                stored.sequence = next
                next += 1
                let old = try oldDigest.rows([.text(entry.path)], { $0.integer(0) }).first
                let written = try insert.rows(Self.values(stored) + [.integer(restamp ? 1 : 0), .integer(Int64(bitPattern: Self.rowDigest(stored)))],
                                              { ($0.integer(0), $0.integer(1)) }).first
                guard let written else {
                    sequences.append(stored.sequence)
                    continue
                }
                if written.1 != old { sum = sum &- UInt64(bitPattern: old ?? 0) &+ UInt64(bitPattern: written.1) }
                sequences.append(written.0)
            }
            if sum != sumBefore {
                try statement("UPDATE meta SET value = ?1 WHERE key = 'digest'").run([.integer(Int64(bitPattern: sum))])
            }
            return sequences
        }
    }

    /// The sum of the rows' digests, kept by `put`.
    func storedDigestSum() throws -> UInt64 {
        UInt64(bitPattern: try statement("SELECT value FROM meta WHERE key = 'digest'").rows([]) { $0.integer(0) }.first ?? 0)
    }

    /// `digest` of the whole index, from the sum `put` keeps and the row count: what a refresh
    /// answers without reading every row.
    public func storedDigest() throws -> String {
        let count = try statement("SELECT COUNT(*) FROM files").rows([]) { $0.integer(0) }.first ?? 0
        return Self.digestText(sum: try storedDigestSum(), count: UInt64(count))
    }

    public func setBase(peer: String, path: String, hash: String, vector: VersionVector) throws {
        try willWrite()
        try statement("""
            INSERT INTO bases (peer, path, hash, vector) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(peer, path) DO UPDATE SET hash = excluded.hash, vector = excluded.vector
            """).run([.text(peer), .text(path), .text(hash), .text(vector.description)])
    }

    public func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        try willWrite()
        try database.prepare("INSERT INTO conflicts (path, copy, time, kept, copied) VALUES (?1, ?2, ?3, ?4, ?5)")
            .run([.text(path), .text(copy), .integer(Int64(Date().timeIntervalSince1970)), .text(kept), .text(copied)])
    }

    /// Conflicts whose copy is still in the workspace (deleting the copy resolves one).
    public func openConflicts() throws -> [(path: String, copy: String, time: Date)] {
        try database.prepare("SELECT path, copy, time FROM conflicts ORDER BY id").rows([]) { row in
            (row.text(0), row.text(1), Date(timeIntervalSince1970: Double(row.integer(2))))
        }.filter { workspace.stamp(ofFileAt: $0.1) != nil }
    }

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

    /// Runs once before the next `commitWrites` commits anything: a wait for what the rows to be
    /// committed may name (`LocalEndpoint`'s merge bases, stored on another thread).
    public var beforeCommittingWrites: (() throws -> Void)?

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

    // MARK: Refresh

    /// Paths sync never carries: Relay's state and temporary files.
    public static func isExcluded(_ path: String) -> Bool {
        // On the UTF-8 bytes: this runs for every path of every refresh, and String's own
        // search goes character by character.
        let bytes = path.utf8
        if bytes.starts(with: ".relay".utf8) && (bytes.count == 6 || bytes.dropFirst(6).first == UInt8(ascii: "/")) { return true }
        let name = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes[bytes.index(after: $0)...] } ?? bytes[...]
        // Both prefixes start with ".": most names are out at the first byte.
        guard name.first == UInt8(ascii: ".") else { return false }
        return name.starts(with: WorkspaceLayout.temporaryPrefix.utf8) || name.starts(with: ".relay-cookie-".utf8)
    }

    /// Brings the index up to date with the disk: a file whose stamp moved (or was racy) is
    /// hashed; new content bumps this replica's counter in its vector and, for mergeable kinds,
    /// is kept in the object store as a future merge base; a vanished file becomes a tombstone.
    /// Returns how many paths changed.
    @discardableResult
    public func refresh() throws -> Int {
        var entries = try self.entries()
        return try refresh(&entries)
    }

    /// `refresh()` on entries already read (`entries()`), which it brings up to date: the sync
    /// reads its index once.
    @discardableResult
    public func refresh(_ current: inout [String: Entry]) throws -> Int {
        try refresh(&current, walk: Walk(workspace, inBackground: false))
    }

    /// The walk of a refresh, on a thread of its own when `inBackground` (the caller reads the
    /// index meanwhile), with the time it began: the scan time recorded with each stamp must not
    /// be later than the stat that read it, or a file rewritten within the same timestamp tick
    /// just after its stat would look unchanged next time (the racy-mtime rule).
    struct Walk {
        let began = Int64(Date().timeIntervalSince1970 * 1e9)
        /// The walk itself, which the refresh's own thread joins (`StampWalk.help`) once it has
        /// read the index: the walk of a large tree takes longer than the read.
        let tree: StampWalk
        let listing: BackgroundWork<(stamps: [(path: String, stamp: FileStamp)], sawTemporary: Bool)>
        /// How long a walk begun ahead of its refresh stays usable: a file changed after its
        /// stat is seen by the next sync (and this one's writes check every file before they
        /// replace it), but a walk is meant to be the refresh's own.
        static let freshFor: Int64 = 2_000_000_000
        var isFresh: Bool { Int64(Date().timeIntervalSince1970 * 1e9) - began < Self.freshFor }

        init(_ workspace: Workspace, inBackground: Bool) {
            let tree = StampWalk(workspace)
            self.tree = tree
            listing = BackgroundWork(inBackground: inBackground) {
                tree.help()
                return try tree.result()
            }
        }
    }

    func refresh(_ current: inout [String: Entry], walk: Walk, bases: WriteBatch? = nil) throws -> Int {
        let now = walk.began
        // Live rows whose file the walk found: when that is all of them, no file vanished and
        // the walk's paths need no set to find the ones that did. The rows are read in place
        // (`values[index]` is borrowed): copying an entry out retains its strings, which at
        // 100,000 files was a tenth of a sync.
        var liveKnown = 0
        for index in current.values.indices where !current.values[index].deleted { liveKnown += 1 }
        var changed = 0
        // What changed is applied after the loops, so `current` is not copied on first write.
        var updates: [Entry] = []
        var restamps: [Bool] = []
        // New versions of mergeable files go to the store with one flush for all of them: the
        // caller's (a sync's, whose flush comes later and off this critical path), or our own.
        let objects = bases ?? WriteBatch(workspace, operation: "sync-index")
        var timings = SyncTimings("refresh \(workspace.root)")
        walk.tree.help()
        let (stamps, sawTemporary) = try walk.listing.wait()
        timings.mark("walk (after reading the index, helping)")
        // The files whose stamp the index does not vouch for (new, changed, racy), found in two
        // halves at once on a large tree: each look-up is a few cache misses (the dictionary's
        // bucket, the path's bytes), ~5.5 ms at 17,600 files on one thread (~4 ms in two), while the server's
        // client waits for this refresh and the other core has nothing to do.
        let (candidates, liveSeen) = try Self.unvouched(stamps, in: current)
        timings.mark("\(candidates.count) of \(stamps.count) to look at")
        try transaction {
            // The files are read and hashed a chunk at a time, on two threads when there are
            // many (a first sync hashes every file: ~0.45 s at 10,000 on one thread); what they
            // give is applied here, in order.
            var start = 0
            while start < candidates.count {
                let chunk = candidates[start..<min(start + Self.fingerprintChunk, candidates.count)]
                start = chunk.endIndex
                // A mergeable file's new version is kept as a merge base: read it once.
                let mergeable = chunk.map { mergeRules.kind(of: stamps[$0].path) != .binary }
                let prints = try Self.fingerprints(of: chunk.map { stamps[$0].path }, keeping: mergeable, in: workspace)
                for (offset, candidate) in chunk.enumerated() {
                    let (path, stamp) = stamps[candidate]
                    let position = current.index(forKey: path)
                    let old = position.map { current.values[$0] }
                    let mergeable = mergeable[offset]
                    guard let (fresh, hash, content) = prints[offset] else { continue }
                    var entry = old ?? Entry(path: path, hash: "", stamp: fresh, vector: VersionVector(), deleted: false, scanned: now)
                    entry.stamp = fresh
                    entry.scanned = now
                    let restamp = !(old == nil || old!.deleted || old!.hash != hash.hex)
                    if !restamp {
                        entry.hash = hash.hex
                        entry.deleted = false
                        entry.vector.increment(replica)
                        if mergeable, let content { try objects.storeObject(content, hash: hash) }
                        changed += 1
                    }
                    updates.append(entry)
                    restamps.append(restamp)
                }
            }
            if liveSeen < liveKnown {
                let seen = Set(stamps.lazy.map(\.path).filter { !Self.isExcluded($0) })
                for index in current.values.indices where !current.values[index].deleted && !seen.contains(current.values[index].path) {
                    var tombstone = current.values[index]
                    tombstone.deleted = true
                    tombstone.hash = ""
                    tombstone.vector.increment(replica)
                    tombstone.scanned = now
                    updates.append(tombstone)
                    restamps.append(false)
                    changed += 1
                }
            }
            // The rows are written together: a first sync's refresh writes one per file.
            let sequences = try put(zip(updates, restamps).map { ($0, $1) })
            for (index, sequence) in sequences.enumerated() { updates[index].sequence = sequence }
            for entry in updates { current[entry.path] = entry }
            // The listing is freed elsewhere: the caller is waiting for this refresh.
            ReleaseLater.release(stamps)
            timings.mark("compare")
            if bases == nil { _ = try objects.commit() }
        }
        timings.mark("commit")
        // A writer killed mid-write (a sync's batch, an agent) left a temporary file; the next
        // writer of its path would remove it, but that path may never be written again. Those
        // whose lock is free now belong to nobody.
        if sawTemporary { _ = try? workspace.reclaimTemporaries() }
        return changed
    }

    /// How many files a refresh reads and hashes before it applies what it found.
    static let fingerprintChunk = 512

    /// `Workspace.fingerprint` of each path (keeping the content of those marked in `keeping`),
    /// in order; the second half on another thread when there are more than 64 (the reads
    /// and hashes are independent; each thread opens its own files).
    static func fingerprints(of paths: [String], keeping: [Bool], in workspace: Workspace) throws
        -> [(stamp: FileStamp, hash: ContentHash, content: [UInt8]?)?] {
        func read(_ range: Range<Int>) throws -> [(stamp: FileStamp, hash: ContentHash, content: [UInt8]?)?] {
            try range.map { try workspace.fingerprint(ofFileAt: paths[$0], keepingContentUpTo: keeping[$0] ? workspace.maximumArchivedSize : 0) }
        }
        guard paths.count > 64 else { return try read(paths.indices) }
        let middle = paths.count / 2
        let second = BackgroundWork { try read(middle..<paths.count) }
        let first: [(stamp: FileStamp, hash: ContentHash, content: [UInt8]?)?]
        do { first = try read(0..<middle) } catch {
            _ = try? second.wait()
            throw error
        }
        return first + (try second.wait())
    }

    /// The positions in `stamps` of the files to look at — not excluded, and new, deleted in
    /// the index, or with a stamp the index does not vouch for (another one, or racy) — in
    /// order, and how many live rows of `current` the walk found. Over 8,192 files the two
    /// halves are scanned at once (the dictionary is only read).
    static func unvouched(_ stamps: [(path: String, stamp: FileStamp)], in current: [String: Entry]) throws -> (positions: [Int], liveSeen: Int) {
        func scan(_ range: Range<Int>) -> (positions: [Int], liveSeen: Int) {
            var positions: [Int] = []
            var liveSeen = 0
            for index in range {
                let (path, stamp) = stamps[index]
                if isExcluded(path) { continue }
                if let position = current.index(forKey: path), !current.values[position].deleted {
                    liveSeen += 1
                    if current.values[position].stamp == stamp,
                       stamp.modifiedNanoseconds + racyWindowNanoseconds < current.values[position].scanned { continue }
                }
                positions.append(index)
            }
            return (positions, liveSeen)
        }
        guard stamps.count > 8_192 else { return scan(stamps.indices) }
        let middle = stamps.count / 2
        let second = BackgroundWork { scan(middle..<stamps.count) }
        let first = scan(0..<middle)
        let rest = try second.wait()
        return (first.positions + rest.positions, first.liveSeen + rest.liveSeen)
    }
}
