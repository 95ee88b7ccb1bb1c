import RelaySQLite

/// A clean sync between two replicas, as each of them records it: a random id both sides
/// store, and both indexes' sequence numbers when that sync's refresh read them.
///
/// Every write of an index row takes a higher sequence number than any before it, so a row at
/// or below `mine` has not been written since that refresh. A clean sync (nothing skipped,
/// refused or left as a clash) ended with every path it looked at the same on both sides, and
/// a path it looked at and wrote nothing for was already so. So a path whose row is at or
/// below `mine` here and at or below `theirs` on the peer is still the same on both sides —
/// its bytes, vectors and merge base — and the next sync between the two need not look at it.
///
/// The id is what makes that safe against an index restored from a backup or copied from
/// elsewhere: a restored index holds an older mark (or none) than its peer does, the two ids
/// differ, and the sync looks at every path.
public struct SyncMark: Sendable, Codable, Equatable {
    public var id: String
    /// This replica's sequence at that sync's refresh.
    public var mine: Int64
    /// The peer's sequence at that sync's refresh.
    public var theirs: Int64

    public init(id: String, mine: Int64, theirs: Int64) {
        self.id = id
        self.mine = mine
        self.theirs = theirs
    }
}

extension SyncIndex {
    /// This replica's record of its last clean sync with `peer`, if any.
    public func syncMark(peer: String) throws -> SyncMark? {
        try statement("SELECT mark, mine, theirs FROM synced WHERE peer = ?1").rows([.text(peer)]) {
            SyncMark(id: $0.text(0), mine: $0.integer(1), theirs: $0.integer(2))
        }.first
    }

    /// Records a clean sync with `peer` (committed with the index's other writes).
    public func setSyncMark(_ mark: SyncMark, peer: String) throws {
        try willWrite()
        try statement("INSERT OR REPLACE INTO synced (peer, mark, mine, theirs) VALUES (?1, ?2, ?3, ?4)")
            .run([.text(peer), .text(mark.id), .integer(mark.mine), .integer(mark.theirs)])
    }

    /// A new mark's id: random, so two syncs never share one.
    static func newMarkID() -> String { newEpoch() }
}
