import Foundation
import Logging
import WorkspaceCore

extension WorkspaceOptions {
    /// The workspace named by -w, $RELAY_WORKSPACE, or found from the current folder.
    func open(durable: Bool = true) throws -> Workspace {
        var workspace: Workspace
        if let path = self.workspace {
            workspace = try Workspace.open(at: path)
        } else if let path = ProcessInfo.processInfo.environment[Workspace.environmentVariable], !path.isEmpty {
            workspace = try Workspace.open(at: path)
        } else {
            workspace = try Workspace.discover(from: FileManager.default.currentDirectoryPath)
        }
        workspace.lockTimeout = .milliseconds(Int64((lockTimeout * 1000).rounded()))
        workspace.durable = durable
        workspace.logger = RelayLogging.logger
        // A person or script using `relay fs` drops files on purpose: they may start triggers.
        workspace.writesTrigger = true
        return workspace
    }
}

/// The executable is the one place logging is set up: to standard error, at the level named by
/// RELAY_LOG_LEVEL (trace, debug, info, notice, warning — the default —, error, critical).
enum RelayLogging {
    static let logger: Logger = {
        var logger = Logger(label: "relay", factory: { label in StreamLogHandler.standardError(label: label) })
        let name = ProcessInfo.processInfo.environment["RELAY_LOG_LEVEL"]?.lowercased() ?? "warning"
        logger.logLevel = Logger.Level(rawValue: name) ?? .warning
        return logger
    }()
}
