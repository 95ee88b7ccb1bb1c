import RelaySQLite
import WorkspaceCore

/// "Index changes since the last sequence seen": the serving side's half (`refreshed`,
/// `changes(since:)`, `digest`) and the client's copy of each peer's index (`peer_entries`,
/// with the peer's epoch and the highest sequence seen in `peers`).
extension SyncIndex {
    /// What a peer needs to bring its copy of this index up to date.
    public struct Snapshot: Sendable {
        public var entries: [String: Entry]
        /// The counter when the entries were read: every later write has a higher number.
        public var sequence: Int64
        /// `digest` of the entries, from the sum `put` keeps (`storedDigest`).
        public var digest: String
    }

    /// `refresh()` and a read of the whole index and of the counter in one transaction, so the
    /// sequence is exactly the one of the entries returned (a write by another process lands
    /// either before, and is in them, or after, with a higher number).
    ///
    /// - parameter bases: where the new versions of mergeable files go to be stored (a sync's
    ///   own batch, which its flush commits before any merge base row names them); nil: stored
    ///   and flushed before this returns.
    public func refreshed(storingBasesIn bases: WriteBatch? = nil) throws -> Snapshot {
        try refreshed(storingBasesIn: bases, walk: nil)
    }

    /// `refreshed`, with a walk of this workspace begun earlier (`LocalEndpoint(walkAhead:)`)
    /// when there is one; one begun more than `Walk.freshFor` ago is not used.
    func refreshed(storingBasesIn bases: WriteBatch?, walk early: Walk?) throws -> Snapshot {
        try transaction {
            var timings = SyncTimings("refreshed \(workspace.root)")
            // The tree is walked while the index is read: two independent reads, one of the
            // disk's folders and one of SQLite.
            let walk = early.flatMap { $0.isFresh ? $0 : nil } ?? Walk(workspace, inBackground: true)
            var entries: [String: Entry]
            do { entries = try self.entries() } catch {
                _ = try? walk.listing.wait()
                throw error
            }
            timings.mark("read-index")
            try refresh(&entries, walk: walk, bases: bases)
            return Snapshot(entries: entries, sequence: try sequence(), digest: try storedDigest())
        }
    }

    /// Rows written after `since`, and the counter, read in one snapshot of the database.
    public func changes(since: Int64) throws -> (entries: [Entry], sequence: Int64) {
        try transaction {
            let rows = try statement("SELECT \(Self.columns) FROM files WHERE seq > ?1").rows([.integer(since)], Self.entry)
            return (rows, try sequence())
        }
    }

    /// An order-independent checksum of what a peer reconciles on (path, hash, vector,
    /// tombstone, sequence): the client compares the copy it rebuilt from its cache and the
    /// changes with the server's, and reads the index whole when they differ. A sum of
    /// 64-bit FNV-1a hashes, one per row: a check of consistency, not of security.
    public static func digest<S: Sequence>(_ entries: S) -> String where S.Element == Entry {
        var sum: UInt64 = 0
        var count: UInt64 = 0
        for entry in entries {
            sum = sum &+ rowDigest(entry)
            count += 1
        }
        return digestText(sum: sum, count: count)
    }

    /// `digest` of a whole index, its rows read in place.
    public static func digest(_ entries: [String: Entry]) -> String {
        var sum: UInt64 = 0
        for index in entries.values.indices { sum = sum &+ rowDigest(entries.values[index]) }
        return digestText(sum: sum, count: UInt64(entries.count))
    }

    static func digestText(sum: UInt64, count: UInt64) -> String { String(count) + "-" + String(sum, radix: 16) }

    /// One row's part of the digest: FNV-1a of what a peer reconciles on. A sum of these is
    /// the digest, so a copy's digest follows its changes (minus the old row, plus the new).
    static func rowDigest(_ entry: Entry) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for byte in entry.path.utf8 { mix(byte) }
        mix(0)
        for byte in entry.hash.utf8 { mix(byte) }
        mix(0)
        // The vector's counters in any order (no sorted text to build): a sum of their hashes.
        var counters: UInt64 = 0
        for (replica, count) in entry.vector.counters {
            var counter: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in replica.utf8 { counter = (counter ^ UInt64(byte)) &* 0x100_0000_01b3 }
            counter = (counter ^ count) &* 0x100_0000_01b3
            counters = counters &+ counter
        }
        for _ in 0..<8 { mix(UInt8(truncatingIfNeeded: counters)); counters >>= 8 }
        mix(entry.deleted ? 1 : 2)
        var sequence = UInt64(bitPattern: entry.sequence)
        for _ in 0..<8 { mix(UInt8(truncatingIfNeeded: sequence)); sequence >>= 8 }
        return hash
    }

    // MARK: The copy of a peer's index

    /// The peer's epoch and the highest sequence of its index this replica has a copy up to;
    /// nil when there is no copy.
    public func peerState(_ peer: String) throws -> (epoch: String, sequence: Int64)? {
        try statement("SELECT epoch, sequence FROM peers WHERE peer = ?1").rows([.text(peer)]) { ($0.text(0), $0.integer(1)) }.first
    }

    /// The copy of the peer's index, as of `peerState(peer).sequence`.
    public func peerEntries(_ peer: String) throws -> [String: Entry] {
        var reader = EntryReader()
        let rows = try statement("SELECT \(Self.columns) FROM peer_entries WHERE peer = ?1").rows([.text(peer)], { reader.entry($0) })
        var result = [String: Entry](minimumCapacity: rows.count)
        for entry in rows { result[entry.path] = entry }
        return result
    }

    /// Brings the copy of `peer`'s index to `sequence` of `epoch`: `entries` replace the
    /// whole copy when `whole`, or else update the rows they name. One transaction. The copy's
    /// digest and live count (`peers`) follow every change, so a sync can check the copy against
    /// the peer's digest without reading it (`peerSummary`).
    public func updatePeer(_ peer: String, epoch: String, sequence: Int64, entries: [Entry], whole: Bool) throws {
        try willWrite()
        try transaction {
            var sum: UInt64 = 0, count: Int64 = 0, live: Int64 = 0
            if whole {
                try statement("DELETE FROM peer_entries WHERE peer = ?1").run([.text(peer)])
            } else if let summary = try peerSummary(peer) {
                (sum, count, live) = (summary.digestSum, summary.count, summary.live)
            } else {
                // A copy made before the digest was kept: counted once, from its rows.
                for entry in try peerEntries(peer).values {
                    sum = sum &+ Self.rowDigest(entry)
                    count += 1
                    if !entry.deleted { live += 1 }
                }
            }
            let insert = try statement("""
                INSERT OR REPLACE INTO peer_entries (peer, path, hash, inode, size, mtime, vector, deleted, scanned, seq)
                VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
            for entry in entries {
                if !whole, let old = try peerEntry(peer, path: entry.path) {
                    sum = sum &- Self.rowDigest(old)
                    count -= 1
                    if !old.deleted { live -= 1 }
                }
                try insert.run(Self.values(entry) + [.text(peer)])
                sum = sum &+ Self.rowDigest(entry)
                count += 1
                if !entry.deleted { live += 1 }
            }
            try statement("INSERT OR REPLACE INTO peers (peer, epoch, sequence, digest, count, live) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                .run([.text(peer), .text(epoch), .integer(sequence), .integer(Int64(bitPattern: sum)), .integer(count), .integer(live)])
        }
    }

    /// What this replica knows of its copy of `peer`'s index without reading its rows: the
    /// digest's sum and row count, and how many rows are live. Nil without a copy (or one made
    /// before these were kept).
    public func peerSummary(_ peer: String) throws -> (digestSum: UInt64, count: Int64, live: Int64)? {
        try statement("SELECT digest, count, live FROM peers WHERE peer = ?1 AND digest IS NOT NULL").rows([.text(peer)]) {
            (UInt64(bitPattern: $0.integer(0)), $0.integer(1), $0.integer(2))
        }.first
    }

    /// One row of the copy of `peer`'s index.
    public func peerEntry(_ peer: String, path: String) throws -> Entry? {
        try statement("SELECT \(Self.columns) FROM peer_entries WHERE peer = ?1 AND path = ?2").rows([.text(peer), .text(path)], Self.entry).first
    }

    /// The paths of the copy of `peer`'s index whose rows the peer wrote after `sequence`.
    public func peerPaths(_ peer: String, writtenAfter sequence: Int64) throws -> [String] {
        try statement("SELECT path FROM peer_entries WHERE peer = ?1 AND seq > ?2").rows([.text(peer), .integer(sequence)]) { $0.text(0) }
    }

    /// Drops the copy of `peer`'s index: the next sync reads it whole.
    public func forgetPeer(_ peer: String) throws {
        try willWrite()
        try transaction {
            try statement("DELETE FROM peer_entries WHERE peer = ?1").run([.text(peer)])
            try statement("DELETE FROM peers WHERE peer = ?1").run([.text(peer)])
        }
    }
}
