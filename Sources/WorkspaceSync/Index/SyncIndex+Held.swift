import RelaySQLite

/// A version of a path this replica has held: its content hash, and the sequence of the
/// latest write of the path's row that had it (the larger, the more recently it was the
/// file's content here).
public struct HeldVersion: Sendable, Hashable, Codable {
    public var hash: String
    public var sequence: Int64
    public init(hash: String, sequence: Int64) {
        self.hash = hash
        self.sequence = sequence
    }
}

/// Every version each path has held on this replica (`held`, index format 6): what two
/// replicas that never synced, or whose records of each other are lost, still have in common
/// by content (`Reconciler`'s merge base by content). Kept by triggers on `files`, so no
/// write of a row can forget it: every live row written — a refresh that found new content,
/// a copy or merge a sync installed, a join of vectors — records its hash with its sequence.
extension SyncIndex {
    /// The `held` table and its triggers; on an index made before them, filled from what it
    /// already knows: the live rows and the merge bases (both sides had a base).
    static func createHeldVersions(_ database: SQLiteDatabase) throws {
        let existed = try database.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'held'")
            .rows([]) { $0.integer(0) }.first ?? 0 > 0
        // (A conflict clause of the statement that fires a trigger overrides the trigger's own,
        // so the triggers delete and insert rather than INSERT OR REPLACE.)
        try database.execute("""
            CREATE TABLE IF NOT EXISTS held (path TEXT NOT NULL, hash TEXT NOT NULL, seq INTEGER NOT NULL,
                PRIMARY KEY (path, hash)) WITHOUT ROWID;
            CREATE TRIGGER IF NOT EXISTS files_held_insert AFTER INSERT ON files WHEN NEW.deleted = 0
            BEGIN
                DELETE FROM held WHERE path = NEW.path AND hash = NEW.hash;
                INSERT INTO held (path, hash, seq) VALUES (NEW.path, NEW.hash, NEW.seq);
            END;
            CREATE TRIGGER IF NOT EXISTS files_held_update AFTER UPDATE ON files
                WHEN NEW.deleted = 0 AND (OLD.deleted != 0 OR OLD.hash != NEW.hash OR OLD.seq != NEW.seq)
            BEGIN
                DELETE FROM held WHERE path = NEW.path AND hash = NEW.hash;
                INSERT INTO held (path, hash, seq) VALUES (NEW.path, NEW.hash, NEW.seq);
            END;
            """)
        guard !existed else { return }
        try database.execute("""
            INSERT OR IGNORE INTO held (path, hash, seq) SELECT path, hash, seq FROM files WHERE deleted = 0 AND hash != '';
            INSERT OR IGNORE INTO held (path, hash, seq) SELECT path, hash, 0 FROM bases WHERE hash != '';
            """)
    }

    /// The versions `path` has held on this replica, most recent first.
    public func heldVersions(path: String) throws -> [HeldVersion] {
        try statement("SELECT hash, seq FROM held WHERE path = ?1 ORDER BY seq DESC, hash")
            .rows([.text(path)]) { HeldVersion(hash: $0.text(0), sequence: $0.integer(1)) }
    }

    /// Records that this replica held `hash` at `path` without writing its row (what a
    /// workspace copied with `.relay/` had when it became a replica of its own).
    public func recordHeld(path: String, hash: String) throws {
        try willWrite()
        try statement("INSERT OR IGNORE INTO held (path, hash, seq) VALUES (?1, ?2, ?3)")
            .run([.text(path), .text(hash), .integer(try sequence())])
    }
}

extension SyncIndex {
    /// Makes this index, copied with its workspace from replica `previous`, the index of the
    /// replica of its own the workspace just became (`relay init --new-replica`, after
    /// `Workspace.assignNewReplicaID`; this index must be opened after that). What described the
    /// original's place among its peers goes — the marks of clean syncs, the copies of peers'
    /// indexes, the epoch (a new one) — and what is true of the copy stays: every row, vector,
    /// merge base and held version. The tree is refreshed under the new id, and each file's
    /// bytes are recorded as this replica's merge base with `previous` (with the row's vector
    /// when the copied row already had those bytes, so the original's later versions descend
    /// from it; without one otherwise): the first sync between the two merges from the bytes
    /// they shared when the copy was made. Returns how many files it recorded.
    @discardableResult
    public func becomeCopy(of previous: String?) throws -> Int {
        try SyncError.wrappingDatabase { try becomeCopyWrapped(of: previous) }
    }

    private func becomeCopyWrapped(of previous: String?) throws -> Int {
        try transaction {
            try statement("UPDATE meta SET value = ?1 WHERE key = 'epoch'").run([.text(Self.newEpoch())])
            try database.execute("DELETE FROM synced; DELETE FROM peer_entries; DELETE FROM peers;")
        }
        let snapshot = try refreshed()
        guard let previous, previous != replica else { return 0 }
        return try transaction {
            var recorded = 0
            for entry in snapshot.entries.values where !entry.deleted && !Self.isExcluded(entry.path) {
                let unchangedSinceCopy = entry.vector[replica] == 0
                try setBase(peer: previous, path: entry.path, hash: entry.hash, vector: unchangedSinceCopy ? entry.vector : VersionVector())
                recorded += 1
            }
            return recorded
        }
    }
}
