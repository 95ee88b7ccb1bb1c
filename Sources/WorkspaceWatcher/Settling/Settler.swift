import Foundation

/// Turns a stream of raw events into settled paths. A path settles once it was closed after
/// writing (or moved in) and then stayed quiet for `settle`; a path that keeps changing settles
/// anyway `limit` after its first event, so a file written forever still fires.
///
/// Thread-safe: the event reader feeds it, the processing loop drains it.
final class Settler: @unchecked Sendable {
    struct Pending {
        var firstEvent: Int64
        var lastEvent: Int64
        var closed: Bool
    }

    private let lock = NSLock()
    private var pending: [String: Pending] = [:]
    private var removed: [(path: String, folder: Bool)] = []
    private var rescanRequested = false
    let settle: Int64
    let limit: Int64

    init(settle: Duration, limit: Duration) {
        self.settle = settle.nanosecondsValue
        self.limit = limit.nanosecondsValue
    }

    static func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds) }

    func receive(_ event: RawEvent, at time: Int64 = Settler.now()) {
        lock.withLock {
            switch event {
            case .file(let path, let closed):
                if IgnoreRules.isIgnored(path) { return }
                var entry = pending[path] ?? Pending(firstEvent: time, lastEvent: time, closed: false)
                entry.lastEvent = time
                entry.closed = entry.closed || closed
                pending[path] = entry
            case .removed(let path, let folder):
                pending.removeValue(forKey: path)
                if folder {
                    let prefix = path + "/"
                    for key in pending.keys where key.hasPrefix(prefix) { pending.removeValue(forKey: key) }
                }
                removed.append((path, folder))
            case .overflow:
                rescanRequested = true
            }
        }
    }

    /// What is ready now.
    struct Batch {
        var settled: [String]
        var removed: [(path: String, folder: Bool)]
        var rescan: Bool
        var isEmpty: Bool { settled.isEmpty && removed.isEmpty && !rescan }
    }

    func drain(at time: Int64 = Settler.now()) -> Batch {
        lock.withLock {
            var due: [(String, Int64)] = []
            for (path, entry) in pending {
                let quiet = entry.closed && time - entry.lastEvent >= settle
                let overdue = time - entry.firstEvent >= limit
                if quiet || overdue { due.append((path, entry.lastEvent)) }
            }
            for (path, _) in due { pending.removeValue(forKey: path) }
            // Oldest first, so a cookie written after a batch of files comes after them.
            let settled = due.sorted { $0.1 < $1.1 }.map(\.0)
            let batch = Batch(settled: settled, removed: removed, rescan: rescanRequested)
            removed = []
            rescanRequested = false
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
