import Foundation
import RelayTestKit
import Testing

/// Promise 2, no lost updates: several real processes writing the same files at once.
@Suite("Concurrent processes: coordinated appends and updates lose nothing", .serialized)
struct ConcurrencyTests {
    @Test func eightProcessesTimes250AppendsGiveExactly2000WholeLines() throws {
        let scratch = try ScratchWorkspace.relayInit()
        let writers = try (0..<8).map { p in
            try spawn(Binaries.stress, ["append", scratch.root, "Journal/agent/shared.md", "250", "p\(p)"])
        }
        for writer in writers { writer.waitUntilExit(); #expect(writer.terminationStatus == 0) }
        let lines = try #require(scratch.contents("Journal/agent/shared.md")).split(separator: "\n")
        #expect(lines.count == 2000)
        var perProcess: [Substring: Int] = [:]
        for line in lines {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let i = Int(parts[1]) else { Issue.record("interleaved line: \(line.prefix(60))"); return }
            let letter = Character(UnicodeScalar(UInt8(97 + i % 26)))
            #expect(parts[2] == Substring(String(repeating: letter, count: 20 + (i &* 131) % 3000)))
            perProcess[parts[0], default: 0] += 1
        }
        #expect(perProcess.count == 8 && perProcess.values.allSatisfy { $0 == 250 })
    }

    @Test func eightProcessesTimes100IncrementsThroughUpdateGiveExactly800() throws {
        let scratch = try ScratchWorkspace.relayInit()
        let writers = try (0..<8).map { _ in try spawn(Binaries.stress, ["increment", scratch.root, "counter.txt", "100"]) }
        for writer in writers { writer.waitUntilExit(); #expect(writer.terminationStatus == 0) }
        #expect(scratch.contents("counter.txt") == "800\n")
    }

    @Test func incrementsThroughTheCommandLineFilterAreNotLostEither() throws {
        let scratch = try ScratchWorkspace.relayInit()
        let group = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<10 {
                    _ = try? scratch.relay(["fs", "update", "-w", scratch.root, "n.txt", "--", "sh", "-c", "read n; echo $((${n:-0} + 1))"])
                }
            }
        }
        group.wait()
        #expect(scratch.contents("n.txt") == "40\n")
    }
}
