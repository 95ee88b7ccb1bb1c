import Foundation
import Glibc
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Write batches: many replacements, one flush, the same checks as an update")
struct WriteBatchTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core(durable: true) }
    var workspace: Workspace { fixture.workspace }

    @Test func nothingIsInPlaceBeforeCommitAndEverythingIsAfterWithHistoryAndTheDisplacedVersionStored() throws {
        try fixture.write("notes/old.md", "old\n")
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/new.md", bytes: Array("new\n".utf8), expected: nil)
        try batch.stage("notes/old.md", bytes: Array("replaced\n".utf8), expected: ContentHash(of: "old\n"))
        try batch.storeObject(Array("a merge base\n".utf8))
        #expect(fixture.contents("notes/new.md") == nil && fixture.contents("notes/old.md") == "old\n")
        #expect(!workspace.objects.contains(ContentHash(of: "a merge base\n")))

        let outcomes = try batch.commit()
        #expect(Set(outcomes.compactMap { $0.result?.path }) == ["notes/new.md", "notes/old.md"])
        #expect(fixture.contents("notes/new.md") == "new\n" && fixture.contents("notes/old.md") == "replaced\n")
        #expect(try workspace.objects.load(ContentHash(of: "old\n")) == Array("old\n".utf8), "the displaced version is kept")
        #expect(workspace.objects.contains(ContentHash(of: "a merge base\n")))
        #expect(try workspace.history("notes/old.md").last?.replaced == ContentHash(of: "old\n"))
        let stamp = try #require(outcomes.first { $0.path == "notes/new.md" }?.stamp)
        #expect(workspace.stamp(ofFileAt: "notes/new.md") == stamp)
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// A batch that stores more than `loosePerBatch` versions writes them all into one pack:
    /// every version is in the store after the commit (and none before), loads back byte for
    /// byte, is counted by `relay status`, and a later batch neither stores it again nor loses
    /// it (the one new version it stores stays loose).
    @Test func versionsPastTheLooseLimitGoIntoOnePackAndLoadBackAfterTheCommit() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        let versions = (0..<(WriteBatch.loosePerBatch + 40)).map { Array("version \($0)\n".utf8) }
        for version in versions { try batch.storeObject(version) }
        #expect(!workspace.objects.contains(ContentHash(of: versions.last!)), "nothing is stored before the commit")
        _ = try batch.commit()
        for version in versions { #expect(try workspace.objects.load(ContentHash(of: version)) == version) }
        func loose() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: workspace.layout.objects).filter { $0.count == 64 } }
        #expect(try loose().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.layout.objects + "/packs").count == 1)
        #expect(try workspace.status().storedVersions == versions.count)
        // A second batch of the same versions and one more stores only the new one, loose.
        let again = WriteBatch(workspace, operation: "sync")
        for version in versions + [Array("one more\n".utf8)] { try again.storeObject(version) }
        _ = try again.commit()
        #expect(try loose() == [ContentHash(of: "one more\n").hex])
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.layout.objects + "/packs").count == 1)
        #expect(try workspace.status().storedVersions == versions.count + 1)
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// A pack that is cut short (a copy of `.relay/` taken mid-write, a damaged disk) is not
    /// read at all: its versions are missing, as lost loose versions would be, and the error
    /// says which version is not in the store; a damaged version in a whole pack is refused.
    @Test func aPackCutShortIsIgnoredAndADamagedVersionInAPackIsRefused() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        let versions = (0..<(WriteBatch.loosePerBatch + 2)).map { Array("kept \($0)\n".utf8) }
        for version in versions { try batch.storeObject(version) }
        _ = try batch.commit()
        let packs = workspace.layout.objects + "/packs"
        let pack = packs + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: packs).first))
        let whole = try #require(FileManager.default.contents(atPath: pack))
        let firstPacked = ContentHash(of: versions[0]), lastPacked = ContentHash(of: versions.last!)

        // The first packed version's bytes damaged in place (the table still points at them),
        // in a workspace that has not read this pack yet.
        let damaged = try ScratchWorkspace.core(durable: false)
        var bytes = whole
        bytes[0] ^= 0xff
        try FileManager.default.createDirectory(atPath: damaged.workspace.layout.objects + "/packs", withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: damaged.workspace.layout.objects + "/packs/pack-1.pack"))
        #expect(throws: WorkspaceError.self) { try damaged.workspace.objects.load(firstPacked) }
        #expect(try damaged.workspace.objects.load(lastPacked) == versions.last!, "the others still load")

        // Cut short: its table is gone, so is every version in it.
        let cut = try ScratchWorkspace.core(durable: false)
        try FileManager.default.createDirectory(atPath: cut.workspace.layout.objects + "/packs", withIntermediateDirectories: true)
        try whole.prefix(whole.count - 5).write(to: URL(fileURLWithPath: cut.workspace.layout.objects + "/packs/pack-1.pack"))
        #expect(!cut.workspace.objects.contains(lastPacked))
        #expect(throws: WorkspaceError.self) { try cut.workspace.objects.load(lastPacked) }
    }

    /// A batch's temporaries are handed to the writeback thread, which starts their disk
    /// writes and closes them: more than its backlog at once (the rest are started and closed
    /// by the writer), and afterwards not one descriptor of them is left open.
    @Test func aBatchsTemporariesAreClosedByTheWritebackThreadNoneLeftOpen() throws {
        let count = BackgroundWriteback.backlog + 150
        do {
            // Dropped at the end of this block, with its own lock (held while it lives).
            let batch = WriteBatch(workspace, operation: "sync")
            for i in 0..<count {
                try batch.stage("many/f\(i % 9)/n\(i).md", bytes: Array("note \(i)\n".utf8), expected: nil)
                if i % 3 == 0 { try batch.storeObject(Array("base \(i)\n".utf8)) }
            }
            let outcomes = try batch.commit()
            #expect(outcomes.compactMap(\.result).count == count)
        }
        #expect(fixture.contents("many/f\((count - 1) % 9)/n\(count - 1).md") == "note \(count - 1)\n")
        #expect(workspace.objects.contains(ContentHash(of: "base 0\n")))
        func openHere() -> [String] {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
                .filter { $0.hasPrefix(workspace.root + "/") }
        }
        BackgroundWriteback.waitUntilClosed()
        // A merge of the history's batch files, started in the background by the commit, holds
        // their folder open while it runs: it is no temporary of the batch.
        Housekeeping.waitUntilIdle()
        #expect(openHere().isEmpty, "still open: \(openHere().prefix(3))")
    }

    /// `commit(whileFlushing:)` hands over the outcomes once every file is in place (while the
    /// last flush runs), returns what the caller made of them, and passes on the caller's
    /// error after the flush, with the files installed and the locks free; with nothing
    /// staged the caller still runs, on no outcomes.
    @Test func aCallerRecordsTheOutcomesWhileTheLastFlushRunsAndItsErrorComesBackAfter() throws {
        struct RecordFailed: Error {}
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/a.md", bytes: Array("a\n".utf8), expected: nil)
        try batch.stage("notes/b.md", bytes: Array("b\n".utf8), expected: nil)
        let seen = try batch.commit { outcomes -> [String] in
            #expect(fixture.contents("notes/a.md") == "a\n" && fixture.contents("notes/b.md") == "b\n", "in place before the caller runs")
            return outcomes.compactMap { $0.result?.path }.sorted()
        }
        #expect(seen == ["notes/a.md", "notes/b.md"])
        #expect(try WriteBatch(workspace, operation: "sync").commit { $0.count } == 0)

        let failing = WriteBatch(workspace, operation: "sync")
        try failing.stage("notes/a.md", bytes: Array("a2\n".utf8), expected: ContentHash(of: "a\n"))
        #expect(throws: RecordFailed.self) { try failing.commit { _ in throw RecordFailed() } }
        #expect(fixture.contents("notes/a.md") == "a2\n")
        // The lock is free: another batch takes the path at once.
        let next = WriteBatch(workspace, operation: "sync")
        try next.stage("notes/a.md", bytes: Array("a3\n".utf8), expected: ContentHash(of: "a2\n"))
        _ = try next.commit()
        #expect(fixture.contents("notes/a.md") == "a3\n")
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// An editor that opened Relay's own last write of a file, and saves into it in place just
    /// after a batch swapped that file out, keeps its save: the batch sees the file open (a
    /// lease), waits its quiet period, finds the displaced version written and swaps it back.
    @Test func anInPlaceSaveIntoRelaysOwnLastWriteIsHandedBack() throws {
        let first = WriteBatch(workspace, operation: "sync")
        try first.stage("notes/plan.md", bytes: Array("relay's version\n".utf8), expected: nil)
        _ = try first.commit()
        let path = fixture.path("notes/plan.md")
        // The editor opens the file (Relay's last write) before the next batch swaps it out.
        let editor = open(path, O_RDWR)
        try #require(editor >= 0)
        var info = stat()
        fstat(editor, &info)
        let openedInode = info.st_ino
        let saved = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // It saves as soon as the file at the path is no longer the one it has open (the
            // rename over it is the event).
            _ = try? FileEvents.wait(under: [fixture.path("notes")], guardSeconds: 60, "the batch's rename over notes/plan.md") {
                var now = stat()
                return stat(path, &now) == 0 && now.st_ino == openedInode ? nil : ()
            }
            let text = Array("the person's save\n".utf8)
            _ = ftruncate(editor, 0)
            _ = pwrite(editor, text, text.count, 0)
            close(editor)
            saved.signal()
        }
        let second = WriteBatch(workspace, operation: "sync")
        try second.stage("notes/plan.md", bytes: Array("the next sync's version\n".utf8), expected: ContentHash(of: "relay's version\n"))
        let outcomes = try second.commit()
        saved.wait()
        #expect(fixture.contents("notes/plan.md") == "the person's save\n")
        #expect(outcomes.first { $0.path == "notes/plan.md" }?.result == nil, "reported as changed, not installed")
    }

    /// A replaced file keeps its permissions (an executable script stays executable), and a new
    /// file lands in folders the batch makes, several levels deep.
    @Test func aReplacedFileKeepsItsPermissionsAndANewOneGetsItsFolders() throws {
        try fixture.write("tools/run.sh", "echo old\n")
        chmod(fixture.path("tools/run.sh"), 0o750)
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("tools/run.sh", bytes: Array("echo new\n".utf8), expected: ContentHash(of: "echo old\n"))
        try batch.stage("deep/er/still/new.md", bytes: Array("new\n".utf8), expected: nil)
        _ = try batch.commit()
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.path("tools/run.sh"))
        #expect((attributes[.posixPermissions] as? Int) == 0o750)
        #expect(fixture.contents("tools/run.sh") == "echo new\n" && fixture.contents("deep/er/still/new.md") == "new\n")
    }

    /// What a batch no longer needs — a displaced version the store already has, a deleted
    /// file — leaves its path at once and is unlinked afterwards in the background.
    @Test func displacedCopiesTheStoreHasAndDeletedFilesLeaveAtOnceAndTheTrashEmptiesAfterwards() throws {
        try fixture.write("notes/kept.md", "a version the store has\n")
        try fixture.write("notes/gone.md", "to be deleted\n")
        try workspace.objects.store(Array("a version the store has\n".utf8))
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/kept.md", bytes: Array("new\n".utf8), expected: ContentHash(of: "a version the store has\n"))
        try batch.stageRemoval("notes/gone.md", expected: ContentHash(of: "to be deleted\n"))
        let movedBefore = Trash.moved.withLock { $0 }
        let outcomes = try batch.commit()
        // Both went through the trash (other tests may add to the count meanwhile).
        #expect(Trash.moved.withLock { $0 } >= movedBefore + 2)
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.result != nil || $0.removed })
        #expect(fixture.contents("notes/kept.md") == "new\n" && fixture.contents("notes/gone.md") == nil)
        #expect(try workspace.objects.load(ContentHash(of: "to be deleted\n")) == Array("to be deleted\n".utf8))
        #expect(fixture.allTemporaries().isEmpty)
        #expect(try waitUntilEmpty(workspace.layout.trash), "the trash was not emptied")
    }

    /// A process killed before its sweep leaves files in the trash: the next write in any
    /// process empties it.
    @Test func aTrashLeftFullByAnEarlierProcessIsEmptiedByTheNextWrite() throws {
        let trash = workspace.layout.trash
        try FileManager.default.createDirectory(atPath: trash, withIntermediateDirectories: true)
        for n in 0..<5 { try "left by a killed process \(n)\n".write(toFile: trash + "/leftover\(n)", atomically: false, encoding: .utf8) }
        try workspace.write("a.md", string: "a\n")
        #expect(try waitUntilEmpty(trash), "leftovers stayed in \(trash)")
    }

    /// A folder that took a file's place just before the file went to the trash stays where
    /// it is, with what is in it: the trash refuses it as `unlink` would.
    @Test func aFolderInTheFilesPlaceIsNotTakenToTheTrash() throws {
        try fixture.write("notes/inside/keep.md", "a person's file\n")
        let result = Trash.discard(fixture.path("notes/inside"), into: workspace.layout.trash)
        guard case .failure(.isDirectory) = result else {
            Issue.record("expected .isDirectory, got \(result)")
            return
        }
        #expect(fixture.contents("notes/inside/keep.md") == "a person's file\n")
    }

    /// Housekeeping (emptying the trash, merging history) runs at nice 19 on a thread of its
    /// own, and leaves the priority of the rest of the process alone.
    @Test func housekeepingRunsAtTheLowestPriorityAndOnlyThere() throws {
        errno = 0
        let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let seen = LockedBox<Int32?>(nil)
        let ran = DispatchSemaphore(value: 0)
        Housekeeping.run {
            seen.mutate { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            ran.signal()
        }
        // The job's signal is the event; the time is a guard against a hang.
        #expect(ran.wait(timeout: .now() + 30) == .success, "the job never ran")
        #expect(seen.value == 19)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
    }

    /// Whether `folder` empties: the trash is emptied at the lowest priority, behind whatever
    /// else runs; each removal is an event (inotify), the 30 s a guard against a hang.
    private func waitUntilEmpty(_ folder: String) throws -> Bool {
        (try? FileEvents.wait(under: [folder], guardSeconds: 30, "\(folder) to empty") {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).isEmpty ? () : nil
        }) != nil
    }

    @Test func aFileChangedAfterStagingIsLeftAloneAndReportedWhileTheRestIsInstalled() throws {
        try fixture.write("context.md", "what the index saw\n")
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("context.md", bytes: Array("from the peer\n".utf8), expected: ContentHash(of: "what the index saw\n"))
        try batch.stage("other.md", bytes: Array("other\n".utf8), expected: nil)
        // A person saves while the batch is open (an editor takes no lock).
        try fixture.write("context.md", "a person's edit\n")
        let outcomes = try batch.commit()
        #expect(outcomes.first { $0.path == "context.md" }?.result == nil)
        #expect(outcomes.first { $0.path == "other.md" }?.result != nil)
        #expect(fixture.contents("context.md") == "a person's edit\n")
        #expect(fixture.contents("other.md") == "other\n")
        #expect(fixture.allTemporaries().isEmpty)
    }

    @Test func aFileThatAppearedWhereNoneWasExpectedIsNotOverwritten() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("Research/new.md", bytes: Array("from the peer\n".utf8), expected: nil)
        try fixture.write("Research/new.md", "made here meanwhile\n")
        let outcomes = try batch.commit()
        #expect(outcomes.count == 1 && outcomes[0].result == nil)
        #expect(fixture.contents("Research/new.md") == "made here meanwhile\n")
    }

    /// A path new here takes no lock file: the file carries its installed record itself, so the
    /// watcher still knows it for Relay's quiet write — and no longer once a person writes into
    /// it, nor for a copy that took the attribute along. The batch's own lock file goes with it.
    @Test func aNewPathMakesNoLockFileAndStillReadsAsRelaysOwnQuietWrite() throws {
        let lockFiles = { Set((try? FileManager.default.contentsOfDirectory(atPath: workspace.layout.locks)) ?? []) }
        let before = lockFiles()
        do {
            let batch = WriteBatch(workspace, operation: "sync")
            try batch.stage("Research/arrived.md", bytes: Array("from the peer\n".utf8), expected: nil)
            #expect(lockFiles().subtracting(before).count == 1, "only the batch's own lock file, while it lives")
            _ = try batch.commit()
        }
        #expect(lockFiles() == before, "no lock file for the path, and the batch's own is gone")
        #expect(!workspace.writesTrigger)
        let stamp = try #require(workspace.stamp(ofFileAt: "Research/arrived.md"))
        #expect(workspace.isOwnQuietWrite("Research/arrived.md", stamp: stamp))
        #expect(try workspace.history("Research/arrived.md").last?.installed == ContentHash(of: "from the peer\n"))

        // A copy that carries the attribute is another file (another inode).
        let record = try #require(InstalledRecord.attribute(of: fixture.path("Research/arrived.md")))
        try fixture.write("Research/copy.md", "from the peer\n")
        let fd = open(fixture.path("Research/copy.md"), O_WRONLY)
        #expect(fd >= 0)
        let copied = Syscall.setAttribute(fd, InstalledRecord.attributeName, record.encoded)
        #expect((try? copied.get()) != nil)
        close(fd)
        #expect(!workspace.isOwnQuietWrite("Research/copy.md", stamp: try #require(workspace.stamp(ofFileAt: "Research/copy.md"))))

        // A person's in-place edit: same inode, another size and time.
        let handle = try #require(FileHandle(forWritingAtPath: fixture.path("Research/arrived.md")))
        handle.seekToEndOfFile()
        handle.write(Data("a person's line\n".utf8))
        try handle.close()
        let edited = try #require(workspace.stamp(ofFileAt: "Research/arrived.md"))
        #expect(edited.inode == stamp.inode)
        #expect(!workspace.isOwnQuietWrite("Research/arrived.md", stamp: edited))
    }

    /// A temporary named after a batch's lock is the batch's while that lock is held (`relay
    /// status` and every sync's refresh leave it), and a leftover once it is free (a killed
    /// batch's), which they remove.
    @Test func aNewPathsTemporaryBelongsToItsLiveBatchAndIsReclaimedOnceTheBatchsLockIsFree() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/new.md", bytes: Array("new\n".utf8), expected: nil)
        // Made on the batch's writer thread, after `stage` returns.
        batch.waitForNewFiles()
        let ours = try #require(fixture.temporaries(in: "notes").first)
        // What a batch killed with SIGKILL leaves: a temporary named after a lock nobody holds.
        let orphan = WorkspaceLayout.temporaryPrefix + String(ContentHash(of: "a batch that died").hex.prefix(32)) + "-0badc0de"
        try fixture.write("notes/" + orphan, "half a copy")
        let (reclaimed, active) = try workspace.reclaimTemporaries()
        #expect(reclaimed == ["notes/" + orphan])
        #expect(active == ["notes/" + ours])
        _ = try batch.commit()
        #expect(fixture.contents("notes/new.md") == "new\n")
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// A writer of Relay that begins on a new path between the stage and the commit (its lock
    /// file appears) makes the commit wait for its lock; a file it or anybody put there is then
    /// left alone, and no temporary stays.
    @Test func aWriterThatBeginsOnANewPathBeforeTheCommitIsWaitedForAndItsFileLeftAlone() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("Chats/new.md", bytes: Array("from the peer\n".utf8), expected: nil)
        let lockFile = workspace.lockFile(key: Workspace.lockKey("Chats/new.md"))
        let holding = DispatchSemaphore(value: 0)
        CoordinatedLock.countRefusals(of: lockFile)
        defer { CoordinatedLock.stopCountingRefusals(of: lockFile) }
        let writer = Thread {
            try? workspace.withLock("Chats/new.md") {
                holding.signal()
                // Held until the commit has been seen waiting for it.
                _ = CoordinatedLock.waitForRefusals(of: lockFile, atLeast: 1)
                try? "an agent's note\n".write(toFile: fixture.path("Chats/new.md"), atomically: false, encoding: .utf8)
            }
        }
        writer.start()
        holding.wait()
        let outcomes = try batch.commit()
        #expect(CoordinatedLock.refusals(of: lockFile) > 0, "the commit waited for the writer's lock")
        #expect(outcomes.count == 1 && outcomes[0].result == nil)
        #expect(fixture.contents("Chats/new.md") == "an agent's note\n")
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// Where the file system keeps no extended attributes, a new path takes its lock file as
    /// every path did: the record is there, and the watcher reads it.
    @Test func withoutAttributesANewPathTakesItsLockFileAndKeepsItsRecordThere() throws {
        var plain = workspace
        plain.installedRecordsInFiles = false
        let batch = WriteBatch(plain, operation: "sync")
        try batch.stage("Research/arrived.md", bytes: Array("from the peer\n".utf8), expected: nil)
        try batch.stage("Research/second.md", bytes: Array("also\n".utf8), expected: nil)
        _ = try batch.commit()
        for path in ["Research/arrived.md", "Research/second.md"] {
            #expect(FileManager.default.fileExists(atPath: plain.lockFile(key: Workspace.lockKey(path))))
            #expect(InstalledRecord.attribute(of: fixture.path(path)) == nil)
            #expect(plain.isOwnQuietWrite(path, stamp: try #require(plain.stamp(ofFileAt: path))))
        }
        #expect(fixture.allTemporaries().isEmpty)
    }

    @Test func aBatchDroppedWithoutCommitLeavesNoTemporaryAndReleasesItsLocks() throws {
        do {
            let batch = WriteBatch(workspace, operation: "sync")
            try batch.stage("a.md", bytes: Array("a\n".utf8), expected: nil)
            try batch.storeObject(Array("an object\n".utf8))
        }
        #expect(fixture.contents("a.md") == nil)
        #expect(fixture.allTemporaries().isEmpty)
        var quick = workspace
        quick.lockTimeout = .milliseconds(200)
        try quick.write("a.md", string: "written after\n")  // the lock is free again
        #expect(fixture.contents("a.md") == "written after\n")
    }

    @Test func stagingThePathTwiceIsRefused() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("a.md", bytes: Array("1\n".utf8), expected: nil)
        #expect { try batch.stage("a.md", bytes: Array("2\n".utf8), expected: nil) } throws: {
            ($0 as? WorkspaceError)?.code == .invalidInput
        }
        _ = try batch.commit()
        #expect(fixture.contents("a.md") == "1\n")
    }

    @Test func stagedRemovalsHappenAtCommitKeepTheContentAndLeaveAFileAPersonChangedMeanwhile() throws {
        try fixture.write("old/a.md", "delete me\n")
        try fixture.write("old/b.md", "delete me too\n")
        try fixture.write("old/c.md", "the index saw this\n")
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stageRemoval("old/a.md", expected: ContentHash(of: "delete me\n"))
        try batch.stageRemoval("old/b.md", expected: ContentHash(of: "delete me too\n"))
        try batch.stageRemoval("old/c.md", expected: ContentHash(of: "the index saw this\n"))
        try batch.stageRemoval("old/gone.md", expected: ContentHash(of: "whatever\n"))
        try batch.stage("new.md", bytes: Array("new\n".utf8), expected: nil)
        #expect(fixture.contents("old/a.md") == "delete me\n", "nothing is removed before the commit")
        // A person saves one of them while the batch is open (an editor takes no lock).
        try fixture.write("old/c.md", "a person's edit\n")
        unlink(fixture.workspace.root + "/old/b.md")
        let outcomes = try batch.commit()
        #expect(outcomes.first { $0.path == "old/a.md" }?.removed == true && fixture.contents("old/a.md") == nil)
        #expect(outcomes.first { $0.path == "old/b.md" }?.removed == true, "already gone counts as removed")
        #expect(outcomes.first { $0.path == "old/gone.md" }?.removed == true)
        #expect(outcomes.first { $0.path == "old/c.md" }?.removed == false)
        #expect(fixture.contents("old/c.md") == "a person's edit\n", "a file that changed is never deleted")
        #expect(fixture.contents("new.md") == "new\n")
        #expect(try workspace.objects.load(ContentHash(of: "delete me\n")) == Array("delete me\n".utf8), "the deleted version is kept")
        #expect(try workspace.history("old/a.md").last?.operation == "sync-delete")
        #expect(fixture.allTemporaries().isEmpty)
        // The locks were released: a plain write of each path goes through.
        try workspace.write("old/a.md", string: "back\n")
    }

    // MARK: Files checked by the stamp a fresh index vouches for

    /// Rewrites `path` in place with `content` of the same size and puts its modification
    /// time back: a change the stamp cannot see (as `touch -d` after an edit would make).
    private func changeBehindItsStamp(_ path: String, to content: String) throws {
        let absolute = fixture.path(path)
        var before = stat()
        #expect(lstat(absolute, &before) == 0)
        #expect(Int(before.st_size) == content.utf8.count)
        let fd = open(absolute, O_WRONLY)
        #expect(fd >= 0)
        _ = content.withCString { write(fd, $0, content.utf8.count) }
        var times = [before.st_atim, before.st_mtim]
        #expect(futimens(fd, &times) == 0)
        close(fd)
    }

    /// `notes/a.md` and `notes/gone.md` holding what the index saw (and the store too, when
    /// `stored`): their expected hash and the stamps the index would vouch for.
    private func twoFilesTheIndexSaw(stored: Bool) throws -> (expected: ContentHash, stampA: FileStamp, stampGone: FileStamp) {
        try fixture.write("notes/a.md", "seen by the index\n")
        try fixture.write("notes/gone.md", "seen by the index\n")
        if stored { try workspace.objects.store(Array("seen by the index\n".utf8)) }
        return (ContentHash(of: "seen by the index\n"), try #require(workspace.stamp(ofFileAt: "notes/a.md")),
                try #require(workspace.stamp(ofFileAt: "notes/gone.md")))
    }

    /// A batch replacing `notes/a.md` and removing `notes/gone.md`, each by its vouched stamp.
    private func replaceAndRemoveByStamp(_ seen: (expected: ContentHash, stampA: FileStamp, stampGone: FileStamp)) throws -> WriteBatch {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/a.md", bytes: Array("from the peer\n".utf8), expected: seen.expected, knownStamp: seen.stampA)
        try batch.stageRemoval("notes/gone.md", expected: seen.expected, knownStamp: seen.stampGone)
        return batch
    }

    /// The proof that the check reads nothing: a change hidden from the stamp goes unseen,
    /// exactly as the index refresh's own fast check (and Unison's and git's) would miss it,
    /// and the file is replaced as the version the caller expected. The store had that version,
    /// so it is not lost whatever the file held.
    @Test func aFileWithTheStampTheCallerVouchedForIsTakenAsExpectedWithoutBeingRead() throws {
        let seen = try twoFilesTheIndexSaw(stored: true)
        let expected = seen.expected
        try changeBehindItsStamp("notes/a.md", to: "HIDDEN from stamp\n")
        try changeBehindItsStamp("notes/gone.md", to: "HIDDEN from stamp\n")
        #expect(workspace.stamp(ofFileAt: "notes/a.md") == seen.stampA)

        let outcomes = try replaceAndRemoveByStamp(seen).commit()
        #expect(outcomes.first { $0.path == "notes/a.md" }?.result?.replaced == expected, "not read: taken as expected")
        #expect(outcomes.first { $0.path == "notes/gone.md" }?.removed == true)
        #expect(fixture.contents("notes/a.md") == "from the peer\n" && fixture.contents("notes/gone.md") == nil)
        #expect(try workspace.history("notes/a.md").last?.replaced == expected)
        #expect(try workspace.objects.load(expected) == Array("seen by the index\n".utf8), "the store's copy is intact")
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// The same hidden change, with a stamp vouched for but the version missing from the
    /// store: the file is read, is not what was expected, and is left alone — a file
    /// displaced unread is never the only copy of a version.
    @Test func aVouchedStampIsNotEnoughWhenTheStoreLacksTheVersionSoTheFileIsReadAndAChangeKept() throws {
        let seen = try twoFilesTheIndexSaw(stored: false)
        try changeBehindItsStamp("notes/a.md", to: "HIDDEN from stamp\n")
        try changeBehindItsStamp("notes/gone.md", to: "HIDDEN from stamp\n")

        let outcomes = try replaceAndRemoveByStamp(seen).commit()
        #expect(outcomes.first { $0.path == "notes/a.md" }?.result == nil)
        #expect(outcomes.first { $0.path == "notes/gone.md" }?.removed == false)
        #expect(fixture.contents("notes/a.md") == "HIDDEN from stamp\n")
        #expect(fixture.contents("notes/gone.md") == "HIDDEN from stamp\n")
        #expect(fixture.allTemporaries().isEmpty)
    }

    /// A person's save after the stamp was taken moves it (the index vouches only for stamps
    /// older than the timestamp tick, so the save lands in a later one): read, seen, kept.
    @Test func aSaveAfterTheVouchedStampIsSeenAndLeftAloneEvenAtTheSameSize() throws {
        let seen = try twoFilesTheIndexSaw(stored: true)
        // The file system's clock past the stamps' tick, seen on a file of its own: the save
        // below lands in a later tick whatever the timestamp granularity.
        let probe = fixture.path("notes/.tick-probe")
        var tick = stat()
        repeat {
            FileManager.default.createFile(atPath: probe, contents: nil)
            stat(probe, &tick)
        } while Int64(tick.st_mtim.tv_sec) * 1_000_000_000 + Int64(tick.st_mtim.tv_nsec) <= max(seen.stampA.modifiedNanoseconds, seen.stampGone.modifiedNanoseconds)
        try FileManager.default.removeItem(atPath: probe)
        let batch = try replaceAndRemoveByStamp(seen)
        // In place, the same size: only the modification time tells.
        for path in ["notes/a.md", "notes/gone.md"] {
            let handle = try #require(FileHandle(forWritingAtPath: fixture.path(path)))
            try handle.write(contentsOf: Data("a person's edit!!\n".utf8))
            try handle.close()
        }
        let outcomes = try batch.commit()
        #expect(outcomes.first { $0.path == "notes/a.md" }?.result == nil)
        #expect(outcomes.first { $0.path == "notes/gone.md" }?.removed == false)
        #expect(fixture.contents("notes/a.md") == "a person's edit!!\n")
        #expect(fixture.contents("notes/gone.md") == "a person's edit!!\n")
    }
}

/// `StampWalk`: the walk of a sync refresh that the thread reading the index joins.
@Suite("A walk shared by threads")
struct StampWalkTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core(durable: false) }

    /// Whatever the number of threads, the walk finds exactly the files the one-thread walk
    /// finds, with the same stamps: not `.relay/`, not temporaries (but it says it saw one),
    /// not what a symbolic link points to, folders several levels deep.
    @Test(arguments: [1, 2, 3])
    func threadsSharingTheWalkFindWhatOneThreadFinds(threads: Int) throws {
        for i in 0..<600 { try fixture.write("f\(i % 13)/g\(i % 5)/h\(i % 3)/n\(i).md", "note \(i)\n") }
        try fixture.write("top.md", "top\n")
        try fixture.write("f1/.relay-tmp-left", "a killed writer's\n")
        symlink(fixture.path("f2"), fixture.path("link-to-folder"))
        symlink(fixture.path("top.md"), fixture.path("f3/link-to-file"))
        let workspace = fixture.workspace
        var sawTemporary = false
        let expected = try workspace.fileStamps(sawTemporary: &sawTemporary)
        #expect(sawTemporary && expected.count == 601)

        let walk = StampWalk(workspace)
        let helpers = (1..<threads).map { _ in Thread { walk.help() } }
        for helper in helpers { helper.start() }
        walk.help()
        let found = try walk.result()
        #expect(found.sawTemporary)
        #expect(found.stamps.count == expected.count)
        let byPath = Dictionary(uniqueKeysWithValues: found.stamps.map { ($0.path, $0.stamp) })
        for (path, stamp) in expected { #expect(byPath[path] == stamp, "\(path)") }
        // Helping after the walk is over changes nothing.
        walk.help()
        #expect(try walk.result().stamps.count == expected.count)
    }
}
