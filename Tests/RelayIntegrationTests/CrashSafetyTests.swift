import Foundation
import RelayTestKit
import Testing

/// Promise 1, no torn files: real processes rewriting and appending, killed with SIGKILL at
/// random instants. After every kill the file must be exactly one complete version.
@Suite("Crash safety: kill -9 in the middle of writes", .serialized)
struct CrashSafetyTests {
    @Test func aWriterKilled200TimesNeverLeavesATornOrEmptyFile() throws {
        let scratch = try ScratchWorkspace.relayInit()
        var versionsSeen = Set<String>()
        var killsWithFile = 0
        func inode() -> Int? { (try? FileManager.default.attributesOfItem(atPath: scratch.path("data.txt")))?[.systemFileNumber] as? Int }
        for round in 0..<200 {
            let before = inode()
            let writer = try spawn(Binaries.stress, ["rewrite", scratch.root, "data.txt"])
            // Not a pause that assumes a quick start: the writer is seen installing a version of
            // its own (a new inode) first, however loaded the machine, so every round has progress.
            try FileEvents.wait(under: [scratch.root], endingWith: writer, "the writer's first version") { inode() != before ? () : nil }
            // Then most kills land mid-write: versions take about a millisecond to a few to write.
            Thread.sleep(forTimeInterval: Double.random(in: 0.002...0.040))
            killHard(writer)
            guard FileManager.default.fileExists(atPath: scratch.path("data.txt")) else {
                #expect(round < 3, "data.txt vanished after kill \(round)")
                continue
            }
            killsWithFile += 1
            let check = try run(Binaries.stress, ["verify", scratch.path("data.txt")])
            #expect(check.status == 0, "after kill \(round): \(check.standardError)")
            if check.status != 0 { break }
            versionsSeen.insert(check.text)
            // Leftover temporaries never pile up: at most the one the last kill interrupted.
            #expect(scratch.temporaries().count <= 1, "after kill \(round): \(scratch.temporaries())")
        }
        #expect(killsWithFile >= 190)
        #expect(versionsSeen.count > 50, "the writer made progress between kills")
        // `relay status` reclaims what the last kill left.
        let status = try scratch.relay(["status", "-w", scratch.root])
        #expect(status.status == 0)
        #expect(scratch.temporaries().isEmpty)
    }

    @Test func anAppenderKilled200TimesLeavesOnlyWholeLines() throws {
        let scratch = try ScratchWorkspace.relayInit()
        for round in 0..<200 {
            let appender = try spawn(Binaries.stress, ["append-forever", scratch.root, "Journal/agent/log.md", "k\(round)"])
            Thread.sleep(forTimeInterval: Double.random(in: 0.003...0.040))
            killHard(appender)
        }
        // The next append cuts back a tail a kill tore, then adds its own line.
        let closing = try scratch.relay(["fs", "append", "-w", scratch.root, "Journal/agent/log.md"], input: "closing line")
        #expect(closing.status == 0, "\(closing.standardError)")
        let text = try #require(scratch.contents("Journal/agent/log.md"))
        #expect(text.hasSuffix("closing line\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count > 200)
        for line in lines.dropLast() {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let i = Int(parts[1]) else {
                Issue.record("torn or foreign line: \(line.prefix(80))")
                break
            }
            let letter = Character(UnicodeScalar(UInt8(97 + i % 26)))
            #expect(parts[2] == Substring(String(repeating: letter, count: 20 + (i &* 131) % 3000)), "torn line \(line.prefix(40))")
        }
    }
}
