import ArgumentParser
import Foundation
import Logging
import RelayEngine
import RelayServer
import ServiceLifecycle
import WorkspaceCore
import WorkspaceSync
import WorkspaceWatcher

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch the workspace and run relays when files arrive.",
        discussion: """
            The daemon: reconciles its index with the folder (so files that arrived while it was \
            down count), watches with inotify, waits until each file has settled, and starts the \
            triggers of relay.json exactly once per file content: a relay run (a file dropped in \
            Research/ runs the research relay, a message written in Chats/NAME.md the chat relay) \
            or a shell command. Relay's own writes start nothing. Runs interrupted by a crash \
            resume where they stopped; while the model server is down, runs wait for it. \
            Logs go to standard error and .relay/log/watch.log; SIGTERM or Ctrl-C stops it \
            cleanly, keeping every queued trigger for the next start.

            The first start takes the files already there as the baseline: they start nothing.
            With peers in relay.json ("sync": {"peers": [...], "afterChangeSeconds": 10}), it also
            syncs with them that many seconds after the last change.

            Examples:
              relay watch
              relay watch -w ~/notes
              RELAY_LOG_LEVEL=info relay watch   # log every trigger
              relay watch --http 8000            # with the HTTP API (= relay serve)
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var httpOptions: HTTPOptions

    func run() async throws {
        try await Self.runDaemon(options: options, http: httpOptions, defaultAddress: nil)
    }

    /// The daemon of `relay watch` and `relay serve`: the watcher, resume-at-start and, with an
    /// address, the HTTP API, as one ServiceGroup that SIGTERM and Ctrl-C stop gracefully.
    static func runDaemon(options: WorkspaceOptions, http: HTTPOptions, defaultAddress: String?) async throws {
        // Loading the binary read its relocations and symbol table, and parsing the command
        // line ran code the daemon never runs again: pages a daemon would carry into the
        // start's peak, under what setting up its services touches.
        ExecutablePages.release()
        var workspace = try options.open()
        workspace.writesTrigger = false  // the daemon writes as the engine
        let configuration = try WatchConfiguration.load(from: workspace)
        let httpConfiguration = try http.configuration(for: workspace, defaultAddress: defaultAddress)
        let (lock, holder) = try DaemonLock.acquire("watch", in: workspace)
        guard let lock else {
            throw CommandFailure(message: "another `relay watch` is already running on \(workspace.root) (pid \(holder.map(String.init) ?? "?"))")
        }
        defer { lock.release() }

        let logger = RelayLogging.daemonLogger(workspace: workspace)
        workspace.logger = logger
        var serviceOptions = WatchService.Options()
        if let stall = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_STALL_MS"].flatMap(Int.init) {
            serviceOptions.stallReaderAfterFirstEvent = .milliseconds(stall)
        }
        serviceOptions.dieInBatchOf = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_DIE_IN_BATCH"].flatMap(Int.init)
        serviceOptions.dieStartingABatch = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_DIE_STARTING_BATCH"].flatMap(WatchService.Options.DieStartingABatch.init)
        serviceOptions.dieAfterARunEnds = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_DIE_AFTER_RUN"] == "1"
        serviceOptions.holdBaselineHashing = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_HOLD_BASELINE"] == "1"
        serviceOptions.copyGate = ProcessInfo.processInfo.environment["RELAY_WATCH_TEST_COPY_GATE"]
        let peerSync = try PeerSyncService.configured(for: workspace, logger: logger)
        if let peerSync {
            logger.notice("will sync after changes", metadata: ["relay.peers": "\(peerSync.peers.joined(separator: ", "))"])
        }
        let syncthing = SyncthingFoldService(workspace: workspace, logger: logger)
        serviceOptions.changesRecorded = { paths in
            peerSync?.changed()
            syncthing.changed(paths)
        }
        let keeper = RosterKeeper { warning in logger.warning("\(warning)") }
        let engine = RelayRunner(workspace: workspace, models: try .forWorkspace(workspace, logger: logger), logger: logger, rosterKeeper: keeper)
        let runs = DaemonRuns(engine: engine, logger: logger)
        let service = WatchService(workspace: workspace, configuration: configuration, launcher: runs, logger: logger, options: serviceOptions)
        logger.notice("relay watch started", metadata: [
            "relay.root": "\(workspace.root)", "relay.triggers": "\(configuration.rules.count)",
            "relay.settle.ms": "\(configuration.settle.milliseconds)",
        ])
        // A bad "retention" is a clear error now, not an hour from now.
        _ = try RetentionPolicy.load(from: workspace)
        var housekeeping = RetentionHousekeeping(workspace: workspace, logger: logger)
        if let first = ProcessInfo.processInfo.environment["RELAY_RETENTION_TEST_FIRST_MS"].flatMap(Int.init) { housekeeping.first = .milliseconds(first) }
        var services: [any Service] = [WatchDaemon(service: service), ResumeAtStart(runs: runs), syncthing, housekeeping]
        if let peerSync { services.append(peerSync) }
        if let httpConfiguration {
            do {
                services.append(try RelayHTTPServer(engine: engine, configuration: httpConfiguration, logger: logger))
            } catch let error as APIError {
                throw CommandFailure(message: error.message, status: 2)
            }
        }
        let group = ServiceGroup(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            cancellationSignals: [],
            logger: logger)
        // Setting up (relay.json, the engine, the model client, the services) touched code
        // that runs once: let it go before the services start, so it is not under their peak.
        ExecutablePages.release()
        do {
            try await group.run()
        } catch let error as APIError {
            throw CommandFailure(message: error.message)
        }
    }
}

/// The watcher starts relay runs through the engine's daemon runs (the two modules do not
/// import each other; this conformance is the wiring).
extension DaemonRuns: RelayLauncher {
    public func runID(forTrigger number: Int64) -> String { RunStore.makeID(forTrigger: number) }

    public func launch(relay: String, path: String, hash: String, run: String) async throws -> RelayLaunch {
        do {
            try await self.run(relay: relay, path: path, hash: hash, run: run)
            return .finished
        } catch let error as RelayError where error.code == .superseded {
            return .stoodAside(error.message)
        }
    }

    public func runsRecordedBesideTheLedger(_ triggers: [(relay: String, path: String, hash: String)]) -> [String?] { legacyRuns(for: triggers) }
    public func forgetRunsRecordedBesideTheLedger() { forgetLegacyTriggerRecords() }
}

/// `WatchService` as a ServiceLifecycle service: graceful shutdown cancels it, which it
/// handles by stopping cleanly.
struct WatchDaemon: Service {
    let service: WatchService

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await service.run()
        }
    }
}
