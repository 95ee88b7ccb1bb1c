import ArgumentParser
import Foundation
import RelayEngine
import WorkspaceCore

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-run a recorded run offline against its recorded replies and compare the files.",
        discussion: """
            The run's agents run again with no model: each reply comes from the run journal, \
            files are written into a scratch folder starting from the versions the run started \
            from, and every model request and every file is compared with the recording. Exit \
            status 0 when all are identical, 1 when something differs — a golden test of a \
            roster and of Relay's prompts. With --current-roster the workspace's roster of today \
            is used, and the report shows which prompts your edit changed.

            Examples:
              relay replay 20261122-154012-a3f9
              relay replay 20261122-1540 --into /tmp/replayed --json
              relay replay 20261122-1540 --current-roster
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Argument(help: ArgumentHelp("The run id (or a unique prefix).", valueName: "run"))
    var run: String

    @Option(name: .long, help: ArgumentHelp("Keep the replayed files in this folder (default: a temporary folder, removed).", valueName: "dir"))
    var into: String?

    @Flag(name: .long, help: "Use the workspace's current roster instead of the recorded one.")
    var currentRoster = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func run() async throws {
        let workspace = try options.open()
        let engine = RelayRunner(workspace: workspace, models: ModelProvider(description: "replay") { _ in
            throw RelayError(.usage, "replay asks no model")
        }, logger: RelayLogging.logger)
        let id = try engine.store.resolveID(run)
        var roster: Roster?
        if currentRoster {
            let manifest = try engine.store.manifest(id)
            let relays = try RelayConfiguration.load(from: workspace)
            guard let relay = relays.relay(named: manifest.relay) else { throw CommandFailure(message: "relay.json has no relay '\(manifest.relay)' any more", status: 2) }
            roster = try relays.roster(for: relay, in: workspace)
        }
        let folder = into ?? NSTemporaryDirectory() + "relay-replay-\(id)-\(getpid())"
        if into == nil { try? FileManager.default.removeItem(atPath: folder) }
        defer { if into == nil { try? FileManager.default.removeItem(atPath: folder) } }
        let report = try await engine.replay(id, into: folder, roster: roster)
        if json {
            struct Check: Encodable { var what: String; var matches: Bool; var detail: String }
            struct Output: Encodable { var run: String; var matches: Bool; var folder: String?; var requests: [Check]; var files: [Check] }
            try printJSON(Output(run: id, matches: report.matches, folder: into,
                                 requests: report.requests.map { Check(what: $0.what, matches: $0.matches, detail: $0.detail) },
                                 files: report.files.map { Check(what: $0.what, matches: $0.matches, detail: $0.detail) }))
        } else {
            let sameRequests = report.requests.filter(\.matches).count
            print("replay of run \(id): \(sameRequests) of \(report.requests.count) model requests as recorded; "
                  + "\(report.files.filter(\.matches).count) of \(report.files.count) file changes identical")
            for check in report.requests where !check.matches { print("  ✗ \(check.what): \(check.detail)") }
            // One line per file: how many of its changes were identical.
            var order: [String] = []
            var byFile: [String: [ReplayReport.Check]] = [:]
            for check in report.files {
                if byFile[check.what] == nil { order.append(check.what) }
                byFile[check.what, default: []].append(check)
            }
            for file in order {
                let checks = byFile[file]!
                let failed = checks.filter { !$0.matches }
                if failed.isEmpty {
                    print("  ✓ \(file): \(checks.count == 1 ? checks[0].detail : "\(checks.count) changes, each \(checks[0].detail)")")
                } else {
                    for check in failed { print("  ✗ \(file): \(check.detail)") }
                }
            }
            if let into { print("replayed files are in \(into)") }
        }
        if !report.matches { throw CommandFailure(message: "the replay differs from the recording", status: 1) }
    }
}
