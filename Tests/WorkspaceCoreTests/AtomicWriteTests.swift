import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Atomic writes, the version store, and restore")
struct AtomicWriteTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core(durable: true) }
    var workspace: Workspace { fixture.workspace }

    @Test func writeCreatesMissingFoldersAndLeavesNoTemporaryFile() throws {
        let result = try workspace.write("Research/llamas/summary.md", string: "# Llamas\n")
        #expect(fixture.contents("Research/llamas/summary.md") == "# Llamas\n")
        #expect(result.replaced == nil && result.size == 9 && result.hash == ContentHash(of: "# Llamas\n"))
        #expect(fixture.allTemporaries().isEmpty)
    }

    @Test func replacingKeepsTheOldFilesPermissions() throws {
        try fixture.write("script.sh", "#!/bin/sh\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o750], ofItemAtPath: fixture.path("script.sh"))
        try workspace.write("script.sh", string: "#!/bin/sh\necho hi\n")
        let mode = try FileManager.default.attributesOfItem(atPath: fixture.path("script.sh"))[.posixPermissions] as? Int
        #expect(mode == 0o750)
    }

    @Test func theDisplacedVersionIsKeptAndCanBeRestored() throws {
        try workspace.write("context.md", string: "first\n")
        try workspace.write("context.md", string: "second\n")
        let records = try workspace.history("context.md")
        #expect(records.count == 2)
        let replaced = try #require(records.last?.replaced)
        #expect(replaced == ContentHash(of: "first\n") && records.last?.replacedStored == true)
        #expect(try workspace.objects.load(replaced) == Array("first\n".utf8))

        let restored = try workspace.restore("context.md", version: String(replaced.hex.prefix(8)))
        #expect(fixture.contents("context.md") == "first\n")
        #expect(restored.replaced == ContentHash(of: "second\n"))
        #expect(try workspace.objects.load(ContentHash(of: "second\n")) == Array("second\n".utf8))
    }

    @Test func aPersonsEditOverwrittenByRelayIsRecoverable() throws {
        try workspace.write("notes.md", string: "relay wrote this\n")
        try fixture.write("notes.md", "a person typed this\n")  // an editor, no lock
        try workspace.write("notes.md", string: "relay again\n")
        let versions = try workspace.history("notes.md").compactMap(\.replaced)
        #expect(versions.contains(ContentHash(of: "a person typed this\n")))
        #expect(try workspace.objects.load(ContentHash(of: "a person typed this\n")) == Array("a person typed this\n".utf8))
    }

    @Test func restoreRejectsUnknownAndTooShortVersions() throws {
        try workspace.write("a.md", string: "1\n")
        try workspace.write("a.md", string: "2\n")
        #expect { try workspace.restore("a.md", version: "abc") } throws: { ($0 as? WorkspaceError)?.code == .invalidInput }
        #expect { try workspace.restore("a.md", version: "000000") } throws: { ($0 as? WorkspaceError)?.code == .versionNotFound }
        #expect(fixture.contents("a.md") == "2\n")
    }

    @Test func aDamagedStoredVersionIsReportedNotReturned() throws {
        try workspace.write("a.md", string: "original\n")
        try workspace.write("a.md", string: "new\n")
        let hash = ContentHash(of: "original\n")
        let file = workspace.objects.path(of: hash)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        try "tampered\n".write(toFile: file, atomically: false, encoding: .utf8)
        #expect { try workspace.objects.load(hash) } throws: { ($0 as? WorkspaceError)?.message.contains("damaged") == true }
    }

    @Test func writingOverAFolderIsAClearErrorAndChangesNothing() throws {
        try FileManager.default.createDirectory(atPath: fixture.path("Folder"), withIntermediateDirectories: true)
        #expect { try workspace.write("Folder", string: "x") } throws: { ($0 as? WorkspaceError)?.code == .isADirectory }
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: fixture.path("Folder"), isDirectory: &isFolder) && isFolder.boolValue)
        #expect(fixture.allTemporaries().isEmpty)
    }

    @Test func binaryAndInvalidUTF8ReadAsBytes() throws {
        let bytes: [UInt8] = [0x00, 0xFF, 0xFE, 0x80, 0x41, 0xC3]
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path("blob.bin")))
        #expect(try workspace.read("blob.bin") == bytes)
        #expect {
            try workspace.readString("blob.bin")
        } throws: { error in
            let error = error as? WorkspaceError
            return error?.code == .invalidInput && error?.message == "blob.bin: not UTF-8 text (invalid byte at offset 1)"
        }
    }

    @Test func readingAMissingFileNamesIt() {
        #expect { try workspace.read("Journal/none.md") } throws: { error in
            (error as? WorkspaceError)?.code == .notFound && (error as? WorkspaceError)?.message.contains("Journal/none.md") == true
        }
    }

    @Test func aLeftoverTemporaryFileIsReclaimedByTheNextWriterOfThatPath() throws {
        try workspace.write("a.md", string: "1\n")
        // What a writer killed between creating its temporary and renaming it leaves behind.
        let target = try workspace.resolve("a.md")
        let lock = try CoordinatedLock.acquire(lockFile: workspace.lockFile(key: Workspace.lockKey("a.md")), label: "a.md", timeout: .seconds(1))
        let leftover = try workspace.writeTemporary(for: target, bytes: Array("half".utf8), permissions: nil, owner: .lock(lock))
        lock.release()  // as the kernel does when the holder dies; the intent record stays
        #expect(FileManager.default.fileExists(atPath: leftover.absolute))
        try workspace.write("a.md", string: "2\n")
        #expect(!FileManager.default.fileExists(atPath: leftover.absolute))
        #expect(fixture.allTemporaries().isEmpty)
    }

    @Test func statusReclaimsLeftoversWhoseWriterIsGoneAndLeavesActiveOnes() throws {
        try fixture.write("Journal/x.md", "x\n")
        let stale = fixture.path("Journal/" + WorkspaceLayout.temporaryPrefix + Workspace.lockKey("Journal/x.md") + "-dead")
        try "partial".write(toFile: stale, atomically: false, encoding: .utf8)
        let busyKey = Workspace.lockKey("busy.md")
        let busy = fixture.path(WorkspaceLayout.temporaryPrefix + busyKey + "-live")
        try "in progress".write(toFile: busy, atomically: false, encoding: .utf8)
        let holder = try CoordinatedLock.acquire(lockFile: workspace.lockFile(key: busyKey), label: "busy.md", timeout: .seconds(1))
        let status = try workspace.status()
        #expect(status.reclaimedTemporaries == ["Journal/" + (stale as NSString).lastPathComponent])
        #expect(status.activeTemporaries.count == 1)
        #expect(status.lockedPaths == ["busy.md"])
        #expect(FileManager.default.fileExists(atPath: busy))
        holder.release()
    }
}
