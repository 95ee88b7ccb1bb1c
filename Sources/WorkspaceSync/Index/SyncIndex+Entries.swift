import RelaySQLite
import WorkspaceCore

// The rows of `files`, read (whole, one path, a stamp the index vouches for) and written
// (`put`: each write takes the next sequence number and keeps the digest's sum).
extension SyncIndex {
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
                throw SyncError(.corruptIndex, "\(database.file): the sequence counter is missing", path: database.file)
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
}
