import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Coordinated appends and read-modify-write updates")
struct AppendAndUpdateTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }
    var workspace: Workspace { fixture.workspace }

    @Test func appendKeepsEntriesOnTheirOwnLines() throws {
        try fixture.write("j.md", "no newline at end")
        try workspace.append("j.md", line: "first")
        try workspace.append("j.md", bytes: Array("second\n".utf8))
        #expect(fixture.contents("j.md") == "no newline at end\nfirst\nsecond\n")
    }

    @Test func rawAppendAddsExactlyTheBytes() throws {
        try workspace.append("r.txt", bytes: Array("ab".utf8), wholeLines: false)
        try workspace.append("r.txt", bytes: Array("cd".utf8), wholeLines: false)
        #expect(fixture.contents("r.txt") == "abcd")
    }

    /// Leaves the lock record of an append that a killed writer would leave: `length` bytes
    /// meant to go at `start` (nil: the file's current end) of `path`'s current inode.
    func leaveAppendIntent(_ path: String, start: Int? = nil, length: Int) throws -> ResolvedPath {
        let target = try workspace.resolve(path)
        let identity = try #require(try FileSnapshot.identity(target.absolute, displayPath: path))
        let lock = try CoordinatedLock.acquire(lockFile: workspace.lockFile(key: Workspace.lockKey(path)), label: path, timeout: .seconds(1))
        try lock.recordIntent(.append(inode: identity.inode, start: start ?? identity.size, length: length), durable: false)
        lock.release()  // as the kernel does when the holder dies; the record stays
        return target
    }

    @Test func anAppendTornByACrashIsCutBackByTheNextAppend() throws {
        try workspace.append("j.md", line: "whole entry")
        let target = try leaveAppendIntent("j.md", length: 100)
        // ... and the killed writer got 20 of its 100 bytes out.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: target.absolute))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("torn half of an entr".utf8))
        try handle.close()
        try workspace.append("j.md", line: "next entry")
        #expect(fixture.contents("j.md") == "whole entry\nnext entry\n")
    }

    @Test func aCompletedAppendIsNotCutBackEvenIfItsIntentRemains() throws {
        try workspace.append("j.md", line: "one")
        _ = try leaveAppendIntent("j.md", start: 0, length: 4)
        try workspace.append("j.md", line: "two")
        #expect(fixture.contents("j.md") == "one\ntwo\n")
    }

    @Test func updateOfAMissingFileGetsNilAndCreatesIt() throws {
        var sawNil = false
        try workspace.update("new/counter.txt") { old in sawNil = (old == nil); return Array("1\n".utf8) }
        #expect(sawNil && fixture.contents("new/counter.txt") == "1\n")
    }

    @Test func anUpdateWhoseTransformThrowsChangesNothing() throws {
        struct Refused: Error {}
        try fixture.write("keep.md", "keep\n")
        #expect(throws: Refused.self) { try workspace.update("keep.md") { _ in throw Refused() } }
        #expect(fixture.contents("keep.md") == "keep\n")
        #expect(fixture.allTemporaries().isEmpty)
        #expect(try workspace.history("keep.md").isEmpty)
    }

    @Test func anEditorSaveDuringTheTransformMakesItRunAgainOnTheNewContent() throws {
        try fixture.write("context.md", "v1\n")
        var calls: [String] = []
        let result = try workspace.update("context.md") { old in
            let text = String(decoding: old ?? [], as: UTF8.self)
            calls.append(text)
            if calls.count == 1 {
                // A person saves with their editor while the agent is thinking.
                try? "v1\nperson's line\n".write(toFile: fixture.path("context.md.swp"), atomically: false, encoding: .utf8)
                rename(fixture.path("context.md.swp"), fixture.path("context.md"))
            }
            return Array((text + "agent's line\n").utf8)
        }
        #expect(calls == ["v1\n", "v1\nperson's line\n"])
        #expect(result.attempts == 2)
        #expect(fixture.contents("context.md") == "v1\nperson's line\nagent's line\n")
    }

    @Test func aRefusalOfBytesAnEditorWasStillSavingIsNotFinal() throws {
        struct Refused: Error {}
        try fixture.write("race.md", "# Race\n")
        var seen: [String] = []
        let result = try workspace.update("race.md") { old in
            let text = String(decoding: old ?? [], as: UTF8.self)
            seen.append(text)
            if seen.count == 1 {
                // The transform read the file mid-save; the save completes as it refuses.
                let handle = FileHandle(forWritingAtPath: fixture.path("race.md"))!
                try handle.truncate(atOffset: 0)
                handle.write(Data("# Race\nEND\n".utf8))
                try? handle.close()
            }
            guard let end = text.range(of: "END\n") else { throw Refused() }
            return Array(text.replacingCharacters(in: end, with: "mcp\nEND\n").utf8)
        }
        #expect(seen == ["# Race\n", "# Race\nEND\n"])
        #expect(result.attempts == 2)
        #expect(fixture.contents("race.md") == "# Race\nmcp\nEND\n")
    }

    @Test func aRefusalOfBytesNobodyChangedIsFinalAfterOneTry() throws {
        struct Refused: Error {}
        try fixture.write("still.md", "still\n")
        var calls = 0
        #expect(throws: Refused.self) { try workspace.update("still.md") { _ in calls += 1; throw Refused() } }
        #expect(calls == 1)
        #expect(fixture.contents("still.md") == "still\n")
    }

    @Test func anInPlaceEditorSaveOfTheSameSizeIsDetectedByItsHash() throws {
        try fixture.write("c.md", "aaaa\n")
        var rounds = 0
        try workspace.update("c.md") { old in
            rounds += 1
            if rounds == 1 {
                // Same size, in place, possibly within the same mtime tick: only the hash can tell.
                let handle = FileHandle(forWritingAtPath: fixture.path("c.md"))!
                handle.write(Data("bbbb\n".utf8))
                try? handle.close()
            }
            return (old ?? []) + Array("+\n".utf8)
        }
        #expect(rounds == 2)
        #expect(fixture.contents("c.md") == "bbbb\n+\n")
    }

    @Test func updatesFromManyThreadsLoseNoIncrement() throws {
        let workspace = self.workspace
        try onThreads(8) { _ in
            for _ in 0..<50 {
                try workspace.update("counter.txt") { old in
                    let n = Int(String(decoding: old ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                    return Array("\(n + 1)\n".utf8)
                }
            }
        }
        #expect(fixture.contents("counter.txt") == "400\n")
    }

    @Test func appendsFromManyThreadsNeverInterleave() throws {
        let workspace = self.workspace
        try onThreads(8) { t in
            for i in 0..<100 {
                try workspace.append("j.md", line: "thread \(t) entry \(i) " + String(repeating: "x", count: 500 + i * 7))
            }
        }
        let lines = try #require(fixture.contents("j.md")).split(separator: "\n")
        #expect(lines.count == 800)
        #expect(lines.allSatisfy { line in
            let parts = line.split(separator: " ")
            guard parts.count == 5, let i = Int(parts[3]) else { return false }
            return parts[4] == Substring(String(repeating: "x", count: 500 + i * 7))
        })
    }
}

@Suite struct OpenElsewhereProbeTests {
    /// The update's check for an editor that opened the file before the swap relies on this.
    @Test func aFileSomebodyHasOpenIsSeenAsOpenAndNotOnceClosed() throws {
        let scratch = try ScratchWorkspace.core()
        try scratch.write("notes.md", "x\n")
        let path = scratch.path("notes.md")
        #expect(Syscall.isOpenElsewhere(path) == false)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        #expect(Syscall.isOpenElsewhere(path) == true)
        try handle.close()
        #expect(Syscall.isOpenElsewhere(path) == false)
    }
}
