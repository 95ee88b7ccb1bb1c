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
        /// people's and Relay's alike, not those that only touched a file. `relay watch` uses
        /// it to sync and to fold Syncthing's conflict copies.
        public var changesRecorded: (@Sendable ([String]) -> Void)?
        /// Test hook: stall the inotify reader when a file named `relay-test-stall` appears, so the
        /// kernel queue overflows.
        public var stallReaderAfterFirstEvent: Duration?
        /// Test hook: die (SIGKILL) inside the first transaction of several changes that brings
        /// the changes recorded since start to this many, after its rows are written and before
        /// its COMMIT — a kill in a batched commit must lose and double nothing
        /// (RELAY_WATCH_TEST_DIE_IN_BATCH).
        public var dieInBatchOf: Int?
        public init() {}
    }

    let workspace: Workspace
    private(set) var configuration: WatchConfiguration
    let launcher: RelayLauncher?
    let logger: Logger
    let options: Options
    private var store: WatchStore?
    private let settler: Settler
    private let wakeup = Wakeup()
    private var running: [String: Int] = [:]
    private var runs: [Int64: Task<Void, Never>] = [:]
    /// Runs that ended, recorded with the next dispatch's commit (one transaction for both).
    private var ended: [WatchStore.Outcome] = []
    /// Pending triggers whose file is changing again: they wait until it is recorded.
    private var deferred: [Int64: String] = [:]
    private var queueMayHaveWork = true
    private var rescanAt: Int64?
    private var lastRescan: Int64 = 0
    private var rescanBackoff: Int64 = 0
    private var stopping = false
    private var recordedChanges = 0

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
        let store = try WatchStore(workspace: workspace)
        self.store = store
        let requeued = try store.requeueInterrupted()
        if requeued > 0 { logger.notice("runs interrupted by a crash will run again", metadata: ["relay.count": "\(requeued)"]) }
        try failOrphans()

        // Watch first, then walk: a change made during the walk is caught by one or the other.
        // Events go from the inotify thread straight into the settler; the thread wakes the
        // loop only when the settler says so.
        let reader = InotifyReader(root: workspace.root, logger: logger, stallAfterFirstEvent: options.stallReaderAfterFirstEvent)
        let settler = self.settler, wakeup = self.wakeup
        try reader.start { event in
            if settler.receive(event) { wakeup.signal() }
        }
        let baseline = try store.meta("baseline") == nil
        let started = Settler.now()
        let walked = try scan(triggering: !baseline)
        logger.info("start-up walk done", metadata: [
            "relay.files": "\(walked.files)", "relay.hashed": "\(walked.hashed)", "relay.ms": "\((Settler.now() - started) / 1_000_000)",
        ])
        // The walk's garbage (listings, paths, hashing buffers) is freed but kept by malloc;
        // a daemon that runs for months gives it back to the system now.
        _ = relayMallocTrim(0)
        if baseline {
            try store.setMeta("baseline", ISO8601DateFormatter().string(from: Date()))
            logger.info("first start: the files already here are the baseline and start nothing")
        }

        await withTaskCancellationHandler {
            await loop()
        } onCancel: {
            reader.stop()
            wakeup.signal()
        }
        await reader.waitUntilStopped()
        await finishRuns()
        logger.info("stopped watching")
    }

    // MARK: The loop

    private func loop() async {
        while !Task.isCancelled {
            let batch = settler.drain(limit: options.batchLimit)
            do {
                if batch.rescan { scheduleRescan() }
                if let at = rescanAt, Settler.now() >= at {
                    rescanAt = nil
                    logger.notice("rescanning the workspace against the index")
                    try scan(triggering: true)
                    lastRescan = Settler.now()
                }
                if !batch.moves.isEmpty || !batch.settled.isEmpty { try handle(batch) }
                try dispatch()
            } catch {
                logger.error("watcher step failed; continuing", metadata: ["relay.error": "\(error)"])
            }
            var deadline = batch.nextDeadline
            if let at = rescanAt { deadline = min(deadline ?? at, at) }
            await wakeup.wait(until: deadline)
        }
        stopping = true
    }

    /// An overflow: rescan now, or — overflows in a row mean the reader cannot keep up — after
    /// a back-off (100 ms doubling to 5 s) that the loop sleeps through like any deadline.
    private func scheduleRescan() {
        guard rescanAt == nil else { return }
        let now = Settler.now()
        rescanBackoff = lastRescan > 0 && now - lastRescan < 10_000_000_000 ? min(max(rescanBackoff * 2, 100_000_000), 5_000_000_000) : 0
        if rescanBackoff > 0 {
            logger.notice("overflow again soon after a rescan; backing off", metadata: ["relay.backoff.ms": "\(rescanBackoff / 1_000_000)"])
        }
        rescanAt = now + rescanBackoff
    }

    /// Walks the tree beside the index, both in path order (a merge join: neither is held in
    /// memory), and handles every file whose stamp differs from its row or whose row is racy,
    /// every new file, and every indexed file that is gone. Returns how many files there are
    /// and how many were hashed.
    @discardableResult
    private func scan(triggering: Bool) throws -> (files: Int, hashed: Int) {
        guard let store else { return (0, 0) }
        var walk = SortedStampWalk(workspace)
        defer { walk.close() }
        // Cookies wait until the whole walk is handled: removing one says everything before it
        // was, and the walk meets them in path order, not in the order they were written.
        var cookies: [String] = []
        func advance() throws -> (path: String, stamp: FileStamp)? {
            while let next = try walk.next() {
                if IgnoreRules.isCookie(next.path) { cookies.append(next.path); continue }
                if !IgnoreRules.isIgnored(next.path) { return next }
            }
            return nil
        }
        var next = try advance()
        var candidates: [String] = []
        var gone: [String] = []
        var files = 0, hashed = 0
        try store.forEachFile { path, record, racy in
            while let file = next, file.path.utf8.lexicographicallyPrecedes(path.utf8) {
                candidates.append(file.path)
                files += 1
                next = try advance()
            }
            if let file = next, file.path.utf8.elementsEqual(path.utf8) {
                if file.stamp != record.stamp || racy { candidates.append(path) }
                files += 1
                next = try advance()
            } else {
                gone.append(path)
            }
        }
        // What is left is new (all of it on a first start): handled in batches as it is found.
        while let file = next {
            candidates.append(file.path)
            files += 1
            if candidates.count >= options.batchLimit {
                hashed += candidates.count
                try process(candidates, triggering: triggering)
                candidates = []
            }
            next = try advance()
        }
        hashed += candidates.count
        if !gone.isEmpty { try record([], removed: gone.map { .removed(path: $0, folder: false) }) }
        try process(candidates, triggering: triggering)
        try process(cookies, triggering: triggering)
        return (files, hashed)
    }

    /// A batch from the settler: the renames and removals in the order they happened, then the
    /// settled paths.
    private func handle(_ batch: Settler.Batch) throws {
        var removals: [Settler.Move] = []
        for move in batch.moves {
            switch move {
            case .removed:
                removals.append(move)
            case .renamed(let from, let to, let folder):
                try record([], removed: removals)
                removals = []
                try rename(from: from, to: to, folder: folder)
            }
        }
        try record([], removed: removals)
        try process(batch.settled, triggering: true)
    }

    /// A rename inside the workspace keeps the content's identity: its index rows move and it
    /// fires nothing, except rules that match the new path and not the old. A file the index
    /// never had (its content was still settling, or it was written under a temporary name and
    /// renamed into place) goes back to the settler as a change at `to`, closed now: it settles
    /// like a file moved in, after what was written before it.
    private func rename(from: String, to: String, folder: Bool) throws {
        guard let store else { return }
        let configuration = self.configuration
        let (fresh, known) = try store.rename(from: from, to: to, folder: folder) { path in
            configuration.rules(matching: path).map(\.name)
        }
        guard known else {
            if !folder && settler.receive(.file(path: to, closed: true)) { wakeup.signal() }
            return
        }
        logger.info("renamed", metadata: ["relay.from": "\(from)", "relay.to": "\(to)", "relay.folder": "\(folder)"])
        queued(fresh)
        settledAgain([from, to])
        if to == WorkspaceLayout.configurationFileName { reloadConfiguration() }
        options.changesRecorded?([from, to])
    }

    /// Removals, recorded in one transaction.
    private func record(_ changes: [WatchStore.Change], removed: [Settler.Move]) throws {
        guard let store, !changes.isEmpty || !removed.isEmpty else { return }
        var files: [String] = [], folders: [String] = []
        for case .removed(let path, let folder) in removed {
            if folder { folders.append(path) } else { files.append(path) }
        }
        queued(try store.record(changes, removed: files, removedFolders: folders))
        settledAgain(files + folders)
        if !files.isEmpty || !folders.isEmpty { options.changesRecorded?(files + folders) }
    }

    /// Turns settled paths into index updates and triggers: hashed first, then committed in
    /// one transaction per `batchLimit` paths.
    private func process(_ paths: [String], triggering: Bool) throws {
        guard let store, !paths.isEmpty else { return }
        var start = 0
        while start < paths.count {
            let end = min(start + options.batchLimit, paths.count)
            try processBatch(paths[start..<end], store: store, triggering: triggering)
            start = end
        }
    }

    private func processBatch(_ paths: ArraySlice<String>, store: WatchStore, triggering: Bool) throws {
        var changes: [WatchStore.Change] = []
        var removed: [String] = []
        var cookies: [String] = []
        var configurationChanged = false
        var files: [String] = []
        for path in paths where !IgnoreRules.isIgnored(path) {
            if IgnoreRules.isCookie(path) { cookies.append(path); continue }
            if path == WorkspaceLayout.configurationFileName { configurationChanged = true }
            files.append(path)
        }
        let prints = fingerprints(of: files)
        for (index, path) in files.enumerated() {
            let (stamp, hash): (FileStamp, ContentHash)
            switch prints[index] {
            case .success(let print?): (stamp, hash) = print
            case .success(nil):
                removed.append(path)
                continue
            case .failure(let error): throw error
            }
            let previous = try store.file(path)
            let record = WatchStore.FileRecord(stamp: stamp, hash: hash.hex)
            if previous == record { continue }
            var rules: [String] = []
            if triggering && previous?.hash != hash.hex && !workspace.isOwnQuietWrite(path, stamp: stamp) {
                rules = configuration.rules(matching: path).map(\.name)
            }
            changes.append(WatchStore.Change(path: path, record: record, rules: rules, previousHash: previous?.hash))
        }
        recordedChanges += changes.count
        if let limit = options.dieInBatchOf, recordedChanges >= limit, changes.count > 1 {
            store.dieInsideTheNextTransaction = true
        }
        queued(try store.record(changes, removed: removed))
        settledAgain(changes.map(\.path) + removed)
        let contentChanged = changes.filter { $0.record.hash != $0.previousHash }.map(\.path)
        if !contentChanged.isEmpty || !removed.isEmpty { options.changesRecorded?(contentChanged + removed) }
        if configurationChanged { reloadConfiguration() }
        // Everything written before a cookie has now been handled: say so by removing it.
        for cookie in cookies { unlink(workspace.root + "/" + cookie) }
    }

    /// Triggers waiting because their file was changing are looked at again once it is recorded.
    private func settledAgain(_ paths: [String]) {
        guard !deferred.isEmpty, !paths.isEmpty else { return }
        deferred.removeAll()
        queueMayHaveWork = true
    }

    /// The stamps and hashes of a batch's files, read on every core (a first start hashes every
    /// file of the tree); in the order given.
    private nonisolated func fingerprints(of paths: [String]) -> [Result<(FileStamp, ContentHash)?, Error>] {
        let workspace = self.workspace
        guard paths.count > 8 else { return paths.map { path in Result { try workspace.fingerprint(ofFileAt: path) } } }
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<Result<(FileStamp, ContentHash)?, Error>>.allocate(capacity: paths.count)
        defer { results.deallocate() }
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            // Each lane writes only its own slots.
            for index in stride(from: lane, to: paths.count, by: lanes) {
                (results.baseAddress! + index).initialize(to: Result { try workspace.fingerprint(ofFileAt: paths[index]) })
            }
        }
        let collected = Array(results)
        _ = results.baseAddress.map { $0.deinitialize(count: paths.count) }
        return collected
    }

    private func queued(_ fresh: [WatchStore.Trigger]) {
        for trigger in fresh {
            logger.info("trigger queued", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(trigger.rule)"])
        }
        if !fresh.isEmpty { queueMayHaveWork = true }
    }

    // MARK: relay.json

    /// relay.json changed: its triggers and settle window are read again, once per change. A
    /// save that does not parse (or names a bad field) keeps the last valid configuration,
    /// and the log says why.
    private func reloadConfiguration() {
        let fresh: WatchConfiguration
        do {
            fresh = try WatchConfiguration.load(from: workspace)
        } catch {
            logger.error("relay.json changed but cannot be used; keeping the last valid triggers", metadata: [
                "relay.error": "\(error)", "relay.triggers": "\(configuration.rules.count)",
            ])
            return
        }
        guard fresh != configuration else { return }
        configuration = fresh
        settler.configure(settle: fresh.settle, limit: fresh.settleLimit)
        logger.notice("relay.json changed: triggers read again", metadata: [
            "relay.triggers": "\(fresh.rules.count)", "relay.settle.ms": "\(fresh.settle.milliseconds)",
        ])
        do { try failOrphans() } catch {
            logger.error("could not update the queue for the new triggers", metadata: ["relay.error": "\(error)"])
        }
        queueMayHaveWork = true
    }

    /// Pending triggers of rules relay.json no longer has fail, with a note saying so.
    private func failOrphans() throws {
        guard let store else { return }
        let failed = try store.failPending(notIn: Set(configuration.rules.map(\.name)))
        if failed > 0 {
            logger.warning("pending triggers of rules no longer in relay.json will not run", metadata: ["relay.count": "\(failed)"])
        }
    }

    // MARK: Running triggers

    private func dispatch() throws {
        guard let store, !stopping, queueMayHaveWork || !ended.isEmpty else { return }
        var outcomes = ended
        ended = []
        var starting: [(WatchStore.Trigger, TriggerRule)] = []
        // Rounds, because a trigger that stands aside frees its place for the next one.
        var again = true
        while again && queueMayHaveWork {
            again = false
            queueMayHaveWork = false
            var planned: [String: Int] = [:]
            var full = Set<String>()
            var free = 0
            for rule in configuration.rules {
                let slots = rule.concurrency - running[rule.name, default: 0] - starting.filter { $0.1.name == rule.name }.count
                if case .relay = rule.action, launcher == nil { full.insert(rule.name); continue }
                if slots <= 0 { full.insert(rule.name) } else { free += slots }
            }
            guard free > 0 else { break }
            let decided = Set(outcomes.map(\.id))
            for trigger in try store.pending(excluding: full, limit: free + deferred.count + decided.count)
            where deferred[trigger.id] == nil && !decided.contains(trigger.id) {
                guard let rule = configuration.rules.first(where: { $0.name == trigger.rule }) else { continue }
                let taken = running[rule.name, default: 0] + planned[rule.name, default: 0] + starting.filter { $0.1.name == rule.name }.count
                if taken >= rule.concurrency { continue }
                switch try settledContent(of: trigger) {
                case .current:
                    planned[rule.name, default: 0] += 1
                    starting.append((trigger, rule))
                case .changing:
                    deferred[trigger.id] = trigger.path
                case .superseded(let note):
                    outcomes.append(WatchStore.Outcome(id: trigger.id, state: .superseded, status: nil, note: note))
                    logger.info("trigger stands aside", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(trigger.rule)", "relay.note": "\(note)"])
                    queueMayHaveWork = true
                    again = true
                }
            }
        }
        if launcher == nil {
            try store.noteWaiting(relayRules: configuration.rules.compactMap { rule in
                if case .relay(let relay) = rule.action { return (rule.name, relay) } else { return nil }
            })
        }
        // One transaction: the runs that ended, those that stand aside, those about to start.
        try store.commitRuns(finished: outcomes, starting: starting.map(\.0.id))
        for (trigger, rule) in starting { start(trigger, rule: rule) }
    }

    /// Whether the file still holds the content that settled, so a run works on it under its key.
    private enum Settled { case current, changing, superseded(String) }

    private func settledContent(of trigger: WatchStore.Trigger) throws -> Settled {
        guard let store else { return .current }
        guard let record = try store.file(trigger.path) else {
            return .superseded("the file was gone before this ran")
        }
        if record.hash != trigger.hash {
            // Newer content was recorded: its own trigger runs instead — or, when the newer
            // content started nothing (Relay's own write folded into the file), a trigger for
            // it takes this one's place, so a person's drop is never lost.
            if try store.enqueueSuccessor(of: trigger, hash: record.hash) {
                logger.info("trigger re-keyed to the file's newer content", metadata: ["relay.path": "\(trigger.path)"])
            }
            return .superseded("the file changed before this ran; the run for its newer content stands in")
        }
        guard let stamp = workspace.stamp(ofFileAt: trigger.path) else { return .changing }
        if stamp == record.stamp { return .current }
        // The stamp moved since it settled: the bytes decide (a touch is not new content).
        guard let (_, hash) = try workspace.fingerprint(ofFileAt: trigger.path) else { return .changing }
        return hash.hex == trigger.hash ? .current : .changing
    }

    private func start(_ trigger: WatchStore.Trigger, rule: TriggerRule) {
        running[rule.name, default: 0] += 1
        let workspace = self.workspace, logger = self.logger, launcher = self.launcher
        runs[trigger.id] = Task {
            let outcome: (WatchStore.State, Int32?, String?)
            switch rule.action {
            case .command(let command):
                let result = await TriggerRunner(workspace: workspace, logger: logger)
                    .run(command: command, path: trigger.path, hash: trigger.hash, rule: rule.name)
                outcome = (result.status == 0 ? .done : .failed, result.status, result.note)
            case .relay(let relay):
                do {
                    try await launcher?.run(relay: relay, path: trigger.path, hash: trigger.hash)
                    outcome = (.done, 0, nil)
                } catch {
                    outcome = (.failed, nil, "\(error)")
                }
            }
            await self.finished(trigger, rule: rule.name, outcome: outcome)
        }
    }

    private func finished(_ trigger: WatchStore.Trigger, rule: String, outcome: (WatchStore.State, Int32?, String?)) {
        runs.removeValue(forKey: trigger.id)
        running[rule, default: 1] -= 1
        queueMayHaveWork = true
        logger.info("trigger finished", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(rule)", "relay.state": "\(outcome.0.rawValue)"])
        // While stopping, a run cut short stays 'running' and runs again at the next start.
        if stopping && outcome.0 == .failed { return }
        ended.append(WatchStore.Outcome(id: trigger.id, state: outcome.0, status: outcome.1, note: outcome.2))
        wakeup.signal()
    }

    private func finishRuns() async {
        stopping = true
        let deadline = Settler.now() + options.shutdownGrace.nanosecondsValue
        while !runs.isEmpty && Settler.now() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if !runs.isEmpty {
            logger.warning("runs still going at shutdown will run again at the next start", metadata: ["relay.count": "\(runs.count)"])
        }
        do {
            try store?.commitRuns(finished: ended, starting: [])
            ended = []
        } catch {
            logger.error("could not record finished runs", metadata: ["relay.error": "\(error)"])
        }
    }

    // MARK: Status

    /// Counts of the trigger queue by state, for `relay status` (opens the database read-write
    /// but changes nothing).
    public static func queueCounts(workspace: Workspace) throws -> [String: Int] {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [:] }
        let store = try WatchStore(workspace: workspace)
        return Dictionary(uniqueKeysWithValues: try store.counts().map { ($0.key.rawValue, $0.value) })
    }

    /// The queue's rows, oldest first, for `relay status --json` and the tests.
    public static func queue(workspace: Workspace) throws -> [QueuedTrigger] {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [] }
        let store = try WatchStore(workspace: workspace)
        return try store.triggers(in: [.pending, .running, .done, .failed, .superseded], limit: Int.max).map {
            QueuedTrigger(id: $0.id, path: $0.path, hash: $0.hash, trigger: $0.rule, state: $0.state.rawValue, attempts: $0.attempts)
        }
    }
}

/// One row of the trigger queue.
public struct QueuedTrigger: Sendable, Codable, Equatable {
    public var id: Int64
    public var path: String
    public var hash: String
    public var trigger: String
    public var state: String
    public var attempts: Int
}

/// glibc's `malloc_trim` (malloc.h, which the Glibc module does not export): hands the heap's
/// free pages back to the system.
@_silgen_name("malloc_trim")
private func relayMallocTrim(_ pad: Int) -> Int32
