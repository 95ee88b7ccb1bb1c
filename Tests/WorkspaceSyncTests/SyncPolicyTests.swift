import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// relay.json's "sync" section read in one place (issue 31), and the checks of a peer.
@Suite("The sync policy of a workspace")
struct SyncPolicyTests {
    func policy(_ sync: String) throws -> SyncPolicy {
        try SyncPolicy.parse(ConfigurationObject(parsing: Array("{\n  \"sync\": \(sync)\n}\n".utf8), file: "relay.json"))
    }

    func problem(_ sync: String) -> String? {
        do { _ = try policy(sync); return nil } catch let error as WorkspaceError {
            #expect(error.code == .invalidInput && error.isUsageError)
            return error.message
        } catch { return "\(error)" }
    }

    @Test func theSectionsValuesAreReadAndMissingOnesTakeTheDefaults() throws {
        let read = try policy(#"{"peers": ["/media/usb/notes", "ada@desktop:notes"], "massDeletionThreshold": 0.1, "afterChangeSeconds": 0.25, "merge": [{"pattern": "data/*.csv", "kind": "binary"}]}"#)
        #expect(read.peers == ["/media/usb/notes", "ada@desktop:notes"])
        #expect(read.massDeletionShare == 0.1 && read.afterChange == .milliseconds(250))
        #expect(read.mergeRules.kind(of: "data/a.csv") == .binary)
        let options = read.reconcilerOptions(force: true)
        #expect(options.massDeletionShare == 0.1 && options.force && !options.dryRun && options.mergeRules.kind(of: "data/a.csv") == .binary)
        let defaults = try policy("{}")
        #expect(defaults.peers.isEmpty && defaults.massDeletionShare == 0.5 && defaults.afterChange == .seconds(10))
    }

    @Test func aBadValueIsAnErrorNamingTheLineAndTheField() {
        #expect(problem(#"{"massDeletionThreshold": 1.5}"#) == "relay.json:2:37: sync.massDeletionThreshold: 1.5 is out of range (0.0…1.0)")
        #expect(problem(#"{"massDeletionThreshold": "half"}"#) == "relay.json:2:37: sync.massDeletionThreshold: expected a number, found a string")
        #expect(problem(#"{"afterChangeSeconds": -1}"#)?.hasPrefix("relay.json:2:34: sync.afterChangeSeconds: -1.0 is out of range") == true)
        #expect(problem(#"{"peers": "/media/usb"}"#) == "relay.json:2:21: sync.peers: expected an array of strings, found a string")
        #expect(problem(#"{"peers": [""]}"#)?.contains("sync.peers: peer 1 is empty") == true)
        #expect(problem(#"{"treshold": 0.5}"#)?.contains("unknown field 'treshold'") == true)
    }

    @Test func aPeerIsAFolderOrSSHAndTheWorkspaceItselfIsLeftOutOfRelayJSONsPeers() throws {
        let scratch = try ScratchWorkspace()
        #expect(PeerAddress("ada@desktop:notes", relativeTo: scratch.root) == .ssh("ada@desktop:notes"))
        #expect(PeerAddress("../copy", relativeTo: scratch.root) == .folder(scratch.base + "/copy"))
        #expect(PeerAddress("/media/usb:notes", relativeTo: scratch.root) == .folder("/media/usb:notes"))
        let shared = SyncPolicy(peers: [scratch.root, "../other", "ada@desktop:notes"])
        #expect(shared.peerAddresses(of: scratch.workspace).map(\.name) == ["../other", "ada@desktop:notes"])
    }

    @Test func aPeerThatIsThisWorkspaceOrInsideItOrAroundItIsRefused() throws {
        let scratch = try ScratchWorkspace()
        for peer in [scratch.root, scratch.root + "/notes", scratch.base, "/"] {
            #expect(throws: SyncError.self) { try SyncPolicy.check(.folder(peer), for: scratch.workspace) }
            do { try SyncPolicy.check(.folder(peer), for: scratch.workspace) } catch let error as SyncError {
                #expect(error.code == .badPeer && error.isUsageError, "\(error)")
            }
        }
        try SyncPolicy.check(.folder(scratch.base + "/replica"), for: scratch.workspace)
        try SyncPolicy.check(.ssh("ada@desktop:notes"), for: scratch.workspace)
    }

    @Test func aHoldIsRecordedFoundListedAndReleasedByItsPeersLocation() throws {
        let scratch = try ScratchWorkspace()
        #expect(try SyncHold.all(in: scratch.workspace).isEmpty)
        let hold = SyncHold(peer: "../copy", location: scratch.base + "/copy", reason: "refusing to delete 11 of 28 files")
        try hold.record(in: scratch.workspace)
        #expect(try SyncHold.find(scratch.base + "/copy", in: scratch.workspace) == hold)
        #expect(try SyncHold.all(in: scratch.workspace) == [hold])
        #expect(hold.release.contains("relay sync --force \(scratch.base)/copy"))
        #expect(try SyncHold.release(scratch.base + "/copy", in: scratch.workspace))
        #expect(try !SyncHold.release(scratch.base + "/copy", in: scratch.workspace))
        #expect(try SyncHold.all(in: scratch.workspace).isEmpty)
    }
}
