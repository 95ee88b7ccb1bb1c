import ArgumentParser
import Logging
import ServiceLifecycle
import Foundation
import RelayEngine
import WorkspaceCore
import WorkspaceSync
import WorkspaceWatcher

struct GCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Prune kept versions and finished runs by the workspace's retention policy.",
        discussion: """
            The policy is relay.json's "retention" (default: of each file's replaced versions \
            the newest 10 and those of the last 30 days; of the runs the newest 200 and those of \
            the last 90 days; "staggered": true thins the window to one an hour for a day, one a \
            day for a month, one a week after). The text of dropped documents kept for search \
            (.relay/cache/text) goes when no file holds that content any more. Never pruned: a version a sync peer needs as a \
            merge base, both sides of an open conflict, what an unfinished or resumable run \
            refers to, a run a trigger not yet marked done names (the daemon finishes that trigger \
            from it at its next start), the current version of any file. Pruned versions stay listed in `relay fs \
            history`, marked pruned. `relay watch` applies the policy every hour.

            Examples:
              relay gc --dry-run
              relay gc
              relay gc --json | jq .versions.bytesFreed
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Flag(help: "Say what would be pruned and the space it would free; change nothing.") var dryRun = false
    @Flag(help: "Print the result as JSON.") var json = false

    func run() throws {
        let workspace = try options.open()
        let report = try Retention.apply(to: workspace, dryRun: dryRun)
        if json { return try printJSON(report) }
        let verb = dryRun ? "would prune" : "pruned"
        let versions = report.versions, runs = report.runs
        print("Versions  \(verb) \(versions.pruned.count) of \(versions.versions) kept versions of \(versions.paths) files, \(formatBytes(versions.bytesFreed))"
              + (versions.protected > 0 ? "; \(versions.protected) past the policy kept because something needs them" : "")
              + (versions.packed > 0 ? "; \(versions.packed) in packs left as they are" : ""))
        print("Runs      \(verb) \(runs.pruned.count) of \(runs.runs) runs, \(formatBytes(runs.bytesFreed))"
              + (runs.unfinished > 0 ? "; \(runs.unfinished) past the policy kept because they are not finished" : "")
              + (runs.awaited > 0 ? "; \(runs.awaited) kept because a trigger not yet done names them (`relay watch` finishes it)" : ""))
        if dryRun {
            for version in versions.pruned.prefix(20) { print("  version \(version.version.prefix(12)) of \(version.path) (\(formatBytes(version.bytes)))") }
            if versions.pruned.count > 20 { print("  … and \(versions.pruned.count - 20) more versions") }
            for id in runs.pruned.prefix(20) { print("  run \(id)") }
            if runs.pruned.count > 20 { print("  … and \(runs.pruned.count - 20) more runs") }
        }
        let cache = report.textCache
        if cache.kept + cache.pruned.count > 0 {
            print("Text      \(verb) \(cache.pruned.count) of \(cache.kept + cache.pruned.count) documents' converted text no file holds now, \(formatBytes(cache.bytesFreed))")
        }
        print("Freed     \(formatBytes(versions.bytesFreed + runs.bytesFreed + cache.bytesFreed))\(dryRun ? " (dry run: nothing changed)" : "")")
    }
}

/// The retention policy applied to a workspace: runs first (a pruned run needs no versions),
/// then versions, protecting what sync and unfinished runs need. `relay gc` and the daemon's
/// hourly housekeeping share it; each module prunes its own state.
enum Retention {
    struct Report: Codable {
        var versions: Workspace.VersionPruning
        var runs: RunStore.RunPruning
        /// Documents' text kept for search (`.relay/cache/text`) of content no file holds now.
        var textCache: TextCache.Pruning
    }

    static func apply(to workspace: Workspace, dryRun: Bool) throws -> Report {
        let policy = try RetentionPolicy.load(from: workspace)
        let store = RunStore(workspace: workspace)
        // Runs the trigger queue still waits on stay, the daemon running or not (a row left
        // `running` by a kill may name a run that finished).
        let awaited = try WatchService.runsTheQueueAwaits(workspace: workspace)
        let runs = try store.prune(policy.runs, dryRun: dryRun, keeping: awaited)
        var protected = try store.versionsUnfinishedRunsNeed()
        if FileManager.default.fileExists(atPath: workspace.layout.state + "/sync.sqlite") {
            for hex in try SyncIndex(workspace: workspace).versionsToKeep() {
                if let hash = ContentHash(hex: hex) { protected.insert(hash) }
            }
        }
        let versions = try workspace.pruneVersions(policy.versions, protecting: protected, dryRun: dryRun)
        let textCache = try TextCache.prune(in: workspace, dryRun: dryRun)
        return Report(versions: versions, runs: runs, textCache: textCache)
    }
}

/// The daemon's housekeeping: the retention policy applied a minute after start, then every
/// hour (Syncthing's cleanup interval), at the lowest priority the cooperative pool has. A
/// failure (a relay.json edited wrong meanwhile) is logged, and tried again the next hour.
struct RetentionHousekeeping: Service {
    let workspace: Workspace
    let logger: Logger
    var first: Duration = .seconds(60)
    var interval: Duration = .seconds(3600)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var wait = first
            while !Task.isCancelled {
                do { try await Task.sleep(for: wait) } catch { return }
                wait = interval
                let workspace = self.workspace, logger = self.logger
                await Task.detached(priority: .background) {
                    do {
                        let report = try Retention.apply(to: workspace, dryRun: false)
                        if !report.versions.pruned.isEmpty || !report.runs.pruned.isEmpty {
                            logger.notice("retention: pruned", metadata: [
                                "relay.gc.versions": "\(report.versions.pruned.count)", "relay.gc.runs": "\(report.runs.pruned.count)",
                                "relay.gc.bytes": "\(report.versions.bytesFreed + report.runs.bytesFreed)",
                            ])
                        }
                    } catch {
                        logger.warning("retention: \(error)")
                    }
                }.value
            }
        }
    }
}
