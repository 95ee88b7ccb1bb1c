import ArgumentParser
import WorkspaceCore

struct FSRead: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Print a file's bytes to standard output.",
        discussion: """
            Any file reads, text or not; the bytes come out unchanged.

            Examples:
              relay fs read context.md
              relay fs read Research/paper.pdf > /tmp/paper.pdf
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument

    func run() throws {
        Terminal.standardOutput(try options.open().read(target.path))
    }
}
