import Dispatch
import Foundation

/// Makes a write batch's new files on threads of their own while the batch's caller goes on:
/// on a first sync the copy loop reads, decides, records and stages on one thread, and making
/// each temporary (a new inode, its bytes, its record) was about half of that thread's work
/// while the other core waited. Jobs take turns between two lanes, each a serial queue with
/// the folders it has seen: one lane was the first sync's slowest chain (~50 µs a file, most of
/// it the kernel making the inode), which the copy loop and the commits waited for while a
/// core had room.
///
/// What a job makes is collected for `finish`; a job refused for its path (a file where a
/// folder is expected, made since the caller resolved it) is reported by path and the rest go
/// on; any other failure is kept, ends the jobs still waiting, and is thrown by the next
/// `submit` or by `finish`. At most `slots` jobs wait (each holds its bytes). Not for use from
/// more than one caller thread at a time, as a write batch is not.
final class NewFileWriter<Made>: @unchecked Sendable {
    /// Each lane's queue and the folders its jobs made or checked (`createParentFolders`),
    /// touched on that queue only.
    private let lanes: [Lane]
    /// The lane of the next job, and how many were submitted (the caller's thread only).
    private var nextLane = 0, submitted = 0
    private let group = DispatchGroup()
    private let slots: DispatchSemaphore
    private let lock = NSLock()
    /// What the jobs made, with the order they were submitted in (lanes finish out of order).
    private var made: [(order: Int, made: Made)] = []
    private var refused: [String] = []
    private var failure: (any Error)?
    /// With timings on (`RELAY_SYNC_TIMINGS=1`), reported by `finish`: the jobs' time and CPU,
    /// and how long `submit` waited for a slot. Guarded by `lock`.
    private var tally = SyncTimings.Tally("new-file-writer")

    /// A serial queue and its folders (`ResolvedFolders`), used on that queue only.
    private struct Lane: @unchecked Sendable {
        let queue = DispatchQueue(label: "relay.write-batch.new-files")
        let folders = ResolvedFolders()
    }

    /// A job crosses to the writer's thread once and runs there alone.
    private struct Job: @unchecked Sendable {
        let run: (ResolvedFolders) throws -> Made
    }

    init(slots: Int = 256, lanes: Int = 2) {
        self.slots = DispatchSemaphore(value: slots)
        self.lanes = (0..<max(1, lanes)).map { _ in Lane() }
    }

    /// Runs `job` on the writer's thread, with the folders this writer has seen; waits while
    /// `slots` jobs are waiting already. Throws the failure of an earlier job, if one failed.
    func submit(path: String, _ job: @escaping (ResolvedFolders) throws -> Made) throws {
        if let failure = lock.withLock({ failure }) { throw failure }
        let waitStart = SyncTimings.enabled ? DispatchTime.now().uptimeNanoseconds : 0
        slots.wait()
        if SyncTimings.enabled {
            let waited = DispatchTime.now().uptimeNanoseconds - waitStart
            lock.withLock { tally.add("submit waited for a slot", nanoseconds: waited) }
        }
        group.enter()
        let job = Job(run: job)
        let (order, lane) = (submitted, lanes[nextLane])
        submitted += 1
        nextLane = (nextLane + 1) % lanes.count
        lane.queue.async { [self] in
            defer {
                slots.signal()
                group.leave()
            }
            guard lock.withLock({ failure == nil }) else { return }
            let timed = SyncTimings.enabled
            let start = timed ? DispatchTime.now().uptimeNanoseconds : 0, cpu = timed ? SyncTimings.Tally.threadCPU() : 0
            defer {
                if timed {
                    let (now, cpuNow) = (DispatchTime.now().uptimeNanoseconds, SyncTimings.Tally.threadCPU())
                    lock.withLock { tally.add("job", nanoseconds: now - start, cpu: cpuNow - cpu) }
                }
            }
            do {
                let result = try job.run(lane.folders)
                lock.withLock { made.append((order, result)) }
            } catch let error as WorkspaceError where error.code == .notADirectory || error.code == .pathRefused {
                lock.withLock { refused.append(path) }
            } catch {
                lock.withLock { if failure == nil { failure = error } }
            }
        }
    }

    /// Waits until every job submitted so far has run, collecting nothing (`finish` still hands
    /// over what they made): for a test that waits for a temporary to be made.
    func waitUntilIdle() { group.wait() }

    /// Waits for every job submitted; what they made, in order, and the paths refused. The
    /// writer starts afresh (its folders are looked at again). Throws the first failure, after
    /// handing what was made to `cleanUp` (so nothing made is left behind).
    func finish(cleanUp: ([Made]) -> Void = { _ in }) throws -> (made: [Made], refused: [String]) {
        group.wait()
        for lane in lanes { lane.queue.sync { lane.folders.forget() } }
        if SyncTimings.enabled {
            lock.withLock {
                tally.report()
                tally = SyncTimings.Tally("new-file-writer")
            }
        }
        let (done, paths, error) = lock.withLock {
            defer {
                made = []
                refused = []
                failure = nil
            }
            return (made.sorted { $0.order < $1.order }.map(\.made), refused, failure)
        }
        if let error {
            cleanUp(done)
            throw error
        }
        return (done, paths)
    }
}
