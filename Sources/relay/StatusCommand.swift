import Foundation
import ArgumentParser
import RelayEngine
import WorkspaceCore
import WorkspaceSync
import WorkspaceWatcher

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the workspace, its replica id and locks, runs and conflicts, and reclaim interrupted writes.",
        discussion: """
            Counts files, lists paths whose lock is held right now, the trigger queue (with the \
            run that answers each trigger running now and each of the last five that ended), relay runs \
            by state, open sync conflicts and peer syncs the daemon holds (a sync it refused, \
            such as a mass deletion, waits for `relay sync --force PEER`), and removes temporary files left by writers that \
            were killed. With the daemon running, it also shows the daemon's resident memory \
            and how often it woke up in a short window (an idle daemon should not wake).

            Examples:
              relay status
              relay status -w ~/notes --json
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: "Seconds to count the running daemon's wake-ups over (0: do not count).")
    var sampleSeconds: Double = 1

    struct Output: Codable {
        var workspace: Workspace.Status
        var watcher: Watcher
        struct Watcher: Codable {
            var running: Bool; var pid: Int32?; var triggers: [String: Int]
            /// The triggers running now and the last five that ended, with the runs that answer
            /// them (`run`, nil for a command trigger).
            var recent: [QueuedTrigger]
            /// Resident memory and wake-ups of the running daemon.
            var footprint: DaemonFootprint?
        }
        /// Relay runs by state (done, running, interrupted, cancelled, failed, skipped).
        var runs: [String: Int]
        var openConflicts: Int
        /// Peer syncs the daemon stopped and will not try again until a person releases them.
        var heldSyncs: [SyncHold]
        /// Bytes each kind of engine state takes in .relay/ (versions, runs, sync index, …).
        var space: [String: Int]
    }

    func run() throws {
        let workspace = try options.open()
        let status = try workspace.status()
        let pid = DaemonLock.runningHolder("watch", in: workspace)
        let counts = try WatchService.queueCounts(workspace: workspace)
        let recent = try WatchService.runningAndRecentTriggers(workspace: workspace)
        let footprint = pid.flatMap { DaemonFootprint.sample(pid: $0, over: max(0, sampleSeconds)) }
        var runs: [String: Int] = [:]
        // From the index of finished runs: only unfinished runs' journals are read.
        let overview = RunStore(workspace: workspace).overview()
        for (state, count) in overview.counts { runs[state.rawValue] = count }
        let space = (workspace.stateUsage(skipping: ["runs"]) + [("runs", overview.bytes)]).filter { $0.bytes > 0 }.sorted { $0.bytes > $1.bytes }
        let conflicts = StateFile.exists(workspace.layout.state + "/sync.sqlite")
            ? ((try? SyncIndex(workspace: workspace).openConflicts().count) ?? 0) : 0
        let holds = try SyncHold.all(in: workspace)
        if json {
            return try printJSON(Output(workspace: status, watcher: .init(running: pid != nil, pid: pid, triggers: counts, recent: recent, footprint: footprint), runs: runs,
                                        openConflicts: conflicts, heldSyncs: holds, space: Dictionary(space.map { ($0.kind, $0.bytes) }, uniquingKeysWith: +)))
        }
        print("Workspace  \(status.root)")
        print("Replica    \(status.replicaID)   (layout \(status.formatVersion))")
        print("Content    \(status.files) files in \(status.folders) folders, \(formatBytes(status.bytes))")
        print("Versions   \(status.storedVersions) kept in .relay/objects, \(formatBytes(status.storedBytes))")
        print("Locks      " + (status.lockedPaths.isEmpty ? "none held" : status.lockedPaths.joined(separator: ", ")))
        if !status.reclaimedTemporaries.isEmpty {
            print("Reclaimed  \(status.reclaimedTemporaries.count) temporary file(s) of interrupted writes")
        }
        if !status.activeTemporaries.isEmpty {
            print("Writing    \(status.activeTemporaries.count) write(s) in progress")
        }
        print("Watcher    " + (pid.map { "running (pid \($0))" } ?? "not running (start it with `relay watch`)"))
        if let footprint {
            let wakeups = sampleSeconds > 0 ? String(format: ", %.1f wake-ups/s over %.1f s", footprint.wakeupsPerSecond, footprint.windowSeconds) : ""
            print("Daemon     \(footprint.residentKiB / 1024) MiB resident (peak \(footprint.peakResidentKiB / 1024) MiB)" + wakeups)
        }
        let order = ["pending", "running", "done", "failed", "superseded"]
        let queue = order.compactMap { state in counts[state].map { "\($0) \(state)" } }
        print("Triggers   " + (queue.isEmpty ? "none yet" : queue.joined(separator: ", ")))
        // Which run answers which drop: the row names it (`relay runs ID` shows the run).
        for trigger in recent {
            let answer = trigger.run.map { "run \($0)" } ?? "command (trigger row \(trigger.id))"
            print("           \(trigger.state.padding(toLength: 10, withPad: " ", startingAt: 0)) \(trigger.path) (\(trigger.trigger)): \(answer)")
        }
        let runStates = ["running", "interrupted", "cancelled", "failed", "done", "skipped"].compactMap { state in runs[state].map { "\($0) \(state)" } }
        let resumable = (runs["interrupted"] ?? 0) + (runs["cancelled"] ?? 0) + (runs["failed"] ?? 0)
        print("Runs       " + (runStates.isEmpty ? "none yet" : runStates.joined(separator: ", "))
              + (resumable > 0 ? "   (`relay resume --all` continues them)" : ""))
        print("Conflicts  " + (conflicts == 0 ? "none open" : "\(conflicts) open (`relay conflicts` lists them)"))
        for hold in holds {
            print("Peer sync  held with \(hold.peer) since \(hold.since): \(hold.reason)")
            print("           to release it: \(hold.release)")
        }
        print("Space      " + (space.isEmpty ? "nothing yet" : space.map { "\($0.kind) \(formatBytes($0.bytes))" }.joined(separator: ", "))
              + "   (`relay gc` prunes by relay.json's \"retention\")")
    }
}

func formatBytes(_ count: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count), unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
}
