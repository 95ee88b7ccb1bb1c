import RelaySQLite

// The index's tables and format: made on first open, migrated from older formats in one
// transaction; the epoch that names this index's history.
extension SyncIndex {
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
    static func createOrMigrate(_ database: SQLiteDatabase) throws {
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
}
