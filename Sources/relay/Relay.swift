import ArgumentParser

/// The root command.
struct Relay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Run agents on a folder of plain files, and keep the folder safe.",
        discussion: """
            A workspace is an ordinary folder (context.md, Journal/, Research/, Chats/) that people \
            and agents share. Relay's writes are atomic, coordinated by a lock, and keep every \
            version they replace.

            Examples:
              relay init ~/notes
              echo "- met Ada" | relay fs append -w ~/notes Journal/user/2026-11-22.md
              relay status -w ~/notes
              relay doctor
            """,
        version: "0.1.0",
        subcommands: [InitCommand.self, AskCommand.self, AgentsCommand.self, RunsCommand.self, ResumeCommand.self, ReplayCommand.self, StatusCommand.self, WatchCommand.self, ServeCommand.self, ServiceCommand.self, SyncCommand.self, SyncServeCommand.self, ConflictsCommand.self, FSCommand.self, MCPCommand.self, GCCommand.self, DoctorCommand.self]
    )
}

/// The options every command that works on a workspace shares.
struct WorkspaceOptions: ParsableArguments {
    @Option(name: [.customShort("w"), .long], help: ArgumentHelp(
        "The workspace folder (default: $RELAY_WORKSPACE, else the nearest folder at or above the current one with a .relay/ folder).",
        valueName: "dir"))
    var workspace: String?

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for another writer's lock before failing.", valueName: "seconds"))
    var lockTimeout: Double = 30

    func validate() throws {
        guard lockTimeout >= 0, lockTimeout.isFinite else {
            throw ValidationError("--lock-timeout must be a number of seconds, 0 or more")
        }
    }
}
