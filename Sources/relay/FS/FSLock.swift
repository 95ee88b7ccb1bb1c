import ArgumentParser
import Foundation
import WorkspaceCore

struct FSLock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Run a command while holding a file's coordinated-write lock.",
        discussion: """
            Like flock(1), but on the lock Relay's own writers take, so agents, sync and other \
            `relay fs` commands wait while COMMAND runs. The lock is released when COMMAND ends, or \
            by the kernel if this process is killed. Exits with COMMAND's status.

            Examples:
              relay fs lock context.md -- vim context.md
              relay fs lock --lock-timeout 5 Journal/user/today.md -- ./rotate.sh
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, e.g. relay fs lock notes.md -- sleep 5") }
    }

    func run() throws {
        let workspace = try options.open()
        let status: Int32 = try workspace.withLock(target.path) {
            // With this terminal's streams and in its process group: Ctrl-C reaches the command.
            do { return try ChildProcess.runAttached(command) } catch let error as WorkspaceError {
                throw CommandFailure(message: error.message)
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
