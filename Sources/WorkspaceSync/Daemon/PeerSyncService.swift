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

    /// Reads `sync.peers` and `sync.afterChangeSeconds` from relay.json; nil when there are no peers.
    /// - throws: `WorkspaceError` naming relay.json's line and field when they are malformed.
    public static func configured(for workspace: Workspace, logger: Logger) throws -> PeerSyncService? {
        guard let root = try workspace.relayJSONIfReadable() else { return nil }
        guard let sync = try root.optionalObject("sync") else { return nil }
        try sync.allowOnly(["peers", "massDeletionThreshold", "afterChangeSeconds", "merge"])
        let peers = try sync.strings("peers")
        guard !peers.isEmpty else { return nil }
        let seconds = try sync.optionalNumber("afterChangeSeconds", in: 0...86_400) ?? 10
        return PeerSyncService(workspace: workspace, peers: peers, delay: .milliseconds(Int64(seconds * 1000)), logger: logger)
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

    /// Syncs with each peer in turn; a peer that fails is logged and tried again after the next change.
    public func syncAll() {
        for peer in peers {
            do {
                let remote: ReplicaEndpoint
                if let colon = peer.firstIndex(of: ":"), !peer[..<colon].contains("/"), !FileManager.default.fileExists(atPath: peer) {
                    remote = try RemoteEndpoint.ssh(peer)
                } else {
                    remote = try LocalEndpoint(workspace: try Workspace.open(at: peer))
                }
                var options = Reconciler.Options()
                options.mergeRules = MergeRules.loadOrDefaults(from: workspace)
                let summary = try Reconciler(local: try LocalEndpoint(workspace: workspace), peer: remote, options: options, logger: logger).run()
                (remote as? RemoteEndpoint)?.close(waitForExit: true)
                logger.notice("synced", metadata: [
                    "relay.peer": "\(peer)", "relay.copied": "\(summary.copied)", "relay.merged": "\(summary.merged)",
                    "relay.deleted": "\(summary.deleted)", "relay.conflicts": "\(summary.conflicts)",
                ])
            } catch {
                logger.error("sync with a peer failed; will try again after the next change", metadata: ["relay.peer": "\(peer)", "relay.error": "\(error)"])
            }
        }
    }
}
