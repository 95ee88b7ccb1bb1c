import Foundation
import Logging
import WorkspaceCore

/// Starts a relay on a file. The daemon provides one when the relay engine is present; without
/// one, relay triggers wait in the queue (they are not lost, and run once an engine is there).
public protocol RelayLauncher: Sendable {
    /// Runs `relay` on the workspace file `path`; returns when the run has finished.
    func run(relay: String, path: String, hash: String) async throws
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
        let logFolder = workspace.layout.state + "/log"
        try? FileManager.default.createDirectory(atPath: logFolder, withIntermediateDirectories: true)
        let logFile = logFolder + "/triggers.log"
        if !FileManager.default.fileExists(atPath: logFile) { FileManager.default.createFile(atPath: logFile, contents: nil) }
        let log = FileHandle(forWritingAtPath: logFile)
        _ = try? log?.seekToEnd()
        try? log?.write(contentsOf: Data("--- \(Timestamp.iso8601()) \(rule): \(path)\n".utf8))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        process.environment = ProcessInfo.processInfo.environment.merging(
            Self.environment(workspace: workspace, path: path, hash: hash, rule: rule)) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log ?? FileHandle.nullDevice
        process.standardError = log ?? FileHandle.nullDevice
        let finished = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in finished.continuation.yield(); finished.continuation.finish() }
        do {
            try process.run()
        } catch {
            try? log?.close()
            return (127, "could not start /bin/sh: \(error)")
        }
        for await _ in finished.stream {}
        try? log?.close()
        let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return (status, status == 0 ? nil : "exited with status \(status); see .relay/log/triggers.log")
    }
}
