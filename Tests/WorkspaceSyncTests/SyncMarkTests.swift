import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// After a clean sync both replicas record the same mark, and the next sync between them looks
/// only at the paths written on either side since (`SyncMark`). These tests try to make it
/// pass over a path that differs: a sync that left something over, a mark only one side has,
/// an index restored from a backup, the protocol.
@Suite("Marks of clean syncs: later syncs look only at what was written since", .serialized)
struct SyncMarkTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-sync-mark-" + UUID().uuidString

    func populated() throws -> (ScratchWorkspace, ScratchWorkspace) { try laptopAndDesktop(in: base) }

    @Test func aSyncAfterACleanOneLooksOnlyAtThePathsWrittenSince() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        #expect(try sync(a, b).examined == 220, "a first sync looks at every path")
        // The second looks at what the first one wrote (its copies), the third at nothing.
        #expect(try sync(a, b).examined <= 220)
        let settled = try sync(a, b)
        #expect(settled.examined == 0 && settled.transferred == 0)

        try a.write("notes/n3/file3.md", "edited on the laptop\n")
        try b.write("desk/d4.txt", "edited on the desktop\n")
        b.delete("notes/n5/file15.md")
        try b.write("desk/new.md", "new on the desktop\n")
        let changed = try sync(a, b)
        #expect(changed.examined == 4, "only the four paths written since: \(changed.examined)")
        #expect(changed.copied == 3 && changed.deleted == 1)
        #expect(a.tree() == b.tree())
        #expect(b.contents("notes/n3/file3.md") == "edited on the laptop\n" && a.contents("notes/n5/file15.md") == nil)

        // Looking at every path finds nothing the marks passed over.
        let everything = try sync(a, b, examineAll: true)
        #expect(everything.examined == 221 && everything.actions.isEmpty)
    }

    @Test func aClashIsLookedAtAndReportedAgainAtEverySyncUntilItIsResolved() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try sync(a, b)
        try sync(a, b)
        // A file on one side where the other has a folder: left alone, so not a clean sync.
        try a.write("plans", "a file named plans\n")
        try b.write("plans/q1.md", "a folder named plans\n")
        let clash = try sync(a, b)
        #expect(clash.clashes.sorted() == ["plans", "plans/q1.md"])
        // That sync left no mark; the one before it stands, and the clash was written after it.
        let again = try sync(a, b)
        #expect(again.clashes.sorted() == ["plans", "plans/q1.md"], "a clash is reported at every sync until it is resolved")
        #expect(again.examined < 220)
        // Renamed by the person: the next sync is clean, and the one after looks at nothing.
        a.delete("plans")
        try a.write("plans.md", "a file named plans\n")
        let resolved = try sync(a, b)
        #expect(resolved.clashes.isEmpty && a.tree() == b.tree())
        try sync(a, b)
        #expect(try sync(a, b).examined == 0)
    }

    @Test func aMarkOnlyOneSideRecordedIsNotTrusted() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try sync(a, b)
        try sync(a, b)
        #expect(try sync(a, b).examined == 0)
        // As if the sync died between writing the two marks: the peer has a newer one.
        let peerIndex = try SyncIndex(workspace: b.workspace)
        let laptop = try SyncIndex(workspace: a.workspace).replica
        let old = try #require(try peerIndex.syncMark(peer: laptop))
        peerIndex.batchesWrites = true
        try peerIndex.setSyncMark(SyncMark(id: "from-a-sync-that-died", mine: old.mine, theirs: old.theirs), peer: laptop)
        try peerIndex.commitWrites()
        #expect(try sync(a, b).examined == 220, "marks that differ: every path")
        #expect(try sync(a, b).examined == 0)
    }

    /// The laptop is restored from a backup taken before the desktop's edit reached it: its
    /// file, index and mark go back; the desktop's mark is newer. Run from the desktop, whose
    /// mark's sequences would pass over the laptop's restored row, the sync must see the marks
    /// differ and look at every path.
    @Test func aReplicaRestoredFromABackupIsLookedAtWholeAndConverges() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try sync(a, b)
        try sync(a, b)
        try sync(a, b)
        let backup = base + "/laptop-backup"
        try FileManager.default.copyItem(atPath: a.root, toPath: backup)

        try b.write("notes/n7/file7.md", "edited on the desktop after the backup\n")
        try sync(b, a)
        #expect(a.contents("notes/n7/file7.md") == "edited on the desktop after the backup\n")
        try sync(b, a)

        try FileManager.default.removeItem(atPath: a.root)
        try FileManager.default.moveItem(atPath: backup, toPath: a.root)
        #expect(a.contents("notes/n7/file7.md") == "note 7\n")
        // The restored laptop writes more than the edit it lost, so its counter passes the old one.
        for i in 0..<30 { try a.write("later/l\(i).md", "written after the restore \(i)\n") }

        let afterRestore = try sync(b, a)
        #expect(afterRestore.examined >= 250, "the marks differ: every path is looked at (\(afterRestore.examined))")
        #expect(a.contents("notes/n7/file7.md") == "edited on the desktop after the backup\n")
        #expect(a.tree() == b.tree())
        #expect(a.conflictCopies().isEmpty)
    }

    @Test func overTheProtocolASyncAfterACleanOneLooksOnlyAtThePathsWrittenSince() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        #expect(try syncOverProtocol(a, b).examined == 220)
        try syncOverProtocol(a, b)
        #expect(try syncOverProtocol(a, b).examined == 0)

        try b.write("desk/d9.txt", "edited at the server\n")
        try a.write("notes/n0/file0.md", "edited at the client\n")
        let changed = try syncOverProtocol(a, b)
        #expect(changed.examined == 2 && changed.copied == 2)
        #expect(a.tree() == b.tree())
        // This side's copy of the peer's index was not read whole: only the rows of the paths
        // looked at (and of the folders above them, for clashes).
        let read = try #require(changed.peerIndex).copyRowsRead
        #expect(read <= 12, "rows of the copy read: \(read)")
        // The folder sync of the same two replicas keeps marks of its own (the same pair): it
        // agrees with the protocol's.
        #expect(try sync(a, b).examined <= 2)
        #expect(try sync(a, b, examineAll: true).actions.isEmpty)
    }

    @Test func overTheProtocolLookingAtEveryPathReadsTheCopyWholeAndAgrees() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        try syncOverProtocol(a, b)
        try b.write("desk/d3.txt", "edited at the server\n")
        let served = try ServedReplica(b)
        defer { served.close() }
        var options = Reconciler.Options()
        options.examineAll = true
        let everything = try Reconciler(local: try LocalEndpoint(workspace: a.workspace), peer: served.endpoint, options: options).run()
        #expect(everything.examined == 220 && everything.copied == 1)
        #expect(try #require(everything.peerIndex).copyRowsRead >= 220, "looking at every path reads the whole copy")
        #expect(a.tree() == b.tree())
    }

    @Test func aDryRunLeavesNoMark() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        var options = Reconciler.Options()
        options.dryRun = true
        #expect(try Reconciler(local: a.workspace, peer: b.workspace, options: options).run().examined == 220)
        #expect(try SyncIndex(workspace: a.workspace).syncMark(peer: try SyncIndex(workspace: b.workspace).replica) == nil)
        #expect(try sync(a, b).examined == 220)
    }
}

@Suite("Paths sync never carries")
struct ExcludedPathTests {
    @Test func relayStateTemporariesAndCookiesAreExcludedAndNothingElse() {
        for path in [".relay", ".relay/sync.sqlite", ".relay/objects/ab", ".relay-tmp-x", "notes/.relay-tmp-context.md-1f",
                     "a/b/.relay-cookie-42", ".relay-cookie-1"] {
            #expect(SyncIndex.isExcluded(path), "\(path) is never synced")
        }
        for path in [".relayed.md", ".relayx/notes.md", "notes/.relay", "notes/.relay/x.md", "relay/.hidden", "a/b.md", ".hidden",
                     "notes/relay-tmp-not-hidden.md", "Journal/ünïcode/.relay-tmpé", "x/.relay-tm"] {
            #expect(!SyncIndex.isExcluded(path), "\(path) is synced")
        }
    }
}
