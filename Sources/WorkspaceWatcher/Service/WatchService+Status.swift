import Foundation
import WorkspaceCore

extension WatchService {
    /// Counts of the trigger queue by state, for `relay status` (opens the database read-write
    /// but changes nothing).
    ///
    /// - throws: `WatcherError` `.database` naming `.relay/watch.sqlite`.
    public static func queueCounts(workspace: Workspace) throws -> [String: Int] {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [:] }
        return try WatcherError.translatingDatabaseErrors {
            let store = try WatchStore(workspace: workspace)
            return Dictionary(uniqueKeysWithValues: try store.counts().map { ($0.key.rawValue, $0.value) })
        }
    }

    /// The queue's rows, oldest first, for `relay status --json` and the tests.
    ///
    /// - throws: `WatcherError` `.database` naming `.relay/watch.sqlite`.
    public static func queue(workspace: Workspace) throws -> [QueuedTrigger] {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [] }
        return try WatcherError.translatingDatabaseErrors {
            let store = try WatchStore(workspace: workspace)
            return try store.triggers(in: [.pending, .running, .done, .failed, .superseded], limit: Int.max).map {
                QueuedTrigger(id: $0.id, path: $0.path, hash: $0.hash, trigger: $0.rule, state: $0.state.rawValue, attempts: $0.attempts, run: $0.run)
            }
        }
    }
}

/// One row of the trigger queue.
public struct QueuedTrigger: Sendable, Codable, Equatable {
    public var id: Int64
    public var path: String
    public var hash: String
    public var trigger: String
    public var state: String
    public var attempts: Int
    /// The relay run that answers it (`relay runs`), once it has started; nil for a command.
    public var run: String?
}
