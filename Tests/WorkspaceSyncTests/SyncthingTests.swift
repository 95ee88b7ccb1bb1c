import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

@Suite("Syncthing's conflict copies are folded back in")
struct SyncthingTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-syncthing-" + UUID().uuidString

    @Test func aCleanCopyIsMergedKeptInTheStoreAndRemoved() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let replica = try ScratchWorkspace(in: base, name: "laptop")
        let context = "# Context\n\n## Goals\n- one\n\n## Decisions\n- two\n"
        try replica.write("context.md", context)
        try SyncIndex(workspace: replica.workspace).refresh()  // the base Relay last saw
        // Syncthing kept the desktop's edit and saved the laptop's as a conflict copy.
        try replica.write("context.md", context.replacingOccurrences(of: "- one\n", with: "- one\n- desktop goal\n"))
        let copy = "context.sync-conflict-20261122-101500-ABCDEF1.md"
        let laptopVersion = context + "- laptop decision\n"
        try replica.write(copy, laptopVersion)
        // And a journal both sides started on their own.
        try replica.write("Journal/user/2026-11-22.md", "- 09:00 desktop\n")
        try replica.write("Journal/user/2026-11-22.sync-conflict-20261122-101501-ABCDEF1.md", "- 09:05 laptop\n")

        let outcome = try SyncthingConflicts.resolve(in: replica.workspace)
        #expect(Set(outcome.merged) == [copy, "Journal/user/2026-11-22.sync-conflict-20261122-101501-ABCDEF1.md"])
        #expect(outcome.left.isEmpty)
        let merged = try #require(replica.contents("context.md"))
        #expect(merged.contains("- desktop goal\n") && merged.contains("- laptop decision\n"))
        #expect(replica.contents(copy) == nil)
        #expect(replica.workspace.objects.contains(ContentHash(of: laptopVersion)), "the copy's bytes stay recoverable")
        let journal = try #require(replica.contents("Journal/user/2026-11-22.md"))
        #expect(journal.contains("- 09:00 desktop") && journal.contains("- 09:05 laptop"))
    }

    @Test func anOverlappingCopyIsLeftForAPerson() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let replica = try ScratchWorkspace(in: base, name: "laptop")
        try replica.write("notes.md", "status: draft\n")
        try SyncIndex(workspace: replica.workspace).refresh()
        try replica.write("notes.md", "status: final\n")
        try replica.write("notes.sync-conflict-20261122-101500-ABCDEF1.md", "status: abandoned\n")
        let outcome = try SyncthingConflicts.resolve(in: replica.workspace)
        #expect(outcome.merged.isEmpty && outcome.left == ["notes.sync-conflict-20261122-101500-ABCDEF1.md"])
        #expect(replica.contents("notes.md") == "status: final\n")
        #expect(replica.contents("notes.sync-conflict-20261122-101500-ABCDEF1.md") == "status: abandoned\n")
    }
}
