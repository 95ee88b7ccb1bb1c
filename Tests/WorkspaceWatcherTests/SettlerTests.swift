import Testing
@testable import WorkspaceWatcher

@Suite("Settling: a change counts once the file is closed and quiet")
struct SettlerTests {
    let ms: Int64 = 1_000_000

    @Test func aClosedFileSettlesAfterTheQuietPeriodAndNotBefore() {
        let settler = Settler(settle: .milliseconds(100), limit: .seconds(30))
        settler.receive(.file(path: "a.md", closed: false), at: 0)
        settler.receive(.file(path: "a.md", closed: true), at: 10 * ms)
        #expect(settler.drain(at: 105 * ms).settled.isEmpty)
        #expect(settler.drain(at: 110 * ms).settled == ["a.md"])
        #expect(settler.drain(at: 500 * ms).settled.isEmpty, "settles once")
    }

    @Test func aDoubleSaveWithinTheWindowSettlesOnce() {
        let settler = Settler(settle: .milliseconds(100), limit: .seconds(30))
        settler.receive(.file(path: "a.md", closed: true), at: 0)
        settler.receive(.file(path: "a.md", closed: false), at: 50 * ms)
        settler.receive(.file(path: "a.md", closed: true), at: 60 * ms)
        #expect(settler.drain(at: 120 * ms).settled.isEmpty)
        #expect(settler.drain(at: 160 * ms).settled == ["a.md"])
    }

    @Test func anAttributeChangeAtRestSettlesAfterTheQuietPeriodAndSaysNothingWroteTheFile() {
        let settler = Settler(settle: .milliseconds(100), limit: .seconds(30))
        // `touch -d` or `chmod`: an attribute event alone. `touch`: the attributes, then a close.
        settler.receive(.file(path: "times.md", closed: false, wrote: false), at: 0)
        settler.receive(.file(path: "touched.md", closed: false, wrote: false), at: 0)
        settler.receive(.file(path: "touched.md", closed: true, wrote: false), at: 1 * ms)
        // Written in place: a modification, then the close.
        settler.receive(.file(path: "written.md", closed: false, wrote: true), at: 0)
        settler.receive(.file(path: "written.md", closed: true, wrote: false), at: 1 * ms)
        // An attribute change while a write is under way closes nothing.
        settler.receive(.file(path: "busy.md", closed: false, wrote: true), at: 0)
        settler.receive(.file(path: "busy.md", closed: false, wrote: false), at: 1 * ms)
        let batch = settler.drain(at: 110 * ms)
        #expect(Set(batch.settled) == ["times.md", "touched.md", "written.md"])
        #expect(batch.untouched == ["times.md", "touched.md"])
        #expect(settler.drain(at: 30 * 1000 * ms).settled == ["busy.md"], "still being written: it settles at the limit")
    }

    @Test func aFileStillOpenForWritingDoesNotSettleUntilTheLimit() {
        let settler = Settler(settle: .milliseconds(100), limit: .seconds(2))
        for t in stride(from: Int64(0), to: 1900, by: 50) { settler.receive(.file(path: "log.txt", closed: false), at: t * ms) }
        #expect(settler.drain(at: 1950 * ms).settled.isEmpty)
        #expect(settler.drain(at: 2000 * ms).settled == ["log.txt"], "a file written forever still fires")
    }

    @Test func removingAFileOrItsFolderCancelsItsPendingChange() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        settler.receive(.file(path: "a/b/c.md", closed: true), at: 0)
        settler.receive(.file(path: "a/x.md", closed: true), at: 0)
        settler.receive(.file(path: "keep.md", closed: true), at: 0)
        settler.receive(.removed(path: "a", folder: true), at: 1 * ms)
        let batch = settler.drain(at: 100 * ms)
        #expect(batch.settled == ["keep.md"])
        #expect(batch.removed.map(\.path) == ["a"])
    }

    @Test func settledPathsComeOutOldestFirstSoACookieComesLast() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        settler.receive(.file(path: "first", closed: true), at: 1 * ms)
        settler.receive(.file(path: "second", closed: true), at: 2 * ms)
        settler.receive(.file(path: ".relay-cookie-1", closed: true), at: 3 * ms)
        #expect(settler.drain(at: 100 * ms).settled == ["first", "second", ".relay-cookie-1"])
    }

    @Test func litterNeverEntersAndAnOverflowAsksForARescan() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        settler.receive(.file(path: "notes.md~", closed: true), at: 0)
        settler.receive(.overflow, at: 0)
        let batch = settler.drain(at: 100 * ms)
        #expect(batch.settled.isEmpty && batch.rescan)
    }

    @Test func aRenameMovesAChangeStillSettlingAndIsReportedInOrderWithRemovals() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        settler.receive(.file(path: "old/a.md", closed: true), at: 0)
        settler.receive(.removed(path: "gone.md", folder: false), at: 1 * ms)
        settler.receive(.renamed(from: "old", to: "new", folder: true), at: 2 * ms)
        settler.receive(.renamed(from: "x.md", to: "y.md", folder: false), at: 3 * ms)
        let batch = settler.drain(at: 100 * ms)
        #expect(batch.settled == ["new/a.md"], "the change settles under the folder's new name")
        #expect(batch.moves == [.removed(path: "gone.md", folder: false), .renamed(from: "old", to: "new", folder: true),
                                .renamed(from: "x.md", to: "y.md", folder: false)])
    }

    @Test func aTemporaryRenamedOverAFileIsAChangeAndAFileRenamedToABackupNameLeft() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        settler.receive(.renamed(from: "notes/.relay-tmp-1", to: "notes/a.md", folder: false), at: 0)
        settler.receive(.renamed(from: "notes/b.md", to: "notes/b.md~", folder: false), at: 0)
        let batch = settler.drain(at: 100 * ms)
        #expect(batch.settled == ["notes/a.md"])
        #expect(batch.moves == [.removed(path: "notes/b.md", folder: false)])
    }

    @Test func theLoopIsWokenOnlyForAnEarlierDeadlineAndToldWhenToLookAgain() {
        let settler = Settler(settle: .milliseconds(100), limit: .seconds(30))
        #expect(settler.receive(.file(path: "a", closed: true), at: 0), "the first deadline wakes the sleeping loop")
        #expect(!settler.receive(.file(path: "b", closed: true), at: 5 * ms), "a later deadline does not")
        #expect(!settler.receive(.file(path: "c", closed: false), at: 6 * ms), "nor does a file still being written")
        let first = settler.drain(at: 50 * ms)
        #expect(first.settled.isEmpty)
        #expect(first.nextDeadline == 100 * ms)
        let second = settler.drain(at: 100 * ms)
        #expect(second.settled == ["a"])
        #expect(second.nextDeadline == 105 * ms)
        #expect(settler.receive(.removed(path: "z", folder: false), at: 101 * ms), "a removal wakes it")
    }

    @Test func aBatchLimitLeavesTheRestDueForTheNextBatch() {
        let settler = Settler(settle: .milliseconds(10), limit: .seconds(2))
        for i in 0..<25 { settler.receive(.file(path: "f\(i)", closed: true), at: Int64(i) * ms) }
        let first = settler.drain(at: 100 * ms, limit: 10)
        #expect(first.settled == (0..<10).map { "f\($0)" })
        #expect(first.nextDeadline.map { $0 <= 100 * ms } == true, "more is due at once")
        #expect(settler.drain(at: 100 * ms, limit: 10).settled == (10..<20).map { "f\($0)" })
        #expect(settler.drain(at: 100 * ms, limit: 10).settled == (20..<25).map { "f\($0)" })
    }
}
