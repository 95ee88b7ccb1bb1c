import Foundation
import RelayTestKit
import Testing

/// Promise 2, the part no lock can give: a person's editor takes no lock. Relay's updates race
/// a "person" saving the file the way editors do; every one of the person's edits must survive.
@Suite("A person's editor racing Relay's updates", .serialized)
struct EditorRaceTests {
    enum SaveStyle: String, CaseIterable { case temporaryAndRename, inPlace }

    @Test(arguments: SaveStyle.allCases)
    func everyEditorSaveSurvivesConcurrentUpdates(style: SaveStyle) throws {
        let scratch = try ScratchWorkspace.relayInit()
        let file = scratch.path("context.md")
        try "# Context\n".write(toFile: file, atomically: false, encoding: .utf8)
        let errorLog = scratch.base + "/updater.err"
        let updater = try spawn(Binaries.stress, ["update-append", scratch.root, "context.md", "150", "agent"], errorLog: errorLog)

        var saves = 0
        while updater.isRunning || saves < 30 {
            // The person reads the file, adds a line, and saves it back.
            guard let current = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let edited = current + "person \(saves)\n"
            switch style {
            case .temporaryAndRename:
                let temporary = scratch.path(".context.md.swp")
                try edited.write(toFile: temporary, atomically: false, encoding: .utf8)
                rename(temporary, file)
            case .inPlace:
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(edited.utf8))
                try handle.close()
            }
            saves += 1
            // A frantic autosave: 30 to 100 saves a second, far more than any person.
            Thread.sleep(forTimeInterval: Double.random(in: 0.010...0.033))
            if saves > 5000 { break }
        }
        updater.waitUntilExit()
        #expect(updater.terminationStatus == 0, "\((try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "")")
        let final = try String(contentsOfFile: file, encoding: .utf8)
        // Each save was built on what the person read; Relay must never have dropped one. (The
        // person may drop Relay's lines: a save made from a stale read is the person's choice.)
        let lastSave = final.split(separator: "\n").last { $0.hasPrefix("person ") }
        #expect(lastSave == Substring("person \(saves - 1)"), "the person's last save is in the file")
        for n in 0..<saves where !final.contains("person \(n)\n") {
            Issue.record("person \(n) was lost (\(style))")
            break
        }
    }
}
