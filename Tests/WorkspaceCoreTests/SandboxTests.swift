import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceCore

@Suite("Sandbox: paths from people, scripts, models and peers stay inside the workspace")
struct SandboxTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }
    var workspace: Workspace { fixture.workspace }

    func refusal(_ path: String) -> WorkspaceError? {
        do { _ = try workspace.resolve(path); return nil } catch let error as WorkspaceError { return error } catch { return nil }
    }

    @Test func parentEscapeIsRefusedAndNamesTheRule() {
        #expect(refusal("../outside/secret.txt")?.isRefusal(mentioning: "'..' would leave the workspace root") == true)
        #expect(refusal("Journal/../../outside")?.isRefusal(mentioning: "'..'") == true)
    }

    @Test func dotDotThatStaysInsideIsNormalised() throws {
        #expect(try workspace.resolve("Journal/../context.md").relative == "context.md")
        #expect(try workspace.resolve("./a//b/./c.md").relative == "a/b/c.md")
    }

    @Test func absolutePathIsRefused() {
        #expect(refusal("/etc/passwd")?.isRefusal(mentioning: "absolute paths are not allowed") == true)
        #expect(refusal(fixture.root + "/context.md")?.isRefusal(mentioning: "absolute") == true)
    }

    @Test func engineStateIsRefusedDirectlyAndThroughALink() throws {
        #expect(refusal(".relay/replica-id")?.isRefusal(mentioning: ".relay/ holds the engine's state") == true)
        #expect(refusal("x/../.relay/locks")?.isRefusal(mentioning: ".relay/") == true)
        try FileManager.default.createSymbolicLink(atPath: fixture.path("state"), withDestinationPath: ".relay")
        #expect(refusal("state/replica-id")?.isRefusal(mentioning: ".relay/") == true)
    }

    @Test func symlinkedFolderPointingOutsideIsRefused() throws {
        try FileManager.default.createSymbolicLink(atPath: fixture.path("escape"), withDestinationPath: fixture.outside)
        #expect(refusal("escape/secret.txt")?.isRefusal(mentioning: "the symbolic link 'escape' points outside the workspace") == true)
        #expect(throws: WorkspaceError.self) { try workspace.write("escape/new.txt", string: "x") }
        #expect(!FileManager.default.fileExists(atPath: fixture.outside + "/new.txt"))
    }

    @Test func relativeSymlinkClimbingOutIsRefused() throws {
        try FileManager.default.createDirectory(atPath: fixture.path("deep"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fixture.path("deep/up"), withDestinationPath: "../../outside")
        #expect(refusal("deep/up/secret.txt")?.isRefusal(mentioning: "points outside") == true)
    }

    @Test func symlinkedFilePointingOutsideIsRefusedForReadWriteAndAppend() throws {
        try FileManager.default.createSymbolicLink(atPath: fixture.path("leak.txt"), withDestinationPath: fixture.outside + "/secret.txt")
        #expect(throws: WorkspaceError.self) { try workspace.read("leak.txt") }
        #expect(throws: WorkspaceError.self) { try workspace.write("leak.txt", string: "overwritten") }
        #expect(throws: WorkspaceError.self) { try workspace.append("leak.txt", line: "appended") }
        #expect(throws: WorkspaceError.self) { try workspace.update("leak.txt") { _ in [] } }
        #expect(try String(contentsOfFile: fixture.outside + "/secret.txt", encoding: .utf8) == "secret\n")
    }

    @Test func symlinkInsideTheWorkspaceIsFollowedAndKept() throws {
        try fixture.write("real/notes.md", "one\n")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("alias"), withDestinationPath: "real")
        #expect(try workspace.resolve("alias/notes.md").relative == "real/notes.md")
        try workspace.write("alias/notes.md", string: "two\n")
        #expect(fixture.contents("real/notes.md") == "two\n")
        let kind = try FileManager.default.attributesOfItem(atPath: fixture.path("alias"))[.type] as? FileAttributeType
        #expect(kind == .typeSymbolicLink)
    }

    @Test func absoluteSymlinkBackIntoTheRootIsAllowed() throws {
        try fixture.write("target.md", "t\n")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("abs"), withDestinationPath: fixture.root + "/target.md")
        #expect(try workspace.resolve("abs").relative == "target.md")
    }

    @Test func symlinkLoopIsRefused() throws {
        try FileManager.default.createSymbolicLink(atPath: fixture.path("a"), withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: fixture.path("b"), withDestinationPath: "a")
        #expect(refusal("a/x")?.isRefusal(mentioning: "too many symbolic links") == true)
    }

    @Test func emptyNulAndTemporaryNamesAreRefused() {
        #expect(refusal("")?.isRefusal(mentioning: "a path is required") == true)
        #expect(refusal("a\u{0}b")?.isRefusal(mentioning: "NUL") == true)
        #expect(refusal("Journal/.relay-tmp-abc")?.isRefusal(mentioning: "temporary") == true)
    }

    @Test func refusedWritesCreateNothingAnywhere() throws {
        let before = Set(fixture.allNames(under: fixture.base))
        for path in ["../evil.txt", "/tmp/evil.txt", ".relay/evil", "../outside/evil/x.md", "a/../../evil"] {
            #expect(throws: WorkspaceError.self) { try workspace.write(path, string: "evil") }
            #expect(throws: WorkspaceError.self) { try workspace.append(path, line: "evil") }
        }
        #expect(Set(fixture.allNames(under: fixture.base)) == before)
    }

    @Test func fileWhereAFolderIsExpectedIsAClearError() throws {
        try fixture.write("notes.md", "x\n")
        #expect {
            try workspace.write("notes.md/inner.md", string: "y")
        } throws: { error in
            let error = error as? WorkspaceError
            return error?.code == .notADirectory && error?.message.contains("'notes.md' is a file where a folder is expected") == true
        }
    }
}
