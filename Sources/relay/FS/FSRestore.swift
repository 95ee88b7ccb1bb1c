import ArgumentParser
import WorkspaceCore

struct FSRestore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a kept version of a file back.",
        discussion: """
            VERSION is a version from `relay fs history PATH` (at least 6 hex digits). The restore \
            is itself an atomic write, so the content it replaces is kept too.

            Examples:
              relay fs history context.md
              relay fs restore context.md 3fa94c0d1e2b
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @Argument(help: ArgumentHelp("The version to restore (a hash prefix).", valueName: "version"))
    var version: String
    @Flag(help: "Print the result as JSON.") var json = false

    func run() throws {
        try report(try options.open().restore(target.path, version: version), json: json)
    }
}
