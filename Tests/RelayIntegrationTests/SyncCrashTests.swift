import Foundation
import RelayTestKit
import Testing
import WorkspaceSync

/// Promise 3 under crashes: `relay sync` killed with SIGKILL at random moments while it applies
/// changes in both directions; the next syncs still converge, nothing is torn, nothing appended
/// on either side is lost.
@Suite("relay sync killed mid-apply", .serialized)
struct SyncCrashTests {
    @Test func syncsKilledAtRandomStillConvergeWithNothingTornOrLost() throws {
        let a = try ScratchWorkspace.relayInit(), b = try ScratchWorkspace.relayInit()
        // Kill timings cannot be replayed, so there is no seed to keep: the messages name the round.
        // Whole-line entries each side appends; all must survive.
        var appended: [String] = []
        func appendLine(_ scratch: ScratchWorkspace, _ file: String, _ line: String) throws {
            try scratch.appendLineAsAnEditorWould(file, line)
            appended.append(line)
        }
        for i in 0..<200 {
            let blob = String(repeating: "payload \(i) ", count: 1 + i * 13 % 1500)
            try blob.write(toFile: a.path("Research/blob-\(i).txt"), atomically: false, encoding: .utf8)
        }
        var kills = 0
        for round in 0..<25 {
            try appendLine(a, "Journal/user/2026-11-22.md", "- round \(round) from a")
            try appendLine(b, "Journal/user/2026-11-22.md", "- round \(round) from b")
            try appendLine(round % 2 == 0 ? a : b, "Research/log-\(round % 4).md", "- round \(round) note")
            let sync = try spawn(Binaries.relay, ["sync", "-w", a.root, "--force", b.root])
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.06))
            if sync.isRunning { kills += 1 }
            killHard(sync)
            // Whatever landed is whole: every blob on b is byte-identical to a's.
            for i in 0..<200 {
                if let copy = b.contents("Research/blob-\(i).txt") {
                    #expect(copy == a.contents("Research/blob-\(i).txt"), "torn blob \(i) after kill \(round)")
                }
            }
        }
        #expect(kills > 5, "the kills came too late to prove anything")
        // Now let syncs finish.
        for _ in 0..<3 {
            let result = try run(Binaries.relay, ["sync", "-w", a.root, "--force", b.root])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let final = try run(Binaries.relay, ["sync", "-w", a.root, "--json", b.root])
        #expect(try JSONDecoder().decode(SyncSummary.self, from: final.standardOutput).transferred == 0, "did not converge")
        let files = try FileManager.default.subpathsOfDirectory(atPath: a.root).filter { !$0.hasPrefix(".relay") }
        for file in files {
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: a.path(file), isDirectory: &isFolder)
            if isFolder.boolValue { continue }
            #expect(FileManager.default.contents(atPath: a.path(file)) == FileManager.default.contents(atPath: b.path(file)), "\(file) differs")
        }
        let everything = files.compactMap { a.contents($0) }.joined()
        for line in appended { #expect(everything.contains(line + "\n"), "lost \(line)") }
        #expect(a.temporaries().isEmpty && b.temporaries().isEmpty)
    }

    /// A first sync of thousands of files into a new `relay init` replica — its batches of
    /// 1,000 copies each committing on another thread while the next is staged — SIGKILLed at
    /// a random moment after its first copy lands: every file the target holds is whole (the
    /// source's bytes), and the next sync completes the copy, leaving no temporary behind.
    @Test func aFirstSyncKilledWhileItsBatchesOverlapLeavesOnlyWholeFilesAndTheNextSyncCompletesIt() throws {
        let a = try ScratchWorkspace.relayInit()
        let count = 3_500
        var notes: [String: String] = [:]
        for i in 0..<count {
            let path = "Research/d\(i % 20)/note-\(i).md"
            let text = String(repeating: "note \(i) ", count: 1 + i * 7 % 300) + "\n"
            try a.write(path, text)
            notes[path] = text
        }
        func files(_ root: String) throws -> [String] {
            try FileManager.default.subpathsOfDirectory(atPath: root).filter { !$0.hasPrefix(".relay/") && $0 != ".relay" }.filter { file in
                var isFolder: ObjCBool = false
                FileManager.default.fileExists(atPath: root + "/" + file, isDirectory: &isFolder)
                return !isFolder.boolValue
            }
        }
        var cutShort = 0
        for round in 0..<4 {
            let b = try ScratchWorkspace.relayInit()
            let sync = try spawn(Binaries.relay, ["sync", "-w", a.root, b.root])
            // Killed once the copies have begun to land (the first folder made on B is the event;
            // a sync that ends first ends the wait), somewhere in the batches that follow: the
            // random moment is the fault injected, not a wait.
            _ = try? FileEvents.wait(under: [b.root], endingWith: sync, guardSeconds: 60, "the first copies on B") {
                FileManager.default.fileExists(atPath: b.path("Research")) ? () : nil
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.8))
            let wasRunning = sync.isRunning
            killHard(sync)
            let landed = try files(b.root).filter { notes[$0] != nil }
            for path in landed { #expect(b.contents(path) == notes[path], "round \(round): \(path) torn by the kill") }
            if wasRunning && landed.count < count { cutShort += 1 }
            let result = try run(Binaries.relay, ["sync", "-w", a.root, b.root])
            #expect(result.status == 0, "round \(round): \(result.standardError)")
            for (path, text) in notes where b.contents(path) != text {
                Issue.record("round \(round): \(path) missing or different after the next sync")
                break
            }
            let temporaries = try files(b.root).filter { ($0 as NSString).lastPathComponent.hasPrefix(".relay-tmp-") }
            #expect(temporaries.isEmpty, "round \(round): left \(temporaries.prefix(3))")
            let final = try run(Binaries.relay, ["sync", "-w", a.root, "--json", b.root])
            #expect(try JSONDecoder().decode(SyncSummary.self, from: final.standardOutput).transferred == 0, "round \(round): did not converge")
        }
        #expect(cutShort >= 2, "only \(cutShort) of 4 kills landed mid-copy: too few to prove anything")
    }

    /// Three replicas, syncs between random pairs SIGKILLed mid-apply while all three append.
    @Test func threeReplicasSyncedInRandomPairsAndKilledMidApplyConvergeWithNothingTornOrLost() throws {
        let replicas = try (0..<3).map { _ in try ScratchWorkspace.relayInit() }
        let names = ["a", "b", "c"]
        var seed = UInt64.random(in: 1...UInt64.max)
        let printedSeed = seed
        func next(_ bound: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(bound))
        }
        var blobs: [String: String] = [:]
        for i in 0..<150 {
            let blob = String(repeating: "payload \(i) ", count: 1 + i * 13 % 1500)
            try FileManager.default.createDirectory(atPath: replicas[i % 3].path("Research"), withIntermediateDirectories: true)
            try blob.write(toFile: replicas[i % 3].path("Research/blob-\(i).txt"), atomically: false, encoding: .utf8)
            blobs["Research/blob-\(i).txt"] = blob
        }
        var appended: [String] = []
        func appendLine(_ scratch: ScratchWorkspace, _ file: String, _ line: String) throws {
            try scratch.appendLineAsAnEditorWould(file, line)
            appended.append(line)
        }
        var kills = 0
        for round in 0..<30 {
            for (k, replica) in replicas.enumerated() where next(2) == 0 {
                try appendLine(replica, "Journal/user/2026-11-22.md", "- round \(round) from \(names[k])")
            }
            try appendLine(replicas[next(3)], "Research/log-\(round % 3).md", "- round \(round) note")
            let from = next(3), to = (from + 1 + next(2)) % 3
            let sync = try spawn(Binaries.relay, ["sync", "-w", replicas[from].root, "--force", replicas[to].root])
            Thread.sleep(forTimeInterval: Double(next(60)) / 1000)
            if sync.isRunning { kills += 1 }
            killHard(sync)
            for (k, replica) in replicas.enumerated() {
                for (path, blob) in blobs {
                    if let copy = replica.contents(path) {
                        #expect(copy == blob, "seed \(printedSeed): torn \(path) on \(names[k]) after kill \(round)")
                    }
                }
            }
        }
        #expect(kills > 5, "seed \(printedSeed): the kills came too late to prove anything")
        for _ in 0..<3 {
            for (x, y) in [(0, 1), (1, 2), (0, 2)] {
                let result = try run(Binaries.relay, ["sync", "-w", replicas[x].root, "--force", replicas[y].root])
                #expect(result.status == 0, "seed \(printedSeed): \(result.standardError)")
            }
        }
        for (x, y) in [(0, 1), (1, 2), (0, 2)] {
            let final = try run(Binaries.relay, ["sync", "-w", replicas[x].root, "--json", replicas[y].root])
            #expect(try JSONDecoder().decode(SyncSummary.self, from: final.standardOutput).transferred == 0,
                    "seed \(printedSeed): \(names[x])–\(names[y]) did not converge")
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: replicas[0].root).filter { !$0.hasPrefix(".relay") }.filter { file in
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: replicas[0].path(file), isDirectory: &isFolder)
            return !isFolder.boolValue
        }
        for other in replicas.dropFirst() {
            let theirs = try FileManager.default.subpathsOfDirectory(atPath: other.root).filter { !$0.hasPrefix(".relay") }.filter { file in
                var isFolder: ObjCBool = false
                FileManager.default.fileExists(atPath: other.path(file), isDirectory: &isFolder)
                return !isFolder.boolValue
            }
            #expect(Set(theirs) == Set(files), "seed \(printedSeed): the replicas hold different paths")
            for file in files {
                #expect(FileManager.default.contents(atPath: replicas[0].path(file)) == FileManager.default.contents(atPath: other.path(file)),
                        "seed \(printedSeed): \(file) differs")
            }
        }
        for (path, blob) in blobs { #expect(replicas[0].contents(path) == blob, "seed \(printedSeed): \(path) lost or torn") }
        let everything = files.compactMap { replicas[0].contents($0) }.joined()
        for line in appended { #expect(everything.contains(line + "\n"), "seed \(printedSeed): lost \(line)") }
        for replica in replicas { #expect(replica.temporaries().isEmpty && replica.temporaries(in: "Research").isEmpty) }
    }
}

extension ScratchWorkspace {
    /// Adds `line` to `file` the way a person's editor saves: the whole file rewritten in place.
    func appendLineAsAnEditorWould(_ file: String, _ line: String) throws {
        let path = path(file)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let old = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        try (old + line + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    }
}
