import Foundation
import Synchronization

/// Starts the disk writes of files just written and closes them, on a thread of its own
/// (`startThenClose`). A batch's temporaries and objects are written without an fsync each and
/// made durable by one `syncfs` at its commit; starting their writeback as they are written
/// lets that `syncfs` find them written or on their way (5–9 ms less). But starting it costs
/// the writer a trip to the disk's queue per file — on a virtual machine an exit to the host,
/// ~40% of a sync server's work per staged file — so the writer hands the descriptor over and
/// goes on, and this thread, on the other core, does the starting and the closing.
///
/// At most `backlog` descriptors wait; past that the writer starts and closes its own, so a
/// disk slower than the writer never costs more open files than that.
enum BackgroundWriteback {
    static let backlog = 256
    /// `closing`: taken from `pending` by the thread and not closed yet.
    private static let state = Mutex<(pending: [CInt], closing: Int, started: Bool)>(([], 0, false))
    private static let work = DispatchSemaphore(value: 0)
    /// Broadcast each time the thread has closed what it took (for `waitUntilClosed`).
    private static let closed = NSCondition()

    /// Starts the writeback of the file open as `fd` and closes it, soon, on the writeback
    /// thread; `fd` is no longer the caller's.
    static func startThenClose(_ fd: CInt) {
        // The thread is woken only when the list goes from empty to not: it takes the whole
        // list at each wake, so one signal covers every descriptor added until it does (a
        // signal per file was a futex wake per file on the writer's thread).
        let (queued, start, wake) = state.withLock { state -> (Bool, Bool, Bool) in
            guard state.pending.count < backlog else { return (false, false, false) }
            state.pending.append(fd)
            defer { state.started = true }
            return (true, !state.started, state.pending.count == 1)
        }
        guard queued else {
            Syscall.startWriteback(fd)
            Syscall.close(fd)
            return
        }
        if start { Thread.detachNewThread { run() } }
        if wake { work.signal() }
    }

    /// The descriptors handed over and not closed yet (for tests).
    static var waiting: Int { state.withLock { $0.pending.count + $0.closing } }

    /// Blocks until every descriptor handed over so far is closed: each batch the thread closes
    /// is the event (tests wait for it instead of looking at `/proc/self/fd` on a clock).
    static func waitUntilClosed() {
        closed.lock()
        defer { closed.unlock() }
        while waiting > 0 { closed.wait() }
    }

    /// The thread lives as long as the process and sleeps while there is nothing to do.
    private static func run() {
        while true {
            work.wait()
            let batch = state.withLock { state -> [CInt] in
                defer { state.pending.removeAll(keepingCapacity: true) }
                state.closing = state.pending.count
                return state.pending
            }
            for fd in batch {
                Syscall.startWriteback(fd)
                Syscall.close(fd)
            }
            state.withLock { $0.closing = 0 }
            closed.lock()
            closed.broadcast()
            closed.unlock()
        }
    }
}
