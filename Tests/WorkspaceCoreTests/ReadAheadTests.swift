import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Read-ahead and the folders a batch trusts: what a sync reads early is what it would read, and no folder is trusted past its batch")
struct ReadAheadTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }
    var workspace: Workspace { fixture.workspace }

    func makeFiles(_ count: Int) throws -> [String] {
        try (0..<count).map { i in
            let path = "d\(i % 5)/e\(i % 3)/file\(i).md"
            try fixture.write(path, String(repeating: "line \(i)\n", count: 1 + i * 7))
            return path
        }
    }

    @Test func everyPathReadAheadHasTheBytesAndHashOfAPlainRead() throws {
        let paths = try makeFiles(60)
        let ahead = ReadAhead(workspace, paths: paths, budgetBytes: 4_096, budgetFiles: 4)
        defer { ahead.stop() }
        // The thread fills its budget of four files before the caller begins.
        ahead.waitForFilesRead(4)
        var readAhead = 0
        for path in paths {
            let plain = try workspace.readHashed(path)
            if let early = try ahead.take(path)?.get() {
                readAhead += 1
                #expect(early.bytes == plain.bytes, "\(path)")
                #expect(early.hash == plain.hash, "\(path)")
                #expect(early.hash == ContentHash(of: plain.bytes))
            }
        }
        // At least the four read before the caller began came from the thread.
        #expect(readAhead >= 4)
    }

    @Test func pathsTheCallerSkipsAreDroppedAndDoNotStallTheOnesAfter() throws {
        let paths = try makeFiles(40)
        // A budget of two files: had the skipped reads been kept, the thread would wait for
        // room forever and every later take would have to read for itself.
        let ahead = ReadAhead(workspace, paths: paths, budgetBytes: 1 << 20, budgetFiles: 2)
        defer { ahead.stop() }
        for (index, path) in paths.enumerated() where index % 3 == 2 {
            let read = try ahead.take(path)?.get() ?? workspace.readHashed(path)
            #expect(read.bytes == Array(try #require(fixture.contents(path)).utf8))
        }
    }

    @Test func aPathOutsideThePlanOrAskedForTwiceIsLeftToTheCaller() throws {
        let paths = try makeFiles(3)
        try fixture.write("elsewhere.md", "x\n")
        let ahead = ReadAhead(workspace, paths: paths)
        defer { ahead.stop() }
        #expect(ahead.take("elsewhere.md") == nil)
        _ = ahead.take(paths[1])
        #expect(ahead.take(paths[1]) == nil)
        // Behind the caller now: not handed out.
        #expect(ahead.take(paths[0]) == nil)
    }

    @Test func aReadThatFailsIsHandedOverAsThatFailure() throws {
        try FileManager.default.createDirectory(atPath: fixture.path("links"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fixture.path("links/out"), withDestinationPath: fixture.outside)
        let paths = ["missing.md", "links/out/secret.txt"]
        let ahead = ReadAhead(workspace, paths: paths)
        defer { ahead.stop() }
        for path in paths {
            let expected = (try? workspace.readHashed(path)) == nil
            #expect(expected, "a plain read of \(path) fails too")
            if let read = ahead.take(path) {
                #expect(throws: WorkspaceError.self) { try read.get() }
            }
        }
    }

    @Test func aStoppedReadAheadHandsNothingOut() throws {
        let paths = try makeFiles(10)
        let ahead = ReadAhead(workspace, paths: paths)
        ahead.stop()
        for path in paths { #expect(ahead.take(path) == nil) }
    }

    @Test func trustedFoldersStillRefuseALinkAsTheLastComponentAndTheEngineFolder() throws {
        try fixture.write("a/b/file.md", "x\n")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("a/b/out"), withDestinationPath: fixture.outside + "/secret.txt")
        let folders = ResolvedFolders()
        _ = try workspace.resolve("a/b/file.md", folders: folders)
        #expect(folders.known == ["a", "a/b"])
        #expect(throws: WorkspaceError.self) { try workspace.resolve("a/b/out", folders: folders) }
        #expect(throws: WorkspaceError.self) { try workspace.resolve(".relay/replica-id", folders: folders) }
        #expect(throws: WorkspaceError.self) { try workspace.resolve("a/../../outside", folders: folders) }
    }

    /// With a folder already known, a path in it resolves exactly as the full walk resolves it
    /// (the shortcut takes only plain paths); every refusal stays a refusal.
    @Test func aPathInAKnownFolderResolvesAsTheFullWalkDoes() throws {
        try fixture.write("a/b/file.md", "x\n")
        try fixture.write("a/other.md", "y\n")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("a/b/inside"), withDestinationPath: "../other.md")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("a/b/out"), withDestinationPath: fixture.outside + "/secret.txt")
        let folders = ResolvedFolders()
        _ = try workspace.resolve("a/b/file.md", folders: folders)
        #expect(folders.known == ["a", "a/b"])
        let paths = ["a/b/file.md", "a/b/new.md", "a/b/./file.md", "a/b/../other.md", "a/b//file.md", "a/b/inside", "a/b/out",
                     "a/b/" + WorkspaceLayout.temporaryPrefix + "x", "a/b/..", "a/b/.", "a/b/../../..", "a/b/file.md/x", "a/b/.hidden"]
        for path in paths {
            let plain = Result { try workspace.resolve(path) }, known = Result { try workspace.resolve(path, folders: folders) }
            switch (plain, known) {
            case (.success(let p), .success(let k)): #expect(p == k, "\(path)")
            case (.failure(let p as WorkspaceError), .failure(let k as WorkspaceError)): #expect(p.code == k.code, "\(path)")
            default: Issue.record("\(path): \(plain) against \(known)")
            }
        }
    }

    @Test func aFolderReplacedByALinkIsRefusedOnceTheFoldersAreForgotten() throws {
        try fixture.write("a/b/file.md", "x\n")
        let folders = ResolvedFolders()
        _ = try workspace.resolve("a/b/file.md", folders: folders)
        try FileManager.default.removeItem(atPath: fixture.path("a/b"))
        try FileManager.default.createSymbolicLink(atPath: fixture.path("a/b"), withDestinationPath: fixture.outside)
        folders.forget()
        #expect(throws: WorkspaceError.self) { try workspace.resolve("a/b/secret.txt", folders: folders) }
    }

    @Test func aWriteBatchLooksAtItsFoldersAgainAfterEachCommit() throws {
        let batch = WriteBatch(workspace, operation: "test")
        try batch.stage("d/one.md", bytes: Array("1\n".utf8), expected: nil)
        _ = try batch.commit()
        // The folder becomes a link out of the workspace between two batches.
        try FileManager.default.removeItem(atPath: fixture.path("d"))
        try FileManager.default.createSymbolicLink(atPath: fixture.path("d"), withDestinationPath: fixture.outside)
        #expect(throws: WorkspaceError.self) { try batch.stage("d/two.md", bytes: Array("2\n".utf8), expected: nil) }
        #expect(!FileManager.default.fileExists(atPath: fixture.outside + "/two.md"))
    }
}
