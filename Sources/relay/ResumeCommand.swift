import ArgumentParser
import Foundation
import RelayEngine
import WorkspaceCore

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Continue an interrupted or failed run where its journal ends.",
        discussion: """
            Finished agents are shown from the run journal and not asked again: no model call \
            whose reply was recorded is repeated. `relay watch` does the same for interrupted \
            runs when it starts.

            Examples:
              relay resume 20261122-154012-a3f9
              relay resume --all
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Argument(help: ArgumentHelp("The run id (or a unique prefix).", valueName: "run"))
    var run: String?

    @Flag(name: .long, help: "Resume every interrupted or failed run.")
    var all = false

    @Flag(name: .long, help: "Print the events as JSON lines instead of the group chat.")
    var json = false

    func validate() throws {
        guard (run == nil) != !all else { throw ValidationError("give a run id or --all") }
    }

    func run() async throws {
        let workspace = try options.open()
        let engine = RelayRunner(workspace: workspace, models: try .forWorkspace(workspace, logger: RelayLogging.logger), logger: RelayLogging.logger)
        let ids: [String]
        if let run {
            let id = try engine.store.resolveID(run)
            let summary = try engine.store.summary(id)
            if summary.state == .done || summary.state == .skipped {
                throw CommandFailure(message: "run \(id) is finished (\(summary.state.rawValue)); `relay runs \(id)` shows it, `relay replay \(id)` replays it", status: 2)
            }
            ids = [id]
        } else {
            ids = try engine.store.summaries().filter { $0.state.isResumable }.map(\.id)
            if ids.isEmpty { print("nothing to resume"); return }
        }
        for id in ids {
            try await RunInTerminal.run(engine, id: id, chat: GroupChat(style: GroupChat.style(json: json)))
        }
    }
}
