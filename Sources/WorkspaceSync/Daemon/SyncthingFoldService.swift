import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import WorkspaceCore

/// The daemon's folding of Syncthing's conflict copies (`relay watch`, `relay serve`): whenever
/// `changed` is told of a `*.sync-conflict-*` file — the watcher reports the copies its start-up
/// walk passes (those that arrived while the daemon was down: one walk of the tree at start, not
/// two) and every copy that settles later — it merges each copy into its original with
/// `SyncthingConflicts.resolve`, as `relay sync --local` does. One fold at a time, on a thread
/// of its own (blocking file work stays off Swift's cooperative pool); copies that arrive during
/// a fold start one more after it. A graceful shutdown lets a fold under way finish.
public final class SyncthingFoldService: Service, Sendable {
    public let workspace: Workspace
    let logger: Logger
    /// Copies already reported as left for a person (each is said once, not at every fold).
    private let reportedLeft = Mutex(Set<String>())
    private let wakeUps: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(workspace: Workspace, logger: Logger) {
        self.workspace = workspace
        self.logger = logger
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Settled changes were recorded: fold if one of them is a Syncthing conflict copy. Any thread.
    public func changed(_ paths: [String]) {
        guard paths.contains(where: ConflictNames.isSyncthingCopy) else { return }
        wake.yield()
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in self.wakeUps { await self.foldOffThePool() }
        }
    }

    private func foldOffThePool() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread { self.fold(); done.resume() }.start()
        }
    }

    /// One fold: every copy that merges cleanly is merged and removed; the rest are reported once.
    public func fold() {
        do {
            let outcome = try SyncthingConflicts.resolve(in: workspace)
            for copy in outcome.merged {
                logger.notice("merged a Syncthing conflict copy into its original and removed it", metadata: ["relay.copy": "\(copy)"])
            }
            let fresh = reportedLeft.withLock { reported in
                let fresh = outcome.left.filter { !reported.contains($0) }
                reported = Set(outcome.left)
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
