import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

/// `Workspace.copy(ofFileAt:to:)`: the copy holds exactly the bytes the hash it returns is of —
/// what a trigger command is handed as the content that settled.
@Suite struct CopyWhileHashingTests {
    @Test func aCopyHoldsTheBytesItsHashIsOfWhateverTheirSize() throws {
        let scratch = try ScratchWorkspace.core()
        for size in [0, 1, 65_536, (1 << 20) + 17] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            _ = try scratch.workspace.write("inbox/f\(size).bin", bytes: bytes)
            let copy = scratch.base + "/copy-\(size)"
            let hash = try #require(try scratch.workspace.copy(ofFileAt: "inbox/f\(size).bin", to: copy))
            #expect(hash == ContentHash(of: bytes), "size \(size)")
            #expect(FileManager.default.contents(atPath: copy).map { [UInt8]($0) } == bytes, "size \(size)")
        }
    }

    @Test func aMissingFileOrAFolderGivesNilAndLeavesNoCopy() throws {
        let scratch = try ScratchWorkspace.core()
        try FileManager.default.createDirectory(atPath: scratch.workspace.root + "/folder", withIntermediateDirectories: true)
        #expect(try scratch.workspace.copy(ofFileAt: "gone.txt", to: scratch.base + "/copy-a") == nil)
        #expect(try scratch.workspace.copy(ofFileAt: "folder", to: scratch.base + "/copy-b") == nil)
        #expect(!FileManager.default.fileExists(atPath: scratch.base + "/copy-a"))
        #expect(!FileManager.default.fileExists(atPath: scratch.base + "/copy-b"))
    }
}
