import Foundation
import Logging
import WorkspaceCore

/// The watcher daemon's work: reconcile the index with the disk, watch, settle, turn settled
/// changes into triggers exactly once, and run them. `run()` goes until its task is cancelled
/// (the `relay watch` executable cancels it on SIGTERM or SIGINT), then stops cleanly: no new
/// runs start, running commands get a grace period, and every queued trigger stays queued.
///
/// The loop sleeps until something needs it — an event the settler says must be looked at, the
/// next settle deadline, a run that ended, a backed-off rescan — and never on a tick: an idle
/// daemon does not wake.
///
/// For example:
/// ```swift
/// let service = WatchService(workspace: workspace, configuration: try .load(from: workspace), logger: logger)
/// try await service.run()
/// ```
public actor WatchService {
    public struct Options: Sendable {
        /// At most this many settled paths are hashed and committed in one transaction; a
        /// larger burst is several batches, with runs started between them.
        public var batchLimit = 1_000
        /// How long running commands get to finish when the service stops.
        public var shutdownGrace: Duration = .seconds(10)
        /// Called (on the service's actor) with the paths of settled changes just recorded —
        /// people's and Relay's alike, not those that only touched a file — and, after a walk
        /// of the tree (start, rescan), with every Syncthing conflict copy it passed, changed or
        /// not; after a first start's walk, which records files without listing them here, it
        /// is called once even with no copy. `relay watch` uses it to sync and to fold
        /// Syncthing's conflict copies.
        public var changesRecorded: (@Sendable ([String]) -> Void)?
        /// Test hook: stall the inotify reader when a file named `relay-test-stall` appears, so the
        /// kernel queue overflows.
        public var stallReaderAfterFirstEvent: Duration?
        /// Test hook: die (SIGKILL) inside the first transaction of several changes that brings
        /// the changes recorded since start to this many, after its rows are written and before
        /// its COMMIT — a kill in a batched commit must lose and double nothing
        /// (RELAY_WATCH_TEST_DIE_IN_BATCH).
        public var dieInBatchOf: Int?
        /// Test hook: die (SIGKILL) when a batch's commit marks a new row `running` — inside
        /// the transaction before its COMMIT, or after it before the run starts
        /// (RELAY_WATCH_TEST_DIE_STARTING_BATCH=before-commit / after-commit).
        public var dieStartingABatch: DieStartingABatch?
        public enum DieStartingABatch: String, Sendable { case beforeCommit = "before-commit", afterCommit = "after-commit" }
        /// Test hook: die (SIGKILL) when a run has ended well, before its row is marked done
        /// (RELAY_WATCH_TEST_DIE_AFTER_RUN).
        public var dieAfterARunEnds = false
        /// Test hook: a first start's baseline is not hashed in the background, so a test can
        /// act on rows not hashed yet (RELAY_WATCH_TEST_HOLD_BASELINE).
        public var holdBaselineHashing = false
        /// Test hook: a FIFO each command trigger's runner reads to its end after the command
        /// started and before the settled copy is made (RELAY_WATCH_TEST_COPY_GATE).
        public var copyGate: String?
        public init() {}
    }

    let workspace: Workspace
    var configuration: WatchConfiguration
    let launcher: RelayLauncher?
    let logger: Logger
    let options: Options
    var store: WatchStore?
    let settler: Settler
    let wakeup = Wakeup()
    var running: [String: Int] = [:]
    /// Rows whose run or command is going now.
    var runs: Set<Int64> = []
    /// Runs that ended, recorded with the next dispatch's commit (one transaction for both).
    var ended: [WatchStore.Outcome] = []
    /// Pending triggers whose file is changing again: they wait until it is recorded.
    var deferred: [Int64: String] = [:]
    var queueMayHaveWork = true
    var rescanAt: Int64?
    var lastRescan: Int64 = 0
    var rescanBackoff: Int64 = 0
    var stopping = false
    var recordedChanges = 0
    /// Rows of files that moved away unpaired, for a moment: one may turn up elsewhere.
    var departures = Departures()
    /// Where the background hashing of the baseline has got to (nil: nothing left to hash).
    var baselineCursor: String?

    public init(workspace: Workspace, configuration: WatchConfiguration, launcher: RelayLauncher? = nil,
                logger: Logger, options: Options = Options()) {
        self.workspace = workspace
        self.configuration = configuration
        self.launcher = launcher
        self.logger = logger
        self.options = options
        self.settler = Settler(settle: configuration.settle, limit: configuration.settleLimit)
    }

    public func run() async throws {
        let store = try WatcherError.translatingDatabaseErrors { try WatchStore(workspace: workspace) }
        self.store = store
        let requeued = try WatcherError.translatingDatabaseErrors { try store.requeueInterrupted() }
        if requeued > 0 { logger.notice("runs interrupted by a crash will run again", metadata: ["relay.count": "\(requeued)"]) }
        try WatcherError.translatingDatabaseErrors { try failOrphans() }
        try WatcherError.translatingDatabaseErrors { try adoptRunsRecordedBesideTheLedger() }
        TriggerRunner.removeLeftoverCopies(workspace: workspace)

        // Each folder is watched as the walk enters it, then listed: a change made during the
        // walk is caught by one or the other (its event waits in the kernel's queue until the
        // reader thread starts). Events then go from the inotify thread straight into the
        // settler; the thread wakes the loop only when the settler says so.
        let reader = InotifyReader(root: workspace.root, logger: logger, stallAfterFirstEvent: options.stallReaderAfterFirstEvent)
        let settler = self.settler, wakeup = self.wakeup
        try reader.open()
        // The start's peak: the pages of the binary that loading and setting up touched
        // (relocations, symbols, the command line's and the services' set-up code) would stay
        // resident under the walk's own; let go of them before it, and the walk's pages and
        // heap are the peak (`scan` lets go again as it goes).
        ExecutablePages.release()
        let firstStart: Bool
        let walked: (files: Int, handled: Int)
        let started = Settler.now()
        do {
            firstStart = try WatcherError.translatingDatabaseErrors { try store.meta("baseline") == nil }
            walked = try WatcherError.translatingDatabaseErrors { try scan(firstStart ? .baseline : .reconcile, watching: reader) }
        } catch {
            reader.abandon()
            throw error
        }
        reader.startReading { event in
            if settler.receive(event) { wakeup.signal() }
        }
        logger.info("start-up walk done", metadata: [
            "relay.files": "\(walked.files)", "relay.handled": "\(walked.handled)", "relay.ms": "\((Settler.now() - started) / 1_000_000)",
        ])
        // The walk's garbage (listings, paths) is freed but kept by malloc; a daemon that runs
        // for months gives it back to the system now — and the binary's pages that only
        // starting needed (relocations, symbols, start-up code) with it.
        _ = relayMallocTrim(0)
        ExecutablePages.release()
        do {
            if firstStart {
                try WatcherError.translatingDatabaseErrors {
                    try store.setMeta("baseline", Timestamp.iso8601())
                    try store.deleteMeta("baseline-hashed")
                }
                logger.info("first start: the files already here are the baseline and start nothing; hashing them in the background")
            }
            // A baseline not hashed to the end (a first start, or one stopped before it finished).
            baselineCursor = try WatcherError.translatingDatabaseErrors { try store.meta("baseline-hashed") == nil ? "" : nil }
        } catch {
            reader.stop()
            await reader.waitUntilStopped()
            throw error
        }

        await withTaskCancellationHandler {
            await loop()
        } onCancel: {
            reader.stop()
            wakeup.signal()
        }
        await reader.waitUntilStopped()
        await finishRuns()
        // Not under a command still going past the grace: its copy is there.
        if runs.isEmpty { TriggerRunner.removeMemoryFolder(workspace: workspace) }
        logger.info("stopped watching")
    }

    // MARK: The loop

    func loop() async {
        while !Task.isCancelled {
            let batch = settler.drain(limit: options.batchLimit)
            do {
                if batch.rescan { scheduleRescan() }
                if let at = rescanAt, Settler.now() >= at {
                    rescanAt = nil
                    logger.notice("rescanning the workspace against the index")
                    try scan(.reconcile)
                    lastRescan = Settler.now()
                }
                if !batch.moves.isEmpty || !batch.settled.isEmpty { try handle(batch) }
                if !departures.isEmpty && departures.expire(at: Settler.now()) { reviewWaitingTriggers() }
                try dispatch()
            } catch {
                logger.error("watcher step failed; continuing", metadata: ["relay.error": "\(error)"])
            }
            var deadline = batch.nextDeadline
            if let at = rescanAt { deadline = min(deadline ?? at, at) }
            if let at = departures.nextExpiry { deadline = min(deadline ?? at, at) }
            // Idle: hash some of the baseline, then look again at once (events come first).
            if baselineCursor != nil && !options.holdBaselineHashing && batch.isEmpty && (deadline ?? .max) > Settler.now() {
                do {
                    if try hashBaselineChunk() { deadline = Settler.now() }
                } catch {
                    logger.error("hashing the baseline failed; it goes on at the next start", metadata: ["relay.error": "\(error)"])
                    baselineCursor = nil
                }
            }
            await wakeup.wait(until: deadline)
        }
        stopping = true
    }

    /// An overflow: rescan now, or — overflows in a row mean the reader cannot keep up — after
    /// a back-off (100 ms doubling to 5 s) that the loop sleeps through like any deadline.
    func scheduleRescan() {
        guard rescanAt == nil else { return }
        let now = Settler.now()
        rescanBackoff = lastRescan > 0 && now - lastRescan < 10_000_000_000 ? min(max(rescanBackoff * 2, 100_000_000), 5_000_000_000) : 0
        if rescanBackoff > 0 {
            logger.notice("overflow again soon after a rescan; backing off", metadata: ["relay.backoff.ms": "\(rescanBackoff / 1_000_000)"])
        }
        rescanAt = now + rescanBackoff
    }
}


/// glibc's `malloc_trim` (malloc.h, which the Glibc module does not export): hands the heap's
/// free pages back to the system.
@_silgen_name("malloc_trim")
func relayMallocTrim(_ pad: Int) -> Int32
