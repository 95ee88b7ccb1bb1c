import Foundation
import WorkspaceCore

// Bringing the index up to date with the disk: a walk of the tree, the files whose stamp the
// index does not vouch for read and hashed, new versions kept as merge bases, tombstones.
extension SyncIndex {
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
        /// When it began, in nanoseconds since 1970 (a test ages a walk by moving this back).
        var began = Int64(Date().timeIntervalSince1970 * 1e9)
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
        keptContent = [:]
        var keepBudget = keepsContentUpTo
        try transaction {
            // The files are read and hashed a chunk at a time, on the process's pool of threads
            // (a first sync hashes every file: ~0.45 s at 10,000 on one thread), the next chunk
            // while this thread applies the one before and writes its rows; what they give is
            // applied here, in order.
            func begin(at start: Int) -> (chunk: ArraySlice<Int>, mergeable: [Bool], forCaller: [Bool], prints: PendingPrints) {
                let chunk = candidates[start..<min(start + Self.fingerprintChunk, candidates.count)]
                // A mergeable file's new version is kept as a merge base: read it once. So is
                // any file while the caller's budget lasts (`keepsContentUpTo`).
                let mergeable = chunk.map { mergeRules.kind(of: stamps[$0].path) != .binary }
                let forCaller = chunk.map { candidate in
                    let size = stamps[candidate].stamp.size
                    guard keepBudget >= size, size <= workspace.maximumArchivedSize else { return false }
                    keepBudget -= size
                    return true
                }
                let keeping = zip(mergeable, forCaller).map { $0 || $1 }
                return (chunk, mergeable, forCaller, PendingPrints(of: chunk.map { stamps[$0].path }, keeping: keeping, in: workspace))
            }
            var written = 0
            // The rows not written yet, written (in order: their sequences follow it).
            func writePending() throws {
                guard written < updates.count else { return }
                let sequences = try put(zip(updates[written...], restamps[written...]).map { ($0, $1) })
                for (offset, sequence) in sequences.enumerated() { updates[written + offset].sequence = sequence }
                written = updates.count
            }
            var next = candidates.isEmpty ? nil : begin(at: 0)
            // Leaving early (a failure) waits for the reads begun, which hold the workspace.
            defer { next?.prints.abandon() }
            while let this = next {
                next = this.chunk.endIndex < candidates.count ? begin(at: this.chunk.endIndex) : nil
                let prints = try this.prints.wait()
                for (offset, candidate) in this.chunk.enumerated() {
                    let (path, _) = stamps[candidate]
                    let position = current.index(forKey: path)
                    let old = position.map { current.values[$0] }
                    let mergeable = this.mergeable[offset]
                    guard let (fresh, hash, content) = prints[offset] else { continue }
                    var entry = old ?? Entry(path: path, hash: "", stamp: fresh, vector: VersionVector(), deleted: false, scanned: now)
                    entry.stamp = fresh
                    entry.scanned = now
                    let restamp = !(old == nil || old!.deleted || old!.hash != hash.hex)
                    if this.forCaller[offset], let content { keptContent[path] = KeptContent(stamp: fresh, hash: hash, bytes: content) }
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
                // This chunk's rows, while the pool reads the next one.
                try writePending()
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
            try writePending()
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

/// `Workspace.fingerprint` of each path (keeping the content of those marked in `keeping`), in
/// order, read on the process's pool of threads — in two halves at once when there are more
/// than 64 — while the caller goes on; `wait` gives them.
struct PendingPrints {
    typealias Print = (stamp: FileStamp, hash: ContentHash, content: [UInt8]?)
    private let halves: [BackgroundWork<[Print?]>]

    init(of paths: [String], keeping: [Bool], in workspace: Workspace) {
        @Sendable func read(_ range: Range<Int>) throws -> [Print?] {
            try range.map { try workspace.fingerprint(ofFileAt: paths[$0], keepingContentUpTo: keeping[$0] ? workspace.maximumArchivedSize : 0) }
        }
        let middle = paths.count > 64 ? paths.count / 2 : paths.count
        halves = [0..<middle, middle..<paths.count].filter { !$0.isEmpty }.map { range in BackgroundWork(onPool: true) { try read(range) } }
    }

    /// The fingerprints, in order, once both halves are read; the first failure, if any.
    func wait() throws -> [Print?] {
        var prints: [Print?] = []
        var failure: Error?
        for half in halves {
            do { prints += try half.wait() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
        return prints
    }

    /// Waits for the reads without looking at what they gave.
    func abandon() { for half in halves { _ = try? half.wait() } }
}
