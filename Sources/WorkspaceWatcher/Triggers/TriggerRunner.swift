import Foundation
import Logging
import WorkspaceCore

/// Starts a relay on a file. The daemon provides one when the relay engine is present; without
/// one, relay triggers wait in the queue (they are not lost, and run once an engine is there).
public protocol RelayLauncher: Sendable {
    /// Runs `relay` on the workspace file `path`, whose content settled with SHA-256 `hash`;
    /// returns when the run has finished — or at once, saying why, when the file holds other
    /// bytes by now: the run stands aside (the newer content has a trigger of its own), so new
    /// bytes never run under the old key.
    func launch(relay: String, path: String, hash: String) async throws -> RelayLaunch
}

/// How a relay trigger's run ended, besides an error.
public enum RelayLaunch: Sendable, Equatable {
    case finished
    /// The file no longer held the settled bytes when the run read it.
    case stoodAside(String)
}

/// Runs command triggers: `/bin/sh -c COMMAND` in the workspace root, with the file in the
/// environment, its output appended to `.relay/log/triggers.log`.
struct TriggerRunner: Sendable {
    let workspace: Workspace
    let logger: Logger

    /// The environment a trigger command gets, besides the daemon's own.
    static func environment(workspace: Workspace, path: String, hash: String, rule: String) -> [String: String] {
        [
            "RELAY_PATH": path,
            "RELAY_FILE": workspace.root + "/" + path,
            "RELAY_HASH": hash,
            "RELAY_TRIGGER": rule,
            "RELAY_WORKSPACE": workspace.root,
        ]
    }

    func run(command: String, path: String, hash: String, rule: String) async -> (status: Int32, note: String?) {
        let workspace = self.workspace
        let environment = ProcessInfo.processInfo.environment.merging(
            Self.environment(workspace: workspace, path: path, hash: hash, rule: rule)) { _, new in new }
        // The wait blocks a thread: one of its own, not one of the cooperative pool the watcher
        // and the HTTP server share.
        return await withCheckedContinuation { (done: CheckedContinuation<(status: Int32, note: String?), Never>) in
            Thread {
                do {
                    let folder = workspace.layout.state + "/log"
                    try StateFile.makeFolders(folder)
                    let status = try ChildProcess.run(
                        ["/bin/sh", "-c", command], environment: environment, directory: workspace.root,
                        appendingOutputTo: folder + "/triggers.log", header: Array("--- \(Timestamp.iso8601()) \(rule): \(path)\n".utf8))
                    done.resume(returning: (status, status == 0 ? nil : "exited with status \(status); see .relay/log/triggers.log"))
                } catch let error as WorkspaceError {
                    done.resume(returning: (127, "could not run the command: \(error.message)"))
                } catch {
                    done.resume(returning: (127, "could not run the command: \(error)"))
                }
            }.start()
        }
    }
}
