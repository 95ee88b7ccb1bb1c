import ArgumentParser
import Foundation
import WorkspaceCore
import WorkspaceSync

struct SyncServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-serve",
        abstract: "Serve a workspace to a `relay sync` at the other end of stdin/stdout.",
        discussion: """
            What `relay sync host:path` runs on the other machine through ssh; not for people.

            Examples:
              relay sync-serve --stdio ~/notes
            """,
        shouldDisplay: false
    )

    @Flag(help: "Speak the sync protocol on standard input and output.") var stdio = false
    @Flag(help: "Make a missing or empty folder a new replica first (what `relay sync` asks for).") var start = false
    @Argument(help: ArgumentHelp("The workspace to serve.", valueName: "dir")) var directory: String

    func validate() throws {
        if !stdio { throw ValidationError("only --stdio is supported") }
    }

    func run() throws { try Self.serve(directory, start: start) }

    /// Serves `directory` on standard input and output (also run without the argument parser:
    /// `CommandRunner.runSyncServeDirectly`). With `start`, a missing or empty folder is made a
    /// new replica first (`Workspace.openOrStartReplica`), and hello's answer says so.
    static func serve(_ directory: String, start: Bool = false) throws {
        var timings = SyncTimings("sync-serve")
        timings.mark("parsed")
        let path = NSString(string: directory).expandingTildeInPath
        let (workspace, started) = start ? try Workspace.openOrStartReplica(at: path) : (try Workspace.open(at: path), false)
        timings.mark("workspace opened")
        // Every sync asks for a refresh first: the walk begins while the index opens.
        let endpoint = try LocalEndpoint(workspace: workspace, walkAhead: true)
        endpoint.startedReplica = started
        timings.mark("index opened")
        try SyncServer.serve(endpoint)
    }
}
