import Testing
import WorkspaceCore
@testable import WorkspaceWatcher

@Suite("Trigger patterns")
struct GlobTests {
    @Test(arguments: [
        ("Research/**", "Research/paper.pdf", true),
        ("Research/**", "Research/a/b/c.md", true),
        ("Research/**", "Research", false),
        ("Research/**", "Researchers/x.md", false),
        ("Chats/*.md", "Chats/today.md", true),
        ("Chats/*.md", "Chats/old/today.md", false),
        ("Chats/*.md", "Chats/today.json", false),
        ("**/README.md", "README.md", true),
        ("**/README.md", "Research/x/README.md", true),
        ("**/README.md", "Research/x/README.markdown", false),
        ("inbox/????.csv", "inbox/2026.csv", true),
        ("inbox/????.csv", "inbox/26.csv", false),
        ("a/**/z.txt", "a/z.txt", true),
        ("a/**/z.txt", "a/b/c/z.txt", true),
        ("*", "top.md", true),
        ("*", "dir/nested.md", false),
    ])
    func globMatching(pattern: String, path: String, expected: Bool) throws {
        #expect(try Glob(pattern).matches(path) == expected)
    }

    @Test func emptyAbsoluteAndParentPatternsAreRefused() {
        #expect(throws: GlobError.self) { try Glob("") }
        #expect(throws: GlobError.self) { try Glob("/etc/**") }
        #expect(throws: GlobError.self) { try Glob("../outside/*") }
    }
}

@Suite("What the watcher ignores")
struct IgnoreRulesTests {
    @Test(arguments: [
        ".relay/watch.sqlite", "Research/4913", "notes.md~", "Research/.notes.md.swp", "Research/.notes.md.swx",
        ".#notes.md", "#notes.md#", "Research/.relay-tmp-abc-1", "x/.goutputstream-XYZ", "x/.syncthing.paper.pdf.tmp",
        "Downloads/big.iso.part",
    ])
    func litterAndStateAreIgnored(path: String) {
        #expect(IgnoreRules.isIgnored(path))
    }

    @Test(arguments: ["Research/paper.pdf", "context.md", "Chats/2026-11-22.md", ".stignore", "Research/.hidden-notes.md", "swap.md"])
    func realFilesAreNot(path: String) {
        #expect(!IgnoreRules.isIgnored(path))
    }
}
