import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// Configuration files (relay.json, rosters) merge three-way by key path (issue 31).
@Suite("JSON configuration files merge by key")
struct JSONMergeTests {
    static let relayJSON = """
        {
          "version": 1,
          "model": {
            "provider": "openai-compatible",
            "baseURL": "http://127.0.0.1:8080/v1",
            "contextTokens": 4096
          },
          "sync": {
            "peers": [],
            "afterChangeSeconds": 10
          }
        }

        """

    func merge(_ base: String, _ ours: String, _ theirs: String) -> String? {
        JSONMerge.merge(base: Array(base.utf8), ours: Array(ours.utf8), theirs: Array(theirs.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aPeerAddedOnOneSideAndTheModelURLChangedOnTheOtherMergeKeepingTheFilesLayout() throws {
        let ours = Self.relayJSON.replacingOccurrences(of: "8080", with: "9090")
        let theirs = Self.relayJSON.replacingOccurrences(of: "\"peers\": []", with: "\"peers\": [\"/media/usb/notes\"]")
        let merged = try #require(merge(Self.relayJSON, ours, theirs))
        #expect(merged == Self.relayJSON.replacingOccurrences(of: "8080", with: "9090")
            .replacingOccurrences(of: "\"peers\": []", with: "\"peers\": [\"/media/usb/notes\"]"))
        // The same from the other side: the same bytes.
        #expect(merge(Self.relayJSON, theirs, ours) == merged)
    }

    @Test func theSameKeyChangedToDifferentValuesIsAConflict() {
        let ours = Self.relayJSON.replacingOccurrences(of: "8080", with: "9090")
        let theirs = Self.relayJSON.replacingOccurrences(of: "8080", with: "7070")
        #expect(merge(Self.relayJSON, ours, theirs) == nil)
    }

    @Test func aKeyDeletedOnOneSideAndChangedOnTheOtherIsAConflictAndDeletedAloneIsDeleted() throws {
        let deleted = Self.relayJSON.replacingOccurrences(of: ",\n    \"contextTokens\": 4096", with: "")
        let changed = Self.relayJSON.replacingOccurrences(of: "4096", with: "8192")
        #expect(merge(Self.relayJSON, deleted, changed) == nil)
        let other = Self.relayJSON.replacingOccurrences(of: "\"afterChangeSeconds\": 10", with: "\"afterChangeSeconds\": 2")
        let merged = try #require(merge(Self.relayJSON, deleted, other))
        #expect(merged == deleted.replacingOccurrences(of: "\"afterChangeSeconds\": 10", with: "\"afterChangeSeconds\": 2"))
    }

    @Test func newKeysOnBothSidesLandAfterTheKeyTheyFollowIndentedAsTheFileIs() throws {
        let ours = Self.relayJSON.replacingOccurrences(of: "\"version\": 1,", with: "\"version\": 1,\n  \"note\": \"mine\",")
        let theirs = Self.relayJSON.replacingOccurrences(
            of: "\"contextTokens\": 4096\n  },",
            with: "\"contextTokens\": 4096\n  },\n  \"watch\": {\n    \"settleMilliseconds\": 50\n  },")
        let merged = try #require(merge(Self.relayJSON, ours, theirs))
        #expect(merged == ours.replacingOccurrences(
            of: "\"contextTokens\": 4096\n  },",
            with: "\"contextTokens\": 4096\n  },\n  \"watch\": {\n    \"settleMilliseconds\": 50\n  },"))
    }

    static let roster = """
        [
          {
            "id": "researcher",
            "name": "Remy",
            "order": 0
          },
          {
            "id": "writer",
            "name": "Wren",
            "order": 1
          }
        ]

        """

    @Test func aRostersAgentsMatchByIdSoEditsToDifferentAgentsAndAnAddedAgentMerge() throws {
        let ours = Self.roster.replacingOccurrences(of: "\"Remy\"", with: "\"Remington\"")
        let theirs = Self.roster.replacingOccurrences(of: "\"Wren\"", with: "\"Robin\"")
            .replacingOccurrences(of: "\"order\": 1\n  }\n]", with: "\"order\": 1\n  },\n  {\n    \"id\": \"critic\",\n    \"name\": \"Vera\",\n    \"order\": 2\n  }\n]")
        let merged = try #require(merge(Self.roster, ours, theirs))
        #expect(merged == theirs.replacingOccurrences(of: "\"Remy\"", with: "\"Remington\""))
        // The same field of the same agent changed on both: a conflict.
        #expect(merge(Self.roster, ours, Self.roster.replacingOccurrences(of: "\"Remy\"", with: "\"Rémy\"")) == nil)
    }

    @Test func aFileThatIsNotJSONOnEitherSideOrWithoutABaseIsAConflict() {
        #expect(merge(Self.relayJSON, "{ not json", Self.relayJSON.replacingOccurrences(of: "8080", with: "9090")) == nil)
        #expect(JSONMerge.merge(base: nil, ours: Array("{\"a\": 1}".utf8), theirs: Array("{\"b\": 1}".utf8)) == nil)
    }

    @Test func aFileWrittenOnOneLineStaysOnOneLine() throws {
        let merged = try #require(merge(#"{"a": 1, "b": {"c": 2}}"#, #"{"a": 5, "b": {"c": 2}}"#, #"{"a": 1, "b": {"c": 2, "d": 3}}"#))
        #expect(merged == #"{"a": 5, "b": {"c": 2, "d": 3}}"#)
    }

    // Through a real sync: relay.json edited on two replicas.

    func replicas(_ base: String) throws -> (ScratchWorkspace, ScratchWorkspace) {
        let a = try ScratchWorkspace(in: base, name: "laptop"), b = try ScratchWorkspace(in: base, name: "desktop")
        try a.write("relay.json", Self.relayJSON)
        try sync(a, b)
        return (a, b)
    }

    @Test func relayJSONWithAPeerAddedOnOneReplicaAndTheModelURLChangedOnTheOtherSyncsWithNoConflictCopy() throws {
        let base = FileManager.default.temporaryDirectory.path + "/relay-json-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try replicas(base)
        try a.write("relay.json", Self.relayJSON.replacingOccurrences(of: "\"peers\": []", with: "\"peers\": [\"/media/usb/notes\"]"))
        try b.write("relay.json", Self.relayJSON.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:9090"))
        let summary = try sync(a, b)
        #expect(summary.conflicts == 0 && a.conflictCopies().isEmpty, "\(summary.actions)")
        #expect(summary.actions.contains("merge (json): relay.json"), "\(summary.actions)")
        let merged = try #require(a.contents("relay.json"))
        #expect(merged.contains("\"peers\": [\"/media/usb/notes\"]") && merged.contains("127.0.0.1:9090"), "\(merged)")
        #expect(a.tree() == b.tree())
    }

    @Test func relayJSONWithTheSameKeyChangedOnBothReplicasGivesOneConflictCopy() throws {
        let base = FileManager.default.temporaryDirectory.path + "/relay-json-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (a, b) = try replicas(base)
        try a.write("relay.json", Self.relayJSON.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:9090"))
        try b.write("relay.json", Self.relayJSON.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:9191"))
        let summary = try sync(a, b)
        #expect(summary.conflicts == 1, "\(summary.actions)")
        #expect(a.conflictCopies().count == 1 && a.conflictCopies().first.map { ConflictNames.original(of: $0) } == "relay.json")
        #expect(a.tree() == b.tree())
        let versions = Set([a.contents("relay.json"), a.conflictCopies().first.flatMap { a.contents($0) }])
        #expect(versions.contains { $0?.contains("127.0.0.1:9090") == true } && versions.contains { $0?.contains("127.0.0.1:9191") == true })
    }
}
