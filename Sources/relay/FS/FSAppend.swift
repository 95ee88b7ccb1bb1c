import ArgumentParser
import WorkspaceCore

struct FSAppend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "append",
        abstract: "Append standard input to a file as whole lines.",
        discussion: """
            Takes the file's lock, appends in one write and fsyncs. A newline is added where \
            needed so entries never run together; appends from many processes never interleave.

            Examples:
              echo "- 14:02 read the llama paper" | relay fs append Journal/user/2026-11-22.md
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @OptionGroup var durability: DurabilityOptions
    @Flag(help: "Append the bytes exactly as given, without adding newlines.") var raw = false

    func run() throws {
        let workspace = try options.open(durable: !durability.noDurable)
        let input = try Terminal.readStandardInput()
        try workspace.append(target.path, bytes: input, wholeLines: !raw)
    }
}
