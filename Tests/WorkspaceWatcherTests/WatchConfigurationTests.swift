import Testing
import WorkspaceCore
@testable import WorkspaceWatcher

@Suite("Triggers in relay.json: read, and refused with file, line and field")
struct WatchConfigurationTests {
    func parse(_ text: String) throws -> WatchConfiguration {
        try WatchConfiguration.parse(Array(text.utf8), file: "relay.json")
    }

    func message(_ text: String) -> String? {
        do { _ = try parse(text); return nil } catch let error as WorkspaceError { return error.message } catch { return "\(error)" }
    }

    @Test func triggersAndWatchSettingsAreRead() throws {
        let configuration = try parse("""
            {"relays": {"research": {}},
             "triggers": [{"pattern": "Research/**", "exclude": ["**/README.md"], "relay": "research"},
                          {"name": "csv", "pattern": "inbox/*.csv", "command": "import \\"$RELAY_FILE\\"", "concurrency": 3}],
             "watch": {"settleMilliseconds": 250, "settleLimitSeconds": 9}}
            """)
        #expect(configuration.rules.count == 2)
        #expect(configuration.rules[0].action == .relay("research") && configuration.rules[0].name == "Research/**")
        #expect(configuration.rules[1].action == .command("import \"$RELAY_FILE\"") && configuration.rules[1].concurrency == 3)
        #expect(configuration.settle == .milliseconds(250) && configuration.settleLimit == .seconds(9))
        #expect(configuration.rules(matching: "Research/paper.pdf").map(\.name) == ["Research/**"])
        #expect(configuration.rules(matching: "Research/README.md").isEmpty)
    }

    @Test func conflictCopiesNeverFireARelay() throws {
        let configuration = try parse(#"{"relays": {"research": {}}, "triggers": [{"pattern": "Research/**", "relay": "research"}]}"#)
        #expect(configuration.rules(matching: "Research/paper.conflict-20261122-140301-ab12cd34ef56ab78.pdf").isEmpty)
        #expect(configuration.rules(matching: "Research/paper.sync-conflict-20261122-140301-ABCDEF1.pdf").isEmpty)
        #expect(configuration.rules(matching: "Research/conflict-of-interest.pdf").count == 1, "only real copy names")
    }

    @Test func theWorkspaceTemplatesRelayJSONIsValid() throws {
        let file = try #require(WorkspaceTemplate.embedded.files.first { $0.path == "relay.json" })
        let configuration = try WatchConfiguration.parse(file.bytes, file: "relay.json")
        #expect(configuration.rules.map(\.name) == ["Research/**", "Chats/*.md"])
        #expect(configuration.rules(matching: "Research/README.md").isEmpty, "the template's own READMEs start nothing")
        #expect(configuration.rules(matching: "Research/llamas/summary.md").isEmpty, "the research relay's output starts nothing")
    }

    @Test func anUnknownFieldIsNamedWithItsLine() {
        #expect(message("{\n  \"triggers\": [\n    {\"pattern\": \"a/*\", \"relay\": \"r\", \"concurency\": 2}\n  ]\n}")
                == "relay.json:3:38: triggers[0].concurency: unknown field 'concurency' (allowed here: name, pattern, exclude, relay, command, concurrency)")
        #expect(message("{\"trigers\": []}")?.hasPrefix("relay.json:1:2: trigers: unknown field 'trigers'") == true)
    }

    @Test func wrongTypesMissingFieldsAndConflictsAreNamed() {
        #expect(message("{\"triggers\": [{\"pattern\": 5, \"relay\": \"r\"}]}") == "relay.json:1:27: triggers[0].pattern: expected a string, found a number")
        #expect(message("{\"triggers\": [{\"relay\": \"r\"}]}") == "relay.json:1:15: triggers[0]: missing field 'pattern'")
        #expect(message("{\"triggers\": [{\"pattern\": \"a\"}]}")?.contains("give either \"relay\" or \"command\"") == true)
        #expect(message("{\"triggers\": [{\"pattern\": \"a\", \"relay\": \"r\", \"command\": \"c\"}]}")?.contains("not both") == true)
        #expect(message("{\"relays\": {\"chat\": {}}, \"triggers\": [{\"pattern\": \"a\", \"relay\": \"research\"}]}")?
                    .contains("relay 'research' is not one of the relays defined in \"relays\" (chat)") == true)
        #expect(message("{\"triggers\": [{\"pattern\": \"/etc/*\", \"relay\": \"r\"}]}")?.contains("is absolute") == true)
        #expect(message("{\"triggers\": [{\"pattern\": \"a\", \"relay\": \"r\", \"concurrency\": 0}]}")?.contains("expected a whole number from 1 to 64") == true)
        #expect(message("{\"triggers\": [{\"pattern\": \"a\", \"relay\": \"r\"}, {\"pattern\": \"a\", \"relay\": \"r\"}]}")?.contains("two triggers are named 'a'") == true)
    }

    @Test func malformedJSONNamesTheLineAndColumn() {
        #expect(message("{\n  \"triggers\": [\n    {\"pattern\": \"a\" \"relay\": \"r\"}\n  ]\n}")
                == "relay.json:3:21: expected ',' or '}' after a member, found '\"'")
        #expect(message("{\"a\": 1,}") == "relay.json:1:9: expected a member name in double quotes, found '}'")
        #expect(message("{\"a\": \"unterminated}") == "relay.json:1:21: unterminated string")
        #expect(message("[1, 2") == "relay.json:1:6: expected ',' or ']' in an array, found end of file")
        #expect(message("{\"a\": 1, \"a\": 2}") == "relay.json:1:10: 'a' appears twice in this object")
    }

    @Test func invalidUTF8IsRefusedWithItsOffset() {
        let bytes: [UInt8] = Array("{\"a\": \"".utf8) + [0xFF] + Array("\"}".utf8)
        #expect(throws: WorkspaceError.self) { try WatchConfiguration.parse(bytes, file: "relay.json") }
    }
}
