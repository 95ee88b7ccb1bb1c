import Foundation
import WorkspaceCore

/// A peer sync the daemon stopped and will not try again by itself: the sync refused to go on
/// (a mass deletion, a peer with this replica's id), so a person must look first. Kept in
/// `.relay/sync-holds/`, one file per peer, so `relay status` shows it and `relay sync PEER`
/// (with `--force` for a mass deletion) releases it once it has synced.
///
/// For example:
/// ```swift
/// for hold in try SyncHold.all(in: workspace) { print(hold.peer, hold.reason, hold.release) }
/// ```
public struct SyncHold: Codable, Sendable, Equatable {
    /// The peer as relay.json names it.
    public var peer: String
    /// Where it is (`PeerAddress.location`): what `relay sync` matches when it releases holds.
    public var location: String
    /// The refusal, in the words `relay sync` prints for it.
    public var reason: String
    /// When the daemon stopped, ISO 8601.
    public var since: String
    /// What releases it, for a person.
    public var release: String

    public init(peer: String, location: String, reason: String, since: Date = Date()) {
        self.peer = peer
        self.location = location
        self.reason = reason
        self.since = Timestamp.iso8601(since)
        self.release = "check both sides, then run `relay sync --force \(location)`"
    }

    static func folder(of workspace: Workspace) -> String { workspace.layout.state + "/sync-holds" }

    /// One file per peer, named by a hash of its location (a location may hold any character).
    static func file(for location: String, in workspace: Workspace) -> String {
        folder(of: workspace) + "/" + String(ContentHash(of: Array(location.utf8)).hex.prefix(32)) + ".json"
    }

    /// Records the hold (replacing an older one for the same peer).
    /// - throws: `WorkspaceError` naming the file when it cannot be written.
    public func record(in workspace: Workspace) throws {
        try StateFile.makeFolders(Self.folder(of: workspace))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try StateFile.replace(Self.file(for: location, in: workspace), with: Array(try encoder.encode(self)), durable: true)
    }

    /// The hold on the peer at `location`, if there is one.
    public static func find(_ location: String, in workspace: Workspace) throws -> SyncHold? {
        let path = file(for: location, in: workspace)
        guard let bytes = try StateFile.read(path) else { return nil }
        return try decode(bytes, path: path)
    }

    /// Every hold of the workspace, by peer.
    /// - throws: `WorkspaceError` naming a hold file that is not as this code wrote it.
    public static func all(in workspace: Workspace) throws -> [SyncHold] {
        let folder = folder(of: workspace)
        return try StateFile.names(in: folder).filter { $0.hasSuffix(".json") }.compactMap { name in
            let path = folder + "/" + name
            return try StateFile.read(path).map { try decode($0, path: path) }
        }.sorted { $0.peer < $1.peer }
    }

    /// Removes the hold on the peer at `location`: whether there was one.
    @discardableResult
    public static func release(_ location: String, in workspace: Workspace) throws -> Bool {
        try StateFile.remove(file(for: location, in: workspace))
    }

    private static func decode(_ bytes: [UInt8], path: String) throws -> SyncHold {
        do { return try JSONDecoder().decode(SyncHold.self, from: Data(bytes)) } catch {
            throw WorkspaceError(.invalidInput, "\(path): not a sync hold as relay writes it (\(error)); remove it to release the hold", path: path)
        }
    }
}
