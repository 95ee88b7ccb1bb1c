import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// The run's event log (`events.jsonl`), which the HTTP API streams: every emitted event in
/// order, numbered across executions, with an `end` line saying how each execution stopped.
@Suite struct RunEventLogTests {
    static func lines(_ scratch: ScratchWorkspace, _ id: String) -> [(sequence: Int, object: [String: Any])] {
        var reader = RunEventLog.Reader(path: RunStore(workspace: scratch.workspace).eventsPath(id))
        return reader.read().map { ($0.sequence, (try? JSONSerialization.jsonObject(with: Data($0.json.utf8)) as? [String: Any]) ?? [:]) }
    }

    @Test func everyEmittedEventIsLoggedInOrderWithTheJSONOfRelayAskJSONAndAnEnd() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let engine = scratch.engine(TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")]))
        let manifest = try engine.prepare(ask: "Llamas?")
        let events = try await scratch.run(engine, manifest.id)
        let logged = Self.lines(scratch, manifest.id)
        #expect(logged.map(\.sequence) == Array(1...logged.count))
        #expect(logged.dropLast().map { $0.object["event"] as? String } == events.map { $0.json["event"]?.stringValue })
        #expect(logged.last?.object["event"] as? String == "end" && logged.last?.object["state"] as? String == "done")
        // Showing a finished run again (from its journal) logs nothing more.
        _ = try await scratch.run(scratch.engine(TestModel([])), manifest.id)
        #expect(Self.lines(scratch, manifest.id).count == logged.count)
    }

    @Test func aPersonsStopIsCancelledAResumeGoesOnCountingAndATornLineIsSkipped() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let hanging = TestModel([.text("plan"), .hang(partial: "half")])
        let engine = scratch.engine(hanging)
        let manifest = try engine.prepare(ask: "Llamas?")
        let remyStreams = Gate()
        let task = Task {
            defer { remyStreams.open() }  // a run that ends early must not leave the test waiting
            try await engine.execute(manifest.id, stopReason: { "stopped by a person" }) { event in
                if case .textDelta(_, "researcher", _) = event { remyStreams.open() }
            }
        }
        await remyStreams.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let store = RunStore(workspace: scratch.workspace)
        #expect(try store.summary(manifest.id).state == .cancelled)
        #expect(try store.summary(manifest.id).state.isResumable)
        let first = Self.lines(scratch, manifest.id)
        #expect(first.last?.object["state"] as? String == "cancelled")

        // A writer killed mid-line leaves half a line: skipped, and the numbering goes on.
        let handle = try #require(FileHandle(forWritingAtPath: store.eventsPath(manifest.id)))
        handle.seekToEndOfFile()
        handle.write(Data("\(first.count + 1)\t{\"event\":\"textDe".utf8))
        handle.closeFile()
        try await scratch.run(scratch.engine(TestModel([.text("facts"), .text("draft"), .text("APPROVED")])), manifest.id)
        let all = Self.lines(scratch, manifest.id)
        #expect(all.map(\.sequence) == Array(1...all.count), "one numbering across both executions, the torn line skipped")
        #expect(all[first.count].object["event"] as? String == "runStarted" && all[first.count].object["resumed"] as? Bool == true)
        #expect(all.last?.object["state"] as? String == "done")
        #expect(try store.summary(manifest.id).state == .done)
    }

    @Test func aReaderReadsOnlyWholeNewLinesEachTime() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/relay-events-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/events.jsonl"
        try Data("1\t{\"event\":\"note\",\"text\":\"a\"}\n2\t{\"event\":\"no".utf8).write(to: URL(fileURLWithPath: path))
        var reader = RunEventLog.Reader(path: path)
        #expect(reader.read().map(\.sequence) == [1])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("te\",\"text\":\"b\"}\n".utf8))
        handle.closeFile()
        let next = reader.read()
        #expect(next.map(\.sequence) == [2] && next.first?.json == "{\"event\":\"note\",\"text\":\"b\"}")
        #expect(reader.read().isEmpty)
    }
}
