import Foundation
import LanguageModels
import RelayEngine

/// Shows a run's events in the terminal as a group chat: each agent's emoji and name in its
/// colour, its text streaming in, "→ handed off to …" between agents and "(revision requested
/// by …)" on revisions. Not a TTY (or NO_COLOR): plain text, one whole message at a time, no
/// escape codes. `--json`: one JSON object per event and line.
final class GroupChat: @unchecked Sendable {
    enum Style { case terminal, plain, json }

    let style: Style
    private let lock = NSLock()
    private var lastAgent: AgentInfo?
    private var atLineStart = true
    private var started = ContinuousClock.now
    private var agentsByID: [String: AgentInfo] = [:]
    private(set) var runID: String?
    private(set) var finalText: String?
    private var lastText: String?

    init(style: Style) { self.style = style }

    static func style(json: Bool) -> Style {
        if json { return .json }
        return Terminal.colourful ? .terminal : .plain
    }

    func show(_ event: RelayEvent) {
        lock.withLock { render(event) }
    }

    private func out(_ text: String) {
        guard !text.isEmpty else { return }
        Terminal.standardOutput(Array(text.utf8))
        atLineStart = text.hasSuffix("\n")
    }

    private func newline() { if !atLineStart { out("\n") } }

    // MARK: Colours

    private func paint(_ text: String, hex: String? = nil, bold: Bool = false, dim: Bool = false) -> String {
        guard style == .terminal else { return text }
        var codes: [String] = []
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if let hex, hex.count == 7, let value = Int(hex.dropFirst(), radix: 16) {
            codes.append("38;2;\((value >> 16) & 0xFF);\((value >> 8) & 0xFF);\(value & 0xFF)")
        }
        return codes.isEmpty ? text : "\u{1B}[\(codes.joined(separator: ";"))m\(text)\u{1B}[0m"
    }

    private func name(_ agent: AgentInfo) -> String {
        paint(agent.label, hex: agent.color, bold: true)
    }

    /// Text of an agent's message, indented under its name.
    private func body(_ text: String) -> String {
        let indent = "   "
        var result = ""
        for character in text {
            if atLineStartForBody { result += indent }
            result.append(character)
            atLineStartForBody = character == "\n"
        }
        return result
    }
    private var atLineStartForBody = true

    // MARK: Events

    /// Finished workers' messages, shown in plan order when the coordinator starts.
    private var workerResults: [AgentMessage] = []

    private func showWorkerResults() {
        guard !workerResults.isEmpty else { return }
        newline()
        for message in workerResults.sorted(by: { ($0.worker ?? 0) < ($1.worker ?? 0) }) {
            out("\n" + name(message.agent) + paint(" · worker \(message.worker ?? 0)", dim: true)
                + (message.subtask.map { paint(" · \($0)", dim: true) } ?? "") + "\n")
            atLineStartForBody = true
            let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
            out(body(text.isEmpty ? "(no answer)" : text) + "\n")
        }
        workerResults.removeAll()
    }

    /// On a terminal, "… thinking" stands under an agent's name until its first words arrive.
    private var thinking = false

    private func clearThinking() {
        guard thinking else { return }
        thinking = false
        out("\r\u{1B}[K")
        atLineStart = true
    }

    private func render(_ event: RelayEvent) {
        if style == .terminal {
            switch event {
            case .textDelta, .toolCall, .agentFinished, .note, .revisionRequested, .grounding, .final, .error,
                 .selected, .planned, .workerStarted, .refused: clearThinking()
            default: break
            }
        }
        if style == .json {
            out(event.json.jsonText + "\n")
            if case .final(let id, let text, _) = event { runID = id; finalText = text }
            if case .runStarted(let id, _, _, _, _) = event { runID = id }
            return
        }
        switch event {
        case .runStarted(let id, let relay, let request, let agents, let resumed):
            runID = id
            started = ContinuousClock.now
            for agent in agents { agentsByID[agent.id] = agent }
            let team = agents.map(\.label).joined(separator: "  ")
            out(paint("\(resumed ? "↻ resuming" : "🏃 relay") \(relay) · run \(id) · \(team)", dim: true) + "\n")
            let shown = request.split(separator: "\n", omittingEmptySubsequences: false).prefix(6).joined(separator: "\n   ")
            out("\n" + paint("👤 You", bold: true) + "\n   " + shown + (request.split(separator: "\n").count > 6 ? "\n   …" : "") + "\n")
        case .agentStarted(_, let agent, let by, let request):
            showWorkerResults()
            newline()
            if lastAgent != nil, by == nil {
                out(paint("   → handed off to ", dim: true) + name(agent) + "\n")
            }
            out("\n" + name(agent) + paint(" · \(agent.id)", dim: true))
            if let by {
                out(paint(" (revision requested by \(by.label))", hex: by.color))
                if let request { out("\n" + paint("   ✎ \(request)", dim: true)) }
            }
            out("\n")
            atLineStartForBody = true
            lastAgent = agent
            if style == .terminal {
                out(paint("   … thinking", dim: true))
                thinking = true
            }
        case .textDelta(_, _, let text):
            if style == .terminal { out(body(text)) }
        case .toolCall(_, let id, let tool, let arguments):
            guard style == .terminal || style == .plain else { return }
            newline()
            atLineStartForBody = true
            let args = arguments.count > 120 ? String(arguments.prefix(117)) + "…" : arguments
            out(paint("   🔧 \(agentsByID[id]?.name ?? id) calls \(tool) \(args)", dim: true) + "\n")
        case .toolResult(_, _, let tool, _, true) where tool == "request_revision":
            break  // the revision line above says why
        case .toolResult(_, _, let tool, let result, let isError):
            let first = result.split(separator: "\n").first.map(String.init) ?? ""
            let summary = isError ? first : "\(tool): \(result.count) characters"
            out(paint("   \(isError ? "⚠️ " : "↳") \(summary.prefix(160))", dim: !isError) + "\n")
        case .revisionRequested(_, let by, let target, let request, let accepted, let reason):
            newline()
            if accepted {
                out(paint("   ✋ \(by.name) asks \(target) for a revision: \(request)", hex: by.color) + "\n")
            } else {
                let why = (reason ?? "").replacingOccurrences(of: "refused: ", with: "")
                out(paint("   🚫 \(by.name) asked \(target.prefix(40)) for a revision — not done: \(why)", dim: true) + "\n")
            }
        case .agentFinished(let message) where message.worker != nil:
            // Workers finish in any order: a progress line now, their texts in plan order later.
            newline()
            let seconds = String(format: "%.1f", Double(message.milliseconds) / 1000)
            out(paint("   ✓ worker \(message.worker ?? 0) · \(message.agent.label)\(message.restored ? " · from the run journal" : "") · \(seconds) s · "
                      + "\(message.promptTokens) → \(message.completionTokens) tokens", dim: true) + "\n")
            workerResults.append(message)
        case .agentFinished(let message):
            lastText = message.text
            if message.restored {
                newline()
                if let previous = lastAgent, message.revisionRequestedBy == nil, previous.id != message.agent.id {
                    out(paint("   → handed off to ", dim: true) + name(message.agent) + "\n")
                }
                out("\n" + name(message.agent) + paint(" · \(message.agent.id) · from the run journal", dim: true)
                    + (message.revisionRequestedBy.map { paint(" (revision requested by \($0))", dim: true) } ?? "") + "\n")
                atLineStartForBody = true
                out(body(message.text.trimmingCharacters(in: .whitespacesAndNewlines)) + "\n")
                lastAgent = message.agent
            } else if style == .plain {
                atLineStartForBody = true
                let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
                out(body(text.isEmpty ? "(no answer)" : text) + "\n")
            } else if message.text.isEmpty {
                out(body("(no answer)"))
            }
            newline()
            let seconds = String(format: "%.1f", Double(message.milliseconds) / 1000)
            out(paint("   ⏱ \(seconds) s · \(message.promptTokens) → \(message.completionTokens) tokens"
                      + (message.modelCalls > 1 ? " · \(message.modelCalls) model calls" : "")
                      + (message.cuts.isEmpty ? "" : " · cut: \(message.cuts.joined(separator: "; "))"), dim: true) + "\n")
        case .grounding(_, let agent, let note):
            newline()
            let found = note.unsupported.prefix(8).joined(separator: ", ") + (note.unsupported.count > 8 ? ", …" : "")
            switch note.action {
            case .revisionRequested:
                out(paint("   🧭 Relay's check: \(found) — not in \(agent.name)'s inputs; asking \(agent.name) for a revision", hex: "#7F8C8D") + "\n")
            case .removed:
                let count = note.removed.count
                out(paint("   🧭 Relay's check: \(found) — still not in the inputs; removed \(count) sentence\(count == 1 ? "" : "s")", hex: "#7F8C8D") + "\n")
            case .marked:
                out(paint("   🧭 Relay's check: \(found) — in none of the sources; kept, marked as the model's own", hex: "#7F8C8D") + "\n")
            }
        case .selected(let agents, let reason):
            newline()
            out(paint("   🧭 Relay chose ", dim: true) + agents.map(name).joined(separator: ", ") + paint(" — \(reason)", dim: true) + "\n")
        case .planned(_, let subtasks):
            newline()
            out(paint("   🗺  plan: \(subtasks.count) subtask\(subtasks.count == 1 ? "" : "s"), one worker each", dim: true) + "\n")
        case .workerStarted(_, let number, let count, let agent, let subtask):
            newline()
            lastAgent = agent
            let task = subtask.count > 90 ? String(subtask.prefix(89)) + "…" : subtask
            out(paint("   ⇉ worker \(number)/\(count) · ", dim: true) + name(agent) + paint(" · \(task)", dim: true) + "\n")
        case .refused(_, let agent, let error):
            newline()
            out(paint("   🚫 \(agent.name): \(error.message.replacingOccurrences(of: "refused: ", with: "")) [\(error.code.rawValue)]", dim: true) + "\n")
        case .note(let text):
            newline()
            out(paint("   ℹ️  \(text)", dim: true) + "\n")
        case .final(let id, let text, let files):
            showWorkerResults()
            finalText = text
            newline()
            if !text.isEmpty, text != lastText {
                // The answer is the working agent's text, not the reviewer's verdict that came last.
                out("\n" + paint("💬 Answer", bold: true) + "\n")
                atLineStartForBody = true
                out(body(text.trimmingCharacters(in: .whitespacesAndNewlines)) + "\n")
            }
            let elapsed = ContinuousClock.now - started
            let seconds = String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            out("\n" + paint("✅ done in \(seconds) s · run \(id)", bold: true) + "\n")
            if !files.isEmpty { out(paint("   files: \(files.joined(separator: ", "))", dim: true) + "\n") }
        case .error:
            // The command reports it on standard error, with what to do.
            newline()
        }
    }
}
