import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

@Suite struct RunRetentionTests {
    /// Moves run `id` to `newID` (its folder and its manifest's id), as if it had started then.
    func move(_ scratch: ScratchWorkspace, _ id: String, to newID: String, copying: Bool = false) throws {
        let store = RunStore(workspace: scratch.workspace)
        var manifest = try store.manifest(id)
        manifest.id = newID
        if copying {
            try FileManager.default.copyItem(atPath: store.directory(id), toPath: store.directory(newID))
        } else {
            try FileManager.default.moveItem(atPath: store.directory(id), toPath: store.directory(newID))
        }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: store.directory(newID) + "/run.json"))
    }

    static func id(hoursAgo: Int, from now: Date, serial: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: now.addingTimeInterval(-Double(hoursAgo) * 3600 - 1800)) + String(format: "-%04x", serial)
    }

    @Test func gcOfTwoThousandRunsKeepsWhatThePolicySaysAndAnInterruptedRunResumesAfterIt() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let now = Date()
        // One finished run, copied into 1,999 runs an hour apart (0 to 83 days old).
        let finished = try scratch.engine(TestModel([])).prepare(ask: "Llamas?")
        try await scratch.run(scratch.engine(TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])), finished.id)
        let template = Self.id(hoursAgo: 0, from: now, serial: 0)
        try move(scratch, finished.id, to: template)
        for hour in 1..<2_000 where hour != 1_500 {
            try move(scratch, template, to: Self.id(hoursAgo: hour, from: now, serial: hour), copying: true)
        }
        // A run that failed at its second agent 62 days ago: resumable.
        let failing = try scratch.engine(TestModel([])).prepare(ask: "Alpacas?")
        await #expect(throws: RelayError.self) {
            try await scratch.run(scratch.engine(TestModel([.text("plan"), .fail(LanguageModelError(.unreachable, "no model server"))])), failing.id)
        }
        let interrupted = Self.id(hoursAgo: 1_500, from: now, serial: 1_500)
        try move(scratch, failing.id, to: interrupted)

        let store = RunStore(workspace: scratch.workspace)
        #expect(store.ids().count == 2_000)
        let rule = RetentionPolicy.Rule(keepLast: 200, keepWithinDays: 30)
        let dry = try store.prune(rule, now: now, dryRun: true)
        #expect(store.ids().count == 2_000, "a dry run changes nothing")
        let report = try store.prune(rule, now: now, dryRun: false)
        #expect(report == dry.with(dryRun: false))
        // Within 30 days: the runs 0 to 719 hours old (each is half an hour past its hour).
        #expect(report.kept == 720 && report.unfinished == 1 && report.pruned.count == 1_279 && report.bytesFreed > 0)
        let left = store.ids()
        #expect(left.count == 721 && left.contains(interrupted) && left.contains(template))
        #expect(!left.contains(Self.id(hoursAgo: 720, from: now, serial: 720)))

        let rest = TestModel([.text("facts"), .text("draft"), .text("APPROVED")])
        try await scratch.run(scratch.engine(rest), interrupted)
        #expect(rest.received.count == 3, "the run resumed at its second agent")
        #expect(try store.summary(interrupted).state == .done)
    }

    @Test func keepLastKeepsTheNewestRunsWhateverTheirAge() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        let now = Date()
        let finished = try scratch.engine(TestModel([])).prepare(ask: "Llamas?")
        try await scratch.run(scratch.engine(TestModel([.text("plan"), .text("facts"), .text("draft"), .text("APPROVED")])), finished.id)
        let template = Self.id(hoursAgo: 5_000, from: now, serial: 0)
        try move(scratch, finished.id, to: template)
        for n in 1..<20 { try move(scratch, template, to: Self.id(hoursAgo: 5_000 + n, from: now, serial: n), copying: true) }
        let report = try RunStore(workspace: scratch.workspace).prune(.init(keepLast: 5, keepWithinDays: 1), now: now, dryRun: false)
        #expect(report.kept == 5 && report.pruned.count == 15)
        #expect(RunStore(workspace: scratch.workspace).ids() == (0..<5).reversed().map { Self.id(hoursAgo: 5_000 + $0, from: now, serial: $0) })
    }

    @Test func theStartTimeOfARunIsReadFromItsID() {
        #expect(RunStore.startTime(ofID: "19700101-000001-ab12") == 1_000_000_000)
        #expect(RunStore.startTime(ofID: "by-trigger") == nil)
    }
}

extension RunStore.RunPruning {
    func with(dryRun: Bool) -> Self {
        var copy = self
        copy.dryRun = dryRun
        return copy
    }
}
