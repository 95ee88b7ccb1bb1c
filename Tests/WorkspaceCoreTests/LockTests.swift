import Foundation
import Testing
@testable import WorkspaceCore

@Suite("The coordinated-write lock")
struct LockTests {
    let fixture: TemporaryWorkspace
    init() throws { fixture = try TemporaryWorkspace() }

    @Test func aHeldLockMakesASecondWriterFailAfterItsTimeoutNamingTheFile() throws {
        var impatient = fixture.workspace
        impatient.lockTimeout = .milliseconds(300)
        let started = Date()
        try fixture.workspace.withLock("Journal/user/today.md") {
            #expect {
                try impatient.append("Journal/user/today.md", line: "blocked")
            } throws: { error in
                let error = error as? WorkspaceError
                return error?.code == .lockTimeout && error?.message.contains("Journal/user/today.md") == true
                    && error?.message.contains("0.3 s") == true
            }
        }
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.29)
        #expect(!FileManager.default.fileExists(atPath: fixture.absolute("Journal/user/today.md")))
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
        let holder = try CoordinatedLock.acquire(lockFile: workspace.lockFile(key: Workspace.lockKey("w.md")), label: "w.md", timeout: .seconds(1))
        let done = LockedBox(false)
        let thread = Thread {
            _ = try? workspace.append("w.md", line: "after release")
            done.mutate { $0 = true }
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!done.value)
        holder.release()
        for _ in 0..<200 where !done.value { Thread.sleep(forTimeInterval: 0.01) }
        #expect(done.value && fixture.contents("w.md") == "after release\n")
    }
}
