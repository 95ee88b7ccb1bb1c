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
        let (shown, total) = try store.newestSummaries(limit)
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
        if total > shown.count { print(Terminal.paint("(\(total - shown.count) older runs; --limit shows more)", .dim, stream: 1)) }
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
