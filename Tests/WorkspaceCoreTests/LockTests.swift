import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("The coordinated-write lock")
struct LockTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }

    @Test func aHeldLockMakesASecondWriterFailAfterItsTimeoutNamingTheFile() throws {
        var impatient = fixture.workspace
        impatient.lockTimeout = .milliseconds(300)
        let clock = ContinuousClock()
        let started = clock.now
        try fixture.workspace.withLock("Journal/user/today.md") {
            #expect {
                try impatient.append("Journal/user/today.md", line: "blocked")
            } throws: { error in
                let error = error as? WorkspaceError
                return error?.code == .lockTimeout && error?.message.contains("Journal/user/today.md") == true
                    && error?.message.contains("0.3 s") == true
            }
        }
        // A lower bound (it waited out its timeout) on the monotonic clock: no load can break it.
        let waited = clock.now - started
        #expect(waited >= .milliseconds(290))
        #expect(!FileManager.default.fileExists(atPath: fixture.path("Journal/user/today.md")))
    }

    /// A lock file this version makes holds its label, intent and last-installed records in
    /// one block of the file system (1,152 bytes), even for a path too long for its label slot.
    @Test func aLockFileFitsInOneBlockWithItsRecords() throws {
        let long = "notes/" + (0..<24).map { "très-long-folder-\($0)/" }.joined() + "file.md"
        for path in ["context.md", long] {
            try fixture.workspace.write(path, string: "one\n")
            try fixture.workspace.write(path, string: "two\n")
            let file = fixture.workspace.lockFile(key: Workspace.lockKey(path))
            let info = try FileManager.default.attributesOfItem(atPath: file)
            #expect((info[.size] as? Int ?? .max) <= CoordinatedLock.Layout.compactSize, "\(path)")
            // The label is the path (cut at a character when it is long), for people.
            let text = try #require(String(data: try Data(contentsOf: URL(fileURLWithPath: file)), encoding: .utf8))
            let label = String(text.prefix { $0 != "\n" })
            #expect(path.hasPrefix(label) && label.utf8.count < 512 && label.count > 100 || label == path, "\(label)")
            // Relay's own write is recognised as such (the last-installed record is read back).
            let stamp = try #require(fixture.workspace.stamp(ofFileAt: path))
            #expect(fixture.workspace.isOwnQuietWrite(path, stamp: stamp) == !fixture.workspace.writesTrigger)
        }
    }

    /// A lock file an earlier version made (the intent record at 4,096, the last-installed
    /// record at 4,608) keeps those places: a killed writer's leftover named there is removed by
    /// the next writer, and the record of Relay's last write is read where it is.
    @Test func aLockFileOfTheEarlierLayoutIsReadWhereItsRecordsAre() throws {
        let workspace = fixture.workspace
        try workspace.write("old.md", string: "1\n")
        let file = workspace.lockFile(key: Workspace.lockKey("old.md"))
        let leftoverName = WorkspaceLayout.temporaryPrefix + Workspace.lockKey("old.md") + "-0badc0de"
        try "half\n".write(toFile: fixture.path(leftoverName), atomically: false, encoding: .utf8)
        // The earlier layout, written by hand: label, intent at 4096, installed at 4608.
        var bytes = Array("old.md\n".utf8)
        bytes += [UInt8](repeating: 0, count: 4096 - bytes.count)
        let intent = Array("T \(leftoverName)\n".utf8)
        bytes += intent + [UInt8](repeating: 0, count: 512 - intent.count)
        bytes += [UInt8](repeating: 0, count: 128)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(CoordinatedLock.Layout.of(size: bytes.count) == .legacy)
        try workspace.write("old.md", string: "2\n")
        #expect(!FileManager.default.fileExists(atPath: fixture.path(leftoverName)), "the leftover named at 4096 was not removed")
        // The write's last-installed record went to 4608, where it is read back.
        let stamp = try #require(workspace.stamp(ofFileAt: "old.md"))
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        #expect(CoordinatedLock.installedRecord(fd: handle.fileDescriptor)?.stamp == stamp)
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) == 4096 + 512 + 128)
    }

    @Test func locksOfDifferentPathsDoNotBlockEachOther() throws {
        var impatient = fixture.workspace
        impatient.lockTimeout = .milliseconds(100)
        try fixture.workspace.withLock("a.md") {
            try impatient.write("b.md", string: "free\n")
        }
        #expect(fixture.contents("b.md") == "free\n")
    }

    @Test func twoOpenDescriptionsInOneProcessExcludeEachOther() throws {
        let file = fixture.workspace.lockFile(key: "probe")
        let first = try CoordinatedLock.acquire(lockFile: file, label: "probe", timeout: .seconds(1))
        #expect(try CoordinatedLock.tryAcquire(lockFile: file, label: "probe") == nil)
        #expect(CoordinatedLock.isHeld(lockFile: file))
        first.release()
        let second = try #require(try CoordinatedLock.tryAcquire(lockFile: file, label: "probe"))
        second.release()
        #expect(!CoordinatedLock.isHeld(lockFile: file))
    }

    @Test func aWaitingWriterGetsTheLockWhenItIsReleased() throws {
        let workspace = fixture.workspace
        let lockFile = workspace.lockFile(key: Workspace.lockKey("w.md"))
        let holder = try CoordinatedLock.acquire(lockFile: lockFile, label: "w.md", timeout: .seconds(1))
        CoordinatedLock.countRefusals(of: lockFile)
        defer { CoordinatedLock.stopCountingRefusals(of: lockFile) }
        let done = LockedBox(false)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = try? workspace.append("w.md", line: "after release")
            done.mutate { $0 = true }
            finished.signal()
        }
        thread.start()
        // Not a pause: the writer is seen trying the held lock and being refused, three times.
        #expect(CoordinatedLock.waitForRefusals(of: lockFile, atLeast: 3), "the writer was never refused")
        #expect(!done.value)
        #expect(fixture.contents("w.md") == nil)
        holder.release()
        finished.wait()
        #expect(done.value && fixture.contents("w.md") == "after release\n")
    }

    /// `prefetchForWrites` brings the lock files of the paths a caller is about to write into the
    /// page cache, and does nothing else: no lock file made, nothing written or locked, and a
    /// hostile path (outside the root, absolute, into `.relay/`, empty) only names a lock file
    /// by its hash, which does not exist.
    @Test func readingLockFilesAheadLoadsThemAndChangesNothing() throws {
        let workspace = fixture.workspace
        let paths = ["context.md", "notes/a.md", "notes/b.md"]
        for path in paths { try workspace.write(path, string: "text of \(path)\n") }
        let lockFiles = paths.map { workspace.lockFile(key: Workspace.lockKey($0)) }
        // Written out and dropped from the page cache, where the file system can drop them.
        for file in lockFiles {
            let fd = open(file, O_RDONLY)
            try #require(fd >= 0)
            fsync(fd)
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            close(fd)
        }
        let droppable = lockFiles.allSatisfy { Self.isCached($0) == false }
        func everything() -> [String: String] {
            var listing: [String: String] = [:]
            for folder in [fixture.base] {
                for name in fixture.allNames(under: folder) {
                    let attributes = try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)
                    listing[name] = "\(attributes?[.size] ?? "?") \((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
                }
            }
            return listing
        }
        let before = everything()
        workspace.prefetchForWrites(paths: paths + ["missing.md", "../outside/secret.txt", "/etc/passwd", ".relay/replica-id", ""],
                                    contents: [ContentHash(of: Array("not stored\n".utf8))])
        Workspace.prefetchQueue.sync {}
        #expect(everything() == before)
        for file in lockFiles {
            // Nobody holds a lock the prefetch took.
            #expect(!CoordinatedLock.isHeld(lockFile: file))
            if droppable { #expect(Self.isCached(file) == true, "\(file)") }
        }
    }

    /// Whether the first page of `file` is in the page cache (`mincore`); nil if unknown.
    static func isCached(_ file: String) -> Bool? {
        let fd = open(file, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let map = mmap(nil, 1, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { return nil }
        defer { munmap(map, 1) }
        var resident: UInt8 = 0
        guard mincore(map, 1, &resident) == 0 else { return nil }
        return resident & 1 == 1
    }
}
