import Foundation
import Logging
import WorkspaceCore

/// The start-up walk, the rescan, and the baseline's hashes filled in behind them.
extension WatchService {
    /// How a walk treats what it finds.
    enum ScanMode {
        /// A first start: the files there are the baseline. They are recorded by their stamps
        /// only — nothing to compare them with, so nothing is read — and hashed later, in the
        /// background (`hashBaselineChunk`).
        case baseline
        /// A restart or a rescan: what changed while nobody watched is handled like any
        /// settled change (hashed, compared, triggered).
        case reconcile
    }

    /// Walks the tree beside the index, both in path order (a merge join: neither is held in
    /// memory), and handles every file whose stamp differs from its row or whose row is racy,
    /// every new file, and every indexed file that is gone. Returns how many files there are
    /// and how many were handled (hashed, or in a baseline recorded).
    ///
    /// With `watching` (the start-up walk, before the reader thread runs), each folder is
    /// watched as the walk enters it, before it is listed.
    @discardableResult
    func scan(_ mode: ScanMode, watching reader: InotifyReader? = nil) throws -> (files: Int, handled: Int) {
        guard let store else { return (0, 0) }
        var walk = SortedStampWalk(workspace, willList: reader.map { reader in { try reader.watchFolder($0) } })
        defer { walk.close() }
        // Cookies wait until the whole walk is handled: removing one says everything before it
        // was, and the walk meets them in path order, not in the order they were written.
        var cookies: [String] = []
        // Syncthing's conflict copies the walk passes, whether or not they changed: reported
        // to whoever folds them (one walk of the tree at start, not one each).
        var copies: [String] = []
        func advance() throws -> (path: String, stamp: FileStamp)? {
            while let next = try walk.next() {
                if IgnoreRules.isCookie(next.path) { cookies.append(next.path); continue }
                if IgnoreRules.isIgnored(next.path) { continue }
                if Self.mayBeSyncthingCopy(next.path) && ConflictNames.isSyncthingCopy(next.path) { copies.append(next.path) }
                return next
            }
            return nil
        }
        var candidates: [(path: String, stamp: FileStamp)] = []
        var files = 0, handled = 0
        // Once the walk no longer reads the index (past its last row), a baseline's rows are
        // written on another thread while the walk lists on: the walk is system calls, and
        // SQLite's work then overlaps them. Never while the index is being read: the
        // connection is one thread's at a time.
        var writer: BaselineWriter?
        defer { writer?.drain() }
        func flush() throws {
            handled += candidates.count
            switch mode {
            case .baseline:
                if let writer { try writer.write(candidates) } else { try store.recordBaseline(candidates) }
            case .reconcile: try process(candidates.map(\.path), triggering: true)
            }
            candidates.removeAll(keepingCapacity: true)
        }
        // A baseline's rows are only stamps: ten batches to a transaction (a first start of
        // 100,000 files is ten commits, not a hundred).
        let limit = mode == .baseline ? options.batchLimit * 10 : options.batchLimit
        func found(_ file: (path: String, stamp: FileStamp)) throws {
            candidates.append(file)
            if candidates.count >= limit { try flush() }
        }
        // What else runs at start (resuming runs, the HTTP server) maps code back while the
        // walk runs: let go of it every so many files, so it does not pile up on the walk's
        // heap into the start's peak (a read of /proc/self/smaps, under a millisecond).
        var sinceRelease = 0
        func walked() {
            files += 1
            sinceRelease += 1
            if sinceRelease == Self.filesBetweenReleases {
                sinceRelease = 0
                ExecutablePages.release()
            }
        }
        var next = try advance()
        var gone: [String] = []
        try store.forEachFile { path, stamp, racy in
            var order = 1
            while let file = next {
                order = Self.compare(file.path, path)
                guard order < 0 else { break }
                walked()
                next = try advance()
                try found(file)
            }
            if let file = next, order == 0 {
                walked()
                next = try advance()
                if file.stamp != stamp || racy { try found(file) }
            } else {
                gone.append(String(decoding: path, as: UTF8.self))
            }
        }
        // What is left is new (all of it on a first start): handled in batches as it is found.
        if mode == .baseline { writer = BaselineWriter(store: store) }
        while let file = next {
            walked()
            next = try advance()
            try found(file)
        }
        try flush()
        try writer?.finish()
        if !gone.isEmpty { try record([], removed: gone.map { .removed(path: $0, folder: false) }) }
        try process(cookies, triggering: true)
        // A first start's files are all new to the index, as changes recorded are (a peer sync
        // follows); they are not listed one by one: the copies, if any, are.
        if !copies.isEmpty || (mode == .baseline && handled > 0) { options.changesRecorded?(copies) }
        return (files, handled)
    }

    /// How many files the walk passes between two `ExecutablePages.release()`.
    static let filesBetweenReleases = 10_000

    /// The byte order of a path and an index row's path (SQLite's BINARY collation): <0, 0, >0.
    static func compare(_ path: String, _ row: UnsafeBufferPointer<UInt8>) -> Int {
        var path = path
        return path.withUTF8 { bytes in
            let common = min(bytes.count, row.count)
            if common > 0 {
                let order = memcmp(bytes.baseAddress!, row.baseAddress!, common)
                if order != 0 { return Int(order) }
            }
            return bytes.count - row.count
        }
    }

    /// Whether the path's bytes hold ".sync-conflict-" (the exact check, `ConflictNames`, is
    /// slower and runs only for these).
    static func mayBeSyncthingCopy(_ path: String) -> Bool {
        let marker: StaticString = ".sync-conflict-"
        let needle = UnsafeBufferPointer(start: marker.utf8Start, count: marker.utf8CodeUnitCount)
        let utf8 = path.utf8
        guard utf8.count >= needle.count else { return false }
        var start = utf8.startIndex
        while let dot = utf8[start...].firstIndex(of: UInt8(ascii: ".")) {
            if utf8[dot...].starts(with: needle) { return true }
            start = utf8.index(after: dot)
        }
        return false
    }

    /// Hashes the next few baseline files the first start recorded by stamp only, off the
    /// path that reads events: called by the loop when nothing else is due. A file whose stamp
    /// moved since it was recorded changed, and goes to the settler like any change (its own
    /// event may be settling too: the index decides, so it counts once). Returns whether more
    /// remain.
    func hashBaselineChunk() throws -> Bool {
        guard let store else { return false }
        let chunk = try store.unhashed(after: baselineCursor ?? "", limit: options.batchLimit)
        guard let last = chunk.last else {
            baselineCursor = nil
            try store.setMeta("baseline-hashed", Timestamp.iso8601())
            logger.info("the baseline's files are all hashed")
            _ = relayMallocTrim(0)
            ExecutablePages.release()
            return false
        }
        baselineCursor = last.path
        let prints = fingerprints(of: chunk.map(\.path))
        var hashes: [(path: String, stamp: FileStamp, hash: String)] = []
        var changed: [String] = []
        for (index, row) in chunk.enumerated() {
            switch prints[index] {
            case .success(let print?) where print.0 == row.stamp: hashes.append((row.path, row.stamp, print.1.hex))
            case .success: changed.append(row.path)
            case .failure(let error):
                // Unreadable (permissions): left unhashed; its stamp still says whether it changes.
                logger.info("cannot hash a baseline file", metadata: ["relay.path": "\(row.path)", "relay.error": "\(error)"])
            }
        }
        try store.setBaselineHashes(hashes)
        // Changed since: settled like any change (it may be half-written now), so it counts
        // once, with its final bytes.
        for path in changed where settler.receiveUnlessPending(path) { wakeup.signal() }
        return true
    }
}

/// Writes a first start's baseline rows on a thread of its own, one batch while the walk
/// collects the next: at most two batches in memory, and the first error is thrown to the walk
/// at its next batch or at `finish`. The store is the writer's alone meanwhile: the walk must
/// not use it until `finish` (or `drain`) returns.
final class BaselineWriter: @unchecked Sendable {
    private let store: WatchStore
    private let queue = DispatchQueue(label: "relay.watch.baseline-rows")
    private let group = DispatchGroup()
    /// Written on the queue, read after `group.wait()`.
    private var failure: Error?

    init(store: WatchStore) { self.store = store }

    /// Waits for the batch before, throws its error, then hands `rows` over.
    func write(_ rows: [(path: String, stamp: FileStamp)]) throws {
        try finish()
        group.enter()
        queue.async { [self] in
            defer { group.leave() }
            do { try store.recordBaseline(rows) } catch { failure = error }
        }
    }

    /// Waits for the last batch; throws the first error.
    func finish() throws {
        group.wait()
        if let failure { throw failure }
    }

    /// Waits for the last batch, whatever happened (a walk that threw).
    func drain() { group.wait() }
}
