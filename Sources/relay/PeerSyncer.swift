import Foundation
import Logging
import WorkspaceCore
import WorkspaceSync

/// `relay watch`'s sync with the peers in relay.json's `"sync": {"peers": [...]}`: some seconds
/// after the last recorded change (`"afterChangeSeconds"`, default 10), it syncs with each peer in
/// turn, one sync at a time. Files that arrive through sync do not trigger relays here.
final class PeerSyncer: @unchecked Sendable {
    let workspace: Workspace
    let peers: [String]
    let delay: Duration
    let logger: Logger
    private let lock = NSLock()
    private var generation = 0
    private var running = false

    init(workspace: Workspace, peers: [String], delay: Duration, logger: Logger) {
        self.workspace = workspace
        self.peers = peers
        self.delay = delay
        self.logger = logger
    }

    /// Reads `sync.peers` and `sync.afterChangeSeconds`; nil when there are no peers.
    static func configured(for workspace: Workspace, logger: Logger) throws -> PeerSyncer? {
        guard let bytes = try? workspace.read("relay.json") else { return nil }
        let root = try ConfigurationObject(parsing: bytes, file: "relay.json")
        guard let sync = try root.optionalObject("sync") else { return nil }
        try sync.allowOnly(["peers", "massDeletionThreshold", "afterChangeSeconds", "merge"])
        let peers = try sync.strings("peers")
        guard !peers.isEmpty else { return nil }
        let seconds = try sync.optionalNumber("afterChangeSeconds", in: 0...86_400) ?? 10
        return PeerSyncer(workspace: workspace, peers: peers, delay: .milliseconds(Int64(seconds * 1000)), logger: logger)
    }

    /// A change was recorded: (re)start the countdown to the next sync.
    func changed() {
        let mine = lock.withLock { generation += 1; return generation }
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            guard lock.withLock({ generation == mine && !running }) else { return }
            lock.withLock { running = true }
            defer { lock.withLock { running = false } }
            syncAll()
        }
    }

    func syncAll() {
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
