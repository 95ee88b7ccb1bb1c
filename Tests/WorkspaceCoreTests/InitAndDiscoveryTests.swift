import Foundation
import Testing
@testable import WorkspaceCore

@Suite("relay init, the template, and finding a workspace")
struct InitAndDiscoveryTests {
    let base = FileManager.default.temporaryDirectory.path + "/relay-init-" + UUID().uuidString

    @Test func initCopiesTheTemplateAndMakesAReplicaID() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (workspace, report) = try Workspace.initialize(at: base + "/notes")
        #expect(Set(report.created) == Set(WorkspaceTemplate.embedded.files.map(\.path)))
        #expect(report.created.contains("context.md") && report.created.contains("AgentConfiguration.json"))
        #expect(report.replicaID.count == 16 && report.replicaID.allSatisfy(\.isHexDigit))
        #expect(try workspace.replicaID() == report.replicaID)
        for name in ["locks", "objects", "history"] {
            #expect(FileManager.default.fileExists(atPath: workspace.layout.state + "/" + name))
        }
    }

    @Test func initNeverOverwritesAndKeepsTheReplicaID() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (_, first) = try Workspace.initialize(at: base)
        try "my own context\n".write(toFile: base + "/context.md", atomically: false, encoding: .utf8)
        try FileManager.default.removeItem(atPath: base + "/relay.json")
        let (_, second) = try Workspace.initialize(at: base)
        #expect(second.replicaID == first.replicaID && second.wasWorkspace)
        #expect(second.created == ["relay.json"])
        #expect(try String(contentsOfFile: base + "/context.md", encoding: .utf8) == "my own context\n")
    }

    @Test func initOnAFileIsAClearError() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        try "x".write(toFile: base + "/file", atomically: false, encoding: .utf8)
        #expect { try Workspace.initialize(at: base + "/file") } throws: { ($0 as? WorkspaceError)?.code == .notADirectory }
        #expect { try Workspace.initialize(at: base + "/file/sub") } throws: { ($0 as? WorkspaceError)?.code == .notADirectory }
    }

    @Test func discoveryWalksUpFromASubfolder() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (workspace, _) = try Workspace.initialize(at: base)
        #expect(try Workspace.discover(from: base + "/Journal/user").root == workspace.root)
    }

    @Test func aFolderThatIsNotAWorkspaceIsAClearError() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        #expect { try Workspace.open(at: base) } throws: { error in
            (error as? WorkspaceError)?.code == .notAWorkspace && (error as? WorkspaceError)?.message.contains("relay init") == true
        }
        #expect { try Workspace.open(at: base + "/missing") } throws: { ($0 as? WorkspaceError)?.code == .notAWorkspace }
    }

    @Test func theEmbeddedTemplateMatchesWorkspaceTemplateFolder() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let onDisk = try WorkspaceTemplate.load(from: repository.path + "/workspace-template")
        let embedded = WorkspaceTemplate.embedded
        #expect(embedded.files.map(\.path) == onDisk.files.map(\.path), "run `make template` after changing workspace-template/")
        #expect(embedded.files == onDisk.files, "run `make template` after changing workspace-template/")
    }

    @Test func theTemplateRosterIsARelayOfThreeInTheSeedFormatPlusRelaysOptionalFields() throws {
        let roster = try #require(WorkspaceTemplate.embedded.files.first { $0.path == "AgentConfiguration.json" })
        let agents = try #require(try JSONSerialization.jsonObject(with: Data(roster.bytes)) as? [[String: Any]])
        #expect(agents.count == 3)
        let seed: Set<String> = ["id", "name", "emoji", "color", "systemPrompt", "order"]
        let optional: Set<String> = ["tools", "output", "model", "tokenBudget", "maxTokens", "role", "retrieve", "extract", "grounding"]
        for agent in agents {
            // The seed's six fields, each present, and only Relay's optional ones on top.
            #expect(seed.isSubset(of: Set(agent.keys)))
            #expect(Set(agent.keys).subtracting(seed).isSubset(of: optional))
        }
        #expect(agents.compactMap { $0["order"] as? Int }.sorted() == [0, 1, 2])
        let config = try #require(WorkspaceTemplate.embedded.files.first { $0.path == "relay.json" })
        #expect((try? JSONSerialization.jsonObject(with: Data(config.bytes))) != nil)
    }

    @Test func aTemplateWithARelayFolderIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/.relay", withIntermediateDirectories: true)
        #expect { try WorkspaceTemplate.load(from: base) } throws: { ($0 as? WorkspaceError)?.message.contains(".relay/") == true }
    }
}
