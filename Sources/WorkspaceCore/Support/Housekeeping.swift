import Foundation
import Glibc
import Synchronization

/// Work that may wait for idle CPU — emptying the trash, merging history files — on a thread
/// of its own at the lowest priority (nice 19), one job after another. On a 2-core machine a
/// history merge at normal priority took a tenth of a sync server's CPU while the client was
/// waiting on it; at nice 19 it gets the time nobody else wants. A thread is started when
/// jobs arrive and ends when there are none left (a thread cannot be given back its priority
/// without privileges, so pooled threads are not used).
enum Housekeeping {
    private static let state = Mutex<(jobs: [@Sendable () -> Void], running: Bool)>(([], false))

    /// Returns once no job is queued or running: for a caller that counts the descriptors the
    /// jobs hold (a history merge holds its folder open while it runs, at the lowest priority,
    /// so on a loaded machine for a while).
    static func waitUntilIdle() {
        while state.withLock({ $0.running || !$0.jobs.isEmpty }) { usleep(1_000) }
    }

    static func run(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            if state.running { return false }
            state.running = true
            return true
        }
        guard start else { return }
        Thread.detachNewThread {
            // Linux gives each thread its own nice value; 0 names the calling thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            while let next = state.withLock({ state -> (@Sendable () -> Void)? in
                guard !state.jobs.isEmpty else {
                    state.running = false
                    return nil
                }
                return state.jobs.removeFirst()
            }) {
                next()
            }
        }
    }
}
