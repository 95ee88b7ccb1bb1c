import Foundation
import Logging
import WorkspaceCore

extension WatchService {
    // MARK: relay.json

    /// relay.json changed: its triggers and settle window are read again, once per change. A
    /// save that does not parse (or names a bad field) keeps the last valid configuration,
    /// and the log says why.
    func reloadConfiguration() {
        let fresh: WatchConfiguration
        do {
            fresh = try WatchConfiguration.load(from: workspace)
        } catch {
            logger.error("relay.json changed but cannot be used; keeping the last valid triggers", metadata: [
                "relay.error": "\(error)", "relay.triggers": "\(configuration.rules.count)",
            ])
            return
        }
        guard fresh != configuration else { return }
        configuration = fresh
        settler.configure(settle: fresh.settle, limit: fresh.settleLimit)
        logger.notice("relay.json changed: triggers read again", metadata: [
            "relay.triggers": "\(fresh.rules.count)", "relay.settle.ms": "\(fresh.settle.milliseconds)",
        ])
        do { try failOrphans() } catch {
            logger.error("could not update the queue for the new triggers", metadata: ["relay.error": "\(error)"])
        }
        queueMayHaveWork = true
    }

    /// Pending triggers of rules relay.json no longer has fail, with a note saying so.
    func failOrphans() throws {
        guard let store else { return }
        let failed = try store.failPending(notIn: Set(configuration.rules.map(\.name)))
        if failed > 0 {
            logger.warning("pending triggers of rules no longer in relay.json will not run", metadata: ["relay.count": "\(failed)"])
        }
    }
}
