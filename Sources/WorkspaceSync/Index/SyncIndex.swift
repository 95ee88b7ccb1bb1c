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

        public init(path: String, hash: String, stamp: FileStamp, vector: VersionVector, deleted: Bool, scanned: Int64) {
            self.path = path
            self.hash = hash
            self.stamp = stamp
            self.vector = vector
            self.deleted = deleted
            self.scanned = scanned
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
    private func statement(_ sql: String) throws -> SQLiteDatabase.Statement {
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
        self.mergeRules = MergeRules.loadOrDefaults(from: workspace)
        self.replica = try workspace.replicaID()
        database = try SQLiteDatabase(file: workspace.layout.state + "/sync.sqlite")
        try database.execute("""
            CREATE TABLE IF NOT EXISTS files (
                path TEXT PRIMARY KEY, hash TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
                mtime INTEGER NOT NULL, vector TEXT NOT NULL, deleted INTEGER NOT NULL, scanned INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS bases (peer TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, vector TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (peer, path));
            CREATE TABLE IF NOT EXISTS conflicts (
                id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, copy TEXT NOT NULL, time INTEGER NOT NULL,
                kept TEXT NOT NULL, copied TEXT NOT NULL);
            """)
        // Indexes made before merge bases carried their version vector.
        let baseColumns = try database.prepare("PRAGMA table_info(bases)").rows([]) { $0.text(1) }
        if !baseColumns.contains("vector") {
            try database.execute("ALTER TABLE bases ADD COLUMN vector TEXT NOT NULL DEFAULT ''")
        }
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e9) }

    // MARK: Reading

    public func entries() throws -> [String: Entry] {
        var result: [String: Entry] = [:]
        for entry in try database.prepare("SELECT path, hash, inode, size, mtime, vector, deleted, scanned FROM files").rows([], Self.entry) {
            result[entry.path] = entry
        }
        return result
    }

    public func entry(_ path: String) throws -> Entry? {
        try statement("SELECT path, hash, inode, size, mtime, vector, deleted, scanned FROM files WHERE path = ?1")
            .rows([.text(path)], Self.entry).first
    }

    private static func entry(_ row: SQLiteDatabase.Row) -> Entry {
        Entry(path: row.text(0), hash: row.text(1),
              stamp: FileStamp(inode: UInt64(bitPattern: row.integer(2)), size: Int(row.integer(3)), modifiedNanoseconds: row.integer(4)),
              vector: VersionVector(text: row.text(5)) ?? VersionVector(), deleted: row.integer(6) != 0, scanned: row.integer(7))
    }

    /// Every merge base recorded with `peer`, path → hash.
    public func bases(peer: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for (path, hash) in try statement("SELECT path, hash FROM bases WHERE peer = ?1").rows([.text(peer)], { ($0.text(0), $0.text(1)) }) {
            result[path] = hash
        }
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

    public func put(_ entry: Entry) throws {
        try willWrite()
        try statement("""
            INSERT INTO files (path, hash, inode, size, mtime, vector, deleted, scanned) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, inode = excluded.inode, size = excluded.size, mtime = excluded.mtime,
                vector = excluded.vector, deleted = excluded.deleted, scanned = excluded.scanned
            """).run([.text(entry.path), .text(entry.hash), .integer(Int64(bitPattern: entry.stamp.inode)), .integer(Int64(entry.stamp.size)),
                      .integer(entry.stamp.modifiedNanoseconds), .text(entry.vector.description), .integer(entry.deleted ? 1 : 0),
                      .integer(entry.scanned)])
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

    private func willWrite() throws {
        guard batchesWrites, !inTransaction else { return }
        try database.execute("BEGIN IMMEDIATE")
        inTransaction = true
    }

    /// Commits the writes batched since the last commit.
    public func commitWrites() throws {
        guard batchesWrites, inTransaction else { return }
        try database.execute("COMMIT")
        inTransaction = false
    }

    // MARK: Refresh

    /// Paths sync never carries: Relay's state and temporary files.
    public static func isExcluded(_ path: String) -> Bool {
        if path == ".relay" || path.hasPrefix(".relay/") { return true }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasPrefix(WorkspaceLayout.temporaryPrefix) || name.hasPrefix(".relay-cookie-")
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
    public func refresh(_ current: inout [String: Entry]) throws -> Int {
        let known = current
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        var seen = Set<String>()
        var changed = 0
        // New versions of mergeable files go to the store with one flush for all of them.
        let objects = WriteBatch(workspace, operation: "sync-index")
        var sawTemporary = false
        try transaction {
            for (path, stamp) in try workspace.fileStamps(sawTemporary: &sawTemporary) where !Self.isExcluded(path) {
                seen.insert(path)
                let old = known[path]
                if let old, !old.deleted, old.stamp == stamp,
                   stamp.modifiedNanoseconds + Self.racyWindowNanoseconds < old.scanned { continue }
                guard let (fresh, hash) = try workspace.fingerprint(ofFileAt: path) else { continue }
                var entry = old ?? Entry(path: path, hash: "", stamp: fresh, vector: VersionVector(), deleted: false, scanned: now)
                entry.stamp = fresh
                entry.scanned = now
                if old == nil || old!.deleted || old!.hash != hash.hex {
                    entry.hash = hash.hex
                    entry.deleted = false
                    entry.vector.increment(replica)
                    if mergeRules.kind(of: path) != .binary, let bytes = try? workspace.read(path), ContentHash(of: bytes) == hash {
                        try objects.storeObject(bytes)
                    }
                    changed += 1
                }
                try put(entry)
                current[path] = entry
            }
            for (path, entry) in known where !entry.deleted && !seen.contains(path) {
                var tombstone = entry
                tombstone.deleted = true
                tombstone.hash = ""
                tombstone.vector.increment(replica)
                tombstone.scanned = now
                try put(tombstone)
                current[path] = tombstone
                changed += 1
            }
            _ = try objects.commit()
        }
        // A writer killed mid-write (a sync's batch, an agent) left a temporary file; the next
        // writer of its path would remove it, but that path may never be written again. Those
        // whose lock is free now belong to nobody.
        if sawTemporary { _ = try? workspace.reclaimTemporaries() }
        return changed
    }
}
