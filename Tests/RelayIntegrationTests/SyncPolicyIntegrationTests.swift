import Foundation
import RelayTestKit
import Testing

/// Issue 31: `relay sync` and the daemon's peer sync obey one sync policy, relay.json's
/// `"sync"` section read in WorkspaceSync: the real binary, a real `relay watch`, real inotify.
@Suite("One sync policy for relay sync and the daemon", .serialized)
struct SyncPolicyIntegrationTests {
    /// Two replicas A and B of 28 files, with `sync` (and A as B's peer) in both relay.json files.
    final class Pair: @unchecked Sendable {
        let base = FileManager.default.temporaryDirectory.path + "/relay-policy-" + UUID().uuidString
        var a: String { base + "/A" }
        var b: String { base + "/B" }

        init(sync: String) throws {
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
            try expectStatus(0, ["init", a])
            var relayJSON = try String(contentsOfFile: a + "/relay.json", encoding: .utf8)
            let range = try #require(relayJSON.range(of: #""sync": \{[^}]*\}"#, options: .regularExpression), "the template's sync section")
            relayJSON.replaceSubrange(range, with: "\"sync\": " + sync.replacingOccurrences(of: "$A", with: a))
            try relayJSON.write(toFile: a + "/relay.json", atomically: true, encoding: .utf8)
            let live = try FileManager.default.subpathsOfDirectory(atPath: a).filter { path in
                var folder: ObjCBool = false
                return !path.hasPrefix(".relay") && FileManager.default.fileExists(atPath: a + "/" + path, isDirectory: &folder) && !folder.boolValue
            }
            try FileManager.default.createDirectory(atPath: a + "/notes", withIntermediateDirectories: true)
            for i in 0..<(28 - live.count) { try "note \(i)\n".write(toFile: a + "/notes/n\(i).md", atomically: true, encoding: .utf8) }
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        /// The 1-based line of relay.json (on A) that holds `text`.
        func line(of text: String) throws -> Int {
            let lines = try String(contentsOfFile: a + "/relay.json", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            return try #require(lines.firstIndex { $0.contains(text) }) + 1
        }

        @discardableResult
        func expectStatus(_ status: Int32, _ arguments: [String]) throws -> Run {
            let result = try run(Binaries.relay, arguments)
            #expect(result.status == status, "relay \(arguments.joined(separator: " ")): \(result.standardError)")
            return result
        }

        func notes(_ root: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: root + "/notes")) ?? []).sorted() }
    }

    /// A running `relay watch` whose standard error the test reads line by line, as it comes.
    final class Daemon: @unchecked Sendable {
        let process = Process()
        private let errors = Pipe()
        private var buffered = Data()
        private(set) var lines: [String] = []

        init(_ root: String) throws {
            process.executableURL = URL(fileURLWithPath: Binaries.relay)
            process.arguments = ["watch", "-w", root]
            var environment = ProcessInfo.processInfo.environment
            environment["RELAY_LOG_LEVEL"] = "info"
            environment["RELAY_MODEL_URL"] = "http://127.0.0.1:\(FakeModelServer.freePort())/v1"
            environment.removeValue(forKey: "RELAY_WORKSPACE")
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // A guard, not a measure: a daemon that never says what the test waits for is ended,
            // so the wait below sees the end of its output and fails with what it said.
            let pid = process.processIdentifier
            Thread {
                Thread.sleep(forTimeInterval: 180)
                kill(pid, SIGKILL)
            }.start()
        }

        /// Reads the daemon's standard error until a line contains `text` (blocking reads: the
        /// event is the line itself); the line, or nil when the daemon ended without saying it.
        func waitForLine(containing text: String) -> String? {
            while true {
                if let found = lines.first(where: { $0.contains(text) }) { return found }
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                buffered.append(chunk)
                while let newline = buffered.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self))
                    buffered = Data(buffered[(newline + 1)...])
                }
            }
        }

        /// Forgets the lines read so far (a later wait looks only at what comes next).
        func forget() { lines = [] }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }

        deinit { if process.isRunning { killHard(process) } }
    }

    @Test func theDaemonRefusesTheMassDeletionRelaySyncRefusesKeepsThePeersFilesAndHoldsTheSyncUntilForced() throws {
        let pair = try Pair(sync: #"{"peers": ["$A"], "massDeletionThreshold": 0.1, "afterChangeSeconds": 0}"#)
        try pair.expectStatus(0, ["sync", "-w", pair.a, pair.b])
        let notes = pair.notes(pair.a)
        #expect(notes.count >= 11 && pair.notes(pair.b) == notes)
        for name in notes.prefix(11) { try FileManager.default.removeItem(atPath: pair.b + "/notes/" + name) }

        // The command refuses.
        let refused = try pair.expectStatus(1, ["sync", "-w", pair.b, pair.a])
        let words = try #require(refused.standardError.range(of: "refusing to delete 11 of ").map { String(refused.standardError[$0.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines) })
        #expect(words.contains("on \(pair.a) because they were deleted on \(pair.b)"), "\(words)")

        // The daemon refuses the same, in the same words, and holds the sync.
        let daemon = try Daemon(pair.b)
        #expect(daemon.waitForLine(containing: "relay watch started") != nil)
        try "a change\n".write(toFile: pair.b + "/notes/nudge.md", atomically: false, encoding: .utf8)
        let refusal = daemon.waitForLine(containing: "refusing to delete")
        #expect(refusal?.contains(words) == true, "the daemon said: \(daemon.lines.joined(separator: "\n"))")
        #expect(daemon.waitForLine(containing: "peer sync held until a person releases it") != nil, "\(daemon.lines.joined(separator: "\n"))")
        #expect(pair.notes(pair.a) == notes, "the peer keeps all its files")

        let status = try pair.expectStatus(0, ["status", "-w", pair.b])
        #expect(status.text.contains("Peer sync  held with \(pair.a)"), "\(status.text)")
        #expect(status.text.contains(words), "\(status.text)")
        #expect(status.text.contains("relay sync --force \(pair.a)"), "\(status.text)")
        let json = try pair.expectStatus(0, ["status", "-w", pair.b, "--json"])
        let held = try #require((try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])?["heldSyncs"] as? [[String: Any]])
        #expect(held.count == 1 && held.first?["location"] as? String == pair.a && (held.first?["reason"] as? String)?.contains(words) == true, "\(held)")

        // The next change does not try the sync again: the daemon says it is held.
        daemon.forget()
        try "another change\n".write(toFile: pair.b + "/notes/nudge-2.md", atomically: false, encoding: .utf8)
        #expect(daemon.waitForLine(containing: "peer sync held; not syncing") != nil, "\(daemon.lines.joined(separator: "\n"))")
        // (The skip names the hold's reason in its metadata; a new refusal would log a new hold.)
        #expect(!daemon.lines.contains { $0.contains("peer sync held until a person releases it") }, "\(daemon.lines.joined(separator: "\n"))")
        #expect(pair.notes(pair.a) == notes)
        daemon.stop()

        // A person checked both sides: `relay sync --force` propagates the deletion and releases the hold.
        let forced = try pair.expectStatus(0, ["sync", "-w", pair.b, pair.a, "--force"])
        #expect(forced.text.contains("Released the daemon's held sync with \(pair.a)"), "\(forced.text)")
        #expect(pair.notes(pair.a) == pair.notes(pair.b))
        let after = try pair.expectStatus(0, ["status", "-w", pair.b])
        #expect(!after.text.contains("Peer sync"), "\(after.text)")
    }

    @Test(arguments: ["1.5", "\"half\""])
    func aBadThresholdStopsRelaySyncAndTheDaemonWithStatus2NamingTheLine(_ value: String) throws {
        let pair = try Pair(sync: #"{"peers": ["$A"], "massDeletionThreshold": 0.5}"#)
        try pair.expectStatus(0, ["sync", "-w", pair.a, pair.b])
        // The bad value, written on B only.
        let file = pair.b + "/relay.json"
        try (try String(contentsOfFile: file, encoding: .utf8)).replacingOccurrences(of: "\"massDeletionThreshold\": 0.5", with: "\"massDeletionThreshold\": \(value)")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let line = try pair.line(of: "massDeletionThreshold")
        for arguments in [["sync", "-w", pair.b, pair.a], ["watch", "-w", pair.b]] {
            let result = try pair.expectStatus(2, arguments)
            #expect(result.standardError.contains("relay.json:\(line):") && result.standardError.contains("sync.massDeletionThreshold"),
                    "relay \(arguments[0]): \(result.standardError)")
        }
        #expect(pair.notes(pair.a) == pair.notes(pair.b), "nothing changed")
    }
}
