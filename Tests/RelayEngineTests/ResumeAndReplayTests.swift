import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

@Suite struct ResumeAndReplayTests {
    @Test func aRunThatFailsAtAgentThreeResumesThereWithZeroRepeatedModelCalls() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let first = TestModel([.text("plan"), .text("facts"), .fail(LanguageModelError(.unreachable, "no model server at http://127.0.0.1:9/v1"))])
        let manifest = try scratch.engine(first).prepare(ask: "Llamas?")
        await #expect(throws: RelayError.self) { try await scratch.run(scratch.engine(first), manifest.id) }
        #expect(try RunStore(workspace: scratch.workspace).summary(manifest.id).state == .failed)

        let second = TestModel([.text("draft"), .text("APPROVED")])
        let events = try await scratch.run(scratch.engine(second), manifest.id)
        #expect(second.received.count == 2, "only Wren and Vera are asked")
        #expect(second.received[0].user == "[User Request]:\nLlamas?\n\n[Previous Agent — Remy]:\nfacts")
        let finished = events.compactMap { if case .agentFinished(let message) = $0 { return (message.agent.name, message.restored) } else { return nil } }
        #expect(finished.map(\.0) == ["Paige", "Remy", "Wren", "Vera"])
        #expect(finished.map(\.1) == [true, true, false, false])
        #expect(try RunStore(workspace: scratch.workspace).summary(manifest.id).state == .done)
        // The transcript holds each message once.
        let transcript = try #require(scratch.contents(Conversation.transcriptPath(forChat: manifest.chatFile)))
        #expect(transcript.components(separatedBy: "\"text\" : \"facts\"").count == 2)
        let chat = try #require(scratch.contents(manifest.chatFile))
        #expect(chat.components(separatedBy: "### 🔎 Remy").count == 2)
        #expect(!chat.contains("still working"))
    }

    @Test func cancellingMidReplyLeavesAResumableRunAndATranscriptWithOnlyWholeMessages() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        // The chat files are rewritten after every agent (as after Remy's turn with a real,
        // slow model), so they hold his reply when Wren starts streaming.
        let hanging = TestModel([.text("plan"), .text("facts"), .hang(partial: "HALF-WRITTEN ANSWER")])
        let engine = scratch.engine(hanging)
        let manifest = try engine.prepare(ask: "Llamas?")
        let wrenStreams = Gate()
        let task = Task { try await RunExecutor.$conversationInterval.withValue(.zero) {
            defer { wrenStreams.open() }  // a run that ends early must not leave the test waiting
            try await engine.execute(manifest.id) { event in
                if case .textDelta(_, "writer", _) = event { wrenStreams.open() }
            }
        } }
        // Wait until Wren is streaming.
        await wrenStreams.wait()
        let transcriptPath = Conversation.transcriptPath(forChat: manifest.chatFile)
        let during = try #require(scratch.contents(transcriptPath))
        #expect(!during.contains("HALF-WRITTEN"), "the streaming message is not in the transcript")
        #expect(during.contains("\"text\" : \"facts\""))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }

        let store = RunStore(workspace: scratch.workspace)
        #expect(try store.summary(manifest.id).state == .interrupted)
        #expect(!(scratch.contents(transcriptPath) ?? "").contains("HALF-WRITTEN"))
        #expect(!(scratch.contents(manifest.chatFile) ?? "").contains("HALF-WRITTEN"))

        let rest = TestModel([.text("draft"), .text("APPROVED")])
        try await scratch.run(scratch.engine(rest), manifest.id)
        #expect(rest.received.count == 2)
        #expect(try store.summary(manifest.id).state == .done)
    }

    @Test func aFinishedRunIsShownFromItsJournalWithoutAskingTheModel() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        try await scratch.run(engine, manifest.id)
        let before = try scratch.records(manifest.id).count
        let silent = TestModel([])
        let events = try await scratch.run(scratch.engine(silent), manifest.id)
        #expect(silent.received.isEmpty)
        #expect(try scratch.records(manifest.id).count == before, "nothing is journaled again")
        #expect(events.contains { if case .final = $0 { return true } else { return false } })
    }

    @Test func aTornLastJournalLineIsIgnoredAndItsCallRunsAgain() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("plan"), .text("facts"), .fail(LanguageModelError(.timeout, "slow"))])
        let manifest = try scratch.engine(model).prepare(ask: "Llamas?")
        await #expect(throws: RelayError.self) { try await scratch.run(scratch.engine(model), manifest.id) }
        // What `kill -9` mid-write leaves: half a record, no newline.
        let path = RunStore(workspace: scratch.workspace).journalPath(manifest.id)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"type":"response","key":"2/0","text":"half"#.utf8))
        try handle.close()
        let rest = TestModel([.text("draft"), .text("APPROVED")])
        try await scratch.run(scratch.engine(rest), manifest.id)
        #expect(rest.received.count == 2)
        #expect(try RunStore(workspace: scratch.workspace).summary(manifest.id).state == .done)
    }

    @Test func anAppendMadeJustBeforeACrashIsNotMadeAgainOnResume() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("plan"), .text("facts"),
                               .tools([TestModel.call("append_file", ["path": "Journal/agent/log.md", "text": "- wrote notes"])]),
                               .text("draft"), .text("APPROVED")])
        let manifest = try scratch.engine(model).prepare(ask: "Llamas?")
        try await scratch.run(scratch.engine(model), manifest.id)
        let agentJournal = "Journal/agent/" + manifest.localDate + ".md"
        let journalLine = try #require(scratch.contents(agentJournal))
        #expect(scratch.contents("Journal/agent/log.md") == "- wrote notes\n")

        // What `kill -9` right after each append leaves: the append in the file, its intent in
        // the run's journal, and nothing after it (first the tool's, then the end's).
        let path = RunStore(workspace: scratch.workspace).journalPath(manifest.id)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let intents = lines.indices.filter { lines[$0].contains(#""type":"intent""#) }
        #expect(intents.count == 2, "one intent for the tool's append, one for the agents' journal line")
        for (number, cut) in intents.reversed().enumerated() {
            try (lines[...cut].joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
            // Killed right after the tool's append, the run had not written its journal line yet.
            if number == 1 { try FileManager.default.removeItem(atPath: scratch.workspace.root + "/" + agentJournal) }
            let rest = TestModel([.text("draft"), .text("APPROVED")])
            try await scratch.run(scratch.engine(rest), manifest.id)
            #expect(try RunStore(workspace: scratch.workspace).summary(manifest.id).state == .done)
            #expect(scratch.contents("Journal/agent/log.md") == "- wrote notes\n", "the tool's append is in the file once")
            #expect(scratch.contents(agentJournal) == journalLine, "the run's journal line is there once")
        }
    }

    @Test func aRecordedRunReplaysToIdenticalFiles() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("Chats/trip.md", "Earlier message.\n\n<!-- relay:end 1 · write your next message below this line -->\nPlan my trip to the llamas\n")
        let model = TestModel([
            .text("plan"),
            .tools([TestModel.call("read_file", ["path": "context.md"]), TestModel.call("search_files", ["query": "llamas"], id: "call_1")]),
            .text("facts"),
            .tools([TestModel.call("write_file", ["path": "Research/trip/plan.md", "content": "# Trip\n"]),
                    TestModel.call("update_context", ["section": "Trips", "content": "- llama trip planned"], id: "call_1")]),
            .text("draft"),
            .tools([TestModel.call("request_revision", ["targetAgentName": "Wren", "revisionRequest": "shorter"])]), .text("one fix"),
            .text("short draft"),
        ])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "chat", path: "Chats/trip.md", hash: scratch.workspace.hash("Chats/trip.md").hex))
        try await scratch.run(engine, manifest.id)
        // A person edits the files afterwards: replay starts from the recorded versions anyway.
        try scratch.write("context.md", "changed by a person\n")
        try scratch.write("Chats/trip.md", "rewritten\n")

        let folder = scratch.base + "/replayed"
        let report = try await engine.replay(manifest.id, into: folder)
        #expect(report.matches, "\(report.requests.filter { !$0.matches }) \(report.files.filter { !$0.matches })")
        #expect(report.requests.count == 8)
        let paths = Set(report.files.map(\.what))
        #expect(paths.isSuperset(of: ["Chats/trip.md", "Chats/trip.json", "Research/trip/plan.md", "context.md", "Journal/agent/\(manifest.localDate).md"]))
        // The replayed files are the recorded ones, byte for byte.
        let records = try scratch.records(manifest.id).filter { $0.type == .effect || ($0.type == .tool && $0.path != nil) }
        let lastWrite = Dictionary(records.compactMap { record in record.path.map { ($0, record) } }, uniquingKeysWith: { _, last in last })
        for (path, record) in lastWrite where record.mode != "append" {
            let bytes = try #require(FileManager.default.contents(atPath: folder + "/" + path))
            #expect(ContentHash(of: [UInt8](bytes)).hex == record.after, "\(path)")
        }
    }

    @Test func replayWithAnEditedRosterShowsWhichPromptsChanged() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let model = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try engine.prepare(ask: "Llamas?")
        try await scratch.run(engine, manifest.id)
        var roster = try Roster.parse(Array(ScratchWorkspace.relayRoster.utf8), file: "AgentConfiguration.json")
        roster.agents[2].systemPrompt = "You are Wren. Write in verse."
        let report = try await engine.replay(manifest.id, into: scratch.base + "/replayed", roster: roster)
        #expect(!report.matches)
        let changed = report.requests.filter { !$0.matches }
        #expect(changed.count == 1)
        #expect(changed[0].what.contains("Wren"))
        #expect(changed[0].detail.contains("in verse"), "\(changed[0].detail)")
    }
}

/// Promise 5 rests on the journal being on the disk before the run builds on it: a failed fsync
/// (injected by the state files' test hook, `FsyncFaults`) is an error that names the file, not
/// silence, and the run can be resumed once the disk is well again.
@Suite struct JournalDurabilityTests {
    @Test func aRunWhoseJournalCannotBeFsyncedStopsWithAnErrorNamingTheJournalAndResumesLater() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        var workspace = scratch.workspace
        workspace.durable = true
        let model = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])
        let engine = RelayRunner(workspace: workspace, models: .single(model))
        let manifest = try engine.prepare(ask: "Llamas?")
        let store = RunStore(workspace: workspace)
        let runFolder = (store.journalPath(manifest.id) as NSString).deletingLastPathComponent
        FsyncFaults.fail(under: runFolder)
        do {
            try await engine.execute(manifest.id) { _ in }
            Issue.record("the run went on although its journal could not be made durable")
        } catch let error as RelayError {
            #expect(error.code == .io)
            #expect(error.path == store.journalPath(manifest.id))
            #expect(error.message.contains("journal.jsonl") && error.message.contains("fsync"), "\(error.message)")
            #expect(error.workspaceCause?.underlying == .ioError)
        }
        FsyncFaults.clear(under: runFolder)
        #expect(model.received.count <= 1, "no agent after the one whose reply could not be made durable")
        #expect(try store.summary(manifest.id).state != .done)

        let rest = TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])
        try await RelayRunner(workspace: workspace, models: .single(rest)).execute(manifest.id) { _ in }
        #expect(try store.summary(manifest.id).state == .done)
    }

    @Test func aRunWhoseManifestCannotBeFsyncedIsNotCreated() throws {
        let scratch = try ScratchWorkspace.forRelays()
        var workspace = scratch.workspace
        workspace.durable = true
        let runs = RunStore(workspace: workspace).folder
        try FileManager.default.createDirectory(atPath: runs, withIntermediateDirectories: true)
        FsyncFaults.fail(under: runs)
        defer { FsyncFaults.clear(under: runs) }
        let engine = RelayRunner(workspace: workspace, models: .single(TestModel([])))
        #expect(throws: RelayError.self) { try engine.prepare(ask: "Llamas?") }
        #expect(RunStore(workspace: workspace).ids().isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? []).filter { !$0.hasPrefix(".") && $0 != "by-trigger" }.isEmpty)
    }
}
