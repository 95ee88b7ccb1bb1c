import ArgumentParser
import WorkspaceCore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a workspace from the template, without overwriting anything.",
        discussion: """
            Creates the folder if needed, the .relay/ state folder with a new replica id, and every \
            template file (context.md, relay.json, AgentConfiguration.json, Journal/, Research/, \
            Chats/) that is not already there. Safe to run again, and on a folder of existing notes.

            Examples:
              relay init ~/notes
              relay init --template ./my-template ~/projects/essay
            """
    )

    @Argument(help: ArgumentHelp("The folder to make a workspace (default: the current folder).", valueName: "dir"))
    var directory: String = "."

    @Option(help: ArgumentHelp("Use the files of this folder instead of the built-in template.", valueName: "dir"))
    var template: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() throws {
        let source = try template.map { try WorkspaceTemplate.load(from: $0) } ?? .embedded
        let (_, report) = try Workspace.initialize(at: directory, template: source)
        if json {
            try printJSON(InitOutput(root: report.root, replicaID: report.replicaID, created: report.created, kept: report.kept))
            return
        }
        let verb = report.wasWorkspace ? "Updated workspace" : "Created workspace"
        print("\(verb) \(report.root) (replica \(report.replicaID))")
        for path in report.created { print("  " + Terminal.paint("+ ", .green, stream: 1) + path) }
        for path in report.kept { print("  " + Terminal.paint("= ", .dim, stream: 1) + path + " (already there, kept)") }
    }

    struct InitOutput: Codable { var root, replicaID: String; var created, kept: [String] }
}
