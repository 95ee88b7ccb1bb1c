import Foundation
import Testing
@testable import WorkspaceCore

/// Commands' private copies go to a folder in memory only when it is this user's alone: /dev/shm
/// is shared, so a name someone else made first, or a link put in its place, is refused (the
/// copies then stay in the workspace's state folder).
@Suite struct MemoryFolderTests {
    func scratch() throws -> String {
        let base = FileManager.default.temporaryDirectory.path + "/memory-folder-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        return base
    }

    @Test func aMissingBaseIsMadeForThisUserAloneWithTheNamedFolderInIt() throws {
        let base = try scratch() + "/relay-test"
        let folder = try #require(MemoryFolder.privateFolder("watch-1", under: [base]))
        #expect(folder == base + "/watch-1")
        for path in [base, folder] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o700, "\(path)")
            #expect((attributes[.type] as? FileAttributeType) == .typeDirectory)
        }
        #expect(MemoryFolder.privateFolder("watch-1", under: [base]) == folder, "found again as it is")
    }

    @Test func aBaseOthersMayEnterOrALinkInItsPlaceIsRefusedAndTheNextIsTaken() throws {
        let root = try scratch()
        let open = root + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        #expect(chmod(open, 0o755) == 0)
        let target = root + "/target"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let link = root + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(MemoryFolder.privateFolder("watch-1", under: [open]) == nil, "a folder others may enter")
        #expect(MemoryFolder.privateFolder("watch-1", under: [link]) == nil, "a link, even to a private folder")
        #expect(!FileManager.default.fileExists(atPath: target + "/watch-1"), "nothing is made through the link")
        let fallback = root + "/fallback"
        #expect(MemoryFolder.privateFolder("watch-1", under: [open, link, fallback]) == fallback + "/watch-1")
        if geteuid() == 0 {
            // Root can make what another user would have made first.
            let theirs = root + "/theirs"
            try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            #expect(chown(theirs, 65534, 65534) == 0)
            #expect(MemoryFolder.privateFolder("watch-1", under: [theirs]) == nil, "a folder another user owns")
        }
    }
}
