import ArgumentParser
import WorkspaceCore

struct FSWrite: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Replace a file with standard input, atomically.",
        discussion: """
            Readers see the old content or the new, never a mix, also if the process is killed or \
            the power fails. The replaced version is kept; folders are created as needed.

            Examples:
              echo "# Llamas" | relay fs write Research/llamas/summary.md
              relay fs write context.md < context.new.md
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @OptionGroup var durability: DurabilityOptions
    @Flag(help: "Print the result as JSON.") var json = false

    func run() throws {
        let workspace = try options.open(durable: !durability.noDurable)
        let input = try Terminal.readStandardInput()
        let result = try workspace.write(target.path, bytes: input)
        try report(result, json: json)
    }
}

/// Prints what a write, update or restore did.
func report(_ result: Workspace.WriteResult, json: Bool) throws {
    if json {
        struct Output: Codable { var path, version: String; var size: Int; var replaced: String?; var attempts: Int }
        return try printJSON(Output(path: result.path, version: result.hash.hex, size: result.size,
                                    replaced: result.replaced?.hex, attempts: result.attempts))
    }
    var line = "\(result.path): \(result.size) bytes, version \(result.hash.short)"
    if let replaced = result.replaced { line += " (replaced \(replaced.short), kept)" }
    Terminal.standardError(line + "\n")
}
