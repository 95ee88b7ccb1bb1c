import Foundation
import Testing
@testable import WorkspaceCore

@Suite("Write batches: many replacements, one flush, the same checks as an update")
struct WriteBatchTests {
    let fixture: TemporaryWorkspace
    init() throws { fixture = try TemporaryWorkspace(durable: true) }
    var workspace: Workspace { fixture.workspace }

    @Test func nothingIsInPlaceBeforeCommitAndEverythingIsAfterWithHistoryAndTheDisplacedVersionStored() throws {
        try fixture.put("notes/old.md", "old\n")
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("notes/new.md", bytes: Array("new\n".utf8), expected: nil)
        try batch.stage("notes/old.md", bytes: Array("replaced\n".utf8), expected: ContentHash(of: "old\n"))
        try batch.storeObject(Array("a merge base\n".utf8))
        #expect(fixture.contents("notes/new.md") == nil && fixture.contents("notes/old.md") == "old\n")
        #expect(!workspace.objects.contains(ContentHash(of: "a merge base\n")))

        let outcomes = try batch.commit()
        #expect(Set(outcomes.compactMap { $0.result?.path }) == ["notes/new.md", "notes/old.md"])
        #expect(fixture.contents("notes/new.md") == "new\n" && fixture.contents("notes/old.md") == "replaced\n")
        #expect(try workspace.objects.load(ContentHash(of: "old\n")) == Array("old\n".utf8), "the displaced version is kept")
        #expect(workspace.objects.contains(ContentHash(of: "a merge base\n")))
        #expect(try workspace.history("notes/old.md").last?.replaced == ContentHash(of: "old\n"))
        let stamp = try #require(outcomes.first { $0.path == "notes/new.md" }?.stamp)
        #expect(workspace.stamp(ofFileAt: "notes/new.md") == stamp)
        #expect(fixture.temporaries().isEmpty)
    }

    @Test func aFileChangedAfterStagingIsLeftAloneAndReportedWhileTheRestIsInstalled() throws {
        try fixture.put("context.md", "what the index saw\n")
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("context.md", bytes: Array("from the peer\n".utf8), expected: ContentHash(of: "what the index saw\n"))
        try batch.stage("other.md", bytes: Array("other\n".utf8), expected: nil)
        // A person saves while the batch is open (an editor takes no lock).
        try fixture.put("context.md", "a person's edit\n")
        let outcomes = try batch.commit()
        #expect(outcomes.first { $0.path == "context.md" }?.result == nil)
        #expect(outcomes.first { $0.path == "other.md" }?.result != nil)
        #expect(fixture.contents("context.md") == "a person's edit\n")
        #expect(fixture.contents("other.md") == "other\n")
        #expect(fixture.temporaries().isEmpty)
    }

    @Test func aFileThatAppearedWhereNoneWasExpectedIsNotOverwritten() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("Research/new.md", bytes: Array("from the peer\n".utf8), expected: nil)
        try fixture.put("Research/new.md", "made here meanwhile\n")
        let outcomes = try batch.commit()
        #expect(outcomes.count == 1 && outcomes[0].result == nil)
        #expect(fixture.contents("Research/new.md") == "made here meanwhile\n")
    }

    @Test func aBatchDroppedWithoutCommitLeavesNoTemporaryAndReleasesItsLocks() throws {
        do {
            let batch = WriteBatch(workspace, operation: "sync")
            try batch.stage("a.md", bytes: Array("a\n".utf8), expected: nil)
            try batch.storeObject(Array("an object\n".utf8))
        }
        #expect(fixture.contents("a.md") == nil)
        #expect(fixture.temporaries().isEmpty)
        var quick = workspace
        quick.lockTimeout = .milliseconds(200)
        try quick.write("a.md", string: "written after\n")  // the lock is free again
        #expect(fixture.contents("a.md") == "written after\n")
    }

    @Test func stagingThePathTwiceIsRefused() throws {
        let batch = WriteBatch(workspace, operation: "sync")
        try batch.stage("a.md", bytes: Array("1\n".utf8), expected: nil)
        #expect { try batch.stage("a.md", bytes: Array("2\n".utf8), expected: nil) } throws: {
            ($0 as? WorkspaceError)?.code == .invalidInput
        }
        _ = try batch.commit()
        #expect(fixture.contents("a.md") == "1\n")
    }
}
