import Foundation
import RelayTestKit
import Testing

/// `relay gc` (issue 30) through the real binary: the dry run, the prune, what history and
/// restore say afterwards, and a bad policy.
@Suite struct GCCommandTests {
    func setRetention(_ s: ScratchWorkspace, _ retention: Any) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: s.path("relay.json")))
        var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        object["retention"] = retention
        try s.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self))
    }

    func objectCount(_ s: ScratchWorkspace) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: s.path(".relay/objects")).filter { $0.count == 64 }.count
    }

    @Test func aDryRunSaysWhatGoesThenGCPrunesAndHistoryAndRestoreSayTheVersionsWerePruned() throws {
        let s = try ScratchWorkspace.relayInit()
        for n in 0..<15 { #expect(try s.relay(["fs", "write", "-w", s.root, "--no-durable", "notes.md"], input: "version \(n)\n").status == 0) }
        try setRetention(s, ["versions": ["keepLast": 3, "keepWithinDays": 0]])
        let before = try objectCount(s)

        let dry = try s.relay(["gc", "-w", s.root, "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.standardError)")
        let report = jsonObject(dry.text)
        let versions = report?["versions"] as? [String: Any]
        #expect((versions?["pruned"] as? [Any])?.count == 11 && versions?["dryRun"] as? Bool == true, "\(dry.text)")
        #expect(try objectCount(s) == before, "a dry run changes nothing")

        let gc = try s.relay(["gc", "-w", s.root])
        #expect(gc.status == 0, "\(gc.standardError)")
        #expect(gc.text.contains("Versions  pruned 11 of 14 kept versions of 1 files"), "\(gc.text)")
        #expect(try objectCount(s) == before - 11)

        let history = try s.relay(["fs", "history", "-w", s.root, "notes.md", "--json"])
        let lines = history.text.split(separator: "\n").compactMap { jsonObject(String($0)) }
        #expect(lines.count == 15 && lines.filter { $0["pruned"] as? Bool == true }.count == 11)
        let plain = try s.relay(["fs", "history", "-w", s.root, "notes.md"])
        #expect(plain.text.components(separatedBy: "(pruned by the retention policy)").count == 12)

        let pruned = try #require(lines.first { $0["pruned"] as? Bool == true }?["replaced"] as? String)
        let restore = try s.relay(["fs", "restore", "-w", s.root, "notes.md", String(pruned.prefix(10))])
        #expect(restore.status == 1 && restore.standardError.contains("was pruned by the retention policy"), "\(restore.standardError)")
        #expect(try String(contentsOfFile: s.path("notes.md"), encoding: .utf8) == "version 14\n", "the current version is never pruned")
    }

    @Test func aBadRetentionIsAnErrorNamingTheLineForGCAndTheDaemonAndChangesNothing() throws {
        let s = try ScratchWorkspace.relayInit()
        try setRetention(s, ["runs": ["keepLast": "many"]])
        let gc = try s.relay(["gc", "-w", s.root])
        #expect(gc.status == 2)
        #expect(gc.standardError.contains("relay.json:") && gc.standardError.contains("keepLast"), "\(gc.standardError)")
        let watch = try s.relay(["watch", "-w", s.root])
        #expect(watch.status == 2 && watch.standardError.contains("keepLast"), "\(watch.standardError)")
    }

    @Test func statusShowsTheSpaceEachKindOfStateTakes() throws {
        let s = try ScratchWorkspace.relayInit()
        for n in 0..<3 { _ = try s.relay(["fs", "write", "-w", s.root, "notes.md"], input: "v\(n)\n") }
        let status = try s.relay(["status", "-w", s.root, "--json"])
        let space = jsonObject(status.text)?["space"] as? [String: Int] ?? [:]
        #expect((space["versions"] ?? 0) > 0 && (space["version history"] ?? 0) > 0, "\(status.text)")
        #expect(try s.relay(["status", "-w", s.root]).text.contains("Space      "))
    }

    @Test func theDaemonAppliesThePolicyByItself() throws {
        let w = try WatchedWorkspace(triggers: [])
        for n in 0..<6 { #expect(try w.scratch.relay(["fs", "write", "-w", w.root, "--no-durable", "notes.md"], input: "v\(n)\n").status == 0) }
        try setRetention(w.scratch, ["versions": ["keepLast": 2, "keepWithinDays": 0]])
        #expect(try objectCount(w.scratch) == 5)
        try w.start(environment: ["RELAY_RETENTION_TEST_FIRST_MS": "0"])
        try w.waitForLog("retention: pruned")
        #expect(try objectCount(w.scratch) == 2, "the daemon kept the two newest replaced versions")
        w.stop()
    }
}
