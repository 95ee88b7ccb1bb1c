import Dispatch
import Foundation

/// How the watcher's loop sleeps: until `signal()` (an event that needs it, a run that ended,
/// shutdown) or a deadline, whichever comes first — never on a fixed tick, so an idle daemon
/// does not wake at all. A signal while the loop is busy is kept, so none is lost.
///
/// The deadline is a one-shot Dispatch timer, not a sleeping task; one waiter at a time.
final class Wakeup: @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: CheckedContinuation<Void, Never>?
    /// Which wait a timer belongs to: a timer of an earlier wait resumes nothing.
    private var generation: UInt64 = 0
    private let queue = DispatchQueue(label: "relay.watch.wakeup")
    /// How many times the loop was woken (for `relay status`'s idle figures and the bench).
    private(set) var wakeups: UInt64 = 0

    /// Wakes the loop now, or at its next wait if it is busy.
    func signal() {
        let resumed: CheckedContinuation<Void, Never>? = lock.withLock {
            if let waiter {
                self.waiter = nil
                generation &+= 1
                return waiter
            }
            signalled = true
            return nil
        }
        resumed?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait) or at `deadline`
    /// (uptime nanoseconds, as `Settler.now()`); nil waits for a signal only.
    func wait(until deadline: Int64?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ticket: UInt64? = lock.withLock {
                wakeups &+= 1
                if signalled {
                    signalled = false
                    return nil
                }
                waiter = continuation
                generation &+= 1
                return generation
            }
            guard let ticket else { return continuation.resume() }
            guard let deadline else { return }
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: UInt64(max(deadline, 1)))) { [self] in
                let resumed: CheckedContinuation<Void, Never>? = lock.withLock {
                    guard generation == ticket, let waiter else { return nil }
                    self.waiter = nil
                    return waiter
                }
                resumed?.resume()
            }
        }
    }
}
