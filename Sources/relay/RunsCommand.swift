import ArgumentParser
import Foundation
import RelayEngine
import WorkspaceCore

struct RunsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List relay runs, or show one with per-agent timings, tokens and revisions.",
        discussion: """
            States: done, running (a process holds it), interrupted (killed or stopped; `relay \
            resume` continues it), cancelled (stopped by a person over HTTP; `relay resume` \
            continues it, the daemon does not), failed (the model failed; `relay resume` tries \
            again), skipped (the dropped file was not text). A prefix of a run id is enough.

            Examples:
              relay runs
              relay runs --limit 5
              relay runs 20261122-1540
              relay runs --json | jq '.[] | select(.state == "interrupted") | .id'
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Argument(help: ArgumentHelp("A run id (or a unique prefix) to show in detail.", valueName: "run"))
    var run: String?

    @Option(name: .long, help: ArgumentHelp("Show only the newest N runs.", valueName: "n"))
    var limit: Int = 20

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() async throws {
        let workspace = try options.open()
        let store = RunStore(workspace: workspace)
        if let run {
            let summary = try store.summary(try store.resolveID(run))
            if json { return try printJSON(summary) }
            print(Self.detail(summary))
            return
        }
        let all = try store.summaries()
        let shown = Array(all.suffix(max(0, limit)))
        if json { return try printJSON(shown) }
        guard !shown.isEmpty else {
            print("no runs yet — `relay ask \"…\"` starts one, and so does a file dropped under `relay watch`")
            return
        }
        var rows = [["RUN", "RELAY", "STATE", "STEPS", "REVISIONS", "TOKENS", "TIME", "REQUEST"]]
        for summary in shown {
            let request = summary.request.split(separator: "\n").first.map(String.init) ?? ""
            rows.append([summary.id, summary.relay, summary.state.rawValue, "\(summary.steps.count)", "\(summary.revisions)",
                         "\(summary.tokens)", Self.seconds(summary.milliseconds), String(request.prefix(48))])
        }
        print(Self.table(rows))
        if all.count > shown.count { print(Terminal.paint("(\(all.count - shown.count) older runs; --limit shows more)", .dim, stream: 1)) }
    }

    static func seconds(_ milliseconds: Int) -> String { String(format: "%.1f s", Double(milliseconds) / 1000) }

    static func table(_ rows: [[String]]) -> String {
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], displayWidth(cell)) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - displayWidth(cell))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// Terminal columns: emoji take two.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { width, character in
            let scalars = character.unicodeScalars
            let wide = scalars.contains { $0.properties.isEmojiPresentation } || scalars.contains("\u{FE0F}")
            return width + (wide ? 2 : 1)
        }
    }

    static func detail(_ summary: RunSummary) -> String {
        var lines = ["run \(summary.id) · relay \(summary.relay) · \(summary.state.rawValue) · started \(summary.created)"]
        lines.append("request: \(summary.request.split(separator: "\n").first ?? "")")
        lines.append("from: \(summary.source) · chat: \(summary.chatFile)")
        if let error = summary.error { lines.append("error: \(error)") }
        var rows = [["STEP", "AGENT", "TIME", "CALLS", "PROMPT", "COMPLETION", "REVISION"]]
        for step in summary.steps {
            rows.append(["\(step.step)", "\(step.emoji) \(step.name)", seconds(step.milliseconds), "\(step.modelCalls)",
                         "\(step.promptTokens)", "\(step.completionTokens)", step.revision ?? ""])
        }
        lines.append("")
        lines.append(table(rows))
        lines.append("")
        lines.append("total: \(seconds(summary.milliseconds)) of model and tool time · \(summary.tokens) tokens · \(summary.revisions) revision\(summary.revisions == 1 ? "" : "s")")
        if !summary.files.isEmpty { lines.append("files: \(summary.files.joined(separator: ", "))") }
        if summary.state.isResumable { lines.append("`relay resume \(summary.id)` continues it") }
        return lines.joined(separator: "\n")
    }
}

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
        let engine = RelayEngine(workspace: workspace, models: try .forWorkspace(workspace), logger: RelayLogging.logger)
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
        let engine = RelayEngine(workspace: workspace, models: ModelProvider(description: "replay") { _ in
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

struct AgentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agents",
        abstract: "Show each relay's roster, validated.",
        discussion: """
            Reads relay.json's relays and their roster files the way a run does; an invalid \
            roster is reported with its file, line, agent and field, and exit status 2.

            Examples:
              relay agents
              relay agents --relay research
              relay agents --json
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Option(name: .long, help: ArgumentHelp("Only this relay.", valueName: "name"))
    var relay: String?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() async throws {
        let workspace = try options.open()
        let configuration = try RelayConfiguration.load(from: workspace)
        var relays = configuration.relays
        if let relay {
            guard let found = configuration.relay(named: relay) else {
                throw CommandFailure(message: "no relay '\(relay)' in relay.json (relays: \(relays.map(\.name).joined(separator: ", ")))", status: 2)
            }
            relays = [found]
        }
        struct Shown: Encodable { var relay: String; var input: String; var roster: String; var description: String; var agents: [AgentDefinition] }
        var shown: [Shown] = []
        for relay in relays {
            let roster = try configuration.roster(for: relay, in: workspace)
            shown.append(Shown(relay: relay.name, input: relay.input.rawValue, roster: roster.file, description: relay.description, agents: roster.agents))
        }
        if json { return try printJSON(shown) }
        for (index, relay) in shown.enumerated() {
            if index > 0 { print("") }
            print(Terminal.paint("relay \(relay.relay)", .bold, stream: 1) + " · input: \(relay.input) · roster: \(relay.roster)" + (relay.description.isEmpty ? "" : " — \(relay.description)"))
            for agent in relay.agents {
                let tools = agent.allowedTools.map(\.rawValue).joined(separator: ", ")
                var line = "  \(agent.order). \(agent.emoji) \(agent.name) (\(agent.id)) · tools: \(tools.isEmpty ? "none" : tools)"
                if let output = agent.output { line += " · \(output.mode.rawValue) → \(output.path)" }
                if let model = agent.model { line += " · model: \(model)" }
                if let budget = agent.tokenBudget { line += " · budget: \(budget) tokens" }
                if agent.isReviewer { line += " · reviews" }
                if let count = agent.retrieve, count > 0 { line += " · retrieves \(count) lines" }
                if let extract = agent.extract { line += " · chooses: \(extract.rawValue)" }
                if !agent.isGrounded { line += " · grounding off" }
                print(line)
                let prompt = agent.systemPrompt.replacingOccurrences(of: "\n", with: " ")
                print(Terminal.paint("     \(prompt.prefix(110))\(prompt.count > 110 ? "…" : "")", .dim, stream: 1))
            }
        }
        print(Terminal.paint("\nall rosters valid", .green, stream: 1))
    }
}
