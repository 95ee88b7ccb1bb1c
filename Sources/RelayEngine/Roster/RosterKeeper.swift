import Foundation
import WorkspaceCore

/// Keeps the last valid roster of each relay: when a person saves an invalid roster while the
/// daemon runs, runs go on with the last good one and say why, instead of failing.
public final class RosterKeeper: @unchecked Sendable {
    private let lock = NSLock()
    private var lastGood: [String: (roster: Roster, loaded: Date)] = [:]
    private let log: @Sendable (String) -> Void

    public init(log: @escaping @Sendable (String) -> Void = { _ in }) { self.log = log }

    func roster(for relay: RelayDefinition, configuration: RelayConfiguration, in workspace: Workspace) throws -> (Roster, String?) {
        do {
            let roster = try configuration.roster(for: relay, in: workspace)
            lock.withLock { lastGood[relay.name] = (roster, Date()) }
            return (roster, nil)
        } catch let error as WorkspaceError {
            guard let kept = lock.withLock({ lastGood[relay.name] }) else { throw error }
            let warning = "\(error.message) — using the last valid roster of relay '\(relay.name)', loaded \(RunExecutor.timestamp(kept.loaded)); fix the file to use the new one"
            log(warning)
            return (kept.roster, warning)
        }
    }
}
