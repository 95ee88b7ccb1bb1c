import Foundation
import WorkspaceCore

/// A workspace's sync rules, from relay.json's `"sync"` section, and the safety checks every
/// sync makes: the one home of both, so `relay sync` and the daemon's peer sync
/// (`PeerSyncService`) obey the same rules.
///
/// ```json
/// "sync": {
///   "peers": ["/media/usb/notes", "ada@desktop:notes"],
///   "massDeletionThreshold": 0.5,
///   "afterChangeSeconds": 10,
///   "merge": [{"pattern": "data/*.csv", "kind": "binary"}]
/// }
/// ```
///
/// The checks: a peer that is this workspace, or a folder inside it or around it, is refused
/// before anything is opened (`check`); a peer with this workspace's replica id is refused by the
/// reconciler once both have said hello; deleting more than `massDeletionShare` of a side's
/// files at once (at least 5), or emptying it, is refused unless forced (`reconcilerOptions`).
///
/// For example:
/// ```swift
/// let policy = try SyncPolicy.load(from: workspace)
/// let peer = PeerAddress("/media/usb/notes", relativeTo: workspace.root)
/// let endpoint = try policy.connect(to: peer, from: workspace)
/// let summary = try Reconciler(local: try LocalEndpoint(workspace: workspace), peer: endpoint,
///                              options: policy.reconcilerOptions()).run()
/// ```
public struct SyncPolicy: Sendable {
    /// relay.json's peers as written (the daemon syncs with each; `relay sync` takes its own).
    public var peers: [String]
    /// More than this share of a replica's files deleted at once is a mass deletion, refused
    /// without `--force` (`"massDeletionThreshold"`, 0…1).
    public var massDeletionShare: Double
    /// How long the daemon waits after the last change before it syncs (`"afterChangeSeconds"`).
    public var afterChange: Duration
    /// How paths merge (`"merge"`, over the defaults).
    public var mergeRules: MergeRules

    public static let defaultMassDeletionShare = 0.5
    public static let defaultAfterChangeSeconds = 10.0

    public init(peers: [String] = [], massDeletionShare: Double = SyncPolicy.defaultMassDeletionShare,
                afterChange: Duration = .seconds(SyncPolicy.defaultAfterChangeSeconds), mergeRules: MergeRules = MergeRules()) {
        self.peers = peers
        self.massDeletionShare = massDeletionShare
        self.afterChange = afterChange
        self.mergeRules = mergeRules
    }

    /// The workspace's policy (no relay.json, or no `"sync"` in it: the defaults).
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line and the field of
    ///   a bad value (a threshold of 1.5 or "half", an unknown field, a peer that is not a
    ///   string); the read's own errors when relay.json is there but cannot be read.
    public static func load(from workspace: Workspace) throws -> SyncPolicy {
        guard let root = try workspace.relayJSON() else { return SyncPolicy() }
        return try parse(root)
    }

    /// The policy of relay.json's parsed document.
    public static func parse(_ root: ConfigurationObject) throws -> SyncPolicy {
        guard let sync = try root.optionalObject("sync") else { return SyncPolicy() }
        try sync.allowOnly(["peers", "massDeletionThreshold", "afterChangeSeconds", "merge"])
        let peers = try sync.strings("peers")
        if let empty = peers.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw sync.failure(at: "peers", "peer \(empty + 1) is empty; give a folder or [user@]host:path")
        }
        let share = try sync.optionalNumber("massDeletionThreshold", in: 0...1) ?? defaultMassDeletionShare
        let seconds = try sync.optionalNumber("afterChangeSeconds", in: 0...86_400) ?? defaultAfterChangeSeconds
        return SyncPolicy(peers: peers, massDeletionShare: share, afterChange: .milliseconds(Int64((seconds * 1000).rounded())),
                          mergeRules: try MergeRules.parse(root))
    }

    /// relay.json's peers, each read relative to the workspace's root, with its name as written;
    /// a peer that is this workspace is left out (relay.json is synced too, so one list of
    /// peers can name every replica, each of which skips itself).
    public func peerAddresses(of workspace: Workspace) -> [(name: String, address: PeerAddress)] {
        peers.map { ($0, PeerAddress($0, relativeTo: workspace.root)) }.filter { $0.address != .folder(workspace.root) }
    }

    /// The reconciler's options under this policy: its threshold and merge rules.
    public func reconcilerOptions(force: Bool = false, dryRun: Bool = false) -> Reconciler.Options {
        var options = Reconciler.Options()
        options.massDeletionShare = massDeletionShare
        options.mergeRules = mergeRules
        options.force = force
        options.dryRun = dryRun
        return options
    }

    /// Refuses a peer that cannot be another replica of `workspace`: the workspace itself, or a
    /// folder inside it or around it (a sync would copy the workspace into itself).
    /// - throws: `SyncError` `.badPeer` saying which.
    public static func check(_ peer: PeerAddress, for workspace: Workspace) throws {
        guard case .folder(let path) = peer else { return }
        if path == workspace.root {
            throw SyncError(.badPeer, "\(path) is this workspace itself", path: path)
        }
        if path.hasPrefix(workspace.root + "/") || workspace.root.hasPrefix(path + "/") || path == "/" {
            throw SyncError(.badPeer, "\(path) and this workspace (\(workspace.root)) are inside one another; a replica goes in a folder of its own", path: path)
        }
    }

    /// Checks `peer` (`check`) and opens it as the other end of a sync from `workspace`.
    ///
    /// - parameter startReplica: a missing or empty peer folder becomes a new replica of this
    ///   workspace (`relay sync`); without it (a dry run, the daemon, for which a missing folder
    ///   is more likely an unmounted disk than a new replica) it is an error.
    /// - parameter remoteRelay: the relay program on an ssh peer.
    /// - parameter walkAhead: begin walking a local peer's tree at once.
    /// - parameter waitForHello: wait for an ssh peer's hello here (else the reconciler reads it).
    /// - throws: `SyncError` `.badPeer` for a peer `check` refuses, `.transport` when the peer
    ///   cannot be reached; `WorkspaceError` when a folder is not a workspace.
    public static func connect(to peer: PeerAddress, from workspace: Workspace, startReplica: Bool = false,
                               remoteRelay: String = "relay", walkAhead: Bool = false, waitForHello: Bool = true) throws -> ReplicaEndpoint {
        try check(peer, for: workspace)
        switch peer {
        case .ssh(let spec):
            return try RemoteEndpoint.ssh(spec, remoteRelay: remoteRelay, waitForHello: waitForHello, startReplica: startReplica)
        case .folder(let path):
            let (opened, started) = startReplica ? try Workspace.openOrStartReplica(at: path) : (try Workspace.open(at: path), false)
            // A symbolic link to this workspace resolves to its root only once opened.
            try check(.folder(opened.root), for: workspace)
            let endpoint = try LocalEndpoint(workspace: opened, walkAhead: walkAhead)
            endpoint.startedReplica = started
            return endpoint
        }
    }
}
