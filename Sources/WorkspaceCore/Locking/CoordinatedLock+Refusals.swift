import Foundation
import Synchronization

// A test hook: how many times a waiting writer found a lock file's lock held, for the lock
// files a test asked about — so a test proves a writer waited by watching it wait, not by
// sleeping. Counting only what is asked for keeps a long-running daemon's memory flat.
extension CoordinatedLock {
    package static func countRefusals(of lockFile: String) { RefusalCount.start(lockFile) }
    package static func stopCountingRefusals(of lockFile: String) { RefusalCount.stop(lockFile) }
    package static func refusals(of lockFile: String) -> Int { RefusalCount.value(lockFile) }
    /// Blocks until `lockFile`'s lock has been refused `count` times since counting began (each
    /// refusal is the event; tests order a holder and a waiter with it, not with a clock).
    /// False when `guardSeconds` ran out first: a guard against a hang, never a measure.
    package static func waitForRefusals(of lockFile: String, atLeast count: Int, guardSeconds: Double = 60) -> Bool {
        RefusalCount.wait(lockFile, atLeast: count, guardSeconds: guardSeconds)
    }
}

enum RefusalCount {
    private static let counts = Mutex<[String: Int]>([:])
    static func start(_ file: String) { counts.withLock { $0[file] = 0 } }
    static func stop(_ file: String) { counts.withLock { _ = $0.removeValue(forKey: file) } }
    static func value(_ file: String) -> Int { counts.withLock { $0[file] ?? 0 } }
    private static let refused = NSCondition()
    static func add(_ file: String) {
        guard counts.withLock({ counts -> Bool in
            guard let count = counts[file] else { return false }
            counts[file] = count + 1
            return true
        }) else { return }
        refused.lock()
        refused.broadcast()
        refused.unlock()
    }
    static func wait(_ file: String, atLeast count: Int, guardSeconds: Double) -> Bool {
        let guardEnd = Date(timeIntervalSinceNow: guardSeconds)
        refused.lock()
        defer { refused.unlock() }
        while value(file) < count {
            if !refused.wait(until: guardEnd) { return value(file) >= count }
        }
        return true
    }
}
