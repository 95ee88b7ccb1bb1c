import ArgumentParser

struct FSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fs",
        abstract: "Read and write workspace files with Relay's atomic, coordinated primitives.",
        discussion: """
            The same operations agents use: paths are relative to the workspace and cannot leave \
            it or touch .relay/; writes are atomic and take the file's lock; every replaced version \
            is kept (see `relay fs history`).

            Examples:
              echo "# Notes" | relay fs write notes.md
              relay fs read context.md
              relay fs ls -r Research
            """,
        subcommands: [
            FSWrite.self, FSAppend.self, FSRead.self, FSList.self, FSUpdate.self, FSLock.self,
            FSHistory.self, FSRestore.self,
        ]
    )
}

/// The path argument the fs commands share.
struct PathArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("A path relative to the workspace root.", valueName: "path"))
    var path: String
}

/// --no-durable, for the writing commands.
struct DurabilityOptions: ParsableArguments {
    @Flag(name: .long, help: "Skip the fsyncs: still atomic if the process dies, not across power loss. Faster.")
    var noDurable = false
}
