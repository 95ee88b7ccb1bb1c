import Foundation
import RelayTestKit
import WorkspaceWatcher

/// `relay serve` on a free loopback port of a scratch workspace, for the HTTP tests.
final class ServedWorkspace: @unchecked Sendable {
    let workspace: ScratchWorkspace
    let port: Int
    let process: Process
    var errorLog: String { workspace.base + "/serve.log" }
    var base: String { "http://127.0.0.1:\(port)" }

    /// The workspace's relay answers every agent's turn with `answer` (the scripted model),
    /// unless `environment` points it at another model.
    static func scripted(answer: String = "Llamas are camelids from the Andes.") throws -> ScratchWorkspace {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        try s.write("script.json", #"{"repeat": true, "replies": [{"text": "\#(answer)"}]}"#)
        let data = try Data(contentsOf: URL(fileURLWithPath: s.path("relay.json")))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw WatchTestError("relay.json is not an object") }
        object["model"] = ["provider": "scripted", "script": "script.json"]
        try s.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self))
        return s
    }

    /// - parameter host: where it listens (the tests reach it on 127.0.0.1 in any case).
    init(_ workspace: ScratchWorkspace, host: String = "127.0.0.1", arguments: [String] = [], environment: [String: String] = [:]) throws {
        self.workspace = workspace
        port = FakeModelServer.freePort()
        process = try spawn(Binaries.relay, ["serve", "-w", workspace.root, "--http", "\(host):\(port)"] + arguments,
                            errorLog: workspace.base + "/serve.log", environment: environment)
        // The line it logs once the socket is bound is the event (its exit ends the wait).
        try waitForLog("relay http listening")
    }

    var log: String { (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "" }

    /// Waits until the server's log has a line containing `text`.
    func waitForLog(_ text: String) throws {
        try FileEvents.wait(under: [workspace.base], endingWith: process, "relay serve to log \"\(text)\"; its log:\n\(log.suffix(3000))") {
            log.contains(text) ? () : nil
        }
    }

    /// Waits until a run started by `path` has finished (its journal's last record), and returns its id.
    @discardableResult
    func waitForRun(triggeredBy path: String) throws -> String {
        try FileEvents.wait(under: [workspace.base], endingWith: process, "a finished run on \(path); log:\n\(log.suffix(3000))") {
            finishedRun(triggeredBy: path, inWorkspace: workspace.root)
        }
    }

    /// Writes a cookie and waits until the daemon's watcher has handled it (and everything
    /// written before it): the cookie's removal is the event.
    func waitForWatcher() throws {
        let cookie = workspace.root + "/" + IgnoreRules.cookiePrefix + UUID().uuidString
        FileManager.default.createFile(atPath: cookie, contents: Data("cookie".utf8))
        try FileEvents.wait(under: [workspace.root], endingWith: process, "the watcher to handle a cookie; log:\n\(log.suffix(2000))") {
            FileManager.default.fileExists(atPath: cookie) ? nil : ()
        }
    }

    deinit {
        if process.isRunning { killHard(process) }
    }

    /// curl (a client Relay did not write): status code and body.
    func curl(_ method: String, _ path: String, body: String? = nil, headers: [String] = [], extra: [String] = []) throws -> (status: Int, body: String) {
        var arguments = ["-s", "-S", "-X", method, "-o", "-", "-w", "\n%{http_code}", base + path]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try run("/usr/bin/curl", arguments + extra)
        var text = result.text
        let statusLine = text.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        text = String(text.dropLast(statusLine.count + 1))
        return (Int(statusLine) ?? 0, text)
    }
}

func jsonObject(_ text: String) -> [String: Any]? {
    try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
}
