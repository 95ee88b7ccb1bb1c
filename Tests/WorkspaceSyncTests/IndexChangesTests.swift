import Foundation
import RelaySQLite
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// `a` syncs with `b` over the protocol; `during` runs once, after both refreshes, before the
/// first path is reconciled.
@discardableResult
func syncOverProtocol(_ a: ScratchWorkspace, _ b: ScratchWorkspace, during: (() throws -> Void)? = nil) throws -> SyncSummary {
    let served = try ServedReplica(b)
    defer { served.close() }
    var ran = false
    var failure: Error?
    let summary = try Reconciler(local: try LocalEndpoint(workspace: a.workspace), peer: served.endpoint).run { _ in
        guard !ran, let during else { return }
        ran = true
        do { try during() } catch { failure = error }
    }
    if let failure { throw failure }
    return summary
}

/// Two replicas under `base`: a laptop with 200 notes in 10 folders, a desktop with 20 files.
func laptopAndDesktop(in base: String) throws -> (ScratchWorkspace, ScratchWorkspace) {
    let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
    for i in 0..<200 { try a.write("notes/n\(i % 10)/file\(i).md", "note \(i)\n") }
    for i in 0..<20 { try b.write("desk/d\(i).txt", "desk \(i)\n") }
    return (a, b)
}

@Suite("Index changes since the last sequence seen (protocol 3)", .serialized)
struct IndexChangesTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-index-changes-" + UUID().uuidString

    func populated() throws -> (ScratchWorkspace, ScratchWorkspace) { try laptopAndDesktop(in: base) }

    /// A walk begun ahead of its refresh (`LocalEndpoint(walkAhead:)`, as `relay sync-serve`
    /// and `relay sync` make theirs) serves the refresh that follows while it is fresh, but not
    /// once it is older than `Walk.freshFor`: a file written after that walk is then still found.
    /// The test waits for the walk to end (its result), and ages it instead of waiting for the clock.
    @Test func aWalkBegunAheadServesItsRefreshWhileFreshAndIsNotUsedOnceStale() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let replica = try ScratchWorkspace(in: base, name: "laptop")
        try replica.write("early.md", "here before\n")
        let index = try SyncIndex(workspace: replica.workspace)
        let walk = SyncIndex.Walk(replica.workspace, inBackground: true)
        _ = try walk.listing.wait()
        try replica.write("late.md", "written after the walk\n")
        let fresh = try index.refreshed(storingBasesIn: nil, walk: walk)
        #expect(fresh.entries["early.md"] != nil)
        #expect(fresh.entries["late.md"] == nil, "the fresh walk, which ended before late.md was written, was not used")
        var stale = SyncIndex.Walk(replica.workspace, inBackground: true)
        _ = try stale.listing.wait()
        try replica.write("later.md", "written after the second walk\n")
        stale.began -= SyncIndex.Walk.freshFor
        let snapshot = try index.refreshed(storingBasesIn: nil, walk: stale)
        #expect(snapshot.entries["early.md"] != nil && snapshot.entries["late.md"] != nil)
        #expect(snapshot.entries["later.md"] != nil, "the stale walk was used")
    }

    /// Many more stages than may wait for their answers (`RemoteEndpoint.maximumInFlight`),
    /// some of which the server refuses: each refusal comes back for its own path, however the
    /// answers were read in between, and every other file is installed.
    @Test func refusalsAmongManyPostedStagesComeBackForTheirOwnPaths() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let b = try ScratchWorkspace(in: base, name: "desktop")
        let served = try ServedReplica(b)
        defer { served.close() }
        _ = try served.endpoint.refresh()
        var vector = VersionVector()
        vector.increment("laptop")
        let count = RemoteEndpoint.maximumInFlight * 3 + 7
        var refused: [String] = []
        for i in 0..<count {
            // `.relay/` paths are refused by the server, never by this side.
            let path = i % 13 == 5 ? ".relay/sneaky\(i).md" : "notes/n\(i % 7)/file\(i).md"
            if path.hasPrefix(".relay/") { refused.append(path) }
            try served.endpoint.stage(path, bytes: Array("note \(i)\n".utf8), expected: nil, vector: vector, basePeer: nil)
        }
        let failures = try served.endpoint.takeDeferredFailures()
        #expect(failures.map(\.path) == refused)
        #expect(failures.allSatisfy { $0.error.code == .refused })
        let results = try served.endpoint.flush()
        #expect(results.values.compactMap { $0 }.count == count - refused.count)
        #expect(b.contents("notes/n\((count - 1) % 7)/file\(count - 1).md") == "note \(count - 1)\n")
        #expect(b.tree().count == count - refused.count)
        #expect(!FileManager.default.fileExists(atPath: b.root + "/.relay/sneaky5.md"))
    }

    /// The files a refresh looks at, found in two halves on a large tree, are exactly those a
    /// plain pass finds, in the walk's order: new, changed, racy, tombstoned; not excluded ones,
    /// not unchanged ones; and the live rows found are counted once.
    @Test func theFilesARefreshLooksAtAreTheSameFoundInTwoHalves() throws {
        let scanned: Int64 = 1_000_000_000_000
        var current: [String: SyncIndex.Entry] = [:]
        var stamps: [(path: String, stamp: FileStamp)] = []
        var expected: [Int] = []
        var live = 0
        for i in 0..<20_000 {
            let path = "d\(i % 97)/file\(i).md"
            let stamp = FileStamp(inode: UInt64(i), size: i, modifiedNanoseconds: scanned - 1_000_000_000)
            var entry = SyncIndex.Entry(path: path, hash: "h", stamp: stamp, vector: VersionVector(), deleted: false, scanned: scanned)
            var walked = stamp
            switch i % 11 {
            case 1: walked.size += 1                                              // changed
            case 2: entry.stamp.modifiedNanoseconds = scanned - 1; walked = entry.stamp  // racy
            case 3: entry.deleted = true                                            // a tombstone, back
            case 4: entry.path = "gone"                                             // new
            default: break
            }
            if i % 11 != 4 { current[path] = entry }
            if !(i % 11 == 3 || i % 11 == 4) { live += 1 }
            let walkedPath = i % 13 == 0 ? ".relay-tmp-\(i)" : path                  // excluded
            stamps.append((walkedPath, walked))
            if i % 13 != 0 && [1, 2, 3, 4].contains(i % 11) { expected.append(i) }
        }
        let found = try SyncIndex.unvouched(stamps, in: current)
        #expect(found.positions == expected)
        // Live rows whose file the walk passed (excluded names are not looked up).
        let liveWalked = (0..<20_000).filter { $0 % 13 != 0 && !($0 % 11 == 3 || $0 % 11 == 4) }.count
        #expect(found.liveSeen == liveWalked && live >= liveWalked)
        let small = try SyncIndex.unvouched(Array(stamps.prefix(5_000)), in: current)
        #expect(small.positions == expected.filter { $0 < 5_000 })
    }

    /// A server checkpoints its index's log once its client has said bye (nobody waits for it
    /// then): the sync's rows are in the database file itself afterwards, so SQLite's own
    /// checkpoint does not land inside the next sync. Without it, a sync this small (well
    /// under SQLite's 1,000 pages) leaves the database file as it was. The log is truncated
    /// too: the next process to open the index would otherwise read all of it first.
    @Test func aServerCheckpointsAndTruncatesItsIndexLogAfterBye() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        let file = b.workspace.layout.state + "/sync.sqlite"
        func databaseFile() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file)) }
        // A first checkpoint of our own, so the next sync's rows are all in the log.
        try SQLiteDatabase(file: file).checkpoint()
        let before = try databaseFile()
        try a.write("notes/new.md", "one more\n")
        try syncOverProtocol(a, b)
        #expect(try databaseFile() != before, "the server's rows stayed in the log")
        // And the log is truncated: the next process to open the index has no frames to read.
        let log = try FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int
        #expect(log == 0, "the server left \(log ?? -1) bytes of log")
        let rows = try SyncIndex(workspace: b.workspace).entries()
        #expect(rows["notes/new.md"] != nil)
    }

    /// Rows put together take the sequences they would one by one, in order; a restamp of an
    /// unchanged row keeps its sequence; and the kept digest is the rows' digest.
    @Test func rowsPutTogetherTakeConsecutiveSequencesAndKeepTheDigest() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let replica = try ScratchWorkspace(in: base, name: "laptop")
        let index = try SyncIndex(workspace: replica.workspace)
        var vector = VersionVector()
        vector.increment("laptop")
        func row(_ path: String, _ hash: String, inode: UInt64 = 1) -> SyncIndex.Entry {
            SyncIndex.Entry(path: path, hash: hash, stamp: FileStamp(inode: inode, size: 1, modifiedNanoseconds: 1), vector: vector,
                            deleted: false, scanned: 1)
        }
        let start = try index.sequence()
        let first = try index.put([(row("a.md", "aa"), false), (row("b.md", "bb"), false), (row("c.md", "cc"), false)])
        #expect(first == [start + 1, start + 2, start + 3])
        // b.md restamped (same content, a new inode): keeps its sequence; a.md changed: a new one.
        let second = try index.put([(row("b.md", "bb", inode: 9), true), (row("a.md", "a2"), false)])
        #expect(second[0] == start + 2 && second[1] > start + 3)
        #expect(try index.entry("b.md")?.stamp.inode == 9)
        #expect(try index.storedDigest() == SyncIndex.digest(try index.entries().values))
        #expect(try index.put([]) == [])
    }

    @Test func aSecondSyncWithNoChangesReceivesOnlyAHandfulOfIndexRows() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        let first = try syncOverProtocol(a, b)
        let firstIndex = try #require(first.peerIndex)
        #expect(firstIndex.whole && firstIndex.rows == 20, "a first sync reads the peer's index whole")
        #expect(firstIndex.ackRows >= 200, "the ack brings back the rows the sync wrote there")
        #expect(a.tree() == b.tree())

        let second = try syncOverProtocol(a, b)
        let secondIndex = try #require(second.peerIndex)
        #expect(!secondIndex.whole)
        #expect(secondIndex.rows <= 3, "no change: only a handful of rows travel, not \(secondIndex.rows)")
        #expect(second.transferred == 0)
        // The copy of the peer's index is the peer's index.
        let peerIndex = try SyncIndex(workspace: b.workspace)
        let copy = try SyncIndex(workspace: a.workspace).peerEntries(peerIndex.replica)
        #expect(SyncIndex.digest(copy.values) == SyncIndex.digest(try peerIndex.entries().values))
    }

    /// A sync that finds nothing to do over the protocol asks the server for nothing after its
    /// refresh but bye: no flush, no ack, no new mark (the last one still holds). The copy of
    /// the server's index stays right, and the mark still narrows the next sync to what changed.
    @Test func aSyncWithNothingToDoMakesNoFlushAckOrMarkRoundTrip() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        try syncOverProtocol(a, b)
        let markBefore = try SyncIndex(workspace: a.workspace).syncMark(peer: try SyncIndex(workspace: b.workspace).replica)

        let served = try ServedReplica(b)
        let idle = try Reconciler(local: try LocalEndpoint(workspace: a.workspace), peer: served.endpoint).run()
        #expect(idle.examined == 0 && idle.transferred == 0)
        #expect(served.endpoint.sent["flush"] == nil && served.endpoint.sent["ack"] == nil && served.endpoint.sent["setSyncMark"] == nil,
                "\(served.endpoint.sent)")
        served.close()
        let markAfter = try SyncIndex(workspace: a.workspace).syncMark(peer: try SyncIndex(workspace: b.workspace).replica)
        #expect(markBefore != nil && markAfter?.id == markBefore?.id)

        // Written on the peer meanwhile by someone else: the next sync sees it, and only it.
        try b.write("desk/d3.txt", "desk 3, edited on the desktop\n")
        let next = try syncOverProtocol(a, b)
        #expect(next.examined == 1 && a.contents("desk/d3.txt") == "desk 3, edited on the desktop\n")
        let peerIndex = try SyncIndex(workspace: b.workspace)
        let copy = try SyncIndex(workspace: a.workspace).peerEntries(peerIndex.replica)
        #expect(SyncIndex.digest(copy.values) == SyncIndex.digest(try peerIndex.entries().values))
    }

    @Test func changesMadeOnThePeerBetweenAndDuringSyncsAllArrive() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        let c = try ScratchWorkspace(in: base, name: "server")
        try syncOverProtocol(a, b)
        // Between syncs: edits, new files, deletions on the peer.
        for i in 0..<10 { try b.write("notes/n\(i % 10)/file\(i).md", "edited on the desktop \(i)\n") }
        for i in 0..<5 { try b.write("desk/new\(i).md", "new \(i)\n") }
        for i in 0..<3 { b.delete("desk/d\(i).txt") }
        try c.write("from-the-server.md", "server\n")
        let second = try syncOverProtocol(a, b) {
            // After the peer's refresh: a hand edit there, and another replica syncing with it.
            try b.write("desk/d10.txt", "edited while a sync ran\n")
            try b.write("desk/during.md", "created while a sync ran\n")
            try sync(b, c)
        }
        let secondIndex = try #require(second.peerIndex)
        #expect(!secondIndex.whole && secondIndex.rows >= 18 && secondIndex.rows < 40)
        #expect(a.contents("notes/n3/file3.md") == "edited on the desktop 3\n" && a.contents("desk/new4.md") == "new 4\n")
        #expect(a.contents("desk/d1.txt") == nil)
        // The next sync brings what changed on the peer while the last one ran, from its copy.
        let third = try syncOverProtocol(a, b)
        #expect(third.peerIndex?.whole == false)
        #expect(a.contents("desk/d10.txt") == "edited while a sync ran\n")
        #expect(a.contents("desk/during.md") == "created while a sync ran\n")
        #expect(a.contents("from-the-server.md") == "server\n")
        #expect(a.tree() == b.tree())
        #expect(a.conflictCopies().isEmpty)
        #expect(try syncOverProtocol(a, b).transferred == 0)
    }

    @Test func aPeerWhoseIndexWasDeletedOrReplacedIsReadWholeWithACorrectResult() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        try syncOverProtocol(a, b)
        let index = b.root + "/.relay/sync.sqlite"
        let suffixes = ["", "-wal", "-shm"]

        // Deleted: a new index, another epoch.
        for suffix in suffixes { unlink(index + suffix) }
        try a.write("notes/n1/file1.md", "edited after the peer lost its index\n")
        let afterDelete = try syncOverProtocol(a, b)
        #expect(afterDelete.peerIndex?.whole == true)
        #expect(a.tree() == b.tree() && b.contents("notes/n1/file1.md") == "edited after the peer lost its index\n")
        #expect(a.conflictCopies().isEmpty)

        // Replaced by an older copy of itself: the same epoch, an earlier history.
        for suffix in suffixes where FileManager.default.fileExists(atPath: index + suffix) {
            try FileManager.default.copyItem(atPath: index + suffix, toPath: base + "/saved" + suffix)
        }
        for i in 0..<5 { try a.write("notes/n2/file\(10 * i + 2).md", "edited on the laptop \(i)\n") }
        try b.write("desk/d5.txt", "edited on the desktop\n")
        #expect(try syncOverProtocol(a, b).peerIndex?.whole == false)
        for suffix in suffixes {
            unlink(index + suffix)
            if FileManager.default.fileExists(atPath: base + "/saved" + suffix) {
                try FileManager.default.copyItem(atPath: base + "/saved" + suffix, toPath: index + suffix)
            }
        }
        try b.write("desk/d6.txt", "edited after the restore\n")
        let afterRestore = try syncOverProtocol(a, b)
        #expect(afterRestore.peerIndex?.whole == true, "the copy no longer adds up to the peer's index")
        #expect(a.contents("desk/d6.txt") == "edited after the restore\n" && a.contents("desk/d5.txt") == "edited on the desktop\n")
        #expect(b.contents("notes/n2/file42.md") == "edited on the laptop 4\n")
        #expect(a.tree() == b.tree())
        #expect(a.conflictCopies().isEmpty)
        let settled = try syncOverProtocol(a, b)
        #expect(settled.transferred == 0 && settled.peerIndex?.whole == false)
    }

    @Test func anIndexWithoutSequencesIsMigratedAndKeepsWorking() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        // Turn b's index back into the format before sequences: no seq column, no epoch (and
        // none of what later formats added: the held versions and their triggers).
        do {
            let database = try SQLiteDatabase(file: b.root + "/.relay/sync.sqlite")
            try database.execute("""
                DROP TRIGGER files_held_insert; DROP TRIGGER files_held_update; DROP TABLE held;
                DROP INDEX files_seq; ALTER TABLE files DROP COLUMN seq;
                DROP TABLE meta; DROP TABLE peers; DROP TABLE peer_entries; PRAGMA user_version = 0;
                """)
        }
        let rowsBefore = try SQLiteDatabase(file: b.root + "/.relay/sync.sqlite").prepare("SELECT COUNT(*) FROM files").rows([]) { $0.integer(0) }
        try b.write("desk/d7.txt", "edited before the migration\n")

        let migrated = try SyncIndex(workspace: b.workspace)
        #expect(!migrated.epoch.isEmpty)
        #expect(try migrated.entries().count == Int(rowsBefore.first ?? 0), "every row is kept")
        #expect(try migrated.entries().values.allSatisfy { $0.sequence == 0 }, "old rows start below any sequence a peer saw")
        #expect(try migrated.storedDigest() == SyncIndex.digest(try migrated.entries()), "the digest's sum is computed by the migration")
        let sequence = try migrated.sequence()
        #expect(try migrated.refresh() == 1)
        #expect(try #require(try migrated.entry("desk/d7.txt")).sequence > sequence)
        #expect(try migrated.changes(since: sequence).entries.map(\.path) == ["desk/d7.txt"])
        #expect(try migrated.storedDigest() == SyncIndex.digest(try migrated.entries()), "and kept by each write")

        let summary = try syncOverProtocol(a, b)
        #expect(summary.peerIndex?.whole == true, "another epoch: read whole")
        #expect(summary.copied == 1 && summary.conflicts == 0)
        #expect(a.contents("desk/d7.txt") == "edited before the migration\n")
        #expect(a.tree() == b.tree())
        #expect(try syncOverProtocol(a, b).peerIndex?.whole == false)
    }

    @Test func aCopyOfAPeersIndexKeptBeforeItsDigestWasIsCountedOnceAndStaysIncremental() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try populated()
        try syncOverProtocol(a, b)
        try syncOverProtocol(a, b)
        // As an index of format 3 left it: the copy's rows, no digest or live count with them.
        do {
            let database = try SQLiteDatabase(file: a.root + "/.relay/sync.sqlite")
            try database.execute("UPDATE peers SET digest = NULL, count = NULL, live = NULL; PRAGMA user_version = 3")
        }
        try b.write("desk/d2.txt", "edited at the server\n")
        let summary = try syncOverProtocol(a, b)
        #expect(summary.peerIndex?.whole == false, "the copy is counted, not thrown away")
        #expect(a.contents("desk/d2.txt") == "edited at the server\n" && a.tree() == b.tree())
        let index = try SyncIndex(workspace: a.workspace), peer = try SyncIndex(workspace: b.workspace)
        let kept = try #require(try index.peerSummary(peer.replica))
        #expect(SyncIndex.digestText(sum: kept.digestSum, count: UInt64(kept.count)) == SyncIndex.digest(try peer.entries()),
                "the digest kept with the copy is the peer's")
        #expect(kept.live == (try peer.entries()).values.filter { !$0.deleted }.count)
    }

    @Test func aRestampedFileKeepsItsSequenceAndNewContentTakesTheNext() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop")
        try a.write("a.md", "one\n")
        let index = try SyncIndex(workspace: a.workspace)
        try index.refresh()
        let first = try #require(try index.entry("a.md")).sequence
        // Touched, same content: a new stamp, the same sequence (nothing a peer reconciles on moved).
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, a.root + "/a.md", &times, 0) == 0)
        try index.refresh()
        #expect(try index.entry("a.md")?.sequence == first)
        #expect(try index.entry("a.md")?.stamp.modifiedNanoseconds == 1_000_000_000_000_000)
        try a.write("a.md", "two\n")
        try index.refresh()
        #expect(try #require(try index.entry("a.md")).sequence > first)
        #expect(try index.changes(since: first).entries.map(\.path) == ["a.md"])
    }

    /// A write batch checks a file by the stamp the index vouches for instead of reading it:
    /// only a live row of that content, whose stamp was read after its timestamp tick ended.
    @Test func theIndexVouchesOnlyForALiveStampOfThatContentReadAfterItsTimestampTick() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop")
        let index = try SyncIndex(workspace: a.workspace)
        try a.write("a.md", "one\n")
        // Not a pause across the tick: the file's time is set, a minute ahead of the scan and
        // then a minute before it, so no load can move the scan in or out of the window.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: a.path("a.md"))
        try index.refresh()
        let hash = ContentHash(of: "one\n").hex
        #expect(try index.vouchedStamp("a.md", hash: hash) == nil, "modified within the racy window of the scan")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: a.path("a.md"))
        try index.refresh()
        let stamp = try #require(try index.vouchedStamp("a.md", hash: hash), "scanned again once the tick was over")
        #expect(stamp == a.workspace.stamp(ofFileAt: "a.md"))
        #expect(try index.vouchedStamp("a.md", hash: ContentHash(of: "two\n").hex) == nil, "another content")
        #expect(try index.vouchedStamp("b.md", hash: hash) == nil, "no row")
        unlink(a.root + "/a.md")
        try index.refresh()
        #expect(try index.vouchedStamp("a.md", hash: hash) == nil, "a tombstone")
    }

    @Test func anIndexClosedAfterWritingLeavesItsLogAndReopensWithEveryRow() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop")
        for i in 0..<20 { try a.write("notes/n\(i).md", "note \(i)\n") }
        do {
            let index = try SyncIndex(workspace: a.workspace)
            #expect(try index.refresh() == 20)
        }
        // No checkpoint at close: the rows are in the log, which the next connection reads.
        #expect(FileManager.default.fileExists(atPath: a.root + "/.relay/sync.sqlite-wal"))
        let reopened = try SyncIndex(workspace: a.workspace)
        #expect(try reopened.entries().count == 20)
        #expect(try reopened.refresh() == 0)
    }

    @Test func filesFromThePeerComeManyToARoundTrip() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        for i in 0..<150 { try b.write("Research/r\(i).md", "note \(i)\n" + String(repeating: "llama ", count: i)) }
        try b.write("big.bin", String(repeating: "x", count: 20 * 1024 * 1024))
        let served = try ServedReplica(b)
        let summary = try Reconciler(local: try LocalEndpoint(workspace: a.workspace), peer: served.endpoint).run()
        let trips = served.endpoint.roundTrips
        served.close()
        #expect(summary.copied == 151)
        #expect(a.tree() == b.tree())
        // hello, refresh, a few readMany (64 files or 16 MiB each), flushes, ack — not one per file.
        #expect(trips < 20, "\(trips) round trips for 151 files")
    }

    /// The server begins its refresh when it answers hello; a client that then asks for
    /// something else, or leaves, finds it finished and committed, and a bye answered means
    /// everything is committed.
    @Test func aRefreshBegunAtHelloIsFinishedBeforeAnyOtherRequestAndBeforeBye() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let b = try ScratchWorkspace(in: base, name: "desktop")
        try b.write("desk/new.md", "written before the server started\n")
        let toServer = Pipe(), fromServer = Pipe(), codec = SyncProtocol.Codec()
        let write = { (request: SyncProtocol.Request) in
            try codec.write(request, to: toServer.fileHandleForWriting.fileDescriptor)
        }
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        try write(hello)
        var base = SyncProtocol.Request(op: "base")
        base.peer = "nobody"
        base.path = "desk/new.md"
        try write(base)
        try write(SyncProtocol.Request(op: "bye"))
        try SyncServer.serve(try LocalEndpoint(workspace: b.workspace), input: toServer.fileHandleForReading.fileDescriptor,
                             output: fromServer.fileHandleForWriting.fileDescriptor)
        let answers = try (0..<3).map { _ in
            try #require(try codec.read(SyncProtocol.Response.self, from: fromServer.fileHandleForReading.fileDescriptor))
        }
        let failures = answers.filter { !$0.ok }.map { $0.message ?? "no reason" }
        #expect(failures.isEmpty, "\(failures)")
        // The refresh begun at hello ran and was committed: the new file has its row.
        #expect(try SyncIndex(workspace: b.workspace).entry("desk/new.md")?.deleted == false)
    }

    @Test func aClientSpeakingAnotherProtocolVersionGetsAClearError() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let b = try ScratchWorkspace(in: base, name: "desktop")
        let toServer = Pipe(), fromServer = Pipe()
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = 2
        try SyncProtocol.writeFrame(toServer.fileHandleForWriting.fileDescriptor, Array(try JSONEncoder().encode(hello)))
        try SyncProtocol.writeFrame(toServer.fileHandleForWriting.fileDescriptor, Array(try JSONEncoder().encode(SyncProtocol.Request(op: "bye"))))
        try SyncServer.serve(try LocalEndpoint(workspace: b.workspace), input: toServer.fileHandleForReading.fileDescriptor,
                             output: fromServer.fileHandleForWriting.fileDescriptor)
        // Plain JSON, as every protocol before 6 wrote: an old client gets the version error.
        let frame = try #require(try SyncProtocol.readFrame(fromServer.fileHandleForReading.fileDescriptor))
        let answer = try JSONDecoder().decode(SyncProtocol.Response.self, from: Data(frame))
        #expect(!answer.ok)
        #expect(answer.message?.contains("speaks sync protocol \(SyncProtocol.version), the client 2") == true, "\(answer.message ?? "")")
    }

    /// The client sends the peer's flush before it flushes its own side; a request sent before
    /// that flush's answer is read gets its own answer, not the flush's, and the flush was made.
    @Test func aFlushBegunBeforeAnotherRequestIsAnsweredInOrderAndMade() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let b = try ScratchWorkspace(in: base, name: "desktop")
        let served = try ServedReplica(b)
        defer { served.close() }
        var vector = VersionVector()
        vector.increment("laptop0000000000")
        try served.endpoint.stage("notes/new.md", bytes: Array("from the laptop\n".utf8), expected: nil, vector: vector)
        try served.endpoint.beginFlush()
        // Not flush: its answer (the base of a path nobody recorded) must be its own.
        #expect(try served.endpoint.base(peer: "laptop0000000000", path: "notes/new.md") == nil)
        #expect(b.contents("notes/new.md") == "from the laptop\n")
        // A begun flush collected by flush itself gives the results.
        try served.endpoint.stage("notes/second.md", bytes: Array("second\n".utf8), expected: nil, vector: vector)
        try served.endpoint.beginFlush()
        let results = try served.endpoint.flush()
        #expect(results["notes/second.md"]??.hash == ContentHash(of: Array("second\n".utf8)).hex)
        #expect(b.contents("notes/second.md") == "second\n")
    }

    /// Copies pushed to the peer become its merge base with this replica in its own flush: no
    /// `setBase` request travels for them, the rows are there (both sides), and a later edit
    /// on each side merges from them. Copies pulled from the peer still send theirs.
    @Test func pushedCopiesBecomeThePeersMergeBaseWithoutASetBaseRequestAndMergeLater() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        for i in 0..<5 { try a.write("notes/n\(i).md", "one\ntwo\nthree\n") }
        try b.write("desk/pulled.md", "from the desktop\n")
        let served = try ServedReplica(b)
        let local = try LocalEndpoint(workspace: a.workspace)
        let summary = try Reconciler(local: local, peer: served.endpoint).run()
        let sent = served.endpoint.sent
        served.close()
        #expect(summary.copied == 6, "\(summary)")
        #expect(sent["stage"] == 5 && sent["setBase"] == 1, "five pushed copies, and the one pulled copy's base: \(sent)")
        let desktop = try SyncIndex(workspace: b.workspace), laptop = try SyncIndex(workspace: a.workspace)
        let hash = ContentHash(of: "one\ntwo\nthree\n").hex
        for i in 0..<5 {
            #expect(try desktop.bases(peer: laptop.replica)["notes/n\(i).md"] == hash)
            #expect(try laptop.bases(peer: desktop.replica)["notes/n\(i).md"] == hash)
        }
        #expect(try desktop.bases(peer: laptop.replica)["desk/pulled.md"] == ContentHash(of: "from the desktop\n").hex)
        // Each side edits another line: merged from the base the flush recorded.
        try a.write("notes/n0.md", "ONE\ntwo\nthree\n")
        try b.write("notes/n0.md", "one\ntwo\nTHREE\n")
        let merged = try syncOverProtocol(a, b)
        #expect(merged.merged == 1 && merged.conflicts == 0, "\(merged)")
        #expect(a.contents("notes/n0.md") == "ONE\ntwo\nTHREE\n" && b.contents("notes/n0.md") == "ONE\ntwo\nTHREE\n")
    }

    /// A sync that only pushes sends one flush: the one of the merge-base rows has nothing to
    /// flush on the peer (which recorded its bases itself) and makes no round trip.
    @Test func aSyncThatOnlyPushesFlushesThePeerOnce() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        for i in 0..<3 { try a.write("notes/n\(i).md", "note \(i)\n") }
        let served = try ServedReplica(b)
        let summary = try Reconciler(local: try LocalEndpoint(workspace: a.workspace), peer: served.endpoint).run()
        let sent = served.endpoint.sent
        served.close()
        #expect(summary.copied == 3)
        #expect(sent["flush"] == 1 && sent["setBase"] == nil, "\(sent)")
        #expect(b.contents("notes/n2.md") == "note 2\n")
    }

    /// Empty files travel both ways over the protocol (a content of no bytes is still a content).
    @Test func emptyFilesTravelBothWaysOverTheProtocol() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        try a.write("notes/empty-here.md", "")
        try b.write("desk/empty-there.txt", "")
        try b.write("desk/full.txt", "not empty\n")
        let summary = try syncOverProtocol(a, b)
        #expect(summary.copied == 3 && summary.skipped.isEmpty && summary.refused.isEmpty, "\(summary)")
        #expect(a.contents("desk/empty-there.txt") == "" && b.contents("notes/empty-here.md") == "")
        #expect(a.tree() == b.tree())
    }
}
