import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceWatcher

/// A workspace with a real `relay watch` daemon on it, for the watcher's integration tests.
/// Its command triggers append "PATH HASH" to `firedLog`, outside the workspace.
final class WatchedWorkspace: @unchecked Sendable {
    let scratch: ScratchWorkspace
    var daemon: Process?
    var daemonLog: String { scratch.base + "/daemon.log" }
    var firedLog: String { scratch.base + "/fired.log" }
    var root: String { scratch.root }

    /// `triggers` as in relay.json; "$FIRED" in a command becomes the fired log's path.
    init(triggers: [[String: Any]], settleMilliseconds: Int = 50, sync: [String: Any]? = nil) throws {
        scratch = try ScratchWorkspace.relayInit()
        let file = scratch.path("relay.json")
        var configuration = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as! [String: Any]
        configuration["triggers"] = triggers.map { trigger -> [String: Any] in
            var trigger = trigger
            if let command = trigger["command"] as? String {
                trigger["command"] = command.replacingOccurrences(of: "$FIRED", with: firedLog)
            }
            return trigger
        }
        configuration["watch"] = ["settleMilliseconds": settleMilliseconds, "settleLimitSeconds": 30]
        if let sync { configuration["sync"] = sync }
        try JSONSerialization.data(withJSONObject: configuration, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: file))
        FileManager.default.createFile(atPath: firedLog, contents: nil)
    }

    deinit {
        if let daemon, daemon.isRunning { killHard(daemon) }
        // A killed daemon leaves its (empty) folder in memory; /dev/shm keeps it until a reboot.
        if let workspace = try? Workspace.open(at: root), let folder = MemoryFolder.privateFolder(TriggerRunner.memoryFolderName(workspace)) {
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// The usual command trigger: record the path and hash, once per run.
    static func recording(_ pattern: String, name: String? = nil) -> [String: Any] {
        var trigger: [String: Any] = ["pattern": pattern, "command": "printf '%s %s\\n' \"$RELAY_PATH\" \"$RELAY_HASH\" >> '$FIRED'"]
        if let name { trigger["name"] = name }
        return trigger
    }

    /// Starts the daemon and waits until it has caught up (a cookie round trip).
    func start(environment: [String: String] = [:]) throws {
        let log = scratch.base + "/daemon-\(UUID().uuidString.prefix(8)).log"
        // Relay triggers find no model server unless a test gives one (then they wait, queued):
        // the watcher's tests are about the queue, and must not drive a real model.
        let defaults = ["RELAY_LOG_LEVEL": "info", "RELAY_MODEL_URL": "http://127.0.0.1:\(FakeModelServer.freePort())/v1"]
        daemon = try spawn(Binaries.relay, ["watch", "-w", root], errorLog: log,
                           environment: defaults.merging(environment) { _, new in new })
        try? FileManager.default.removeItem(atPath: daemonLog)
        try? FileManager.default.createSymbolicLink(atPath: daemonLog, withDestinationPath: log)
        try waitForCookie(timeout: 60)
    }

    /// Writes a cookie file and waits until the daemon has handled it (and so everything that
    /// was written before it): the cookie's removal is the event.
    func waitForCookie(timeout: TimeInterval = 120) throws {
        let cookie = root + "/" + IgnoreRules.cookiePrefix + UUID().uuidString
        FileManager.default.createFile(atPath: cookie, contents: Data("cookie".utf8))
        try waitFor("the daemon to handle a cookie", guardSeconds: timeout) {
            FileManager.default.fileExists(atPath: cookie) ? nil : ()
        }
    }

    /// Waits until no trigger is pending or running (command triggers have all finished): the
    /// queue is looked at again each time the daemon writes under the workspace.
    func waitUntilQueueIdle(timeout: TimeInterval = 120) throws {
        try waitFor("the trigger queue to empty", guardSeconds: timeout) {
            try queue().contains(where: { $0.state == "pending" || $0.state == "running" }) ? nil : ()
        }
    }

    /// Waits until `condition` gives a value, looking again whenever anything changes under the
    /// scratch folder (the workspace, the daemon's log, the fired log); the daemon's exit ends
    /// the wait with an error that quotes its log. The guard is not a measure.
    @discardableResult
    func waitFor<Value>(_ what: String, guardSeconds: TimeInterval = 120, until condition: () throws -> Value?) throws -> Value {
        try FileEvents.wait(under: [scratch.base], endingWith: daemon, guardSeconds: guardSeconds,
                            "\(what); daemon log:\n\(log().suffix(3000))", until: condition)
    }

    /// Waits until the daemon's log has a line containing `text`, and returns the log.
    @discardableResult
    func waitForLog(_ text: String, guardSeconds: TimeInterval = 120) throws -> String {
        try waitFor("a log line with \"\(text)\"", guardSeconds: guardSeconds) {
            let log = log()
            return log.contains(text) ? log : nil
        }
    }

    func stop() {
        guard let daemon, daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
    }

    /// Waits until the daemon has exited (killed, or stopped by itself): its exit is the event.
    func waitForExit(timeout: TimeInterval = 120) throws {
        guard let daemon else { return }
        try FileEvents.waitForExit(of: daemon, guardSeconds: timeout, "(the daemon); its log:\n\(log().suffix(2000))")
    }

    func crash() {
        guard let daemon else { return }
        killHard(daemon)
    }

    /// Lines of the fired log: "PATH HASH".
    func fired() -> [String] {
        ((try? String(contentsOfFile: firedLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func firedPaths() -> [String] { fired().map { String($0.split(separator: " ").first ?? "") } }

    func queue() throws -> [QueuedTrigger] {
        try WatchService.queue(workspace: Workspace.open(at: root))
    }

    func log() -> String { (try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "" }

    func path(_ relative: String) -> String { scratch.path(relative) }

    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }
}

struct WatchTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Creates `count` small files in `folder` as fast as plain system calls go.
func burst(_ count: Int, in folder: String, prefix: String = "f") throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for i in 0..<count {
        let fd = open(folder + "/\(prefix)\(i).txt", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw WatchTestError("cannot create file \(i): errno \(errno)") }
        let text = Array("file \(i) of the burst\n".utf8)
        _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
