import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// Issue 30: retention never prunes what sync needs.
@Suite("Retention and sync", .serialized)
struct RetentionSyncTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-sync-gc-" + UUID().uuidString

    @Test func aSyncAfterGCStillMergesThreeWayBecauseTheMergeBaseWasKept() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let context = ReconcileScenarioTests.context
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        try a.write("context.md", context)
        try sync(a, b)
        // The laptop's agents rewrite context.md a dozen times; the desktop's person edits another section.
        var laptop = a.workspace
        laptop.durable = false
        for n in 1...12 {
            try laptop.write("context.md", string: context.replacingOccurrences(of: "- write the llama essay\n", with: "- write the llama essay\n- then alpaca essay \(n)\n"))
        }
        try b.write("context.md", context.replacingOccurrences(of: "- use SmolLM2\n", with: "- use SmolLM2\n- sync nightly\n"))

        // A year on, with a policy that keeps nothing past the current version.
        let later = Int64(Date().timeIntervalSince1970 * 1e9) + 365 * 86_400_000_000_000
        let nothing = RetentionPolicy.Rule(keepLast: 0, keepWithinDays: 0)
        let base = ContentHash(of: context)
        let unprotected = try laptop.pruneVersions(nothing, protecting: [], now: later, dryRun: true)
        #expect(unprotected.pruned.contains { $0.version == base.hex }, "without sync's protection the merge base would go")
        let keep = Set(try SyncIndex(workspace: laptop).versionsToKeep().compactMap(ContentHash.init(hex:)))
        #expect(keep.contains(base))
        let report = try laptop.pruneVersions(nothing, protecting: keep, now: later, dryRun: false)
        #expect(report.pruned.count == 11 && !report.pruned.contains { $0.version == base.hex }, "\(report)")
        #expect(laptop.objects.contains(base))

        let summary = try sync(b, a)
        #expect(summary.merged == 1 && summary.conflicts == 0)
        let merged = try #require(a.contents("context.md"))
        #expect(merged.contains("- then alpaca essay 12\n") && merged.contains("- sync nightly\n"))
        #expect(a.tree() == b.tree() && a.conflictCopies().isEmpty)
    }
}
