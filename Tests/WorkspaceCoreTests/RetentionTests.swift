import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Retention: the policy in relay.json and the pruning of kept versions")
struct RetentionTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }
    var workspace: Workspace { fixture.workspace }

    static let day: Int64 = 86_400_000_000_000

    @Test func aWorkspaceWithoutRetentionGetsTheDefaults() throws {
        let policy = try RetentionPolicy.load(from: workspace)
        #expect(policy.versions == .init(keepLast: 10, keepWithinDays: 30))
        #expect(policy.runs == .init(keepLast: 200, keepWithinDays: 90))
    }

    @Test func relayJSONsRetentionIsReadAndWhatItLeavesOutKeepsItsDefault() throws {
        try fixture.write("relay.json", #"{"retention": {"versions": {"keepLast": 3, "staggered": true}, "runs": {"keepWithinDays": 7.5}}}"#)
        let policy = try RetentionPolicy.load(from: workspace)
        #expect(policy.versions == .init(keepLast: 3, keepWithinDays: 30, staggered: true))
        #expect(policy.runs == .init(keepLast: 200, keepWithinDays: 7.5))
    }

    @Test func aBadRetentionIsAnErrorNamingTheLineAndTheField() throws {
        try fixture.write("relay.json", "{\n  \"retention\": {\n    \"versions\": {\"keepLast\": -1}\n  }\n}\n")
        let negative = #expect(throws: WorkspaceError.self) { try RetentionPolicy.load(from: workspace) }
        #expect(negative?.message.hasPrefix("relay.json:3:") == true && negative?.message.contains("keepLast") == true, "\(negative?.message ?? "")")
        try fixture.write("relay.json", "{\"retention\": {\n\"versions\": {\"keepLatest\": 5}}}\n")
        let unknown = #expect(throws: WorkspaceError.self) { try RetentionPolicy.load(from: workspace) }
        #expect(unknown?.message.contains("relay.json:2:") == true && unknown?.message.contains("unknown field 'keepLatest'") == true, "\(unknown?.message ?? "")")
        try fixture.write("relay.json", "{\"retention\": {\"versions\": {\"staggered\": \"yes\"}}}\n")
        #expect(throws: WorkspaceError.self) { try RetentionPolicy.load(from: workspace) }
    }

    @Test func theRuleKeepsTheNewestAndThoseWithinTheWindow() {
        let rule = RetentionPolicy.Rule(keepLast: 2, keepWithinDays: 1)
        let now = 100 * Self.day
        let hour = Self.day / 24
        // 3 days ago, 1 hour ago, 4 days ago, 2 hours ago, 20 hours ago
        let times = [now - 3 * Self.day, now - hour, now - 4 * Self.day, now - 2 * hour, now - 20 * hour]
        #expect(rule.kept(times, now: now) == [1, 3, 4])
        #expect(RetentionPolicy.Rule(keepLast: 4, keepWithinDays: 0).kept(times, now: now) == [0, 1, 3, 4])
        #expect(RetentionPolicy.Rule(keepLast: 0, keepWithinDays: 0).kept(times, now: now).isEmpty)
    }

    @Test func staggeredKeepsOnePerHourForADayThenOnePerDay() {
        let hour = Self.day / 24
        let now = 100 * Self.day
        // Every 10 minutes for two days: 288 versions.
        let times = (0..<288).map { now - Int64($0) * hour / 6 }
        let kept = RetentionPolicy.Rule(keepLast: 0, keepWithinDays: 30, staggered: true).kept(times, now: now)
        // 24 hourly buckets in the first day, then the second day's one daily bucket.
        #expect(kept.count == 25)
        #expect(kept.contains(0), "the newest of each bucket")
    }

    @Test func gcOfTenThousandUpdatesKeepsExactlyWhatThePolicySaysAndTheCurrentVersion() throws {
        var workspace = self.workspace
        workspace.durable = false
        for n in 0..<10_000 { try workspace.write("notes.md", string: "version \(n)\n") }
        let before = try workspace.history("notes.md")
        #expect(before.filter(\.replacedStored).count == 9_999)
        let rule = RetentionPolicy.Rule(keepLast: 10, keepWithinDays: 30)

        // Today, all 9,999 replaced versions are within 30 days: all stay.
        let today = try workspace.pruneVersions(rule, protecting: [], dryRun: true)
        #expect(today.pruned.isEmpty && today.kept == 9_999)

        // 31 days on, only the newest 10 are within the policy.
        let later = Syscall.nowNanoseconds() + 31 * Self.day
        let dry = try workspace.pruneVersions(rule, protecting: [], now: later, dryRun: true)
        #expect(dry.pruned.count == 9_989 && dry.kept == 10 && dry.bytesFreed > 0)
        #expect(try objectFiles().count == 9_999, "a dry run changes nothing")

        let report = try workspace.pruneVersions(rule, protecting: [], now: later, dryRun: false)
        #expect(report.pruned.count == 9_989)
        let left = Set(try objectFiles())
        let newest = Set((9_990..<10_000).map { ContentHash(of: "version \($0 - 1)\n").hex })
        #expect(left == newest, "exactly the 10 newest replaced versions are left")
        #expect(fixture.contents("notes.md") == "version 9999\n")

        // History still lists every version; the pruned ones are marked.
        let pruned = try workspace.prunedVersions()
        #expect(try workspace.history("notes.md").count == 10_000)
        #expect(pruned.contains(ContentHash(of: "version 5\n")))
        let restore = #expect(throws: WorkspaceError.self) { try workspace.restore("notes.md", version: String(ContentHash(of: "version 5\n").hex.prefix(10))) }
        #expect(restore?.message.contains("pruned by the retention policy") == true, "\(restore?.message ?? "")")

        // A second gc finds nothing more to do.
        #expect(try workspace.pruneVersions(rule, protecting: [], now: later, dryRun: false).pruned.isEmpty)
        // A kept version restores.
        #expect(try workspace.restore("notes.md", version: String(ContentHash(of: "version 9995\n").hex.prefix(10))).size > 0)
    }

    @Test func protectedVersionsAndTheCurrentContentOfAnyFileAreNeverPruned() throws {
        var workspace = self.workspace
        workspace.durable = false
        for n in 0..<5 { try workspace.write("a.md", string: "a\(n)\n") }
        // b.md now holds what was a.md's first version: content is shared by hash.
        try fixture.write("b.md", "a0\n")
        let later = Syscall.nowNanoseconds() + 400 * Self.day
        let report = try workspace.pruneVersions(.init(keepLast: 0, keepWithinDays: 0), protecting: [ContentHash(of: "a2\n")], now: later, dryRun: false)
        #expect(Set(report.pruned.map(\.version)) == [ContentHash(of: "a1\n").hex, ContentHash(of: "a3\n").hex])
        #expect(report.protected == 2)
        #expect(try workspace.objects.load(ContentHash(of: "a0\n")) == Array("a0\n".utf8), "the current content of b.md")
        #expect(try workspace.objects.load(ContentHash(of: "a2\n")) == Array("a2\n".utf8), "protected by the caller")
    }

    @Test func aVersionDisplacedAgainWhileItIsPrunedComesBack() throws {
        var workspace = self.workspace
        workspace.durable = false
        for n in 0..<3 { try workspace.write("a.md", string: "a\(n)\n") }
        let later = Syscall.nowNanoseconds() + 400 * Self.day
        _ = try workspace.pruneVersions(.init(keepLast: 0, keepWithinDays: 0), protecting: [], now: later, dryRun: false)
        #expect(!workspace.objects.contains(ContentHash(of: "a0\n")))
        // The pruned content becomes a file's content and is replaced again: it is stored anew
        // and no longer counts as pruned.
        try workspace.write("a.md", string: "a0\n")
        try workspace.write("a.md", string: "a9\n")
        #expect(try workspace.objects.load(ContentHash(of: "a0\n")) == Array("a0\n".utf8))
        #expect(try workspace.restore("a.md", version: String(ContentHash(of: "a0\n").hex.prefix(8))).size == 3)
    }

    private func objectFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workspace.layout.objects).filter { $0.count == 64 }
    }
}
