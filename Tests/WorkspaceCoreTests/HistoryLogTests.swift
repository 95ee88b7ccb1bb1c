import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("History of write batches: one file per batch, read with each path's own, merged when many")
struct HistoryLogTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core(durable: true) }
    var workspace: Workspace { fixture.workspace }
    var batches: String { workspace.layout.historyBatches }

    private func batchFiles() -> [String] { HistoryLog.files(in: batches) }

    /// Replaces each of `paths` (made first if missing) in one batch.
    private func replaceInOneBatch(_ paths: [String], with text: String) throws {
        let batch = WriteBatch(workspace, operation: "sync")
        for path in paths {
            let current = fixture.contents(path).map { ContentHash(of: $0) }
            try batch.stage(path, bytes: Array(text.utf8), expected: current)
        }
        #expect(try batch.commit().allSatisfy { $0.result != nil })
    }

    /// A batch's lines are written by hand: byte for byte what the encoder writes, for paths
    /// in any script, with and without a displaced version; a path or operation JSON would
    /// escape is left to the encoder.
    @Test func handWrittenHistoryLinesAreTheEncodersBytesAndEscapesAreLeftToIt() throws {
        let a = ContentHash(of: "a"), b = ContentHash(of: "b")
        let records = [
            VersionRecord(timeNanoseconds: 1_764_000_000_123_456_789, path: "notes/a.md", operation: "sync",
                          replaced: nil, replacedSize: nil, replacedStored: false, installed: a, installedSize: 0),
            VersionRecord(timeNanoseconds: 0, path: "Research/é/日本語 notes/🙂.md", operation: "sync-interrupted",
                          replaced: b, replacedSize: 1 << 40, replacedStored: true, installed: a, installedSize: 12),
            VersionRecord(timeNanoseconds: -5, path: "a/b/c.json", operation: "write",
                          replaced: nil, replacedSize: 7, replacedStored: false, installed: b, installedSize: Int.max),
        ]
        for record in records {
            var bytes: [UInt8] = []
            #expect(HistoryLog.line(record, into: &bytes))
            #expect(bytes == Array(try HistoryLog.encoder().encode(record)), "\(String(decoding: bytes, as: UTF8.self))")
        }
        for path in ["say \"hi\".md", "back\\slash.md", "new\nline.md", "tab\there.md"] {
            var bytes: [UInt8] = []
            let record = VersionRecord(timeNanoseconds: 1, path: path, operation: "sync", replaced: nil, replacedSize: nil,
                                       replacedStored: false, installed: a, installedSize: 1)
            #expect(!HistoryLog.line(record, into: &bytes) && bytes.isEmpty, "\(path)")
        }
    }

    @Test func aBatchWritesTheLinesOfAllItsPathsIntoOneFileAndNoneIntoThePathsOwnFiles() throws {
        let paths = (0..<40).map { "notes/file\($0).md" }
        try replaceInOneBatch(paths, with: "one\n")
        try replaceInOneBatch(paths, with: "two\n")
        #expect(batchFiles().count == 2, "one file per batch")
        let own = (try? FileManager.default.contentsOfDirectory(atPath: workspace.layout.history)) ?? []
        #expect(own.filter { $0.hasSuffix(".jsonl") }.isEmpty, "no per-path files: \(own)")
        for path in paths {
            let records = try workspace.history(path)
            #expect(records.map(\.installed) == [ContentHash(of: "one\n"), ContentHash(of: "two\n")])
            #expect(records.last?.replaced == ContentHash(of: "one\n") && records.last?.replacedStored == true)
        }
    }

    @Test func singleWritesAndBatchesOfOnePathReadBackInTimeOrder() throws {
        try workspace.write("context.md", string: "1 single\n")
        try replaceInOneBatch(["context.md"], with: "2 batch\n")
        try workspace.write("context.md", string: "3 single\n")
        try replaceInOneBatch(["context.md"], with: "4 batch\n")
        let records = try workspace.history("context.md")
        #expect(records.map(\.installed) == ["1 single\n", "2 batch\n", "3 single\n", "4 batch\n"].map { ContentHash(of: $0) })
        #expect(records.map(\.operation) == ["write", "sync", "write", "sync"])
        // The stored versions can be put back from either kind of line.
        try workspace.restore("context.md", version: ContentHash(of: "2 batch\n").short)
        #expect(fixture.contents("context.md") == "2 batch\n")
    }

    /// A path that another path starts with, or that has quotes, a backslash or non-ASCII
    /// letters: found by exactly its own lines.
    @Test func aPathIsFoundByItsOwnLinesOnlyWhateverItsCharacters() throws {
        let paths = ["a.md", "a.md.bak", "Research/\"quoted\" \\ name.md", "Journal/été/日記.md"]
        try replaceInOneBatch(paths, with: "x\n")
        try replaceInOneBatch(["a.md.bak"], with: "y\n")
        for path in paths {
            let records = try workspace.history(path)
            #expect(records.allSatisfy { $0.path == path }, "\(path): \(records.map(\.path))")
            #expect(records.count == (path == "a.md.bak" ? 2 : 1), "\(path)")
        }
    }

    /// Batches merge their files by themselves, in the background, once there are many; every
    /// line is still read once.
    @Test func manyBatchFilesAreMergedInTheBackgroundWithEveryLineKeptOnce() throws {
        for round in 0..<70 { try replaceInOneBatch(["log.md", "round\(round % 5).md"], with: "round \(round)\n") }
        // The merge's removal of the files it took is the event (inotify on their folder).
        _ = try? FileEvents.wait(under: [batches], guardSeconds: 30, "a merge in the background") {
            batchFiles().count < HistoryLog.compactionThreshold ? () : nil
        }
        #expect(batchFiles().count < HistoryLog.compactionThreshold, "no merge in the background")
        let records = try workspace.history("log.md")
        #expect(records.map(\.installed) == (0..<70).map { ContentHash(of: "round \($0)\n") })
        #expect(try workspace.history("round3.md").count == 14)
        // What is left merges into one file when asked, and nothing changes for the reader. (The
        // background merge, at the lowest priority, may have come after the last batch and taken
        // every file: one more batch makes sure there are two.)
        try replaceInOneBatch(["extra.md"], with: "one more\n")
        #expect(try HistoryLog.compact(batches, threshold: 2, waiting: true) >= 2)
        #expect(batchFiles().count == 1)
        #expect(try workspace.history("log.md") == records)
        #expect(try HistoryLog.compact(batches, waiting: true) == 0, "one file is below the threshold")
    }

    /// A merge whose process died after its output was in place and before all its inputs
    /// went: the lines in two files count once; a merge then folds them.
    @Test func aLineInTwoFilesAfterAnInterruptedMergeCountsOnce() throws {
        for round in 0..<3 { try replaceInOneBatch(["a.md"], with: "v\(round)\n") }
        let inputs = batchFiles()
        let copies = try inputs.map { try Data(contentsOf: URL(fileURLWithPath: batches + "/" + $0)) }
        #expect(try HistoryLog.compact(batches, threshold: 2, waiting: true) == 3)
        // The inputs back, as if their unlinks never happened.
        for (name, data) in zip(inputs, copies) { try data.write(to: URL(fileURLWithPath: batches + "/" + name)) }
        #expect(batchFiles().count == 4)
        #expect(try workspace.history("a.md").count == 3)
        #expect(try HistoryLog.compact(batches, threshold: 2, waiting: true) == 4)
        #expect(batchFiles().count == 1)
        #expect(try workspace.history("a.md").count == 3)
    }

    /// A batch file cut short by a crash mid-line, and a temporary file a killed writer left:
    /// the whole lines are read, the rest ignored.
    @Test func aLineCutShortAndALeftoverTemporaryAreIgnored() throws {
        try replaceInOneBatch(["a.md", "b.md"], with: "v\n")
        let name = try #require(batchFiles().first)
        let handle = try #require(FileHandle(forWritingAtPath: batches + "/" + name))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"installed":"abc","operation":"sync","path":"a.md","repl"#.utf8))
        try handle.close()
        try Data(#"{"path":"a.md"}"#.utf8).write(to: URL(fileURLWithPath: batches + "/" + HistoryLog.temporaryPrefix + "left"))
        #expect(try workspace.history("a.md").count == 1)
        #expect(try workspace.history("b.md").count == 1)
    }

    /// A reader while batches are written and merged: every reading has every line written
    /// before it began (a file merged away mid-read is found in the merged one). The writer
    /// waits for a reading after each batch, so the two interleave however busy the machine.
    @Test func aReaderWhileBatchesAreWrittenAndMergedMissesNothing() throws {
        let workspace = self.workspace
        // (finished, readings, what the readings saw that they must not have)
        let shared = LockedBox((finished: false, readings: 0, lost: [String]()))
        let readerDone = DispatchSemaphore(value: 0)
        let read = NSCondition()  // signalled after each reading
        Thread.detachNewThread {
            var last = 0
            while !shared.value.finished {
                let count = (try? workspace.history("hot.md").count) ?? -1
                shared.mutate {
                    if count < last { $0.lost.append("\(count) lines after \(last)") }
                    $0.readings += 1
                }
                read.lock()
                read.broadcast()
                read.unlock()
                last = max(last, count)
            }
            readerDone.signal()
        }
        for round in 0..<120 {
            let batch = WriteBatch(workspace, operation: "sync")
            try batch.stage("hot.md", bytes: Array("round \(round)\n".utf8),
                            expected: round == 0 ? nil : ContentHash(of: "round \(round - 1)\n"))
            _ = try batch.commit()
            if round % 10 == 9 { try HistoryLog.compact(batches, threshold: 4) }
            let seen = shared.value.readings
            // Two more readings before the next round, however slow the reader's thread is: the
            // reader runs alongside every round, not by a clock.
            read.lock()
            while shared.value.readings < seen + 2 { read.wait() }
            read.unlock()
        }
        shared.mutate { $0.finished = true }
        readerDone.wait()
        let (readings, lost) = shared.mutate { ($0.readings, $0.lost) }
        #expect(lost.isEmpty, "readings lost lines: \(lost)")
        #expect(readings >= 120, "the reader ran alongside")
        #expect(try workspace.history("hot.md").count == 120)
    }
}
