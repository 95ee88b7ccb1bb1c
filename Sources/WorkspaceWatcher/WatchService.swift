import Foundation
import Logging
import WorkspaceCore

/// The watcher daemon's work: reconcile the index with the disk, watch, settle, turn settled
/// changes into triggers exactly once, and run them. `run()` goes until its task is cancelled
/// (the `relay watch` executable cancels it on SIGTERM or SIGINT), then stops cleanly: no new
/// runs start, running commands get a grace period, and every queued trigger stays queued.
///
/// For example:
/// ```swift
/// let service = WatchService(workspace: workspace, configuration: try .load(from: workspace), logger: logger)
/// try await service.run()
/// ```
public actor WatchService {
    public struct Options: Sendable {
        /// How often settled changes are collected and the queue looked at.
        public var tick: Duration = .milliseconds(10)
        /// How long running commands get to finish when the service stops.
        public var shutdownGrace: Duration = .seconds(10)
        /// Called (on the service's actor) with the paths of settled changes just recorded —
        /// people's and Relay's alike, not those that only touched a file. `relay watch` uses
        /// it to sync and to fold Syncthing's conflict copies.
        public var changesRecorded: (@Sendable ([String]) -> Void)?
        /// Test hook: stall the inotify reader when a file named `relay-test-stall` appears, so the
        /// kernel queue overflows.
        public var stallReaderAfterFirstEvent: Duration?
        public init() {}
    }

    let workspace: Workspace
    let configuration: WatchConfiguration
    let launcher: RelayLauncher?
    let logger: Logger
    let options: Options
    private var store: WatchStore?
    private let settler: Settler
    private var running: [String: Int] = [:]
    private var runs: [Int64: Task<Void, Never>] = [:]
    private var notedWaiting: Set<Int64> = []
    private var queueMayHaveWork = true
    private var lastRescan: Int64 = 0
    private var rescanBackoff: Int64 = 0
    private var stopping = false

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

        // Watch first, then scan: a change made during the scan is caught by one or the other.
        let reader = InotifyReader(root: workspace.root, logger: logger, stallAfterFirstEvent: options.stallReaderAfterFirstEvent)
        let events = try reader.start()
        let baseline = try store.meta("baseline") == nil
        try scan(triggering: !baseline)
        if baseline {
            try store.setMeta("baseline", ISO8601DateFormatter().string(from: Date()))
            logger.info("first start: the files already here are the baseline and start nothing")
        }

        let settler = self.settler
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    for await event in events { settler.receive(event) }
                } onCancel: {
                    reader.stop()
                }
            }
            group.addTask { await self.loop() }
            await group.waitForAll()
        }
        await finishRuns()
        logger.info("stopped watching")
    }

    // MARK: The loop

    private func loop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: options.tick)
            let batch = settler.drain()
            do {
                if batch.rescan { try rescanWithBackoff() }
                if !batch.settled.isEmpty || !batch.removed.isEmpty { try process(batch.settled, removed: batch.removed) }
                try dispatch()
            } catch {
                logger.error("watcher step failed; continuing", metadata: ["relay.error": "\(error)"])
            }
        }
        stopping = true
    }

    private func rescanWithBackoff() throws {
        let now = Settler.now()
        // Overflows in a row mean the reader cannot keep up: wait longer before each rescan.
        rescanBackoff = now - lastRescan < 10_000_000_000 ? min(max(rescanBackoff * 2, 100_000_000), 5_000_000_000) : 0
        if rescanBackoff > 0 {
            logger.notice("overflow again soon after a rescan; backing off", metadata: ["relay.backoff.ms": "\(rescanBackoff / 1_000_000)"])
            Thread.sleep(forTimeInterval: Double(rescanBackoff) / 1e9)
        }
        logger.notice("rescanning the workspace against the index")
        try scan(triggering: true)
        lastRescan = Settler.now()
    }

    /// Walks the tree and handles every file whose stamp differs from the index, and every
    /// indexed file that is gone.
    private func scan(triggering: Bool) throws {
        guard let store else { return }
        let index = try store.allFiles()
        var seen = Set<String>()
        var candidates: [String] = []
        for entry in try workspace.list(".", recursive: true) where entry.kind == .file && !IgnoreRules.isIgnored(entry.path) {
            seen.insert(entry.path)
            if let stamp = workspace.stamp(ofFileAt: entry.path), index[entry.path]?.stamp == stamp { continue }
            candidates.append(entry.path)
        }
        let gone = index.keys.filter { !seen.contains($0) }
        try process(candidates, removed: gone.map { ($0, false) }, index: index, triggering: triggering)
    }

    /// Turns settled paths into index updates and triggers, in one transaction.
    private func process(_ paths: [String], removed: [(path: String, folder: Bool)], index: [String: WatchStore.FileRecord]? = nil,
                         triggering: Bool = true) throws {
        guard let store else { return }
        var changes: [WatchStore.Change] = []
        var removedFiles = removed.filter { !$0.folder }.map(\.path)
        let removedFolders = removed.filter(\.folder).map(\.path)
        var cookies: [String] = []
        for path in paths {
            if IgnoreRules.isIgnored(path) { continue }
            if IgnoreRules.isCookie(path) { cookies.append(path); continue }
            guard let (stamp, hash) = try workspace.fingerprint(ofFileAt: path) else {
                removedFiles.append(path)
                continue
            }
            let previous = index != nil ? index?[path] : try store.file(path)
            let record = WatchStore.FileRecord(stamp: stamp, hash: hash.hex)
            if previous == record { continue }
            var rules: [String] = []
            if triggering && previous?.hash != hash.hex && !workspace.isOwnQuietWrite(path, stamp: stamp) {
                rules = configuration.rules(matching: path).map(\.name)
            }
            changes.append(WatchStore.Change(path: path, record: record, rules: rules))
        }
        let fresh = try store.record(changes, removed: removedFiles, removedFolders: removedFolders)
        for trigger in fresh {
            logger.info("trigger queued", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(trigger.rule)"])
        }
        if !fresh.isEmpty { queueMayHaveWork = true }
        if changes.contains(where: { $0.record.hash != index?[$0.path]?.hash }) || !removedFiles.isEmpty || !removedFolders.isEmpty {
            options.changesRecorded?(changes.map(\.path) + removedFiles + removedFolders)
        }
        // Everything written before a cookie has now been handled: say so by removing it.
        for cookie in cookies { unlink(workspace.root + "/" + cookie) }
    }

    // MARK: Running triggers

    private func dispatch() throws {
        guard let store, queueMayHaveWork, !stopping else { return }
        queueMayHaveWork = false
        for trigger in try store.triggers(in: [.pending]) where runs[trigger.id] == nil {
            guard let rule = configuration.rules.first(where: { $0.name == trigger.rule }) else {
                try store.markFinished(trigger.id, state: .failed, status: nil, note: "no trigger named '\(trigger.rule)' in relay.json any more")
                continue
            }
            if running[rule.name, default: 0] >= rule.concurrency { continue }
            switch rule.action {
            case .relay(let relay) where launcher == nil:
                if notedWaiting.insert(trigger.id).inserted {
                    try store.setNote(trigger.id, "waiting: relay '\(relay)' needs the relay engine, and this daemon was started without one (an embedding of WatchService without a RelayLauncher)")
                }
                continue
            default: break
            }
            try store.markRunning(trigger.id)
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
    }

    private func finished(_ trigger: WatchStore.Trigger, rule: String, outcome: (WatchStore.State, Int32?, String?)) {
        runs.removeValue(forKey: trigger.id)
        running[rule, default: 1] -= 1
        queueMayHaveWork = true
        // While stopping, a run cut short stays 'running' and runs again at the next start.
        if stopping && outcome.0 == .failed { return }
        do {
            try store?.markFinished(trigger.id, state: outcome.0, status: outcome.1, note: outcome.2)
        } catch {
            logger.error("could not record a finished run", metadata: ["relay.error": "\(error)"])
        }
        logger.info("trigger finished", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(rule)", "relay.state": "\(outcome.0.rawValue)"])
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
        return try store.triggers(in: [.pending, .running, .done, .failed], limit: Int.max).map {
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
