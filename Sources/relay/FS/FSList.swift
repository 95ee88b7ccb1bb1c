import ArgumentParser
import Foundation
import WorkspaceCore

struct FSList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a workspace folder.",
        discussion: """
            .relay/ and Relay's temporary files are never listed; links are shown, not followed.

            Examples:
              relay fs ls
              relay fs ls -r Journal --json
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Argument(help: ArgumentHelp("A folder or file relative to the workspace root.", valueName: "path"))
    var path: String = "."
    @Flag(name: .shortAndLong, help: "List the folders inside too.") var recursive = false
    @Flag(help: "Print one JSON object per entry.") var json = false

    func run() throws {
        let entries = try options.open().list(path, recursive: recursive)
        for entry in entries {
            if json { try printJSON(entry); continue }
            switch entry.kind {
            case .folder: print(Terminal.paint(entry.path + "/", .bold, stream: 1))
            case .symlink: print(entry.path + " @")
            default: print(String(format: "%10d  ", entry.size) + entry.path)
            }
        }
    }
}
