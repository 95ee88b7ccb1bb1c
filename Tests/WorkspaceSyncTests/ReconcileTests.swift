import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

extension ScratchWorkspace {
    /// The conflict copies in the tree, sorted.
    func conflictCopies() -> [String] { tree().keys.filter { ConflictNames.original(of: $0) != nil }.sorted() }
}

@discardableResult
func sync(_ a: ScratchWorkspace, _ b: ScratchWorkspace, force: Bool = false, examineAll: Bool = false) throws -> SyncSummary {
    var options = Reconciler.Options()
    options.force = force
    options.examineAll = examineAll
    return try Reconciler(local: a.workspace, peer: b.workspace, options: options).run()
}

@Suite("Reconciling replicas: named scenarios", .serialized)
struct ReconcileScenarioTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-sync-" + UUID().uuidString
    static let context = "# Context\n\n## Goals\n- write the llama essay\n\n## People\n- Ada prefers short answers\n\n## Decisions\n- use SmolLM2\n"

    func pair() throws -> (ScratchWorkspace, ScratchWorkspace) {
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        try a.write("context.md", Self.context)
        try sync(a, b)
        return (a, b)
    }


    /// A file whose name is only dots ("..." is a valid name) syncs, is edited on both sides
    /// and keeps both versions: its kind (binary, no extension) was once a crash.
    @Test func aFileNamedOnlyWithDotsSyncsAndConflictsLikeAnyOther() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("notes/...", "three dots\n")
        try sync(a, b)
        #expect(b.contents("notes/...") == "three dots\n")
        try a.write("notes/...", "laptop\n")
        try b.write("notes/...", "desktop\n")
        let summary = try sync(a, b)
        #expect(summary.conflicts == 1)
        #expect(a.tree() == b.tree())
        let texts = Set(a.tree().values.compactMap { String(data: $0, encoding: .utf8) })
        #expect(texts.isSuperset(of: ["laptop\n", "desktop\n"]))
    }
    /// Past the size cap, a file both sides changed is not merged line by line: one version in
    /// the file, the other in a conflict copy, at once, and the summary names it.
    @Test func aFileBothSidesChangedPastTheSizeCapIsKeptWholeInAConflictCopyAndReported() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        let large = (0..<400).map { "row \($0)\n" }.joined()
        try a.write("data/table.csv", large)
        try sync(a, b)
        try a.write("data/table.csv", "laptop first\n" + large)
        try b.write("data/table.csv", large + "desktop last\n")
        var options = Reconciler.Options()
        options.maximumMergeBytes = 1_000
        let summary = try Reconciler(local: a.workspace, peer: b.workspace, options: options).run()
        #expect(summary.tooLargeToMerge == ["data/table.csv"] && summary.conflicts == 1, "\(summary.actions)")
        #expect(summary.actions.contains { $0.contains("too large to merge line by line") })
        #expect(a.tree() == b.tree())
        let versions = Set(a.tree().filter { $0.key.hasPrefix("data/table") }.values.compactMap { String(data: $0, encoding: .utf8) })
        #expect(versions == ["laptop first\n" + large, large + "desktop last\n"], "both versions kept whole")
    }

    /// Two replicas made apart, each from the same template (as `relay init` makes them): a
    /// template file changed on one side only is copied; changed on both in different places,
    /// merged from the template's bytes; nothing else moves.
    @Test func replicasMadeApartFromTheSameTemplateMergeFromItsBytes() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let folder = base + "/template"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.context.write(toFile: folder + "/context.md", atomically: true, encoding: .utf8)
        try "one\ntwo\nthree\nfour\n".write(toFile: folder + "/notes.md", atomically: true, encoding: .utf8)
        let template = try WorkspaceTemplate.load(from: folder)
        let a = try ScratchWorkspace(in: base, name: "laptop", template: template), b = try ScratchWorkspace(in: base, name: "desktop", template: template)
        try a.write("context.md", Self.context + "- laptop decision\n")
        try a.write("notes.md", "ONE\ntwo\nthree\nfour\n")
        try b.write("notes.md", "one\ntwo\nthree\nFOUR\n")
        var options = Reconciler.Options()
        options.template = [:]
        for file in template.files { options.template[file.path] = file.bytes }
        let summary = try Reconciler(local: a.workspace, peer: b.workspace, options: options).run()
        #expect(summary.copied == 1 && summary.merged == 1 && summary.conflicts == 0, "\(summary.actions)")
        #expect(b.contents("context.md") == Self.context + "- laptop decision\n")
        #expect(a.contents("notes.md") == "ONE\ntwo\nthree\nFOUR\n" && a.tree() == b.tree())
        // Without the template in common, the same histories are concurrent creations.
        let c = try ScratchWorkspace(in: base, name: "c", template: template), d = try ScratchWorkspace(in: base, name: "d", template: template)
        try c.write("notes.md", "ONE\ntwo\nthree\nfour\n")
        try d.write("notes.md", "one\ntwo\nthree\nFOUR\n")
        options.template = [:]
        #expect(try Reconciler(local: c.workspace, peer: d.workspace, options: options).run().conflicts == 1)
    }

    @Test func nonOverlappingHandEditsOfContextMdMergeCleanly() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("context.md", Self.context.replacingOccurrences(of: "- write the llama essay\n", with: "- write the llama essay\n- then the alpaca one\n"))
        try b.write("context.md", Self.context.replacingOccurrences(of: "- use SmolLM2\n", with: "- use SmolLM2\n- sync nightly\n"))
        let summary = try sync(b, a)
        #expect(summary.merged == 1 && summary.conflicts == 0)
        let merged = try #require(a.contents("context.md"))
        #expect(merged.contains("- then the alpaca one\n") && merged.contains("- sync nightly\n"))
        #expect(a.tree() == b.tree())
        #expect(a.conflictCopies().isEmpty)
        #expect(try sync(a, b).transferred == 0, "one more sync moves nothing")
    }

    @Test func mergeRulesInRelayJSONChangeHowMatchingPathsMerge() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("relay.json", #"{"sync": {"merge": [{"pattern": "notes/**", "kind": "journal"}, {"pattern": "data/*.md", "kind": "binary"}]}}"#)
        try a.write("notes/log.txt", "- one\n")
        try a.write("data/table.md", "a\nb\nc\nd\ne\n")
        try sync(a, b)
        let rules = try MergeRules.load(from: b.workspace)
        #expect(MergeKind.of("notes/log.txt") == .text && rules.kind(of: "notes/log.txt") == .journal)
        #expect(MergeKind.of("data/table.md") == .text && rules.kind(of: "data/table.md") == .binary)
        #expect(rules.kind(of: "context.md") == .text, "paths no rule matches keep their default")
        // Both append to the log: as text that is a conflict (both insert at the end); as a journal, a union.
        try a.append("notes/log.txt", "- from the laptop\n")
        try b.append("notes/log.txt", "- from the desktop\n")
        // Non-overlapping edits of the table: as text they would merge; as binary, one wins and the other is copied.
        try a.write("data/table.md", "A\nb\nc\nd\ne\n")
        try b.write("data/table.md", "a\nb\nc\nd\nE\n")
        var options = Reconciler.Options()
        options.mergeRules = rules
        let summary = try Reconciler(local: b.workspace, peer: a.workspace, options: options).run()
        let log = try #require(a.contents("notes/log.txt"))
        #expect(log.contains("- from the laptop\n") && log.contains("- from the desktop\n"))
        #expect(a.conflictCopies().filter { $0.hasPrefix("notes/") }.isEmpty)
        #expect(a.conflictCopies().filter { $0.hasPrefix("data/table.conflict-") }.count == 1)
        #expect(summary.actions.contains("merge (journal): notes/log.txt"))
        #expect(a.tree() == b.tree())
    }

    @Test func aBadMergeRuleIsAnErrorNamingRelayJSONTheLineAndTheField() {
        func problem(_ json: String) -> String {
            do { _ = try MergeRules.parse(Array(json.utf8), file: "relay.json"); return "no error" } catch let error as WorkspaceError {
                return error.message
            } catch { return "\(error)" }
        }
        #expect(problem(#"{"sync": {"merge": [{"pattern": "notes/**", "kind": "poem"}]}}"#)
            .contains("relay.json:1:53: sync.merge[0].kind: 'poem' is not a merge kind (text, journal, transcript, json, binary)"))
        #expect(problem(#"{"sync": {"merge": [{"pattern": "/etc/**", "kind": "text"}]}}"#).contains("sync.merge[0].pattern: '/etc/**' is absolute"))
        #expect(problem(#"{"sync": {"merge": [{"pattern": "a", "kind": "text", "why": 1}]}}"#).contains("unknown field 'why'"))
        #expect(problem(#"{"sync": {"merge": [{"pattern": "a/**", "kind": "text"}]}}"#) == "no error")
    }

    @Test func overlappingEditsGiveOneConflictCopyWithBothTextsPresent() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("context.md", Self.context.replacingOccurrences(of: "short answers", with: "bullet points"))
        try b.write("context.md", Self.context.replacingOccurrences(of: "short answers", with: "long stories"))
        let summary = try sync(a, b)
        #expect(summary.conflicts == 1)
        let copies = a.conflictCopies()
        #expect(copies.count == 1)
        let both = (a.contents("context.md") ?? "") + (a.contents(copies[0]) ?? "")
        #expect(both.contains("bullet points") && both.contains("long stories"))
        #expect(!(a.contents("context.md") ?? "").contains("<<<<<<<"), "no conflict markers in context.md")
        #expect(a.tree() == b.tree())
        let conflicts = try SyncIndex(workspace: a.workspace).openConflicts()
        #expect(conflicts.map(\.path) == ["context.md"])
        a.delete(copies[0])
        #expect(try SyncIndex(workspace: a.workspace).openConflicts().isEmpty, "deleting the copy resolves it")
    }

    @Test func bothSidesAppendingToTheSameJournalDayKeepEveryEntry() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("Journal/user/2026-11-22.md", "# 2026-11-22\n- 09:00 started\n")
        try sync(a, b)
        try a.append("Journal/user/2026-11-22.md", "- 10:00 laptop\n")
        try b.append("Journal/user/2026-11-22.md", "- 10:01 desktop\n")
        // And a day both started on their own, never synced before.
        try a.write("Journal/agent/2026-11-23.md", "- planner: outline\n")
        try b.write("Journal/agent/2026-11-23.md", "- reviewer: approved\n")
        let summary = try sync(a, b)
        #expect(summary.conflicts == 0)
        for day in ["Journal/user/2026-11-22.md", "Journal/agent/2026-11-23.md"] {
            let text = try #require(a.contents(day))
            #expect(b.contents(day) == text)
            for entry in ["- 09:00 started", "- 10:00 laptop", "- 10:01 desktop"] where day.hasSuffix("22.md") { #expect(text.contains(entry)) }
            for entry in ["- planner: outline", "- reviewer: approved"] where day.hasSuffix("23.md") { #expect(text.contains(entry)) }
        }
    }

    @Test func bothSidesAddingChatMessagesKeepEveryMessage() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        func transcript(_ ids: [String]) -> String {
            let messages = ids.map { "{\"id\": \"\($0)\", \"time\": \"2026-11-22T10:0\($0.dropFirst()):00Z\", \"text\": \"message \($0)\"}" }
            return "{\"title\": \"Llamas\", \"messages\": [\(messages.joined(separator: ", "))]}"
        }
        try a.write("Chats/2026-11-22.json", transcript(["m1"]))
        try sync(a, b)
        try a.write("Chats/2026-11-22.json", transcript(["m1", "m3"]))
        try b.write("Chats/2026-11-22.json", transcript(["m1", "m2"]))
        #expect(try sync(b, a).conflicts == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data((a.contents("Chats/2026-11-22.json") ?? "").utf8)) as? [String: Any])
        #expect((object["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["m1", "m2", "m3"])
        #expect(a.tree() == b.tree())
    }

    /// The new version a refresh finds is kept as a merge base by the sync's flush. A dry run
    /// (or a sync cut short) drops it before that; the next sync keeps it all the same, on
    /// both sides, so a later concurrent edit merges against it instead of conflicting.
    @Test func aMergeBaseFoundByADryRunsRefreshIsStillKeptOnBothSidesByTheNextSync() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        let text = "# Plan\n\n- one\n- two\n- three\n"
        try a.write("plan.md", text)
        var dryRun = Reconciler.Options()
        dryRun.dryRun = true
        _ = try Reconciler(local: a.workspace, peer: b.workspace, options: dryRun).run()
        #expect(!a.workspace.objects.contains(ContentHash(of: Array(text.utf8))), "a dry run stores nothing")
        try sync(a, b)
        #expect(a.workspace.objects.contains(ContentHash(of: Array(text.utf8))))
        #expect(b.workspace.objects.contains(ContentHash(of: Array(text.utf8))))
        // Concurrent edits of different lines merge against it.
        try a.write("plan.md", "# Plan\n\n- one, done\n- two\n- three\n")
        try b.write("plan.md", "# Plan\n\n- one\n- two\n- three, done\n")
        let merged = try sync(a, b)
        #expect(merged.conflicts == 0 && merged.merged == 1)
        #expect(a.contents("plan.md") == "# Plan\n\n- one, done\n- two\n- three, done\n" && b.contents("plan.md") == a.contents("plan.md"))
    }

    @Test func deleteAgainstEditKeepsTheEdit() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("Research/notes.md", "v1\n")
        try sync(a, b)
        a.delete("Research/notes.md")
        try b.write("Research/notes.md", "v1\nedited on the desktop\n")
        try sync(a, b)
        #expect(a.contents("Research/notes.md") == "v1\nedited on the desktop\n")
        #expect(a.tree() == b.tree())
        // A delete that follows the edit causally does go through.
        b.delete("Research/notes.md")
        try sync(a, b)
        #expect(a.contents("Research/notes.md") == nil && b.contents("Research/notes.md") == nil)
    }

    @Test func theSameFileCreatedOnBothSides() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("same.md", "identical\n")
        try b.write("same.md", "identical\n")
        try a.write("photo.bin", "laptop bytes")
        try b.write("photo.bin", "desktop bytes")
        let summary = try sync(a, b)
        #expect(summary.conflicts == 1, "identical concurrent files are not a conflict; different binaries are")
        #expect(a.conflictCopies().count == 1 && a.conflictCopies()[0].hasSuffix(".bin"))
        let kept = a.contents("photo.bin"), copy = a.contents(a.conflictCopies()[0])
        #expect(Set([kept, copy]) == Set(["laptop bytes", "desktop bytes"]))
        #expect(a.tree() == b.tree())
    }

    @Test func causallyOrderedEditsNeverConflict() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        let c = try ScratchWorkspace(in: base, name: "server")
        try sync(b, c)
        for round in 0..<6 {
            let (writer, next) = [(a, b), (b, c), (c, a)][round % 3]
            try writer.append("context.md", "- round \(round)\n")
            try writer.write("Research/r\(round).bin", "binary \(round)")
            try sync(writer, next)
        }
        try sync(a, b); try sync(b, c); try sync(a, c)
        #expect(a.conflictCopies().isEmpty && b.conflictCopies().isEmpty && c.conflictCopies().isEmpty)
        #expect(a.tree() == b.tree() && b.tree() == c.tree())
    }

    @Test func editsBothReplicasGotFromAThirdAreTheBaseOfTheirNextMerge() throws {
        // The laptop and desktop last agreed on v1; both then received the server's correction
        // (v2) from the server, not from each other, and appended. Their own last common version
        // is stale: the merge must start from v2, which both have, or the appends collide.
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        let c = try ScratchWorkspace(in: base, name: "server")
        let day = "Journal/user/2026-11-22.md", notes = "notes.md"
        try a.write(day, "- 09:00 start\n- 09:30 tea\n- 10:00 walk\n")
        try a.write(notes, "one\ntwo\nthree\nfour\n")
        try sync(a, b)
        try sync(b, c)
        try c.write(day, "- 09:00 start\n- 09:30 green tea\n- 10:00 walk\n")
        try c.write(notes, "one\nTWO\nthree\nfour\n")
        try sync(c, a)
        try sync(c, b)
        try a.append(day, "- 11:00 laptop\n")
        try b.append(day, "- 11:05 desktop\n")
        try a.write(notes, "one\nTWO\nthree\nfour\nfive (laptop)\n")
        try b.write(notes, "zero (desktop)\none\nTWO\nthree\nfour\n")
        let summary = try sync(a, b)
        #expect(summary.conflicts == 0 && a.conflictCopies().isEmpty)
        #expect(a.contents(day) == "- 09:00 start\n- 09:30 green tea\n- 10:00 walk\n- 11:00 laptop\n- 11:05 desktop\n"
                || a.contents(day) == "- 09:00 start\n- 09:30 green tea\n- 10:00 walk\n- 11:05 desktop\n- 11:00 laptop\n")
        #expect(a.contents(notes) == "zero (desktop)\none\nTWO\nthree\nfour\nfive (laptop)\n")
        #expect(a.tree() == b.tree())
    }

    @Test func aTemporaryLeftByAKilledWriterIsReclaimedByTheNextSync() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        // What a writer killed between writing its temporary and renaming it leaves behind, in a
        // folder nobody writes again.
        let leftover = "Research/" + WorkspaceLayout.temporaryPrefix + String(repeating: "ab", count: 16) + "-x1y2z3"
        try a.write(leftover, "half a copy")
        try a.write("Research/kept.md", "kept\n")
        try sync(a, b)
        #expect(a.contents(leftover) == nil, "the leftover is gone")
        #expect(b.contents(leftover) == nil, "and never travelled")
        #expect(b.contents("Research/kept.md") == "kept\n")
    }

    @Test func aFileOnOneSideWhereTheOtherHasAFolderIsReportedAndTheRestSyncs() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("notes", "a file called notes\n")
        try b.write("notes/one.md", "a note in a folder called notes\n")
        try a.write("other.md", "from the laptop\n")
        try b.write("more.md", "from the desktop\n")
        let summary = try sync(a, b)
        #expect(b.contents("other.md") == "from the laptop\n" && a.contents("more.md") == "from the desktop\n", "the rest syncs")
        #expect(summary.clashes.sorted() == ["notes", "notes/one.md"], "both sides of the clash are reported")
        #expect(a.contents("notes") == "a file called notes\n" && b.contents("notes/one.md") == "a note in a folder called notes\n", "nothing is lost")
        // Once a person renames the file, the next sync carries both.
        try a.write("notes.txt", a.contents("notes")!)
        a.delete("notes")
        let after = try sync(a, b)
        #expect(after.clashes.isEmpty)
        #expect(a.contents("notes/one.md") == "a note in a folder called notes\n" && b.contents("notes.txt") == "a file called notes\n")
        #expect(a.tree() == b.tree())
    }

    @Test func aFileReplacedByAFolderOfItsNameOnOneSideSyncsWithoutAClash() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("notes", "a file called notes\n")
        try sync(a, b)
        // The desktop turns the file into a folder; the laptop has not changed it.
        b.delete("notes")
        try b.write("notes/one.md", "now a folder\n")
        let summary = try sync(a, b)
        #expect(summary.clashes.isEmpty)
        #expect(a.contents("notes/one.md") == "now a folder\n")
        #expect(a.tree() == b.tree())
    }

    @Test func progressCountsEveryPathAndTheFilesAndBytesMoved() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        try a.write("Research/one.md", "12345\n")              // 6 bytes
        try a.write("Research/two.bin", String(repeating: "x", count: 100))
        try b.write("notes/three.txt", "abc\n")                // 4 bytes, the other way
        var reports: [SyncProgress] = []
        let summary = try Reconciler(local: a.workspace, peer: b.workspace).run { reports.append($0) }
        let last = try #require(reports.last)
        #expect(last.finished && last.pathsTotal == 4, "context.md and the three new files: \(last)")
        #expect(last.files == 3 && last.bytes == 110 && summary.bytes == 110)
        #expect(reports.count == last.pathsTotal + 1, "one report per path and one at the end")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.pathsDone < $1.pathsDone && $0.files <= $1.files && $0.bytes <= $1.bytes })
    }

    @Test func copiesInBatchesCommittedWhileTheNextIsStagedAllArriveWithTheirRowsAndMergeBases() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "source"), b = try ScratchWorkspace(in: base, name: "target")
        for i in 0..<57 { try a.write("Research/d\(i % 4)/note-\(i).md", "note \(i)\n") }
        for i in 0..<8 { try a.write("Research/blob-\(i).bin", String(repeating: "\(i)", count: 100)) }
        var options = Reconciler.Options()
        options.batchFiles = 10
        let here = try LocalEndpoint(workspace: a.workspace), there = try LocalEndpoint(workspace: b.workspace)
        let summary = try Reconciler(local: here, peer: there, options: options).run()
        // 65 copies in batches of 10: six handed to a background commit, the seventh flushed last.
        #expect(there.batchesCommittedInBackground == 6)
        #expect(here.batchesCommittedInBackground == 0, "nothing was copied to the source")
        #expect(summary.copied == 65 && summary.skipped.isEmpty)
        #expect(a.tree() == b.tree())
        let rows = try there.index.entries()
        for (path, bytes) in a.tree() {
            let hash = ContentHash(of: Array(bytes)).hex
            #expect(rows[path]?.hash == hash && rows[path]?.deleted == false, "\(path): no row")
            #expect(try there.index.base(peer: here.replica, path: path) == hash, "\(path): no base on the target")
            #expect(try here.index.base(peer: there.replica, path: path) == hash, "\(path): no base on the source")
            if path.hasSuffix(".md") { #expect(b.workspace.objects.contains(ContentHash(of: Array(bytes))), "\(path): not stored") }
        }
        #expect(try sync(a, b).transferred == 0, "the next sync has nothing to do")
    }

    /// A batch committing in the background writes and commits its rows on its own thread
    /// while the copy loop goes on writing rows of its own into the same index (paths both
    /// sides created with the same bytes: their vectors joined, their bases set). Every row
    /// lands, sequences stay unique, and the kept digest matches the rows.
    @Test func rowsABackgroundCommitWritesAndRowsTheLoopWritesMeanwhileMakeOneConsistentIndex() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "source"), b = try ScratchWorkspace(in: base, name: "target")
        for i in 0..<120 {
            try a.write("Research/d\(i % 3)/note-\(i).md", "note \(i)\n")
            // Every third path on both sides, same bytes: joined in the loop, between copies.
            if i % 3 == 0 { try b.write("Research/d\(i % 3)/note-\(i).md", "note \(i)\n") }
        }
        var options = Reconciler.Options()
        options.batchFiles = 7
        let here = try LocalEndpoint(workspace: a.workspace), there = try LocalEndpoint(workspace: b.workspace)
        let summary = try Reconciler(local: here, peer: there, options: options).run()
        #expect(summary.copied == 80 && summary.skipped.isEmpty)
        #expect(there.batchesCommittedInBackground >= 10)
        #expect(a.tree() == b.tree())
        for endpoint in [here, there] {
            let rows = try endpoint.index.entries()
            #expect(try endpoint.index.storedDigest() == SyncIndex.digest(rows))
            #expect(Set(rows.values.map(\.sequence)).count == rows.count, "a sequence given twice")
        }
        let rows = try there.index.entries()
        for (path, bytes) in a.tree() {
            let hash = ContentHash(of: Array(bytes)).hex
            #expect(rows[path]?.hash == hash, "\(path): no row")
            #expect(try there.index.base(peer: here.replica, path: path) == hash, "\(path): no base on the target")
        }
        #expect(try sync(a, b).transferred == 0, "the next sync has nothing to do")
    }

    /// A file the refresh read is copied from that read, not read again: one stable read of
    /// the version the sync reconciles on. A change made after the refresh is a newer version,
    /// which the next sync carries; a file the sync does not copy is let go at `prefetch`.
    @Test func aCopyIsTakenFromTheRefreshsReadAndAChangeMadeSinceGoesWithTheNextSync() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "source"), b = try ScratchWorkspace(in: base, name: "target")
        try a.write("Research/one.md", "as the refresh read it\n")
        try a.write("Research/two.bin", "bytes as read\n")
        let here = try LocalEndpoint(workspace: a.workspace)
        let entries = try here.refresh()
        let readHash = try #require(entries["Research/one.md"]?.hash)
        #expect(readHash == ContentHash(of: "as the refresh read it\n").hex)
        try a.write("Research/one.md", "changed since\n")
        try a.write("Research/two.bin", "also changed\n")
        here.prefetch([(path: "Research/one.md", expected: readHash, size: 0)])
        #expect(try here.read("Research/one.md", expected: readHash) == Array("as the refresh read it\n".utf8))
        // Taken once; after that, and for a path not announced, the disk answers.
        #expect(throws: SyncError.self) { try here.read("Research/one.md", expected: readHash) }
        #expect(throws: SyncError.self) { try here.read("Research/two.bin", expected: try #require(entries["Research/two.bin"]?.hash)) }
        try here.finish()

        _ = try sync(a, b)
        #expect(b.contents("Research/one.md") == "changed since\n" && b.contents("Research/two.bin") == "also changed\n")
    }

    /// The index keeps what its refresh read only up to the budget it is given, whole files,
    /// each exactly the bytes it hashed; with no budget it keeps nothing.
    @Test func aRefreshKeepsWhatItReadOnlyUpToItsBudget() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "source")
        for i in 0..<5 { try a.write("Research/f\(i).txt", "ten bytes\(i)") }
        let index = try SyncIndex(workspace: a.workspace)
        index.keepsContentUpTo = 25
        try index.refresh()
        #expect(index.keptContent.count == 2)
        for (path, kept) in index.keptContent {
            #expect(kept.bytes == Array((a.contents(path) ?? "").utf8) && kept.hash == ContentHash(of: kept.bytes), "\(path)")
            #expect(kept.stamp == a.workspace.stamp(ofFileAt: path))
        }
        let none = try SyncIndex(workspace: try ScratchWorkspace(in: base, name: "other").workspace)
        try none.refresh()
        #expect(none.keptContent.isEmpty)
    }

    @Test func withoutOverlapTheSameCopiesAreFlushedOneBatchAfterAnother() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "source"), b = try ScratchWorkspace(in: base, name: "target")
        for i in 0..<25 { try a.write("Research/note-\(i).md", "note \(i)\n") }
        var options = Reconciler.Options()
        options.batchFiles = 10
        options.overlapBatches = false
        let here = try LocalEndpoint(workspace: a.workspace), there = try LocalEndpoint(workspace: b.workspace)
        let summary = try Reconciler(local: here, peer: there, options: options).run()
        #expect(there.batchesCommittedInBackground == 0)
        #expect(summary.copied == 25 && a.tree() == b.tree())
    }

    @Test func aMassDeletionNeedsForce() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try pair()
        for i in 0..<10 { try a.write("Research/f\(i).md", "\(i)\n") }
        try sync(a, b)
        for i in 0..<8 { a.delete("Research/f\(i).md") }
        #expect { try sync(a, b) } throws: { ($0 as? SyncError)?.message.contains("refusing to delete 8") == true }
        #expect(b.contents("Research/f0.md") == "0\n", "nothing changed")
        try sync(a, b, force: true)
        #expect(b.contents("Research/f0.md") == nil)
    }

    @Test func aCopiedReplicaWithTheSameIDIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let a = try ScratchWorkspace(in: base, name: "one")
        try FileManager.default.copyItem(atPath: a.root, toPath: base + "/clone")
        let clone = try Workspace.open(at: base + "/clone")
        #expect { try Reconciler(local: a.workspace, peer: clone).run() } throws: {
            ($0 as? SyncError)?.message.contains("same replica id") == true
        }
    }
}
