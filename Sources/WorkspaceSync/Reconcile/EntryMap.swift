/// A replica's index as the reconciler sees it, path → entry: either every entry, or — for a
/// peer over the protocol whose copy here checked out against the peer's digest — the rows the
/// peer sent plus the rest of this replica's copy of its index, read row by row when asked for.
///
/// After a clean sync the reconciler only looks at a handful of paths, so reading the whole
/// copy (100,000 rows took as long as the peer's own refresh) is wasted; `complete()` reads it
/// when something does need every entry (no usable mark, a conflict copy to name, `--full`).
public struct EntryMap: Sendable {
    private var entries: [String: SyncIndex.Entry]
    /// Where entries not in `entries` are read from; nil once `entries` is complete.
    private var rest: Rest?
    /// Paths taken out (`removeValue`) that `rest` must not bring back.
    private var removed: Set<String> = []
    /// Rows of the copy read from disk for this map, one by one or all at once.
    private let counter = Counter()

    final class Counter: @unchecked Sendable { var rows = 0 }

    /// The rest of a peer's index, in this replica's copy of it, with the copy's counts.
    final class Rest: @unchecked Sendable {
        let index: SyncIndex
        let peer: String
        /// Live rows in the copy, at refresh.
        let live: Int
        private var read: [String: SyncIndex.Entry?] = [:]
        let counter: Counter

        init(index: SyncIndex, peer: String, live: Int, counter: Counter) {
            self.index = index
            self.peer = peer
            self.live = live
            self.counter = counter
        }

        func entry(_ path: String) -> SyncIndex.Entry? {
            if let known = read[path] { return known }
            counter.rows += 1
            let found = try? index.peerEntry(peer, path: path)
            read[path] = .some(found)
            return found
        }
    }

    public init(_ entries: [String: SyncIndex.Entry]) {
        self.entries = entries
    }

    /// `changes` over the rest of `peer`'s copy in `index` (already brought up to date with them).
    init(changes: [String: SyncIndex.Entry], restIn index: SyncIndex, peer: String, live: Int) {
        entries = changes
        rest = Rest(index: index, peer: peer, live: live, counter: counter)
    }

    /// Whether every entry is in memory (iteration is only possible then).
    public var isComplete: Bool { rest == nil }

    /// Rows of the copy read from disk so far: those looked up one by one, and all of them
    /// if it was completed (0 for a map complete from the start).
    public var rowsReadFromCopy: Int { counter.rows }

    public subscript(path: String) -> SyncIndex.Entry? {
        get {
            if let entry = entries[path] { return entry }
            guard let rest, !removed.contains(path) else { return nil }
            return rest.entry(path)
        }
        set {
            entries[path] = newValue
            if newValue == nil { removed.insert(path) } else { removed.remove(path) }
        }
    }

    /// Room for `count` entries in memory (a first sync adds one per path it copies; growing
    /// the table a step at a time rehashed every entry each time).
    public mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    public mutating func removeValue(forKey path: String) {
        self[path] = nil
    }

    /// Reads the rest of the copy, so that every entry is in memory.
    public mutating func complete() throws {
        guard let rest else { return }
        var all = try rest.index.peerEntries(rest.peer)
        counter.rows += all.count
        for (path, entry) in entries { all[path] = entry }
        for path in removed { all.removeValue(forKey: path) }
        entries = all
        self.rest = nil
        removed = []
    }

    /// Every entry; only when complete.
    public var all: [String: SyncIndex.Entry] {
        precondition(rest == nil, "EntryMap.all on an incomplete map: complete() it first")
        return entries
    }

    /// The paths whose rows were written after `sequence` (by that replica's counter).
    public func paths(writtenAfter sequence: Int64) throws -> [String] {
        guard let rest else {
            return entries.values.indices.filter { entries.values[$0].sequence > sequence }.map { entries.keys[$0] }
        }
        var paths = Set(try rest.index.peerPaths(rest.peer, writtenAfter: sequence))
        for (path, entry) in entries where entry.sequence > sequence { paths.insert(path) }
        return paths.filter { !removed.contains($0) }
    }

    /// How many entries are live (not tombstones), as of the refresh for the part not in memory.
    public var liveCount: Int {
        guard let rest else {
            var live = 0
            for index in entries.values.indices where !entries.values[index].deleted { live += 1 }
            return live
        }
        // The changes are already in the copy's count; entries set since the refresh are not.
        return rest.live
    }
}
