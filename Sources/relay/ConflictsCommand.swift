import ArgumentParser
import Foundation
import WorkspaceCore
import WorkspaceSync

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the conflict copies sync made that are still there.",
        discussion: """
            When both replicas changed the same lines (or a file that cannot be merged), the file \
            keeps one version and the other goes to NAME.conflict-DATE-REPLICA.EXT next to it. \
            Compare the two, keep what you want in the file, and delete the copy: that resolves it.

            Examples:
              relay conflicts
              relay conflicts --json
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Flag(help: "Print one JSON object per conflict.") var json = false

    func run() throws {
        let conflicts = try SyncIndex(workspace: options.open()).openConflicts()
        if conflicts.isEmpty { print("No open conflicts."); return }
        for conflict in conflicts {
            if json {
                struct Row: Codable { var path, copy: String; var time: Date }
                try printJSON(Row(path: conflict.path, copy: conflict.copy, time: conflict.time))
            } else {
                print("\(conflict.path)  ←  \(conflict.copy)")
            }
        }
    }
}
