import Foundation
import Testing
import WorkspaceCore

@Suite("The start-up walk: files in SQLite's path order, one at a time")
struct SortedStampWalkTests {
    @Test func filesComeInTheByteOrderOfTheirPathsWithoutStateOrTemporariesOrLinks() throws {
        let root = FileManager.default.temporaryDirectory.path + "/sorted-walk-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let files = ["a.txt", "a/b", "a/c/d", "a-b", "B", "é.md", "z", "a0"]
        for file in files + [".relay/watch.sqlite", "a/.relay-tmp-1"] {
            let path = root + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(file.utf8).write(to: URL(fileURLWithPath: path))
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/a")
        var walk = SortedStampWalk(try Workspace.open(at: root))
        var paths: [String] = []
        while let file = try walk.next() {
            paths.append(file.path)
            #expect(file.stamp.size == file.path.utf8.count)
        }
        // SQLite's BINARY collation compares bytes: this is `ORDER BY path`.
        #expect(paths == files.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(paths.firstIndex(of: "a.txt")! < paths.firstIndex(of: "a/b")!, "'.' sorts before '/'")
    }
}
