import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceWatcher

/// Issue 29, one ledger: the watcher's trigger row is the one record of whether a drop was
/// handled and by which relay run. It names the run before the run exists; a kill at any point
/// of the run — between agents, or after the run's journal says finished and before the row
/// says done — neither loses the drop nor runs it twice, and repeats no model call.
@Suite("relay watch: the trigger row names its run", .serialized)
struct WatcherRunLedgerTests {
    func droppedFileWorkspace(delay: Double = 0) throws -> (WatchedWorkspace, FakeModelServer) {
        let w = try WatchedWorkspace(triggers: WatchRelayIntegrationTests.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let server = FakeModelServer(delay: delay, log: w.scratch.base + "/requests.log")
        try server.start()
        return (w, server)
    }

    /// The run folders of the workspace (the finished-runs index and older records left out).
    func runFolders(_ w: WatchedWorkspace) -> [String] {
        let folder = w.path(".relay/runs")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            FileManager.default.fileExists(atPath: folder + "/" + $0 + "/run.json")
        }.sorted()
    }

    @Test func aRunThatFinishedBeforeItsRowWasMarkedDoneIsNeitherLostNorRunAgain() throws {
        let (w, server) = try droppedFileWorkspace()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        // The hook kills the daemon when the run has ended well, before its row says done.
        try w.start(environment: environment.merging(["RELAY_WATCH_TEST_DIE_AFTER_RUN": "1"]) { _, new in new })
        try w.write("Research/llamas.md", "# Llamas\n\nLlamas hum when they are content.\n")
        try w.waitForExit()
        #expect(w.daemon?.terminationReason == .uncaughtSignal && w.daemon?.terminationStatus == SIGKILL)
        let row = try #require(try w.queue().first { $0.path == "Research/llamas.md" })
        #expect(row.state == "running", "killed before the row was marked done")
        let run = try #require(row.run, "the row names its run")
        #expect(finishedRun(triggeredBy: "Research/llamas.md", inWorkspace: w.root) == run, "the run it names had finished")
        #expect(server.requests.count == 4)

        try w.start(environment: environment)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        let after = try #require(try w.queue().first { $0.path == "Research/llamas.md" })
        #expect(after.state == "done" && after.run == run && after.attempts == 2, "\(after)")
        #expect(server.requests.count == 4, "no model call again: \(server.requests.map(\.agent))")
        #expect(runFolders(w) == [run], "one run for one drop")
        let chat = try #require(try? String(contentsOfFile: w.path("Chats/research-llamas.md"), encoding: .utf8))
        #expect(chat.components(separatedBy: "### 📋 Paige").count == 2, "the answer is in the chat once")
        w.stop()
    }

    /// relay.json's retention set so that every finished run is past the policy.
    func pruneEveryFinishedRun(_ w: WatchedWorkspace) throws {
        let file = w.path("relay.json")
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any] ?? [:]
        object["retention"] = ["runs": ["keepLast": 0, "keepWithinDays": 0]]
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: file))
    }

    @Test func gcWithTheDaemonDownKeepsAFinishedRunWhoseRowStillSaysRunningAndPrunesItOnceTheRowIsDone() throws {
        let (w, server) = try droppedFileWorkspace()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        try w.start(environment: environment.merging(["RELAY_WATCH_TEST_DIE_AFTER_RUN": "1"]) { _, new in new })
        try w.write("Research/guanacos.md", "# Guanacos\n\nGuanacos are the wild kin of llamas.\n")
        try w.waitForExit()
        let row = try #require(try w.queue().first { $0.path == "Research/guanacos.md" })
        let run = try #require(row.run)
        #expect(row.state == "running" && finishedRun(triggeredBy: "Research/guanacos.md", inWorkspace: w.root) == run, "\(row)")
        try pruneEveryFinishedRun(w)

        // The daemon is down: the row says running, its run says done, the policy keeps no run.
        let gc = try w.scratch.relay(["gc", "-w", w.root])
        #expect(gc.status == 0, "\(gc.standardError)")
        #expect(gc.text.contains("Runs      pruned 0 of 1 runs") && gc.text.contains("1 kept because a trigger not yet done names them"), "\(gc.text)")
        #expect(runFolders(w) == [run], "the run the queue waits on is kept")

        try w.start(environment: environment)
        try w.waitUntilQueueIdle()
        let after = try #require(try w.queue().first { $0.path == "Research/guanacos.md" })
        #expect(after.state == "done" && after.run == run, "\(after)")
        #expect(server.requests.count == 4, "no model call again: \(server.requests.map(\.agent))")
        w.stop()
        try w.waitForExit()

        // Its row done, the run is one like any other: the policy prunes it, and the drop stays handled.
        let again = try w.scratch.relay(["gc", "-w", w.root])
        #expect(again.text.contains("Runs      pruned 1 of 1 runs"), "\(again.text)")
        #expect(runFolders(w).isEmpty)
        try w.start(environment: environment)
        try w.waitUntilQueueIdle()
        #expect(try w.queue().filter { $0.path == "Research/guanacos.md" }.map(\.state) == ["done"])
        #expect(server.requests.count == 4 && runFolders(w).isEmpty, "a pruned run's drop is not run again")
        w.stop()
    }

    @Test func aRunKilledBetweenAgentsResumesUnderTheNameItsRowGaveIt() throws {
        let (w, server) = try droppedFileWorkspace(delay: 0.4)
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        try w.start(environment: environment)
        try w.write("Research/alpacas.md", "# Alpacas\n\nAlpacas are smaller than llamas.\n")
        let run = try w.waitFor("two agents of the run to finish") {
            (try? w.queue().first { $0.path == "Research/alpacas.md" })?.run.flatMap { finishedSteps(of: $0, inWorkspace: w.root) >= 2 ? $0 : nil }
        }
        // `relay status` names the run that answers the running trigger.
        let status = try w.scratch.relay(["status", "-w", w.root, "--json", "--sample-seconds", "0"])
        let recent = (jsonObject(status.text)?["watcher"] as? [String: Any])?["recent"] as? [[String: Any]] ?? []
        #expect(recent.contains { $0["path"] as? String == "Research/alpacas.md" && $0["state"] as? String == "running" && $0["run"] as? String == run },
                "\(status.text)")
        let shown = try w.scratch.relay(["status", "-w", w.root, "--sample-seconds", "0"]).text
        #expect(shown.contains("running    Research/alpacas.md (Research/**): run \(run)"), "\(shown)")
        w.crash()
        try w.waitForExit()
        let finishedBefore = finishedSteps(of: run, inWorkspace: w.root)
        #expect(finishedBefore >= 2 && finishedBefore < 4)

        try w.start(environment: environment)
        try w.waitUntilQueueIdle()
        let row = try #require(try w.queue().first { $0.path == "Research/alpacas.md" })
        #expect(row.state == "done" && row.run == run, "\(row)")
        #expect(finishedSteps(of: run, inWorkspace: w.root) == 4)
        #expect(runFolders(w) == [run], "the run was resumed, not made again")
        let agents = server.requests.map(\.agent)
        for agent in ["Paige", "Remy", "Wren", "Vera"].prefix(finishedBefore) {
            #expect(agents.filter { $0 == agent }.count == 1, "\(agent) was asked again: \(agents)")
        }
        w.stop()
    }

    @Test func anOlderWorkspacesRunRecordedInByTriggerIsResumedAndTheOldRecordsGo() throws {
        let (w, server) = try droppedFileWorkspace(delay: 0.4)
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        try w.start(environment: environment)
        try w.write("Research/vicunas.md", "# Vicunas\n\nVicunas live high in the Andes.\n")
        let run = try w.waitFor("an agent of the run to finish") {
            (try? w.queue().first { $0.path == "Research/vicunas.md" })?.run.flatMap { finishedSteps(of: $0, inWorkspace: w.root) >= 1 ? $0 : nil }
        }
        w.crash()
        try w.waitForExit()
        let finishedBefore = finishedSteps(of: run, inWorkspace: w.root)
        // Make it the workspace an older Relay left: its queue rows named no run, and the run
        // was found by trigger key in .relay/runs/by-trigger/ (a file per key's SHA-256).
        let hash = try #require(try w.queue().first { $0.path == "Research/vicunas.md" }?.hash)
        do {
            let store = try WatchStore(workspace: Workspace.open(at: w.root))
            try store.database.execute("UPDATE triggers SET run = NULL; DELETE FROM meta WHERE key = '\(WatchService.ledgerNamesRuns)'")
        }
        let legacy = w.path(".relay/runs/by-trigger")
        try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: true)
        try Data(run.utf8).write(to: URL(fileURLWithPath: legacy + "/" + ContentHash(of: "research|Research/vicunas.md|\(hash)").hex))
        #expect(try w.queue().first { $0.path == "Research/vicunas.md" }?.run == nil)

        try w.start(environment: environment)
        try w.waitUntilQueueIdle()
        let row = try #require(try w.queue().first { $0.path == "Research/vicunas.md" })
        #expect(row.state == "done" && row.run == run, "the queue adopted the older record's run: \(row)")
        #expect(runFolders(w) == [run])
        #expect(!FileManager.default.fileExists(atPath: legacy), "the older records are gone once the queue names the runs")
        #expect(w.log().contains("runs recorded beside the trigger queue by an older Relay are now named in it"))
        let agents = server.requests.map(\.agent)
        for agent in ["Paige", "Remy", "Wren", "Vera"].prefix(finishedBefore) {
            #expect(agents.filter { $0 == agent }.count == 1, "\(agent) was asked again: \(agents)")
        }
        w.stop()
    }
}
