import Foundation
import Testing
import WorkspaceSync

/// A large text file edited on both replicas (issue 20): the merge's memory does not grow with
/// the file times the edits. The real binary syncs two folders; its peak resident set is read
/// from the kernel (its own `VmHWM`), not timed. How long it takes is in `make bench`, not here.
@Suite("relay sync: a 50,000-line file edited on both replicas", .serialized)
struct SyncLargeMergeTests {
    /// The most the sync process may hold at its peak. A debug build of relay with its
    /// indexes, SQLite and three versions of a 1.6 MB file takes ~60–75 MB; the diff that
    /// copied its V array per edit distance took 1.6 GB for a 5,000-line file.
    static let peakLimitKilobytes = 100 * 1024

    /// relay to completion, and its own peak resident set (KiB): the kernel's `VmHWM`, which
    /// `relay sync` writes with its timings. (`wait4`'s `ru_maxrss` is no good here: a child
    /// spawned by a large test process starts with that process's peak.)
    static func measuredRelay(_ arguments: [String]) throws -> (status: Int32, output: Data, peakKilobytes: Int) {
        let result = try run(Binaries.relay, arguments, environment: ["RELAY_SYNC_TIMINGS": "1"])
        let line = result.standardError.split(separator: "\n").first { $0.contains(" peak-resident-kb ") }
        let peak = try #require(line.flatMap { Int($0.split(separator: " ").last ?? "") }, "no peak in: \(result.standardError.suffix(500))")
        return (result.status, result.standardOutput, peak)
    }

    /// Two replicas sharing `base` at `Research/table.csv` after a first sync.
    static func pairSharing(_ base: String) throws -> SyncFirstMeetingTests.Pair {
        let pair = try SyncFirstMeetingTests.Pair()
        try SyncFirstMeetingTests.relay(["init", pair.a])
        try SyncFirstMeetingTests.relay(["init", pair.b])
        try SyncFirstMeetingTests.write(pair.a + "/Research/table.csv", base)
        let first = try SyncFirstMeetingTests.sync(pair.a, pair.b)
        #expect(first.copied == 1 && first.conflicts == 0, "\(first.actions)")
        #expect(SyncFirstMeetingTests.read(pair.b + "/Research/table.csv") == base)
        return pair
    }

    static func rows(_ count: Int) -> [String] {
        (0..<count).map { "\($0),sample-\($0 * 7919 % 100_003),\($0 % 97).\($0 % 13) kg,site \($0 % 31)\n" }
    }

    /// Two replicas that share `base` as Research/table.csv, edited to `ours` on A and `theirs`
    /// on B, then synced by a `relay sync` whose peak resident set is measured.
    static func syncTable(base: [String], ours: [String], theirs: [String]) throws
        -> (pair: SyncFirstMeetingTests.Pair, result: (status: Int32, output: Data, peakKilobytes: Int), summary: SyncSummary) {
        let pair = try pairSharing(base.joined())
        try SyncFirstMeetingTests.write(pair.a + "/Research/table.csv", ours.joined())
        try SyncFirstMeetingTests.write(pair.b + "/Research/table.csv", theirs.joined())
        let result = try measuredRelay(["sync", "-w", pair.a, "--json", pair.b])
        return (pair, result, try JSONDecoder().decode(SyncSummary.self, from: result.output))
    }

    @Test func aFiftyThousandLineTableRewrittenOnBothReplicasKeepsBothVersionsInLittleMemory() throws {
        let base = Self.rows(50_000)
        var ours = base, theirs = base
        // Every other row on A, every third on B: far more edits than a line merge takes.
        for i in stride(from: 0, to: base.count, by: 2) { ours[i] = "\(i),rewritten on A\n" }
        for i in stride(from: 0, to: base.count, by: 3) { theirs[i] = "\(i),rewritten on B\n" }
        let (pair, result, summary) = try Self.syncTable(base: base, ours: ours, theirs: theirs)
        #expect(result.status == 0)
        #expect(summary.tooLargeToMerge == ["Research/table.csv"], "\(summary.actions)")
        #expect(summary.conflicts == 1)
        #expect(result.peakKilobytes < Self.peakLimitKilobytes, "peak resident set \(result.peakKilobytes) KB")

        // Nothing lost: one version in the file, the other in its conflict copy, on both sides.
        let copies = SyncFirstMeetingTests.conflictCopies(pair.a)
        #expect(copies.count == 1 && copies == SyncFirstMeetingTests.conflictCopies(pair.b))
        let kept = SyncFirstMeetingTests.read(pair.a + "/Research/table.csv")
        let copied = SyncFirstMeetingTests.read(pair.a + "/" + (copies.first ?? ""))
        #expect(Set([kept, copied]) == Set([ours.joined(), theirs.joined()]))
        #expect(SyncFirstMeetingTests.tree(pair.a) == SyncFirstMeetingTests.tree(pair.b))
    }

    @Test func aFiftyThousandLineTableEditedInManyPlacesOnBothReplicasMergesInLittleMemory() throws {
        let base = Self.rows(50_000)
        var ours = base, theirs = base
        // A thousand rows changed on each side, interleaved all through the file.
        for i in stride(from: 0, to: base.count, by: 50) { ours[i] = "\(i),corrected on A\n" }
        for i in stride(from: 25, to: base.count, by: 50) { theirs[i] = "\(i),corrected on B\n" }
        ours.insert("id,sample,weight,site\n", at: 0)
        theirs.append("50000,added on B\n")
        let (pair, result, summary) = try Self.syncTable(base: base, ours: ours, theirs: theirs)
        #expect(result.status == 0)
        #expect(summary.merged == 1 && summary.conflicts == 0 && summary.tooLargeToMerge.isEmpty, "\(summary.actions)")
        #expect(result.peakKilobytes < Self.peakLimitKilobytes, "peak resident set \(result.peakKilobytes) KB")

        var expected = base
        for i in stride(from: 0, to: base.count, by: 50) { expected[i] = ours[i + 1] }
        for i in stride(from: 25, to: base.count, by: 50) { expected[i] = theirs[i] }
        let merged = ["id,sample,weight,site\n"] + expected + ["50000,added on B\n"]
        #expect(SyncFirstMeetingTests.read(pair.a + "/Research/table.csv") == merged.joined())
        #expect(SyncFirstMeetingTests.read(pair.b + "/Research/table.csv") == merged.joined())
        #expect(SyncFirstMeetingTests.conflictCopies(pair.a).isEmpty)
    }
}
