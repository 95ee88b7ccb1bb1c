import Foundation
import RelayTestKit
import Testing
import WorkspaceSync

/// The first sync between two replicas that were made apart — `relay init` on each machine, a
/// workspace copied with its `.relay/` — and a replica started by `relay sync` into an empty or
/// missing folder (issue 21), with the real binary.
@Suite("relay sync: the first meeting of two replicas", .serialized)
struct SyncFirstMeetingTests {
    /// Two folders under one temporary folder, removed afterwards.
    final class Pair: Sendable {
        let base: String
        var a: String { base + "/a" }
        var b: String { base + "/b" }
        init() throws {
            base = FileManager.default.temporaryDirectory.path + "/relay-first-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: base) }
    }

    @discardableResult
    static func relay(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let result = try run(Binaries.relay, arguments, environment: environment)
        #expect(result.status == 0, "relay \(arguments.joined(separator: " ")): \(result.standardError)")
        return result
    }

    static func sync(_ here: String, _ peer: String, environment: [String: String] = [:], extra: [String] = []) throws -> SyncSummary {
        let result = try relay(["sync", "-w", here, "--json"] + extra + [peer], environment: environment)
        return try JSONDecoder().decode(SyncSummary.self, from: result.standardOutput)
    }

    static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    static func write(_ path: String, _ text: String) throws { try text.write(toFile: path, atomically: false, encoding: .utf8) }

    /// Every file outside `.relay/`, path → bytes.
    static func tree(_ root: String) -> [String: Data] { ScratchWorkspace.tree(root) }

    static func conflictCopies(_ root: String) -> [String] { tree(root).keys.filter { $0.contains(".conflict-") }.sorted() }

    static func replaceLine(_ path: String, _ old: String, with new: String) throws {
        let text = read(path)
        #expect(text.contains(old + "\n"), "\(path) has no line '\(old)'")
        try write(path, text.replacingOccurrences(of: old + "\n", with: new + "\n"))
    }

    // MARK: Two `relay init`

    @Test func twoInitReplicasWithContextEditedOnOneSideCopyItAtTheFirstSyncWithoutAConflictCopy() throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try Self.relay(["init", pair.b])
        let edited = Self.read(pair.a + "/context.md") + "# Context\n\n## People\nAda\n"
        try Self.write(pair.a + "/context.md", edited)
        let summary = try Self.sync(pair.a, pair.b)
        #expect(summary.conflicts == 0 && summary.merged == 0 && summary.copied == 1, "\(summary.actions)")
        #expect(Self.read(pair.b + "/context.md") == edited)
        #expect(Self.conflictCopies(pair.a).isEmpty && Self.conflictCopies(pair.b).isEmpty)
        #expect(Self.tree(pair.a) == Self.tree(pair.b))
        // And the pair goes on as any pair: an edit on B comes back as a copy.
        try Self.write(pair.b + "/context.md", edited + "- from B\n")
        let next = try Self.sync(pair.a, pair.b)
        #expect(next.copied == 1 && next.conflicts == 0 && Self.read(pair.a + "/context.md") == edited + "- from B\n")
    }

    @Test func twoInitReplicasWithContextEditedInDifferentSectionsOnEachSideMergeWithoutAConflictCopy() throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try Self.relay(["init", pair.b])
        try Self.replaceLine(pair.a + "/context.md", "*What we are trying to achieve right now, most important first.*",
                             with: "- finish the llama essay by Friday")
        try Self.replaceLine(pair.b + "/context.md", "- Answers: short and plain, bullet lists welcome.",
                             with: "- Answers: short and plain, bullet lists welcome.\n- Ada reads on her phone")
        // relay.json edited on one side only: a file that does not merge (binary) still just copies.
        let settings = Self.read(pair.b + "/relay.json")
        #expect(settings.contains("\"settleMilliseconds\": 100"))
        try Self.write(pair.b + "/relay.json", settings.replacingOccurrences(of: "\"settleMilliseconds\": 100", with: "\"settleMilliseconds\": 250"))
        let summary = try Self.sync(pair.a, pair.b)
        #expect(summary.conflicts == 0 && summary.merged == 1 && summary.copied == 1, "\(summary.actions)")
        #expect(Self.read(pair.a + "/relay.json").contains("\"settleMilliseconds\": 250"))
        let merged = Self.read(pair.a + "/context.md")
        #expect(merged.contains("- finish the llama essay by Friday\n") && merged.contains("- Ada reads on her phone\n"))
        #expect(Self.read(pair.b + "/context.md") == merged)
        #expect(Self.conflictCopies(pair.a).isEmpty && Self.tree(pair.a) == Self.tree(pair.b))
    }

    @Test func twoInitReplicasWithTheSameLineEditedOnBothSidesMakeOneConflictCopyWithBothTexts() throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try Self.relay(["init", pair.b])
        let line = "- Answers: short and plain, bullet lists welcome."
        try Self.replaceLine(pair.a + "/context.md", line, with: "- Answers: long and detailed")
        try Self.replaceLine(pair.b + "/context.md", line, with: "- Answers: one line only")
        let summary = try Self.sync(pair.a, pair.b)
        #expect(summary.conflicts == 1 && summary.merged == 1, "\(summary.actions)")
        let copies = Self.conflictCopies(pair.a)
        #expect(copies.count == 1 && copies.allSatisfy { $0.hasPrefix("context.conflict-") }, "\(copies)")
        let texts = Self.read(pair.a + "/context.md") + (copies.first.map { Self.read(pair.a + "/" + $0) } ?? "")
        #expect(texts.contains("- Answers: long and detailed\n") && texts.contains("- Answers: one line only\n"), "both texts are kept")
        #expect(Self.tree(pair.a) == Self.tree(pair.b))
    }

    // MARK: A workspace copied with .relay/

    /// The copy is refused with advice that is a command; after it, edits in different places
    /// of one file on each side merge from the bytes both had when the copy was made.
    @Test(arguments: [false, true])
    func aWorkspaceCopiedWithItsRelayFolderAndGivenANewReplicaIdMergesEditsInDifferentPlaces(syncedBefore: Bool) throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        let seven = (1...7).map { "line \($0)\n" }.joined()
        try Self.write(pair.a + "/Research/notes.md", seven)
        if syncedBefore {
            // A has synced with another replica already: its index and bases go with the copy.
            _ = try Self.sync(pair.a, pair.base + "/third")
        }
        #expect(try run("/bin/cp", ["-a", pair.a, pair.b]).status == 0)
        let refused = try run(Binaries.relay, ["sync", "-w", pair.a, pair.b])
        #expect(refused.status != 0 && refused.standardError.contains("relay init --new-replica"), "\(refused.standardError)")
        let renamed = try Self.relay(["init", "--new-replica", pair.b])
        #expect(renamed.text.contains("now replica"), "\(renamed.text)")
        try Self.replaceLine(pair.a + "/Research/notes.md", "line 1", with: "line 1, edited on A")
        try Self.replaceLine(pair.b + "/Research/notes.md", "line 7", with: "line 7, edited on B")
        let summary = try Self.sync(pair.a, pair.b)
        #expect(summary.conflicts == 0 && summary.merged == 1, "\(summary.actions)")
        let expected = seven.replacingOccurrences(of: "line 1\n", with: "line 1, edited on A\n").replacingOccurrences(of: "line 7\n", with: "line 7, edited on B\n")
        #expect(Self.read(pair.a + "/Research/notes.md") == expected && Self.read(pair.b + "/Research/notes.md") == expected)
        #expect(Self.conflictCopies(pair.a).isEmpty && Self.tree(pair.a) == Self.tree(pair.b))
    }

    // MARK: Starting a replica with relay sync

    @Test(arguments: ["empty", "missing"])
    func syncIntoAnEmptyOrMissingFolderMakesAReplicaAndTheNextEditsOnBothSidesMerge(folder: String) throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try Self.write(pair.a + "/Research/notes.md", (1...7).map { "line \($0)\n" }.joined())
        if folder == "empty" { try FileManager.default.createDirectory(atPath: pair.b, withIntermediateDirectories: true) }
        let started = try Self.relay(["sync", "-w", pair.a, pair.b])
        #expect(started.text.contains("Started a new replica"), "\(started.text)")
        let again = try Self.sync(pair.a, pair.b)
        #expect(!again.startedReplica && again.transferred == 0, "the next sync finds a replica in step")
        try checkStartedReplica(pair, sync: { try Self.sync(pair.a, pair.b) })
    }

    @Test func syncOverSSHIntoAMissingFolderMakesAReplicaAndTheNextEditsOnBothSidesMerge() throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try Self.write(pair.a + "/Research/notes.md", (1...7).map { "line \($0)\n" }.joined())
        let ssh = try SyncTransportTests.fakeSSH(in: pair.base)
        let environment = ["RELAY_SSH": ssh]
        let started = try Self.sync(pair.a, "desktop:" + pair.b, environment: environment, extra: ["--remote-relay", Binaries.relay])
        #expect(started.startedReplica && started.copied > 0 && started.conflicts == 0, "\(started.actions)")
        try checkStartedReplica(pair, sync: {
            try Self.sync(pair.a, "desktop:" + pair.b, environment: environment, extra: ["--remote-relay", Binaries.relay])
        })
    }

    /// B is a replica of A with its own id and every file; edits on both sides then merge.
    func checkStartedReplica(_ pair: Pair, sync: () throws -> SyncSummary) throws {
        #expect(Self.tree(pair.a) == Self.tree(pair.b), "B has every file of A")
        let idA = Self.read(pair.a + "/.relay/replica-id"), idB = Self.read(pair.b + "/.relay/replica-id")
        #expect(!idB.isEmpty && idA != idB, "B has a replica id of its own")
        try Self.replaceLine(pair.a + "/Research/notes.md", "line 1", with: "line 1 from A")
        try Self.replaceLine(pair.b + "/Research/notes.md", "line 7", with: "line 7 from B")
        try Self.write(pair.b + "/context.md", Self.read(pair.b + "/context.md") + "- from B\n")
        try Self.write(pair.a + "/context.md", "- from A\n" + Self.read(pair.a + "/context.md"))
        let summary = try sync()
        #expect(summary.conflicts == 0 && summary.merged == 2, "\(summary.actions)")
        #expect(Self.read(pair.b + "/Research/notes.md").contains("line 1 from A\n") && Self.read(pair.b + "/Research/notes.md").contains("line 7 from B\n"))
        #expect(Self.conflictCopies(pair.a).isEmpty && Self.tree(pair.a) == Self.tree(pair.b))
    }

    @Test func aFolderThatHoldsFilesIsNotMadeAReplica() throws {
        let pair = try Pair()
        try Self.relay(["init", pair.a])
        try FileManager.default.createDirectory(atPath: pair.b, withIntermediateDirectories: true)
        try Self.write(pair.b + "/mine.txt", "not a workspace\n")
        let result = try run(Binaries.relay, ["sync", "-w", pair.a, pair.b])
        #expect(result.status == 2 && result.standardError.contains("is not a Relay workspace"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: pair.b + "/.relay"))
        let inside = try run(Binaries.relay, ["sync", "-w", pair.a, pair.a + "/Research/copy"])
        #expect(inside.status == 2 && inside.standardError.contains("inside one another"), "\(inside.standardError)")
    }
}
