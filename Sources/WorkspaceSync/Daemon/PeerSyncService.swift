import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import WorkspaceCore

/// The daemon's sync with the peers in relay.json's `"sync": {"peers": [...]}` (`relay watch`,
/// `relay serve`): once `"afterChangeSeconds"` (default 10) have passed with no new change, it
/// syncs with each peer in turn, one sync at a time. Files that arrive through sync trigger no
/// relays (the watcher's rule, not this service's).
///
/// A sync is blocking work (file system, SQLite, an ssh child): it runs on a thread of its own,
/// never on the few threads of Swift's cooperative pool that the watcher and the HTTP server
/// share. A graceful shutdown stops the countdown at once and lets a sync under way finish
/// (a sync killed part-way is safe too, but a finished one leaves nothing to redo).
///
/// For example (the wiring of `relay watch`):
/// ```swift
/// if let peers = try PeerSyncService.configured(for: workspace, logger: logger) {
///     options.changesRecorded = { _ in peers.changed() }
///     services.append(peers)
/// }
/// ```
public final class PeerSyncService: Service, Sendable {
    public let workspace: Workspace
    public let peers: [String]
    public let delay: Duration
    let logger: Logger
    /// Changes recorded so far: a countdown restarts while this moves.
    private let changes = Mutex(0)
    private let wakeUps: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(workspace: Workspace, peers: [String], delay: Duration, logger: Logger) {
        self.workspace = workspace
        self.peers = peers
        self.delay = delay
        self.logger = logger
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The service for relay.json's sync policy (`SyncPolicy.load`); nil when it names no peers.
    /// - throws: `WorkspaceError` naming relay.json's line and field when the `"sync"` section
    ///   is malformed (a threshold of 1.5, a string where a number goes): the daemon does not start.
    public static func configured(for workspace: Workspace, logger: Logger) throws -> PeerSyncService? {
        let policy = try SyncPolicy.load(from: workspace)
        guard !policy.peerAddresses(of: workspace).isEmpty else { return nil }
        return PeerSyncService(workspace: workspace, peers: policy.peers, delay: policy.afterChange, logger: logger)
    }

    /// A change was recorded: (re)start the countdown to the next sync. Cheap; any thread.
    public func changed() {
        changes.withLock { $0 += 1 }
        wake.yield()
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            for await _ in self.wakeUps {
                // Quiet for `delay` since the last change, then sync.
                var seen = self.changes.withLock { $0 }
                while true {
                    try await Task.sleep(for: self.delay)
                    let now = self.changes.withLock { $0 }
                    if now == seen { break }
                    seen = now
                }
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    Thread { self.syncAll(); done.resume() }.start()
                }
            }
        }
    }

    /// Syncs with each peer in turn, under the workspace's sync policy read afresh (relay.json
    /// may have changed since the start, by hand or through sync). A peer whose sync was refused
    /// (a mass deletion, a peer with this replica's id) is held: the refusal is logged in the
    /// words `relay sync` prints, recorded as a `SyncHold` for `relay status`, and that peer is
    /// not tried again until a person releases it (`relay sync --force PEER`). A peer that fails
    /// otherwise (unreachable, not a workspace yet) is logged and tried again after the next change.
    public func syncAll() {
        let policy: SyncPolicy
        do { policy = try SyncPolicy.load(from: workspace) } catch {
            logger.error("not syncing with the peers: \(error)")
            return
        }
        for (name, peer) in policy.peerAddresses(of: workspace) {
            sync(with: peer, named: name, policy: policy)
        }
    }

    private func sync(with peer: PeerAddress, named name: String, policy: SyncPolicy) {
        let metadata: Logger.Metadata = ["relay.peer": "\(name)"]
        do {
            if let hold = try SyncHold.find(peer.location, in: workspace) {
                logger.info("peer sync held; not syncing", metadata: metadata.merging(["relay.reason": "\(hold.reason)", "relay.release": "\(hold.release)"]) { $1 })
                return
            }
            let remote = try SyncPolicy.connect(to: peer, from: workspace)
            defer { (remote as? RemoteEndpoint)?.close(waitForExit: true) }
            let summary = try Reconciler(local: try LocalEndpoint(workspace: workspace), peer: remote,
                                         options: policy.reconcilerOptions(), logger: logger).run()
            logger.notice("synced", metadata: metadata.merging([
                "relay.copied": "\(summary.copied)", "relay.merged": "\(summary.merged)",
                "relay.deleted": "\(summary.deleted)", "relay.conflicts": "\(summary.conflicts)",
            ]) { $1 })
        } catch let error as SyncError where error.code == .stopped || error.code == .badPeer {
            logger.error("\(error.message)", metadata: metadata)
            let hold = SyncHold(peer: name, location: peer.location, reason: error.message)
            do {
                try hold.record(in: workspace)
                logger.warning("peer sync held until a person releases it: \(hold.release)", metadata: metadata)
            } catch {
                logger.error("could not record the held peer sync: \(error)", metadata: metadata)
            }
        } catch {
            logger.error("sync with a peer failed; will try again after the next change", metadata: metadata.merging(["relay.error": "\(error)"]) { $1 })
        }
    }
}
