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

extension WatchService {
    /// The triggers running now and the `limit` that ended last, with the runs that answer
    /// them, for `relay status`.
    ///
    /// - throws: `WatcherError` `.database` naming `.relay/watch.sqlite`.
    public static func runningAndRecentTriggers(workspace: Workspace, limit: Int = 5) throws -> [QueuedTrigger] {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [] }
        return try WatcherError.translatingDatabaseErrors {
            try WatchStore(workspace: workspace).runningAndRecent(limit: limit).map {
                QueuedTrigger(id: $0.id, path: $0.path, hash: $0.hash, trigger: $0.rule, state: $0.state.rawValue, attempts: $0.attempts, run: $0.run)
            }
        }
    }

    /// The relay runs the trigger queue still waits on: named by a row that is pending or
    /// running. A run among them may have finished (a kill came between the run's end and
    /// its row's `done`): the next start finds it by that name and marks the row done without
    /// a model call — so `relay gc` keeps these runs whatever the policy says, the daemon
    /// running or not.
    ///
    /// - throws: `WatcherError` `.database` naming `.relay/watch.sqlite`.
    public static func runsTheQueueAwaits(workspace: Workspace) throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: workspace.layout.state + "/watch.sqlite") else { return [] }
        return try WatcherError.translatingDatabaseErrors { try WatchStore(workspace: workspace).runsAwaited() }
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
