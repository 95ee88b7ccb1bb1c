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
}
