import Foundation
import RelaySQLite
import WorkspaceCore

/// The watcher's persistent state in `.relay/watch.sqlite`, and its one ledger of drops:
///
/// - `files`: the index, path → inode, size, mtime, SHA-256, as last seen, and when that was
///   (`checked`, wall-clock nanoseconds: a file changed within the clock's grain of being
///   checked may hide a change behind an unchanged stamp — "racy" — and is hashed again).
/// - `triggers`: the queue and ledger, one row per (path, content hash, rule), unique — so a
///   drop fires once, an identical re-drop or a repeated event fires nothing, and a pending
///   row survives any restart. A row goes pending → running → done / failed, or `superseded`
///   when its file changed before it ran (the newer content has a row of its own). A relay
///   rule's row also names its run (`run`), given before the run exists: the engine creates
///   that run, or resumes it when it exists — nothing else records which run a drop has.
///
/// A batch's index rows and trigger rows are written in one transaction: a crash leaves either
/// all of them (the changes are handled) or none (the next start's walk sees them again).
/// Statements are prepared once per connection.
final class WatchStore {
    let database: SQLiteDatabase

    struct FileRecord: Equatable, Sendable {
        var stamp: FileStamp
        /// The content's SHA-256 in hex; empty for a baseline file not hashed yet (`hashKnown`).
        var hash: String

        /// False for a row a first start recorded by its stamp alone: its content counts as
        /// unchanged while the file keeps that stamp.
        var hashKnown: Bool { !hash.isEmpty }
    }

    enum State: String, Sendable { case pending, running, done, failed, superseded }

    struct Trigger: Sendable, Equatable {
        var id: Int64
        var path: String
        var hash: String
        var rule: String
        var state: State
        var attempts: Int
        /// The relay run that answers this row (relay rules), named when it first started.
        var run: String? = nil
    }

    init(workspace: Workspace) throws {
        database = try SQLiteDatabase(file: workspace.layout.state + "/watch.sqlite")
        // SQLite's page cache (2 MB by default) stays allocated for the daemon's life once a
        // walk has filled it: a tenth of its memory. A walk reads the index in order, each
        // page once; a burst's lookups need the tree's inner pages, which 512 KiB holds for
        // 100,000 files; the rest is the system's page cache away.
        try database.execute("PRAGMA cache_size = -512")
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
        // Indexes made before `checked` existed: 0 there makes every row racy once (hashed again).
        let columns = try database.prepare("PRAGMA table_info(files)").rows { $0.text(1) }
        if !columns.contains("checked") {
            try database.execute("ALTER TABLE files ADD COLUMN checked INTEGER NOT NULL DEFAULT 0")
        }
        // Queues made before rows named their runs: NULL, and `adoptRuns` fills in the runs an
        // older Relay recorded beside the ledger (`.relay/runs/by-trigger/`).
        let triggerColumns = try database.prepare("PRAGMA table_info(triggers)").rows { $0.text(1) }
        if !triggerColumns.contains("run") {
            try database.execute("ALTER TABLE triggers ADD COLUMN run TEXT")
        }
    }

    private var statements: [String: SQLiteDatabase.Statement] = [:]

    /// The statement for `sql`, prepared at its first use on this connection.
    private func cached(_ sql: String) throws -> SQLiteDatabase.Statement {
        if let statement = statements[sql] { return statement }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }

    private static let upsertFile = """
        INSERT INTO files (path, inode, size, mtime, hash, checked) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT(path) DO UPDATE SET inode = excluded.inode, size = excluded.size, mtime = excluded.mtime,
            hash = excluded.hash, checked = excluded.checked
        """
    private static let markRunning = "UPDATE triggers SET state = 'running', attempts = attempts + 1, started = ?2, run = ?3 WHERE id = ?1"
    private static let insertTrigger = "INSERT OR IGNORE INTO triggers (path, hash, rule, created) VALUES (?1, ?2, ?3, ?4)"

    /// Linux stamps files from a coarse clock (a tick of 1–10 ms); 50 ms is well past it. (A
    /// file system with whole-second times would need more: FAT, some network mounts.)
    static let racyNanoseconds: Int64 = 50_000_000

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    static func nowNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    // MARK: Meta

    func meta(_ key: String) throws -> String? {
        try database.prepare("SELECT value FROM meta WHERE key = ?1").rows([.text(key)]) { $0.text(0) }.first
    }

    func deleteMeta(_ key: String) throws {
        try database.prepare("DELETE FROM meta WHERE key = ?1").run([.text(key)])
    }

    func setMeta(_ key: String, _ value: String) throws {
        try database.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .run([.text(key), .text(value)])
    }

    // MARK: Index

    /// Every index row in the byte order of its path (SQLite's BINARY collation), one at a
    /// time: the start-up walk joins it with the tree without loading either whole.
    /// `racy` says the row was checked within `racyNanoseconds` of the file's mtime: a write in
    /// the same tick of the file system's clock may have left the stamp as it was.
    /// The path is SQLite's bytes, valid only during the call: most rows are compared and
    /// passed over, and need no String.
    func forEachFile(_ body: (_ path: UnsafeBufferPointer<UInt8>, _ stamp: FileStamp, _ racy: Bool) throws -> Void) throws {
        try database.prepare("SELECT path, inode, size, mtime, checked FROM files ORDER BY path").forEachRow { row in
            let mtime = row.integer(3)
            let stamp = FileStamp(inode: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)), modifiedNanoseconds: mtime)
            let racy = row.integer(4) - mtime < Self.racyNanoseconds
            try row.withText(0) { path in try body(path, stamp, racy) }
        }
    }

    func file(_ path: String) throws -> FileRecord? {
        try cached("SELECT inode, size, mtime, hash FROM files WHERE path = ?1").rows([.text(path)]) { row in
            FileRecord(stamp: FileStamp(inode: UInt64(bitPattern: row.integer(0)), size: Int(row.integer(1)), modifiedNanoseconds: row.integer(2)),
                       hash: row.text(3))
        }.first
    }

    var fileCount: Int { (try? database.prepare("SELECT COUNT(*) FROM files").rows { Int($0.integer(0)) }.first) ?? 0 }

    /// A change to record: the file's new index row and the triggers it starts.
    struct Change: Sendable {
        var path: String
        var record: FileRecord
        var rules: [String]
        /// The hash the index had (nil: a new path), to tell new content from a touch.
        var previousHash: String? = nil
        /// The path this file had before it was moved here (a move that inotify could not pair:
        /// into a folder not watched yet). Its pending triggers move with it.
        var movedFrom: String? = nil
    }

    /// The index rows of `files` and of every file under `folders`, before they are removed: a
    /// file that reappears elsewhere in the workspace with the same stamp was moved, not dropped.
    func rows(files: [String], folders: [String]) throws -> [(path: String, record: FileRecord)] {
        var result: [(path: String, record: FileRecord)] = []
        let one = try cached("SELECT path, inode, size, mtime, hash FROM files WHERE path = ?1")
        let below = try cached("SELECT path, inode, size, mtime, hash FROM files WHERE path >= ?1 AND path < ?2")
        func row(_ row: SQLiteDatabase.Row) -> (path: String, record: FileRecord) {
            (row.text(0), FileRecord(stamp: FileStamp(inode: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)), modifiedNanoseconds: row.integer(3)),
                                     hash: row.text(4)))
        }
        for path in files { result += try one.rows([.text(path)], row) }
        for folder in folders { result += try below.rows([.text(folder + "/"), .text(folder + "0")], row) }
        return result
    }

    /// Records a first start's files by their stamps alone, with no hash and no trigger (they
    /// are the baseline), in one transaction; `hashBaseline` fills the hashes in later.
    func recordBaseline(_ files: [(path: String, stamp: FileStamp)]) throws {
        guard !files.isEmpty else { return }
        let upsert = try cached(Self.upsertFile)
        try database.transaction {
            let checked = Self.nowNanoseconds()
            for file in files {
                try upsert.run([.text(file.path), .integer(Int64(bitPattern: file.stamp.inode)), .integer(Int64(file.stamp.size)),
                                .integer(file.stamp.modifiedNanoseconds), .text(""), .integer(checked)])
            }
        }
    }

    /// Baseline rows not hashed yet, in path order after `after`, at most `limit` (read along
    /// the primary key: the background pass, moving its cursor, reads the table once).
    func unhashed(after: String, limit: Int) throws -> [(path: String, stamp: FileStamp)] {
        try cached("SELECT path, inode, size, mtime FROM files WHERE hash = '' AND path > ?1 ORDER BY path LIMIT ?2")
            .rows([.text(after), .integer(Int64(limit))]) { row in
                (row.text(0), FileStamp(inode: UInt64(bitPattern: row.integer(1)), size: Int(row.integer(2)), modifiedNanoseconds: row.integer(3)))
            }
    }

    /// Fills in the hashes of baseline rows, each only while its row still has the stamp the
    /// file had when it was read (a file that changed since is left to its event), in one
    /// transaction.
    func setBaselineHashes(_ hashes: [(path: String, stamp: FileStamp, hash: String)]) throws {
        guard !hashes.isEmpty else { return }
        let update = try cached("UPDATE files SET hash = ?5, checked = ?6 WHERE path = ?1 AND inode = ?2 AND size = ?3 AND mtime = ?4 AND hash = ''")
        try database.transaction {
            let checked = Self.nowNanoseconds()
            for item in hashes {
                try update.run([.text(item.path), .integer(Int64(bitPattern: item.stamp.inode)), .integer(Int64(item.stamp.size)),
                                .integer(item.stamp.modifiedNanoseconds), .text(item.hash), .integer(checked)])
            }
        }
    }

    /// Test hook (`WatchService.Options.dieInBatchOf`): the next `record` kills the process
    /// with SIGKILL after writing its rows, before its COMMIT.
    var dieInsideTheNextTransaction = false
    /// Test hook (`WatchService.Options.dieStartingABatch`): the next `record` that marks a
    /// row `running` kills the process with SIGKILL before its COMMIT.
    var dieBeforeCommittingAStart = false

    /// Records changes and enqueues their triggers in one transaction. Returns the triggers
    /// that are new (a (path, hash, rule) seen before is not enqueued again).
    ///
    /// `startNow`, when no older row is pending, is asked about each new row in turn: a row it
    /// gives a `Start` for is marked `running` (with its run) in this same transaction, so the
    /// run can start at once after the commit — one commit between settle and spawn, not two
    /// (the batch's, then the dispatch's). Such rows come back with state `.running`. A crash
    /// before the commit leaves neither the row nor its start (the next walk queues the change
    /// again); after it, the row is `running` and goes back to `pending` at the next start, as
    /// any row a crash cut short.
    func record(_ changes: [Change], removed: [String] = [], removedFolders: [String] = [],
                startNow: ((Trigger) -> Start?)? = nil) throws -> [Trigger] {
        guard !changes.isEmpty || !removed.isEmpty || !removedFolders.isEmpty else { return [] }
        let upsert = try cached(Self.upsertFile), insert = try cached(Self.insertTrigger)
        let delete = try cached("DELETE FROM files WHERE path = ?1"), deleteBelow = try cached("DELETE FROM files WHERE path >= ?1 AND path < ?2")
        return try database.transaction {
            var fresh: [Trigger] = []
            let now = Self.nowMilliseconds(), checked = Self.nowNanoseconds()
            // Runs start oldest first: with an older row waiting, the new ones queue behind it
            // and the dispatch decides (read through the (state, id) index: one page).
            var startNow = startNow
            if startNow != nil && changes.contains(where: { !$0.rules.isEmpty }),
               try cached("SELECT 1 FROM triggers WHERE state = 'pending' LIMIT 1").rows([], { _ in true }).first == true {
                startNow = nil
            }
            for path in removed { try delete.run([.text(path)]) }
            for folder in removedFolders {
                // Every path below "folder/": the range ["folder/", "folder0") in byte order.
                try deleteBelow.run([.text(folder + "/"), .text(folder + "0")])
            }
            for change in changes {
                if let from = change.movedFrom {
                    try cached("UPDATE OR IGNORE triggers SET path = ?2 WHERE path = ?1 AND state = 'pending'").run([.text(from), .text(change.path)])
                }
                try upsert.run([.text(change.path), .integer(Int64(bitPattern: change.record.stamp.inode)),
                                .integer(Int64(change.record.stamp.size)), .integer(change.record.stamp.modifiedNanoseconds),
                                .text(change.record.hash), .integer(checked)])
                for rule in change.rules {
                    try insert.run([.text(change.path), .text(change.record.hash), .text(rule), .integer(now)])
                    if database.changes == 1 {
                        var trigger = Trigger(id: database.lastInsertID, path: change.path, hash: change.record.hash, rule: rule, state: .pending, attempts: 0)
                        if let start = startNow?(trigger) {
                            try cached(Self.markRunning).run([.integer(trigger.id), .integer(now), start.run.map { .text($0) } ?? .null])
                            trigger.state = .running
                            trigger.attempts = 1
                            trigger.run = start.run
                        }
                        fresh.append(trigger)
                    }
                }
            }
            if dieInsideTheNextTransaction || (dieBeforeCommittingAStart && fresh.contains { $0.state == .running }) { kill(getpid(), SIGKILL) }
            return fresh
        }
    }

    /// Renames a file's or a folder's index rows inside the workspace, in one transaction: the
    /// content keeps its identity and starts nothing, except the rules that match the new path
    /// and did not match the old one (`rules(path)` gives the names). Pending triggers move with
    /// their file. Returns the new triggers, and whether anything was indexed under `from`.
    func rename(from: String, to: String, folder: Bool, rules: (String) -> [String],
                hash: (String) -> String? = { _ in nil }) throws -> (fresh: [Trigger], known: Bool) {
        try database.transaction {
            var rows: [(path: String, hash: String)] = []
            if folder {
                rows = try database.prepare("SELECT path, hash FROM files WHERE path >= ?1 AND path < ?2")
                    .rows([.text(from + "/"), .text(from + "0")]) { ($0.text(0), $0.text(1)) }
                // Whatever was indexed under the target folder is replaced by what moved there.
                try database.prepare("DELETE FROM files WHERE path >= ?1 AND path < ?2").run([.text(to + "/"), .text(to + "0")])
            } else {
                rows = try database.prepare("SELECT path, hash FROM files WHERE path = ?1").rows([.text(from)]) { ($0.text(0), $0.text(1)) }
            }
            guard !rows.isEmpty else { return ([], false) }
            let move = try database.prepare("UPDATE OR REPLACE files SET path = ?2 WHERE path = ?1")
            let movePending = try database.prepare("UPDATE OR IGNORE triggers SET path = ?2 WHERE path = ?1 AND state = 'pending'")
            let insert = try cached(Self.insertTrigger)
            let now = Self.nowMilliseconds()
            var fresh: [Trigger] = []
            for row in rows {
                let target = to + row.path.dropFirst(from.count)
                try move.run([.text(row.path), .text(target)])
                try movePending.run([.text(row.path), .text(target)])
                let before = Set(rules(row.path))
                let added = rules(target).filter { !before.contains($0) }
                // A baseline row not hashed yet is keyed by the bytes it holds now.
                guard !added.isEmpty, let key = row.hash.isEmpty ? hash(target) : row.hash else { continue }
                for rule in added {
                    try insert.run([.text(target), .text(key), .text(rule), .integer(now)])
                    if database.changes == 1 {
                        fresh.append(Trigger(id: database.lastInsertID, path: target, hash: key, rule: rule, state: .pending, attempts: 0))
                    }
                }
            }
            return (fresh, true)
        }
    }

    // MARK: Queue

    func triggers(in states: [State], limit: Int = 10_000) throws -> [Trigger] {
        let list = states.map { "'\($0.rawValue)'" }.joined(separator: ",")
        return try database.prepare("SELECT id, path, hash, rule, state, attempts, run FROM triggers WHERE state IN (\(list)) ORDER BY id LIMIT ?1")
            .rows([.integer(Int64(limit))]) { row in
                Trigger(id: row.integer(0), path: row.text(1), hash: row.text(2), rule: row.text(3),
                        state: State(rawValue: row.text(4)) ?? .pending, attempts: Int(row.integer(5)), run: row.isNull(6) ? nil : row.text(6))
            }
    }

    /// The rows running now (oldest first) and the `limit` that ended last (newest first), for
    /// `relay status`: it names their runs. Rows that ended are found through the
    /// `(state, id)` index, not by sorting the whole ledger.
    func runningAndRecent(limit: Int) throws -> [Trigger] {
        func read(_ sql: String, _ values: [SQLiteDatabase.Statement.Value]) throws -> [Trigger] {
            try database.prepare(sql).rows(values) { row in
                Trigger(id: row.integer(0), path: row.text(1), hash: row.text(2), rule: row.text(3),
                        state: State(rawValue: row.text(4)) ?? .pending, attempts: Int(row.integer(5)), run: row.isNull(6) ? nil : row.text(6))
            }
        }
        let columns = "SELECT id, path, hash, rule, state, attempts, run FROM triggers"
        var rows = try read(columns + " WHERE state = 'running' ORDER BY id", [])
        var ended: [Trigger] = []
        for state in [State.done, .failed, .superseded] {
            ended += try read(columns + " WHERE state = ?1 ORDER BY id DESC LIMIT ?2", [.text(state.rawValue), .integer(Int64(limit))])
        }
        rows += ended.sorted { $0.id > $1.id }.prefix(limit)
        return rows
    }

    /// The runs that rows not yet done name: a pending row's run (a crash put it back, and the
    /// next start resumes that run) or a running row's (whose run may have finished just
    /// before a kill, the row not marked done yet). Retention must keep them: a pruned one
    /// would be made again under the same name, its model calls repeated.
    func runsAwaited() throws -> Set<String> {
        Set(try database.prepare("SELECT DISTINCT run FROM triggers WHERE state IN ('pending', 'running') AND run IS NOT NULL").rows([]) { $0.text(0) })
    }

    /// The oldest pending rows, leaving out rules that cannot start more now: what a dispatch
    /// may start, without reading the whole queue (20,000 rows read at every start made a
    /// burst quadratic).
    func pending(excluding rules: Set<String>, limit: Int) throws -> [Trigger] {
        var sql = "SELECT id, path, hash, rule, attempts, run FROM triggers WHERE state = 'pending'"
        var values: [SQLiteDatabase.Statement.Value] = [.integer(Int64(limit))]
        if !rules.isEmpty {
            sql += " AND rule NOT IN (" + (0..<rules.count).map { "?\($0 + 2)" }.joined(separator: ",") + ")"
            values += rules.sorted().map { .text($0) }
        }
        return try cached(sql + " ORDER BY id LIMIT ?1").rows(values) { row in
            Trigger(id: row.integer(0), path: row.text(1), hash: row.text(2), rule: row.text(3), state: .pending, attempts: Int(row.integer(4)),
                    run: row.isNull(5) ? nil : row.text(5))
        }
    }

    /// Queues (path, `hash`, rule) in place of `trigger`, whose file changed before it ran and
    /// whose newer content started nothing of its own. Returns whether a row was added.
    func enqueueSuccessor(of trigger: Trigger, hash: String) throws -> Bool {
        try cached(Self.insertTrigger).run([.text(trigger.path), .text(hash), .text(trigger.rule), .integer(Self.nowMilliseconds())])
        return database.changes == 1
    }

    /// Pending rows of rules that are not in `rules` fail, with a note. Returns how many.
    func failPending(notIn rules: Set<String>) throws -> Int {
        var sql = "UPDATE triggers SET state = 'failed', note = 'no trigger of this name in relay.json any more' WHERE state = 'pending'"
        if !rules.isEmpty { sql += " AND rule NOT IN (" + (0..<rules.count).map { "?\($0 + 1)" }.joined(separator: ",") + ")" }
        try database.prepare(sql).run(rules.sorted().map { .text($0) })
        return database.changes
    }

    /// Pending rows of relay rules, in a daemon without the relay engine, say why they wait.
    func noteWaiting(relayRules: [(rule: String, relay: String)]) throws {
        for (rule, relay) in relayRules {
            try cached("UPDATE triggers SET note = ?2 WHERE state = 'pending' AND rule = ?1 AND note IS NULL").run([
                .text(rule), .text("waiting: relay '\(relay)' needs the relay engine, and this daemon was started without one (an embedding of WatchService without a RelayLauncher)"),
            ])
        }
    }

    /// How a run ended, to record.
    struct Outcome: Sendable {
        var id: Int64
        var state: State
        var status: Int32?
        var note: String?
    }

    /// A row about to start, and the relay run that answers it (nil for a command).
    struct Start: Sendable {
        var id: Int64
        var run: String?
    }

    /// Records runs that ended and runs about to start in one transaction: one commit per
    /// dispatch, not two per run. A run is recorded `running` before it starts, so a crash
    /// during it runs it again at the next start (its attempts count it); a relay run's id is
    /// in the row before the run exists, so the next start resumes that run instead of making
    /// another.
    func commitRuns(finished: [Outcome], starting: [Start]) throws {
        guard !finished.isEmpty || !starting.isEmpty else { return }
        try database.transaction {
            let now = Self.nowMilliseconds()
            let finish = try cached("UPDATE triggers SET state = ?2, finished = ?3, status = ?4, note = ?5 WHERE id = ?1")
            for outcome in finished {
                try finish.run([.integer(outcome.id), .text(outcome.state.rawValue), .integer(now),
                                outcome.status.map { .integer(Int64($0)) } ?? .null, outcome.note.map { .text($0) } ?? .null])
            }
            let start = try cached(Self.markRunning)
            for row in starting { try start.run([.integer(row.id), .integer(now), row.run.map { .text($0) } ?? .null]) }
        }
    }

    /// Names the runs an older Relay started for rows (recorded beside the ledger then), and
    /// notes in `meta` that the queue has been looked through, in one transaction.
    func adoptRuns(_ runs: [(id: Int64, run: String)], noting key: String) throws {
        try database.transaction {
            let adopt = try cached("UPDATE triggers SET run = ?2 WHERE id = ?1 AND run IS NULL")
            for item in runs { try adopt.run([.integer(item.id), .text(item.run)]) }
            try setMeta(key, Timestamp.iso8601())
        }
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
