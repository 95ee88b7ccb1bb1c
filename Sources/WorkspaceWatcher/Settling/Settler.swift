import Foundation

/// Turns a stream of raw events into settled paths. A path settles once it was closed after
/// writing (or moved in) and then stayed quiet for `settle`; a path that keeps changing settles
/// anyway `limit` after its first event, so a file written forever still fires.
///
/// Thread-safe: the inotify thread feeds it directly (no hop through an async stream), the
/// processing loop drains it. `receive` says when the loop must wake before the deadline it
/// sleeps until — a path that settles sooner, a removal, a rename, an overflow — so the loop
/// sleeps between events instead of polling.
final class Settler: @unchecked Sendable {
    struct Pending {
        var firstEvent: Int64
        var lastEvent: Int64
        var closed: Bool
        /// An event of this settling could have changed the bytes (`RawEvent.file`'s `wrote`).
        var wrote = true
    }

    /// A change to the tree's shape, applied in the order it happened, before settled paths.
    enum Move: Equatable, Sendable {
        /// A file or folder left (deleted or moved out); for a folder, everything under it.
        case removed(path: String, folder: Bool)
        /// A file or folder moved away unpaired (`RawEvent.movedOut`): removed, unless it turns
        /// up again elsewhere in the workspace with the same stamp.
        case movedOut(path: String, folder: Bool)
        /// A file or folder renamed inside the workspace: it keeps its identity.
        case renamed(from: String, to: String, folder: Bool)

        var path: String {
            switch self {
            case .removed(let path, _), .movedOut(let path, _): return path
            case .renamed(_, let to, _): return to
            }
        }
    }

    private let lock = NSLock()
    private var pending: [String: Pending] = [:]
    private var heap = DeadlineHeap()
    private var moves: [Move] = []
    private var rescanRequested = false
    /// The deadline the loop sleeps until (`Int64.max`: none); an event that settles sooner wakes it.
    private var armed: Int64 = .max
    private var settle: Int64
    private var limit: Int64

    init(settle: Duration, limit: Duration) {
        self.settle = settle.nanosecondsValue
        self.limit = limit.nanosecondsValue
    }

    static func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds) }

    /// A new settle window (relay.json changed), for paths that settle from now on.
    func configure(settle: Duration, limit: Duration) {
        lock.withLock {
            self.settle = settle.nanosecondsValue
            self.limit = limit.nanosecondsValue
            heap.removeAll()
            for (path, entry) in pending { heap.push(deadline(of: entry), path) }
            armed = .min  // the loop looks again at its next wake-up
        }
    }

    /// Takes one event; returns whether the loop must wake before the deadline it sleeps until.
    @discardableResult
    func receive(_ event: RawEvent, at time: Int64 = Settler.now()) -> Bool {
        lock.withLock {
            switch event {
            case .file(let path, let closed, let wrote):
                if IgnoreRules.isIgnored(path) { return false }
                let previous = pending[path]
                var entry = previous ?? Pending(firstEvent: time, lastEvent: time, closed: false, wrote: wrote)
                entry.lastEvent = time
                // An attribute change to a file at rest (`touch -d`, `chmod`) is whole at once: it
                // settles after the quiet period, not at the limit. During a write it closes nothing.
                entry.closed = entry.closed || closed || (previous == nil && !wrote)
                entry.wrote = entry.wrote || wrote
                pending[path] = entry
                // A file written on and on, never closed, keeps its deadline: no new heap item.
                if let previous, deadline(of: previous) == deadline(of: entry) { return false }
                return schedule(path, entry)
            case .removed(let path, let folder):
                cancel(path, folder: folder)
                moves.append(.removed(path: path, folder: folder))
                return wake()
            case .movedOut(let path, let folder):
                if IgnoreRules.isIgnored(path) { return false }
                cancel(path, folder: folder)
                moves.append(.movedOut(path: path, folder: folder))
                return wake()
            case .renamed(let from, let to, let folder):
                let fromIgnored = IgnoreRules.isIgnored(from), toIgnored = IgnoreRules.isIgnored(to)
                if !folder && fromIgnored {
                    // A temporary renamed over its file (most editors, Relay's own writes): a
                    // change at `to`, closed now.
                    if toIgnored { return false }
                    let entry = Pending(firstEvent: time, lastEvent: time, closed: true)
                    pending[to] = entry
                    return schedule(to, entry)
                }
                if toIgnored {
                    // Renamed to a backup name (vim's `file~`): the file left.
                    cancel(from, folder: folder)
                    moves.append(.removed(path: from, folder: folder))
                    return wake()
                }
                // Changes still settling move with their file, and settle under the new name.
                if folder {
                    let prefix = from + "/"
                    for (key, entry) in pending where key.hasPrefix(prefix) {
                        pending.removeValue(forKey: key)
                        let moved = to + "/" + key.dropFirst(prefix.count)
                        pending[moved] = entry
                        heap.push(deadline(of: entry), moved)
                    }
                } else if let entry = pending.removeValue(forKey: from) {
                    pending[to] = entry
                    heap.push(deadline(of: entry), to)
                }
                moves.append(.renamed(from: from, to: to, folder: folder))
                return wake()
            case .overflow:
                rescanRequested = true
                return wake()
            }
        }
    }

    /// A change found by a look at the file rather than by an event (the baseline's background
    /// hashing saw its stamp move): a closed change now, unless the path is pending already —
    /// its own event then settles it, and is not postponed (a cookie written after that event
    /// must not settle first).
    @discardableResult
    func receiveUnlessPending(_ path: String, at time: Int64 = Settler.now()) -> Bool {
        if lock.withLock({ pending[path] != nil }) { return false }
        return receive(.file(path: path, closed: true), at: time)
    }

    private func cancel(_ path: String, folder: Bool) {
        pending.removeValue(forKey: path)
        if folder {
            let prefix = path + "/"
            for key in pending.keys where key.hasPrefix(prefix) { pending.removeValue(forKey: key) }
        }
    }

    private func deadline(of entry: Pending) -> Int64 {
        let overdue = entry.firstEvent + limit
        return entry.closed ? min(entry.lastEvent + settle, overdue) : overdue
    }

    /// Called with the lock held: queues the path's deadline (when it moved), and says whether
    /// the loop must wake for it.
    private func schedule(_ path: String, _ entry: Pending) -> Bool {
        let due = deadline(of: entry)
        heap.push(due, path)
        guard due < armed else { return false }
        armed = due
        return true
    }

    private func wake() -> Bool {
        guard armed != Int64.min else { return false }  // already woken, not yet drained
        armed = .min
        return true
    }

    /// What is ready now.
    struct Batch {
        var settled: [String]
        /// The settled paths no event of which could have changed the bytes (a `touch`, a
        /// `chmod`): what a baseline row not hashed yet is compared with.
        var untouched: Set<String> = []
        var moves: [Move]
        var rescan: Bool
        /// When the next pending path settles (nil: nothing pending).
        var nextDeadline: Int64?
        var isEmpty: Bool { settled.isEmpty && moves.isEmpty && !rescan }
        /// The paths that left, for callers that only care about removals.
        var removed: [(path: String, folder: Bool)] {
            moves.compactMap {
                switch $0 {
                case .removed(let path, let folder), .movedOut(let path, let folder): return (path, folder)
                case .renamed: return nil
                }
            }
        }
    }

    /// What is ready at `time`, at most `limit` settled paths (the rest stays due, for the next
    /// batch), and when the loop should look again.
    func drain(at time: Int64 = Settler.now(), limit count: Int = .max) -> Batch {
        lock.withLock {
            var due: [(String, Int64)] = []
            var untouched = Set<String>()
            while due.count < count, let top = heap.first, top.deadline <= time {
                _ = heap.pop()
                // Stale: the path settled already, left, or has a later deadline now.
                guard let entry = pending[top.path], deadline(of: entry) == top.deadline else { continue }
                pending.removeValue(forKey: top.path)
                due.append((top.path, entry.lastEvent))
                if !entry.wrote { untouched.insert(top.path) }
            }
            if pending.isEmpty { heap.removeAll() }
            // Oldest first, so a cookie written after a batch of files comes after them.
            due.sort { $0.1 < $1.1 }
            let next = heap.first?.deadline
            let batch = Batch(settled: due.map(\.0), untouched: untouched, moves: moves, rescan: rescanRequested, nextDeadline: next)
            moves = []
            rescanRequested = false
            armed = next ?? .max
            return batch
        }
    }

    var pendingCount: Int { lock.withLock { pending.count } }
}

extension Duration {
    var nanosecondsValue: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
