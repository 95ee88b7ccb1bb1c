import Foundation
import Testing
import WorkspaceCore

/// A daemon lets go of the pages of its binary that only starting needed: the code and
/// read-only data it advises away come back from the file when used again, and the data the
/// loader relocated (RELRO: mapped read-only, yet the process's own pages) is never among them.
@Suite struct ExecutablePagesTests {
    /// The resident and anonymous KiB of the mappings of this process's executable.
    func executableMappings() throws -> (resident: Int, anonymous: Int, advisable: Int) {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        var resident = 0, anonymous = 0, advisable = 0, mine = false, readOnly = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                mine = fields.count >= 6 && fields[5...].joined(separator: " ") == executable
                readOnly = fields.count >= 2 && !fields[1].contains("w")
            } else if mine, line.hasPrefix("Rss:") {
                resident += Int(line.split(separator: " ")[1]) ?? 0
            } else if mine, line.hasPrefix("Anonymous:") {
                let kib = Int(line.split(separator: " ")[1]) ?? 0
                anonymous += kib
                if readOnly && kib == 0 { advisable += 1 }
            }
        }
        return (resident, anonymous, advisable)
    }

    @Test func theExecutablesCleanPagesAreLetGoAndItsRelocatedDataStays() throws {
        let before = try executableMappings()
        #expect(before.advisable > 0, "the test binary has code mapped from its file")
        let released = ExecutablePages.release()
        #expect(released > 0)
        let after = try executableMappings()
        // The relocated pages are the process's own: still there (a GOT let go would crash the
        // next call through it, this one included).
        #expect(after.anonymous >= before.anonymous, "pages the loader wrote were let go")
        // Code used again comes back from the file: hashing runs code of another module.
        #expect(ContentHash(of: Array("still runs\n".utf8)).hex.count == 64)
        #expect(ExecutablePages.release() > 0, "and can be let go again")
    }
}
