import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceWatcher

/// Issue 29: the watcher at inotifywait's speed without giving up exactly-once — renames that
/// keep a drop's identity, batched commits that survive a kill at any point, the content a run
/// works on being the content that settled, and relay.json read again when it changes.
@Suite("relay watch: renames, batches, settled content, relay.json", .serialized)
struct WatcherLedgerTests {
    @Test func aFolderOf1000FilesRenamedInsideTheWorkspaceFiresNothingAndALaterEditFiresOnceUnderTheNewPath() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/**")])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        try burst(1000, in: w.path("inbox/batch"))
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 1000)

        #expect(rename(w.path("inbox/batch"), w.path("inbox/renamed")) == 0)
        // A file renamed inside the renamed folder, and one renamed across folders.
        try w.waitForCookie()
        #expect(rename(w.path("inbox/renamed/f8.txt"), w.path("inbox/renamed/g8.txt")) == 0)
        try FileManager.default.createDirectory(atPath: w.path("inbox/other"), withIntermediateDirectories: true)
        // Once the new folder is watched: a move into a folder the daemon does not watch yet
        // is, to inotify, a move out and a new file.
        try w.waitForCookie()
        #expect(rename(w.path("inbox/renamed/f9.txt"), w.path("inbox/other/f9.txt")) == 0)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 1000, "a rename fired: \(w.fired().suffix(5))")
        #expect(try w.queue().count == 1000)

        // The renamed folder is still watched, under its new name.
        try w.write("inbox/renamed/f7.txt", "edited after the rename\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 1001)
        #expect(w.fired().last == "inbox/renamed/f7.txt \(ContentHash(of: "edited after the rename\n").hex)")
        #expect(try w.queue().filter { $0.path.hasPrefix("inbox/batch/") }.count == 1000, "the ledger keeps what ran, under the path it ran on")
        w.stop()
    }

    @Test func aFileOrFolderMovedIntoABrandNewFolderFiresNothingButAMoveInFromOutsideFires() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/**")])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        try burst(100, in: w.path("inbox/batch"))
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 100)

        // Each folder is made and moved into at once, before the daemon can watch it: to
        // inotify a move out of a watched folder, and files that show up in a new one.
        #expect(mkdir(w.path("inbox/new-a"), 0o755) == 0)
        #expect(rename(w.path("inbox/batch/f1.txt"), w.path("inbox/new-a/f1.txt")) == 0)
        #expect(mkdir(w.path("inbox/new-b"), 0o755) == 0)
        #expect(mkdir(w.path("inbox/new-b/deeper"), 0o755) == 0)
        #expect(rename(w.path("inbox/batch"), w.path("inbox/new-b/deeper/batch")) == 0)
        // A folder made, filled by a move at once, then renamed: two hops, and the folder may
        // be gone from its first name before the daemon can watch it. (Each hop stays inside
        // the rule's pattern: a hop out of it and back in is new to the rule, and fires.)
        #expect(mkdir(w.path("inbox/staging"), 0o755) == 0)
        #expect(rename(w.path("inbox/new-a/f1.txt"), w.path("inbox/staging/f1.txt")) == 0)
        #expect(rename(w.path("inbox/staging"), w.path("inbox/new-c")) == 0)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 100, "a move fired: \(w.firedPaths().filter { !$0.hasPrefix("inbox/batch/") }) \(w.log().suffix(3000))")
        #expect(try w.queue().count == 100)

        // The moved files are watched under their new paths and fire once when edited there.
        try w.write("inbox/new-b/deeper/batch/f2.txt", "edited after the move\n")
        try w.write("inbox/new-c/f1.txt", "edited too\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(Array(w.firedPaths().suffix(2)).sorted() == ["inbox/new-b/deeper/batch/f2.txt", "inbox/new-c/f1.txt"])

        // A file moved in from outside the workspace is new content: it fires, once.
        let outside = w.scratch.base + "/outside-\(UUID().uuidString).txt"
        try Data("from outside\n".utf8).write(to: URL(fileURLWithPath: outside))
        #expect(mkdir(w.path("inbox/new-d"), 0o755) == 0)
        #expect(rename(outside, w.path("inbox/new-d/in.txt")) == 0)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths().filter { $0 == "inbox/new-d/in.txt" }.count == 1)
        #expect(w.fired().count == 103)
        w.stop()
    }

    @Test func aFirstStartTakesTheBaselineByStampAndHashesItLaterWithoutFiringIt() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/**")])
        try burst(500, in: w.path("inbox/old"))
        try w.start()
        // Edited at once, while the baseline may not be hashed yet: fires once.
        try w.write("inbox/old/f3.txt", "edited right after the first start\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/old/f3.txt"])
        // The background pass ends; the log says so.
        let deadline = Date().addingTimeInterval(120)
        while !w.log().contains("the baseline's files are all hashed") {
            #expect(Date() < deadline, "the baseline was not hashed: \(w.log().suffix(2000))")
            if Date() >= deadline { break }
            try w.waitForCookie()
        }
        // A touch of a hashed baseline file is no new content; an edit is.
        #expect(utimes(w.path("inbox/old/f4.txt"), nil) == 0)
        try w.write("inbox/old/f5.txt", "a real edit\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/old/f3.txt", "inbox/old/f5.txt"])
        // A restart finds nothing new.
        w.stop()
        try w.start()
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.fired().count == 2)
        w.stop()
    }

    @Test func aFileRewrittenBetweenSettleAndItsRunNeverRunsItsNewBytesUnderTheOldKey() throws {
        let gate = FileManager.default.temporaryDirectory.path + "/relay-gate-" + UUID().uuidString
        #expect(mkfifo(gate, 0o600) == 0)
        defer { unlink(gate) }
        // One run at a time; the first (gate.txt) waits on a FIFO, so the others queue behind it.
        // Each run records its key and the hash of the bytes it reads.
        let command = """
            if [ "$RELAY_PATH" = inbox/gate.txt ]; then cat '\(gate)' > /dev/null; fi; \
            printf '%s %s %s\\n' "$RELAY_PATH" "$RELAY_HASH" "$(sha256sum < "$RELAY_FILE" | cut -c1-64)" >> '$FIRED'
            """
        let w = try WatchedWorkspace(triggers: [["pattern": "inbox/*", "command": command, "concurrency": 1]])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        try w.write("inbox/gate.txt", "holds the only slot\n")
        try w.waitForCookie()
        try w.write("inbox/a.txt", "the version that settled first\n")
        try w.waitForCookie()
        #expect(try w.queue().contains { $0.path == "inbox/a.txt" && $0.state == "pending" })
        // Rewritten after it settled and before its run could start.
        try w.write("inbox/a.txt", "the version written while the first waited\n")
        try w.waitForCookie()
        // Let the gate's run end: the queue moves on.
        let writer = open(gate, O_WRONLY)
        #expect(writer >= 0)
        close(writer)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        try w.waitUntilQueueIdle()

        let runs = w.fired().map { $0.split(separator: " ").map(String.init) }
        for run in runs { #expect(run.count == 3 && run[1] == run[2], "a run read bytes other than its key's: \(run)") }
        let newer = ContentHash(of: "the version written while the first waited\n").hex
        #expect(runs.filter { $0.first == "inbox/a.txt" }.map { $0[1] } == [newer], "\(runs)")
        let older = ContentHash(of: "the version that settled first\n").hex
        #expect(try w.queue().first { $0.path == "inbox/a.txt" && $0.hash == older }?.state == "superseded")
        w.stop()
    }

    /// Settled copies still there, in `.relay/tmp` and in the workspace's folder in memory.
    static func settledCopiesLeft(_ w: WatchedWorkspace) -> [String] {
        let workspace = try! Workspace.open(at: w.root)
        let folders = [w.path(".relay/tmp"), MemoryFolder.privateFolder(TriggerRunner.memoryFolderName(workspace))].compactMap { $0 }
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("trigger-") }
        }
    }

    /// `sh` starts while the settled copy is made (the copy is off the path to the command's
    /// start): a file rewritten after `sh` started and before the copy was made never runs its
    /// command, old key or new bytes; the newer content runs under its own key.
    @Test func aFileRewrittenAfterItsCommandsShellStartedAndBeforeTheCopyNeverRunsTheCommand() throws {
        let command = """
            printf '%s %s %s %s\\n' "$RELAY_PATH" "$RELAY_HASH" "$(sha256sum < "$RELAY_SETTLED_FILE" | cut -c1-64)" "$(dirname "$RELAY_SETTLED_FILE")" >> '$FIRED'
            """
        let w = try WatchedWorkspace(triggers: [["pattern": "inbox/*", "command": command, "concurrency": 1]])
        let gate = w.scratch.base + "/copy-gate"
        #expect(mkfifo(gate, 0o600) == 0)
        /// Lets the runner waiting at the gate go on (it opened the FIFO to read).
        func openTheGate() throws {
            let writer = try w.waitFor("a runner at the copy gate") { () -> Int32? in
                let fd = open(gate, O_WRONLY | O_NONBLOCK)
                return fd >= 0 ? fd : nil
            }
            close(writer)
        }
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start(environment: ["RELAY_WATCH_TEST_COPY_GATE": gate])
        try w.write("inbox/a.txt", "the version that settled\n")
        // The runner has started `sh` and waits before making the copy.
        try w.waitFor("the runner to reach the gate") { FileManager.default.fileExists(atPath: gate + ".reached") ? () : nil }
        #expect(try w.queue().first { $0.path == "inbox/a.txt" }?.state == "running")
        try w.write("inbox/a.txt", "the version written while sh started\n")
        try w.waitForCookie()
        try openTheGate()
        let settled = ContentHash(of: "the version that settled\n").hex
        try w.waitFor("the first trigger to stand aside") {
            (try? w.queue().first { $0.path == "inbox/a.txt" && $0.hash == settled })?.state == "superseded" ? () : nil
        }
        try openTheGate()
        try w.waitUntilQueueIdle()

        let newer = ContentHash(of: "the version written while sh started\n").hex
        let runs = w.fired().map { $0.split(separator: " ").map(String.init) }
        // A small file's copy is made in the workspace's private folder in memory, where there is one.
        let folder = MemoryFolder.privateFolder(TriggerRunner.memoryFolderName(try Workspace.open(at: w.root))) ?? w.path(".relay/tmp")
        #expect(runs == [["inbox/a.txt", newer, newer, folder]], "only the newer content's command ran, on its own bytes: \(runs)")
        #expect(try w.queue().first { $0.path == "inbox/a.txt" && $0.hash == newer }?.state == "done")
        let leftovers = Self.settledCopiesLeft(w)
        #expect(leftovers.isEmpty, "the settled copies are removed: \(leftovers)")
        w.stop()
    }

    @Test func aCommandReadsTheSettledBytesFromItsCopyWhenTheFileIsRewrittenWhileItRuns() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "inbox/*", "command": Self.gatedCommand, "concurrency": 1]])
        // Beside the workspace, where the test's waits see it: the gate and its marker.
        let gate = w.scratch.base + "/gate"
        #expect(mkfifo(gate, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start()
        try w.write("inbox/a.txt", "the version that settled\n")
        try w.waitFor("the command to wait at the gate") { FileManager.default.fileExists(atPath: gate + ".done") ? () : nil }
        // Rewritten after its command started and before the command read it.
        try w.write("inbox/a.txt", "the version written while the command waited\n")
        try w.waitForCookie()
        let writer = open(gate, O_WRONLY)
        #expect(writer >= 0)
        close(writer)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        try w.waitUntilQueueIdle()

        let settled = ContentHash(of: "the version that settled\n").hex
        let newer = ContentHash(of: "the version written while the command waited\n").hex
        let runs = w.fired().map { $0.split(separator: " ").map(String.init) }
        #expect(runs.count == 2, "\(runs)")
        for run in runs { #expect(run.count == 4 && run[1] == run[2], "a command's copy held bytes other than its key's: \(run)") }
        #expect(runs.first?[1] == settled && runs.first?[3] == newer, "the first run kept the settled bytes; the file itself was newer: \(runs)")
        #expect(runs.last?[1] == newer, "the newer content ran under its own key")
        let leftovers = Self.settledCopiesLeft(w)
        #expect(leftovers.isEmpty, "the settled copies are removed: \(leftovers)")
        w.stop()
    }

    /// The first run waits on the FIFO `gate` beside the fired log before it reads (leaving
    /// `gate.done` to say so); every run records its key, the hash of its settled copy, and the
    /// hash of the workspace file.
    static let gatedCommand = """
        gate="$(dirname '$FIRED')/gate"; \
        if [ ! -e "$gate.done" ]; then touch "$gate.done"; cat "$gate" > /dev/null; fi; \
        printf '%s %s %s %s\\n' "$RELAY_PATH" "$RELAY_HASH" "$(sha256sum < "$RELAY_SETTLED_FILE" | cut -c1-64)" "$(sha256sum < "$RELAY_FILE" | cut -c1-64)" >> '$FIRED'
        """

    @Test func aTouchOrChmodOfABaselineFileNotHashedYetFiresNothingButASameSizeRewriteFires() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/**")])
        try burst(50, in: w.path("inbox/old"))
        // The hook holds the background hashing: every baseline row stays known by its stamp alone.
        try w.start(environment: ["RELAY_WATCH_TEST_HOLD_BASELINE": "1"])
        #expect(utimes(w.path("inbox/old/f4.txt"), nil) == 0)
        let touched = try run("/usr/bin/touch", [w.path("inbox/old/f5.txt")])
        #expect(touched.status == 0)
        #expect(chmod(w.path("inbox/old/f6.txt"), 0o600) == 0)
        // The same number of bytes, written in place: new content under the same inode and size.
        let fd = open(w.path("inbox/old/f7.txt"), O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        let text = Array("FILE 7 OF THE BURST\n".utf8)
        #expect(text.count == "file 7 of the burst\n".utf8.count)
        _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/old/f7.txt"], "\(w.fired())")
        // A restart (hashing the rest now) finds nothing new.
        w.stop()
        try w.start()
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/old/f7.txt"])
        w.stop()
    }

    @Test func aKillInTheMiddleOfABatchedCommitLosesAndDoublesNothing() throws {
        let w = try WatchedWorkspace(triggers: [["pattern": "bulk/**", "name": "bulk", "relay": "research"]])
        try FileManager.default.createDirectory(atPath: w.path("bulk"), withIntermediateDirectories: true)
        // The test hook kills the daemon (SIGKILL) inside the transaction of several changes that
        // brings the changes recorded to 200, after its rows are written and before its COMMIT.
        try w.start(environment: ["RELAY_WATCH_TEST_DIE_IN_BATCH": "200"])
        try burst(2000, in: w.path("bulk"))
        try w.waitForExit()
        #expect(w.daemon?.terminationReason == .uncaughtSignal && w.daemon?.terminationStatus == SIGKILL)
        #expect(try w.queue().count < 2000, "the kill came after every batch: it proves nothing")
        try w.start()
        try w.waitForCookie()
        var queued = try w.queue()
        #expect(queued.count == 2000)
        #expect(Set(queued.map(\.path)) == Set((0..<2000).map { "bulk/f\($0).txt" }))

        // A kill -9 from outside while a second burst is being committed, at whatever point it lands.
        try burst(3000, in: w.path("bulk"), prefix: "g")
        try w.waitFor("the second burst's first batch in the queue") { try w.queue().count == 2000 ? nil : () }
        w.crash()
        try w.waitForExit()
        try w.start()
        try w.waitForCookie()
        queued = try w.queue()
        #expect(queued.count == 5000)
        #expect(Set(queued.map(\.path)).count == 5000, "a drop queued twice")
        w.stop()
    }

    /// A batch's commit also marks the rows that can run now `running` (one commit between
    /// settle and spawn). A kill inside that transaction leaves nothing of the drop, and the
    /// restart's walk queues it; a kill after the commit and before the command starts leaves
    /// the row `running`, and the restart runs it. Either way the command runs once.
    @Test(arguments: ["before-commit", "after-commit"])
    func aKillAroundTheCommitThatQueuesAndStartsARunRunsTheDropOnceAfterTheRestart(window: String) throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/*")])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try w.start(environment: ["RELAY_WATCH_TEST_DIE_STARTING_BATCH": window])
        try w.write("inbox/a.txt", "dropped once\n")
        try w.waitForExit()
        #expect(w.daemon?.terminationReason == .uncaughtSignal && w.daemon?.terminationStatus == SIGKILL, "the hook never fired")
        #expect(w.fired().isEmpty, "the command started before the kill")
        let atKill = try w.queue()
        if window == "before-commit" {
            #expect(atKill.isEmpty, "a row of the uncommitted batch survived: \(atKill)")
        } else {
            #expect(atKill.map(\.state) == ["running"] && atKill.map(\.attempts) == [1], "\(atKill)")
        }

        try w.start()
        try w.waitUntilQueueIdle()
        let queue = try w.queue()
        #expect(queue.map(\.path) == ["inbox/a.txt"] && queue.map(\.state) == ["done"], "\(queue)")
        // Marked running once before the kill and once after, or only after the restart's walk.
        #expect(queue.map(\.attempts) == [window == "before-commit" ? 1 : 2])
        let hash = try #require(queue.first?.hash)
        #expect(w.fired() == ["inbox/a.txt \(hash)"], "the command ran once, on the settled bytes")

        // And the restarted daemon starts the next drop in its batch's commit, as before.
        try w.write("inbox/b.txt", "after the restart\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/a.txt", "inbox/b.txt"])
        #expect(try w.queue().map(\.attempts) == [queue[0].attempts, 1])
        w.stop()
    }

    @Test func aBrokenRelayJSONSaveKeepsTheLastValidTriggersAndLogsWhy() throws {
        let w = try WatchedWorkspace(triggers: [WatchedWorkspace.recording("inbox/*")])
        try FileManager.default.createDirectory(atPath: w.path("inbox"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: w.path("other"), withIntermediateDirectories: true)
        try w.start()
        let valid = try #require(w.scratch.contents("relay.json"))
        // Saved half-way: not JSON.
        try w.write("relay.json", String(valid.prefix(valid.count / 2)))
        try w.waitForCookie()
        try w.write("inbox/a.txt", "still fires\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/a.txt"])
        #expect(w.log().contains("relay.json changed but cannot be used; keeping the last valid triggers"), "\(w.log().suffix(2000))")
        #expect(w.log().contains("relay.json:"), "the reason names the file and line: \(w.log().suffix(2000))")

        // A valid save takes effect at once: the trigger now watches other/.
        try w.write("relay.json", valid.replacingOccurrences(of: "\"inbox\\/*\"", with: "\"other\\/*\"").replacingOccurrences(of: "\"inbox/*\"", with: "\"other/*\""))
        try w.waitForCookie()
        #expect(w.log().contains("relay.json changed: triggers read again"), "\(w.log().suffix(2000))")
        try w.write("inbox/b.txt", "no longer watched\n")
        try w.write("other/c.txt", "watched now\n")
        try w.waitForCookie()
        try w.waitUntilQueueIdle()
        #expect(w.firedPaths() == ["inbox/a.txt", "other/c.txt"])
        w.stop()
    }

    @Test func relayStatusShowsTheDaemonsResidentMemoryAndWakeUps() throws {
        let w = try WatchedWorkspace(triggers: [])
        try w.start()
        let result = try w.scratch.relay(["status", "-w", w.root, "--json", "--sample-seconds", "0.5"])
        #expect(result.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        let footprint = try #require((root["watcher"] as? [String: Any])?["footprint"] as? [String: Any], "\(String(decoding: result.standardOutput, as: UTF8.self))")
        #expect((footprint["residentKiB"] as? Int ?? 0) > 0)
        #expect((footprint["peakResidentKiB"] as? Int ?? 0) >= (footprint["residentKiB"] as? Int ?? 0))
        #expect(footprint["wakeupsPerSecond"] is Double || footprint["wakeupsPerSecond"] is Int)
        let text = try w.scratch.relay(["status", "-w", w.root, "--sample-seconds", "0.2"])
        let shown = String(decoding: text.standardOutput, as: UTF8.self)
        #expect(shown.contains("MiB resident") && shown.contains("wake-ups/s over"), "\(shown)")
        w.stop()
    }
}
