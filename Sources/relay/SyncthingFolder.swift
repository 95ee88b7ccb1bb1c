import Foundation
import Logging
import WorkspaceCore
import WorkspaceSync

/// `relay watch`'s folding of Syncthing's conflict copies: once at start (copies that arrived
/// while the daemon was down), then whenever a settled change is a `*.sync-conflict-*` file,
/// it merges each copy into its original with `SyncthingConflicts.resolve`, as
/// `relay sync --local` does. One fold at a time; a copy that arrives during a fold starts
/// another one after it.
final class SyncthingFolder: @unchecked Sendable {
    let workspace: Workspace
    let logger: Logger
    private let lock = NSLock()
    private var running = false
    private var again = false
    /// Copies already reported as left for a person (each is said once, not at every fold).
    private var reportedLeft = Set<String>()

    init(workspace: Workspace, logger: Logger) {
        self.workspace = workspace
        self.logger = logger
    }

    func foldAtStart() { start() }

    /// Settled changes were recorded: fold if one of them is a Syncthing conflict copy.
    func changed(_ paths: [String]) {
        guard paths.contains(where: ConflictNames.isSyncthingCopy) else { return }
        start()
    }

    private func start() {
        let first = lock.withLock {
            if running { again = true; return false }
            running = true
            return true
        }
        guard first else { return }
        Task.detached { [self] in
            repeat {
                fold()
            } while lock.withLock({
                if again { again = false; return true }
                running = false
                return false
            })
        }
    }

    func fold() {
        do {
            let outcome = try SyncthingConflicts.resolve(in: workspace)
            for copy in outcome.merged {
                logger.notice("merged a Syncthing conflict copy into its original and removed it", metadata: ["relay.copy": "\(copy)"])
            }
            let fresh = lock.withLock {
                let fresh = outcome.left.filter { !reportedLeft.contains($0) }
                reportedLeft = Set(outcome.left)
                return fresh
            }
            for copy in fresh {
                logger.warning("left a Syncthing conflict copy for a person: its changes overlap the original's", metadata: ["relay.copy": "\(copy)"])
            }
        } catch {
            logger.error("folding Syncthing conflict copies failed; will try again after the next one arrives", metadata: ["relay.error": "\(error)"])
        }
    }
}
