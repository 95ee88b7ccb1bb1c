import ArgumentParser
import WorkspaceCore
import WorkspaceSync

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a workspace from the template, without overwriting anything.",
        discussion: """
            Creates the folder if needed, the .relay/ state folder with a new replica id, and every \
            template file (context.md, relay.json, AgentConfiguration.json, Journal/, Research/, \
            Chats/) that is not already there. Safe to run again, and on a folder of existing notes.

            --new-replica is for a workspace copied with its .relay/ folder (cp -a, rsync, a \
            backup): it gives the copy a replica id of its own, which sync needs, and keeps its \
            history, so the first sync with the original merges from the bytes both had when the \
            copy was made. To start a replica on another machine or disk, `relay sync PEER` into \
            an empty or missing folder does it in one command.

            Examples:
              relay init ~/notes
              relay init --template ./my-template ~/projects/essay
              relay init --new-replica /media/usb/notes
            """
    )

    @Argument(help: ArgumentHelp("The folder to make a workspace (default: the current folder).", valueName: "dir"))
    var directory: String = "."

    @Option(help: ArgumentHelp("Use the files of this folder instead of the built-in template.", valueName: "dir"))
    var template: String?

    @Flag(help: "Give this copied workspace a replica id of its own, keeping its history.")
    var newReplica = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if newReplica && template != nil { throw ValidationError("--new-replica changes only the replica id; it takes no --template") }
    }

    func run() throws {
        if newReplica { return try becomeNewReplica() }
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

    /// `--new-replica`: a new id, the copy's index made this replica's own (`SyncIndex.becomeCopy`).
    private func becomeNewReplica() throws {
        let workspace = try Workspace.open(at: directory)
        let (previous, id) = try workspace.assignNewReplicaID()
        let recorded = try SyncIndex(workspace: workspace).becomeCopy(of: previous)
        if json {
            struct Output: Codable { var root, replicaID: String; var previousReplicaID: String?; var sharedFiles: Int }
            return try printJSON(Output(root: workspace.root, replicaID: id, previousReplicaID: previous, sharedFiles: recorded))
        }
        print("Workspace \(workspace.root) is now replica \(id)" + (previous.map { " (it was \($0))" } ?? ""))
        if let previous, recorded > 0 {
            print("  \(recorded) files recorded as shared with \(previous): the first sync with it merges from them")
        }
    }
}
