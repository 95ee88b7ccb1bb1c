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

    @Test func aRunKilledBetweenAgentsResumesUnderTheNameItsRowGaveIt() throws {
        let (w, server) = try droppedFileWorkspace(delay: 0.4)
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        try w.start(environment: environment)
        try w.write("Research/alpacas.md", "# Alpacas\n\nAlpacas are smaller than llamas.\n")
        let run = try w.waitFor("two agents of the run to finish") {
            (try? w.queue().first { $0.path == "Research/alpacas.md" })?.run.flatMap { finishedSteps(of: $0, inWorkspace: w.root) >= 2 ? $0 : nil }
        }
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
