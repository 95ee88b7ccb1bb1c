import Foundation
import RelaySQLite
import WorkspaceCore

/// The watcher's persistent state in `.relay/watch.sqlite`:
///
/// - `files`: the index, path → inode, size, mtime, SHA-256, as last seen. Startup and rescans
///   compare the disk with it (stat first, hash only what moved).
/// - `triggers`: the queue and ledger, one row per (path, content hash, rule), unique — so a
///   drop fires once, an identical re-drop or a repeated event fires nothing, and a pending
///   row survives any restart.
///
/// The index row and the trigger row of a change are written in one transaction: a crash
/// leaves either both (the change is handled) or neither (the next scan sees it again).
final class WatchStore {
    let database: SQLiteDatabase

    struct FileRecord: Equatable, Sendable {
        var stamp: FileStamp
        var hash: String
    }

    enum State: String, Sendable { case pending, running, done, failed }

    struct Trigger: Sendable, Equatable {
        var id: Int64
        var path: String
        var hash: String
        var rule: String
        var state: State
        var attempts: Int
    }

    init(workspace: Workspace) throws {
        database = try SQLiteDatabase(file: workspace.layout.state + "/watch.sqlite")
        try database.execute("""
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS files (
                path TEXT PRIMARY KEY, inode INTEGER NOT NULL, size INTEGER NOT NULL,
                mtime INTEGER NOT NULL, hash TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS triggers (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                path TEXT NOT NULL, hash TEXT NOT NULL, rule TEXT NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
                created INTEGER NOT NULL, started INTEGER, finished INTEGER,
                status INTEGER, note TEXT,
                UNIQUE (path, hash, rule));
            CREATE INDEX IF NOT EXISTS triggers_state ON triggers (state, id);
            """)
    }

    // MARK: Meta

    func meta(_ key: String) throws -> String? {
        try database.prepare("SELECT value FROM meta WHERE key = ?1").rows([.text(key)]) { $0.text(0) }.first
    }

    func setMeta(_ key: String, _ value: String) throws {
        try database.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .run([.text(key), .text(value)])
    }

    // MARK: Index

    func allFiles() throws -> [String: FileRecord] {
        var result: [String: FileRecord] = [:]
        for (path, record) in try database.prepare("SELECT path, inode, size, mtime, hash FROM files").rows([], { row in
            (row.text(0), FileRecord(stamp: FileStamp(inode: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)),
                                                      modifiedNanoseconds: row.integer(3)), hash: row.text(4)))
        }) {
            result[path] = record
        }
        return result
    }

    func file(_ path: String) throws -> FileRecord? {
        try database.prepare("SELECT inode, size, mtime, hash FROM files WHERE path = ?1").rows([.text(path)]) { row in
            FileRecord(stamp: FileStamp(inode: UInt64(bitPattern: row.integer(0)), size: Int(row.integer(1)), modifiedNanoseconds: row.integer(2)),
                       hash: row.text(3))
        }.first
    }

    /// A change to record: the file's new index row and the triggers it starts.
    struct Change: Sendable {
        var path: String
        var record: FileRecord
        var rules: [String]
    }

    /// Records changes and enqueues their triggers in one transaction. Returns the triggers
    /// that are new (a (path, hash, rule) seen before is not enqueued again).
    func record(_ changes: [Change], removed: [String] = [], removedFolders: [String] = []) throws -> [Trigger] {
        guard !changes.isEmpty || !removed.isEmpty || !removedFolders.isEmpty else { return [] }
        return try database.transaction {
            let upsert = try database.prepare("""
                INSERT INTO files (path, inode, size, mtime, hash) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT(path) DO UPDATE SET inode = excluded.inode, size = excluded.size, mtime = excluded.mtime, hash = excluded.hash
                """)
            let insert = try database.prepare("INSERT OR IGNORE INTO triggers (path, hash, rule, created) VALUES (?1, ?2, ?3, ?4)")
            let delete = try database.prepare("DELETE FROM files WHERE path = ?1")
            let deleteFolder = try database.prepare("DELETE FROM files WHERE path >= ?1 AND path < ?2")
            var fresh: [Trigger] = []
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for path in removed { try delete.run([.text(path)]) }
            for folder in removedFolders {
                // Every path below "folder/": the range ["folder/", "folder0") in byte order.
                try deleteFolder.run([.text(folder + "/"), .text(folder + "0")])
            }
            for change in changes {
                try upsert.run([.text(change.path), .integer(Int64(bitPattern: change.record.stamp.inode)),
                                .integer(Int64(change.record.stamp.size)), .integer(change.record.stamp.modifiedNanoseconds),
                                .text(change.record.hash)])
                for rule in change.rules {
                    try insert.run([.text(change.path), .text(change.record.hash), .text(rule), .integer(now)])
                    if database.changes == 1 {
                        fresh.append(Trigger(id: database.lastInsertID, path: change.path, hash: change.record.hash, rule: rule, state: .pending, attempts: 0))
                    }
                }
            }
            return fresh
        }
    }

    // MARK: Queue

    func triggers(in states: [State], limit: Int = 10_000) throws -> [Trigger] {
        let list = states.map { "'\($0.rawValue)'" }.joined(separator: ",")
        return try database.prepare("SELECT id, path, hash, rule, state, attempts FROM triggers WHERE state IN (\(list)) ORDER BY id LIMIT ?1")
            .rows([.integer(Int64(limit))]) { row in
                Trigger(id: row.integer(0), path: row.text(1), hash: row.text(2), rule: row.text(3),
                        state: State(rawValue: row.text(4)) ?? .pending, attempts: Int(row.integer(5)))
            }
    }

    func markRunning(_ id: Int64) throws {
        try database.prepare("UPDATE triggers SET state = 'running', attempts = attempts + 1, started = ?2 WHERE id = ?1")
            .run([.integer(id), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
    }

    func markFinished(_ id: Int64, state: State, status: Int32?, note: String?) throws {
        try database.prepare("UPDATE triggers SET state = ?2, finished = ?3, status = ?4, note = ?5 WHERE id = ?1")
            .run([.integer(id), .text(state.rawValue), .integer(Int64(Date().timeIntervalSince1970 * 1000)),
                  status.map { .integer(Int64($0)) } ?? .null, note.map { .text($0) } ?? .null])
    }

    func setNote(_ id: Int64, _ note: String) throws {
        try database.prepare("UPDATE triggers SET note = ?2 WHERE id = ?1").run([.integer(id), .text(note)])
    }

    /// Runs interrupted by a crash go back to pending: they run again.
    func requeueInterrupted() throws -> Int {
        try database.execute("UPDATE triggers SET state = 'pending' WHERE state = 'running'")
        return database.changes
    }

    func counts() throws -> [State: Int] {
        var result: [State: Int] = [:]
        for (state, count) in try database.prepare("SELECT state, COUNT(*) FROM triggers GROUP BY state").rows([], { ($0.text(0), Int($0.integer(1))) }) {
            if let state = State(rawValue: state) { result[state] = count }
        }
        return result
    }
}
