import Foundation
import ArgumentParser
import WorkspaceCore

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the workspace, its replica id and locks, and reclaim interrupted writes.",
        discussion: """
            Counts files, lists paths whose lock is held right now, and removes temporary files \
            left by writers that were killed.

            Examples:
              relay status
              relay status -w ~/notes --json
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() throws {
        let status = try options.open().status()
        if json { return try printJSON(status) }
        print("Workspace  \(status.root)")
        print("Replica    \(status.replicaID)   (layout \(status.formatVersion))")
        print("Content    \(status.files) files in \(status.folders) folders, \(formatBytes(status.bytes))")
        print("Versions   \(status.storedVersions) kept in .relay/objects, \(formatBytes(status.storedBytes))")
        print("Locks      " + (status.lockedPaths.isEmpty ? "none held" : status.lockedPaths.joined(separator: ", ")))
        if !status.reclaimedTemporaries.isEmpty {
            print("Reclaimed  \(status.reclaimedTemporaries.count) temporary file(s) of interrupted writes")
        }
        if !status.activeTemporaries.isEmpty {
            print("Writing    \(status.activeTemporaries.count) write(s) in progress")
        }
    }
}

func formatBytes(_ count: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count), unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
}
