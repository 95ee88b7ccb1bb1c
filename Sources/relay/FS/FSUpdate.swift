import ArgumentParser
import Foundation
import WorkspaceCore

struct FSUpdate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Rewrite a file through a command, safely against other writers and editors.",
        discussion: """
            Runs COMMAND with the file's content on standard input and replaces the file with its \
            standard output, under the file's lock. If somebody changes the file meanwhile (an \
            editor takes no lock), the command runs again on the new content, so their edit is \
            never lost. A missing file gives the command empty input. A command that fails changes \
            nothing.

            Examples:
              relay fs update notes.md -- sed 's/teh/the/g'
              relay fs update counter.txt -- sh -c 'read n; echo $((n + 1))'
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @OptionGroup var durability: DurabilityOptions
    @Flag(help: "Print the result as JSON.") var json = false
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The filter command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the filter command after --, e.g. relay fs update notes.md -- sed 's/a/b/'") }
    }

    func run() throws {
        let workspace = try options.open(durable: !durability.noDurable)
        let result = try workspace.update(target.path) { old in try Filter.run(command, input: old ?? []) }
        try report(result, json: json)
    }
}

/// Runs a command as a filter: bytes in on stdin, bytes out from stdout.
enum Filter {
    static func run(_ command: [String], input: [UInt8]) throws -> [UInt8] {
        // The input is fed on another thread while the output is read, so a filter that writes
        // before it has read all its input cannot deadlock against us.
        let finished: ChildProcess.Finished
        do { finished = try ChildProcess.run(command, input: input) } catch let error as WorkspaceError {
            throw CommandFailure(message: error.message)
        }
        guard finished.status == 0 else {
            let detail = String(decoding: finished.errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw CommandFailure(message: "\(command.joined(separator: " ")) failed (status \(finished.status)); the file was not changed" + (detail.isEmpty ? "" : ": " + detail))
        }
        return finished.output
    }
}
