import Foundation
import RelayTestKit
import RelayJSON
import Testing
@testable import WorkspaceCore

@Suite("The configuration JSON parser keeps lines and columns")
struct JSONNodeTests {
    @Test func valuesEscapesAndPositionsAreRead() throws {
        let text = "{\n  \"name\": \"Andrea \\u00e9 \\ud83d\\udccb \\\"quoted\\\"\\n\",\n  \"n\": -12.5e1, \"ok\": true, \"none\": null,\n  \"list\": [1, \"two\", {}]\n}"
        let root = try ConfigurationObject(parsing: Array(text.utf8), file: "x.json")
        #expect(try root.string("name") == "Andrea é 📋 \"quoted\"\n")
        #expect(try root.optionalNumber("n") == -125)
        #expect(try root.optionalBool("ok") == true)
        #expect(try root.optionalString("none") == nil)
        #expect(root.keys == ["name", "n", "ok", "none", "list"])
        let node = try JSONNode.parse(Array(text.utf8), file: "x.json")
        guard case .object(let members) = node.value else { Issue.record("not an object"); return }
        #expect(members[0].line == 2 && members[0].column == 3)
        #expect(members[4].line == 4 && members[4].value.line == 4 && members[4].value.column == 11)
    }

    @Test func emojiAndOtherUTF8PassThroughUnchanged() throws {
        let root = try ConfigurationObject(parsing: Array("{\"emoji\": \"🔍✍️\"}".utf8), file: "x.json")
        #expect(try root.string("emoji") == "🔍✍️")
    }

    @Test(arguments: [
        ("", "x.json:1:1: expected a value, found end of file"),
        ("{\"a\": tru}", "x.json:1:7: expected a value, found 't'"),
        ("{\"a\": 1} x", "x.json:1:10: unexpected 'x' after the end of the document"),
        ("{\"a\": \"\\q\"}", "x.json:1:8: invalid escape '\\q' in a string"),
        ("{\"a\": \"line\nbreak\"}", "x.json:1:12: a string may not contain a line break (missing closing quote?)"),
        ("{\"a\" 1}", "x.json:1:6: expected ':' after the member name 'a', found '1'"),
        ("[1.]", "x.json:1:2: '1.' is not a number"),
    ])
    func malformedDocumentsAreRefusedWithThePosition(text: String, message: String) {
        #expect {
            try JSONNode.parse(Array(text.utf8), file: "x.json")
        } throws: { ($0 as? JSONSyntaxError)?.description == message }
        // And through WorkspaceCore, as relay.json and rosters are read: the same words.
        #expect {
            try ConfigurationObject(parsing: Array(text.utf8), file: "x.json")
        } throws: { ($0 as? WorkspaceError)?.message == message }
    }

    @Test func typeErrorsNameTheFieldPath() throws {
        let root = try ConfigurationObject(parsing: Array("{\"relays\": {\"chat\": {\"roster\": 3}}}".utf8), file: "relay.json")
        let chat = try #require(try root.objectMembers("relays").first)
        #expect(chat.name == "chat")
        #expect {
            try chat.object.string("roster")
        } throws: { ($0 as? WorkspaceError)?.message == "relay.json:1:32: relays.chat.roster: expected a string, found a number" }
    }
}

@Suite("relay.json parsed once: every part of a command reads the same parse until the file changes")
struct RelayJSONOnceTests {
    let fixture: ScratchWorkspace
    init() throws { fixture = try ScratchWorkspace.core() }

    var parses: Int { Workspace.relayJSONParses(root: fixture.workspace.root) }

    @Test func readingRelayJSONAgainAndAgainParsesItOnceAndAChangeIsSeen() throws {
        try fixture.write("relay.json", #"{"relays": {}, "sync": {"peers": []}}"#)
        #expect(parses == 0)
        for _ in 0..<6 { #expect(try fixture.workspace.relayJSON()?.keys == ["relays", "sync"]) }
        #expect(parses == 1)
        // Edited in place, as a person would: the next read sees the new document.
        try fixture.write("relay.json", #"{"watch": {"settleMilliseconds": 50}}"#)
        #expect(try fixture.workspace.relayJSON()?.keys == ["watch"])
        #expect(try fixture.workspace.relayJSON()?.keys == ["watch"])
        #expect(parses == 2)
    }

    @Test func anUnreadableRelayJSONIsNilForTheReadersWithDefaultsButAMalformedOneStillFails() throws {
        try? FileManager.default.removeItem(atPath: fixture.path("relay.json"))
        try FileManager.default.createDirectory(atPath: fixture.path("relay.json"), withIntermediateDirectories: false)
        #expect(throws: WorkspaceError.self) { try fixture.workspace.relayJSON() }
        #expect(try fixture.workspace.relayJSONIfReadable() == nil)
        try FileManager.default.removeItem(atPath: fixture.path("relay.json"))
        try fixture.write("relay.json", "{\"sync\": ")
        #expect(throws: WorkspaceError.self) { try fixture.workspace.relayJSONIfReadable() }
    }

    @Test func aMissingRelayJSONIsNilAndAMalformedOneNamesItsLineAndColumn() throws {
        try? FileManager.default.removeItem(atPath: fixture.path("relay.json"))
        #expect(try fixture.workspace.relayJSON() == nil)
        try fixture.write("relay.json", "{\n  \"relays\": ,\n}")
        #expect {
            try fixture.workspace.relayJSON()
        } throws: { ($0 as? WorkspaceError)?.message.hasPrefix("relay.json:2:13:") == true }
    }
}
