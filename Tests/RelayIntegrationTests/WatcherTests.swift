import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
import WorkspaceWatcher

/// Promise 4, every drop is handled once: a real `relay watch` on a real inotify watch, real
/// editors' save patterns, bursts, overflows, crashes and restarts. Cookie files make the
/// tests wait for exactly as long as the daemon needs, never for a fixed sleep.
@Suite("relay watch: each drop fires exactly once", .serialized)
struct WatcherTests {
    @Test func eachEditorSaveStyleFiresOnceWithTheFinalContent() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/*")])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()

        // One go: open, write, close.
        try w.write("inbox/one-go.md", "written in one go\n")
        // Temp file and rename, as most editors and `relay fs write` do.
        try w.write("inbox/.one.md.tmp-123", "saved through a temporary\n")
        rename(w.path("inbox/.one.md.tmp-123"), w.path("inbox/renamed.md"))
        // vim: probe with 4913, keep a backup~, write the new file, drop the backup.
        try w.write("inbox/vim.md", "first\n")
        try w.waitForCookie()
        // Let those runs finish before the files change again: a trigger whose file changed
        // before its run started stands aside for the newer content (issue 29).
        try w.waitUntilQueueIdle()
        try w.write("inbox/4913", "")
        unlink(w.path("inbox/4913"))
        rename(w.path("inbox/vim.md"), w.path("inbox/vim.md~"))
        try w.write("inbox/vim.md", "first\nsecond, saved by vim\n")
        try w.write("inbox/.vim.md.swp", "swap")
        unlink(w.path("inbox/vim.md~"))
        // In place, twice within the settle window (an editor that writes in two steps).
        let handle = FileHandle(forWritingAtPath: w.path("inbox/one-go.md"))!
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("saved in place\n".utf8))
        try handle.write(contentsOf: Data("and again\n".utf8))
        try handle.close()
        try w.waitForCookie()
        unlink(w.path("inbox/.vim.md.swp"))
        try w.waitForCookie()
        try w.waitUntilQueueIdle()

        let fired = w.fired()
        func hash(_ text: String) -> String { ContentHash(of: text).hex }
        #expect(fired.filter { $0.hasPrefix("inbox/renamed.md ") } == ["inbox/renamed.md \(hash("saved through a temporary\n"))"])
        #expect(fired.filter { $0.hasPrefix("inbox/vim.md ") } == [
            "inbox/vim.md \(hash("first\n"))", "inbox/vim.md \(hash("first\nsecond, saved by vim\n"))",
        ])
        #expect(fired.filter { $0.hasPrefix("inbox/one-go.md ") } == [
            "inbox/one-go.md \(hash("written in one go\n"))", "inbox/one-go.md \(hash("saved in place\nand again\n"))",
        ])
        #expect(!fired.contains { $0.contains("4913") || $0.contains("~") || $0.contains(".swp") || $0.contains(".tmp-") }, "editor litter fired: \(fired)")
        #expect(fired.count == 5)
        w.stop()
    }

    @Test func mkdirDashPAndAFileAtOnce300TimesFires300() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("deep/**")])
        try w.start()
        let script = "cd '\(w.root)' && for i in $(seq 1 300); do mkdir -p deep/a$i/b/c && echo $i > deep/a$i/b/c/f; done"
        #expect(try run("/bin/sh", ["-c", script]).status == 0)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        let paths = w.firedPaths()
        #expect(paths.count == 300)
        #expect(Set(paths) == Set((1...300).map { "deep/a\($0)/b/c/f" }))
    }

    @Test func aFolderOf1000FilesMovedInFires1000AndMovedOutLeavesNoPhantoms() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "inbox/**", "name": "moved", "relay": "research"]])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        let outside = w.scratch.base + "/batch"
        try burst(1000, in: outside)
        #expect(rename(outside, w.path("inbox/batch")) == 0)
        try w.waitForCookie()
        let queued = try w.queue().filter { $0.trigger == "moved" }
        #expect(queued.count == 1000)
        #expect(Set(queued.map(\.path)) == Set((0..<1000).map { "inbox/batch/f\($0).txt" }))

        // Move it out again, then write inside it: nothing of that may show up.
        #expect(rename(w.path("inbox/batch"), outside) == 0)
        try w.waitForCookie()
        try burst(50, in: outside, prefix: "after")
        try Data("changed".utf8).write(to: URL(fileURLWithPath: outside + "/f1.txt"))
        try w.waitForCookie()
        #expect(try w.queue().filter { $0.trigger == "moved" }.count == 1000)
        #expect(!w.log().contains("after0"), "a phantom event from a folder that left the tree")
    }

    @Test func twentyThousandFilesAtOnceFireExactly20000() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "bulk/**", "name": "bulk", "relay": "research"]])
        // No model server: the first run waits for one, the others stay queued.
        try w.start(environment: ["RELAY_MODEL_URL": "http://127.0.0.1:\(FakeModelServer.freePort())/v1"])
        try burst(20_000, in: w.path("bulk"))
        try w.waitForCookie(timeout: 300)
        let queued = try w.queue().filter { $0.trigger == "bulk" }
        #expect(queued.count == 20_000)
        #expect(Set(queued.map(\.path)).count == 20_000)
        #expect(queued.filter { $0.state == "pending" }.count >= 19_999)
        #expect(queued.filter { $0.state == "running" }.count <= 1, "one run at a time (the trigger's concurrency), waiting for the model")
    }

    @Test func withTheReaderStalledTheQueueOverflowsAndTheRescanStillFindsAll20000() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "bulk/**", "name": "bulk", "relay": "research"]])
        // The folder must be watched before the burst: a folder created during the stall is
        // only watched (and listed) afterwards, and nothing would overflow.
        try FileManager.default.createDirectory(atPath: w.path("bulk"), withIntermediateDirectories: true)
        // Long enough for the burst to overflow the kernel's queue on a loaded machine too.
        try w.start(environment: ["RELAY_WATCH_TEST_STALL_MS": "10000"])
        try w.write("relay-test-stall", "the reader sleeps 10 s when it sees this\n")
        try burst(20_000, in: w.path("bulk"))
        try w.waitForCookie(timeout: 300)
        #expect(w.log().contains("overflowed"), "the kernel queue did not overflow; the test proves nothing")
        let queued = try w.queue().filter { $0.trigger == "bulk" }
        #expect(queued.count == 20_000)
        #expect(Set(queued.map(\.path)).count == 20_000)
    }

    @Test func filesRelayWritesIntoATriggerFolderFireNothingButAPersonsRelayFsWriteDoes() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("Research/**")])
        try w.start()
        // An agent's output (the engine writes with triggers off), several times and appended to.
        for i in 0..<5 {
            #expect(try run(Binaries.stress, ["write", w.root, "Research/llamas/summary-\(i).md", "summary \(i)\n"]).status == 0)
        }
        #expect(try run(Binaries.stress, ["write", w.root, "Research/llamas/summary-0.md", "rewritten\n"]).status == 0)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().isEmpty, "Relay's own writes fired: \(w.fired())")
        // A person (or script) dropping a file through the CLI means it.
        #expect(try w.scratch.relay(["fs", "write", "-w", w.root, "Research/dropped.md"], input: "read this\n").status == 0)
        // And a person editing the agent's output makes it theirs.
        try w.write("Research/llamas/summary-1.md", "edited by a person\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(Set(w.firedPaths()) == ["Research/dropped.md", "Research/llamas/summary-1.md"])
    }

    @Test func aKilledDaemonRestartsAndFiresEveryDropOnceAndNoneTwice() throws {
        var slow = WatchedWorkspace.recording("inbox/*")
        slow["command"] = "sleep 0.05; " + (slow["command"] as! String)
        let w = try WatchedWorkspace(triggers: [slow])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        for i in 0..<30 { try w.write("inbox/before-\(i).txt", "before \(i)\n") }
        try w.waitForCookie()  // all 30 queued; they run one at a time, 50 ms each
        w.crash()
        let firedAtCrash = w.fired().count
        #expect(firedAtCrash < 30, "the crash came too late to prove anything")
        // Dropped while the daemon is down: found by the startup scan.
        for i in 0..<10 { try w.write("inbox/while-down-\(i).txt", "down \(i)\n") }
        try w.start()
        try w.waitUntilQueueIdle()

        let queue = try w.queue()
        let expected = Set((0..<30).map { "inbox/before-\($0).txt" } + (0..<10).map { "inbox/while-down-\($0).txt" })
        #expect(Set(queue.map(\.path)) == expected)
        #expect(queue.count == 40, "one queue entry per drop")
        #expect(queue.allSatisfy { $0.state == "done" })
        // A command cut short by the crash runs again (attempts 2); every other ran once.
        var runs: [String: Int] = [:]
        for path in w.firedPaths() { runs[path, default: 0] += 1 }
        for entry in queue {
            #expect(runs[entry.path] == entry.attempts || (entry.attempts == 2 && runs[entry.path] == 1),
                    "\(entry.path): ran \(runs[entry.path] ?? 0) times, attempts \(entry.attempts)")
        }
        #expect(queue.filter { $0.attempts > 1 }.count <= 1)

        // The same content dropped again fires nothing; new content does.
        unlink(w.path("inbox/before-3.txt"))
        try w.write("inbox/before-3.txt", "before 3\n")
        try w.write("inbox/before-4.txt", "before 4, edited\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(try w.queue().count == 41)
        #expect(w.firedPaths().filter { $0 == "inbox/before-3.txt" }.count == runs["inbox/before-3.txt"])
        w.stop()
    }

    @Test func pendingTriggersSurviveAGracefulStopAndARestart() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "Research/**", "exclude": ["**/README.md"], "relay": "research"]])
        // No model server: the first run waits for one (running), the other four stay pending.
        let noServer = ["RELAY_MODEL_URL": "http://127.0.0.1:\(FakeModelServer.freePort())/v1"]
        try w.start(environment: noServer)
        for i in 0..<5 { try w.write("Research/paper-\(i).md", "paper \(i)\n") }
        try w.waitForCookie()
        w.stop()
        #expect(w.daemon?.terminationStatus == 0, "SIGTERM is a clean stop")
        #expect(w.log().contains("stopped watching"))
        #expect(try w.queue().filter { $0.state == "pending" || $0.state == "running" }.count == 5)
        try w.start(environment: noServer)
        #expect(try w.queue().filter { $0.state == "pending" || $0.state == "running" }.count == 5)
        #expect(try w.queue().count == 5, "a restart queues nothing twice")
        w.stop()
    }

    @Test func theDaemonSyncsWithConfiguredPeersAfterChangesAndSyncedFilesFireNothingThere() throws {
        let peer = try ScratchWorkspace.relayInit()
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("Research/**")],
                                     sync: ["peers": [peer.root], "afterChangeSeconds": 0.2])
        try w.start()
        try w.write("Research/dropped.md", "to be synced\n")
        try FileEvents.wait(under: [peer.root], endingWith: w.daemon, "Research/dropped.md on the peer; log:\n\(w.log().suffix(1500))") {
            peer.contents("Research/dropped.md")
        }
        #expect(peer.contents("Research/dropped.md") == "to be synced\n", "\(w.log().suffix(1500))")
        // A file that arrives from the peer by sync is not a drop here.
        try "from the peer\n".write(toFile: peer.path("Research/from-peer.md"), atomically: false, encoding: .utf8)
        try w.write("Research/nudge.md", "a change to start the next sync\n")
        try w.waitFor("Research/from-peer.md from the peer") { w.scratch.contents("Research/from-peer.md") }
        #expect(w.scratch.contents("Research/from-peer.md") == "from the peer\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(Set(w.firedPaths()) == ["Research/dropped.md", "Research/nudge.md"], "synced-in files fired: \(w.fired())")
        w.stop()
    }

    @Test func theDaemonFoldsSyncthingConflictCopiesAtStartAndWhenTheyArrive() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("Research/**")])
        // A copy Syncthing left while the daemon was down: the same journal day started on
        // two machines.
        try w.write("Journal/user/2026-11-22.md", "- 09:00 desktop\n")
        try w.write("Journal/user/2026-11-22.sync-conflict-20261122-101501-ABCDEF1.md", "- 09:05 laptop\n")
        try w.start()
        try w.waitFor("the Syncthing copy to be folded") {
            w.scratch.contents("Journal/user/2026-11-22.sync-conflict-20261122-101501-ABCDEF1.md") == nil ? () : nil
        }
        let journal = w.scratch.contents("Journal/user/2026-11-22.md") ?? ""
        #expect(journal.contains("- 09:00 desktop\n") && journal.contains("- 09:05 laptop\n"), "\(journal)\n\(w.log().suffix(1500))")
        // One that arrives while it runs: the agents' journal of the next day, on both sides.
        try w.write("Journal/agent/2026-11-23.md", "# 2026-11-23\n- desktop agent\n")
        let copy = "Journal/agent/2026-11-23.sync-conflict-20261123-111500-ABCDEF1.md"
        try w.write(copy, "# 2026-11-23\n- laptop agent\n")
        try w.waitFor("the second Syncthing copy to be folded") { w.scratch.contents(copy) == nil ? () : nil }
        let day = w.scratch.contents("Journal/agent/2026-11-23.md") ?? ""
        #expect(w.scratch.contents(copy) == nil, "the copy is still there: \(w.log().suffix(1500))")
        #expect(day.contains("- desktop agent\n") && day.contains("- laptop agent\n"), "\(day)")
        w.stop()
    }

    @Test func theFirstStartTakesExistingFilesAsTheBaseline() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("Research/**")])
        try w.write("Research/already-here.md", "old notes\n")
        try w.start()
        try w.waitUntilQueueIdle()
        #expect(w.fired().isEmpty)
        #expect(try w.queue().isEmpty)
    }

    @Test func aSecondDaemonOnTheSameWorkspaceIsRefused() throws {
        let w = try WatchedWorkspace(triggers: [])
        try w.start()
        let second = try w.scratch.relay(["watch", "-w", w.root])
        #expect(second.status == 1 && second.standardError.contains("another `relay watch` is already running"))
        w.stop()
    }

    @Test func aBadTriggerIsAClearErrorWithLineAndField() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "Research/**", "relay": "research", "concurency": 2]])
        let result = try w.scratch.relay(["watch", "-w", w.root])
        #expect(result.status == 2)
        #expect(result.standardError.contains("relay.json:"))
        #expect(result.standardError.contains("triggers[0].concurency: unknown field 'concurency'"), "\(result.standardError)")
    }

    static let userNamespaces: Bool = {
        (try? run("/usr/bin/unshare", ["-U", "-r", "sh", "-c", "echo 1000 > /proc/sys/user/max_inotify_watches"]).status) == 0
    }()

    @Test(.enabled(if: userNamespaces, "needs unshare -U -r and a writable /proc/sys/user/max_inotify_watches (Linux 5.11+)"))
    func hittingTheWatchLimitIsAClearErrorNamingTheSysctl() throws {
        let w = try WatchedWorkspace(triggers: [])
        for i in 0..<20 { try FileManager.default.createDirectory(atPath: w.path("many/d\(i)"), withIntermediateDirectories: true) }
        // In a user namespace of its own, the limit is lowered for this daemon only.
        let result = try run("/usr/bin/unshare", ["-U", "-r", "sh", "-c",
            "echo 10 > /proc/sys/user/max_inotify_watches && exec '\(Binaries.relay)' watch -w '\(w.root)'"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("limit on inotify watches is reached"), "\(result.standardError)")
        #expect(result.standardError.contains("fs.inotify.max_user_watches"))
        #expect(result.standardError.contains("user.max_inotify_watches in this user namespace = 10"))
    }
}
