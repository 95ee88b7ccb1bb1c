import Foundation
import LanguageModels

/// A conversation's two files in `Chats/`: the transcript `NAME.json` (every message with its
/// agent, tools, tokens and timings — what sync merges by message id) and the chat `NAME.md`
/// a person reads and writes in. A message written at the end of `NAME.md` starts the next
/// turn; the agents' answers appear under it, between markers:
///
/// ```
/// What should I pack for two days of hiking?
///
/// <!-- relay:turn 20261122-154012-a3f9 -->
/// ### 📋 Paige · planner
/// …
/// <!-- relay:end 20261122-154012-a3f9 · write your next message below this line -->
/// ```
enum Conversation {
    static func chatPath(_ conversation: String) -> String { "Chats/\(conversation).md" }
    /// `Chats/NAME.md` → `Chats/NAME.json`.
    static func transcriptPath(forChat chat: String) -> String {
        (chat.hasSuffix(".md") ? String(chat.dropLast(3)) : chat) + ".json"
    }

    static let endMarkerPrefix = "<!-- relay:end "
    static func turnMarker(_ run: String) -> String { "<!-- relay:turn \(run) -->" }
    static func endMarker(_ run: String) -> String { "<!-- relay:end \(run) · write your next message below this line -->" }

    /// The person's newest message in a chat file: the text after the last turn's end marker
    /// (the whole file when no turn has been answered yet); nil when there is none.
    static func newMessage(in text: String) -> String? {
        var tail = Substring(text)
        if let end = text.range(of: endMarkerPrefix, options: .backwards) {
            tail = text[end.upperBound...]
            if let newline = tail.firstIndex(of: "\n") { tail = tail[tail.index(after: newline)...] } else { tail = "" }
        }
        let message = tail.trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? nil : message
    }

    /// The chat's last answered exchange: the person's message before the last finished turn
    /// and the answer that turn gave (its last section) — what a follow-up question needs.
    static func lastExchange(in text: String) -> RunManifest.Exchange? {
        guard let end = text.range(of: endMarkerPrefix, options: .backwards) else { return nil }
        let head = text[..<end.lowerBound]
        guard let turn = head.range(of: "<!-- relay:turn ", options: .backwards) else { return nil }
        let block = head[turn.upperBound...]
        // The person's message: after the turn before (or the file's start), up to this turn.
        let before = text[..<turn.lowerBound]
        var messageStart = before.startIndex
        if let previousEnd = before.range(of: endMarkerPrefix, options: .backwards) {
            messageStart = before[previousEnd.upperBound...].firstIndex(of: "\n").map { before.index(after: $0) } ?? previousEnd.upperBound
        }
        let message = before[messageStart...].trimmingCharacters(in: .whitespacesAndNewlines)
        guard let lastSection = block.range(of: "\n### ", options: .backwards) else { return nil }
        var answer = block[lastSection.upperBound...]
        if let newline = answer.firstIndex(of: "\n") { answer = answer[answer.index(after: newline)...] } else { answer = "" }
        let kept = answer.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("_… the relay is still working") }.joined(separator: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !message.isEmpty, !kept.isEmpty else { return nil }
        return RunManifest.Exchange(message: message, answer: kept)
    }

    /// A conversation name from a message: "2026-11-22-what-should-i-pack".
    static func name(for message: String, date: String) -> String {
        let words = message.lowercased().split { !$0.isLetter && !$0.isNumber }.prefix(6)
        let slug = words.joined(separator: "-").unicodeScalars.filter { $0.isASCII }.map(String.init).joined()
        let trimmed = String(slug.prefix(48)).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return trimmed.isEmpty ? "\(date)-chat" : "\(date)-\(trimmed)"
    }

    // MARK: The transcript

    static func userMessageObject(_ manifest: RunManifest) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string("\(manifest.id)/00-request"), "time": .string(manifest.created), "turn": .string(manifest.id),
            "role": "user", "relay": .string(manifest.relay), "text": .string(manifest.shownRequest ?? manifest.request),
            "source": .string(manifest.triggerPath ?? manifest.source.rawValue),
        ]
        if let analysis = manifest.analysis, manifest.document == nil {
            object["kind"] = .string(analysis.kind.rawValue)
            object["kindWhy"] = .string(analysis.shown)
        }
        return .object(object)
    }

    static func agentMessageObject(_ message: AgentMessage, manifest: RunManifest, messages: [AgentMessage]) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string("\(manifest.id)/\(message.step + 1 < 10 ? "0" : "")\(message.step + 1)"), "time": .string(message.started),
            "turn": .string(manifest.id), "role": "agent", "relay": .string(manifest.relay),
            "agent": ["id": .string(message.agent.id), "name": .string(message.agent.name), "emoji": .string(message.agent.emoji), "color": .string(message.agent.color)],
            "text": .string(message.text), "step": .number(Double(message.step)),
            "tokens": ["prompt": .number(Double(message.promptTokens)), "completion": .number(Double(message.completionTokens))],
            "milliseconds": .number(Double(message.milliseconds)), "modelCalls": .number(Double(message.modelCalls)),
        ]
        if let by = message.revisionRequestedBy { object["revisionRequestedBy"] = .string(by) }
        if let request = message.revisionRequest { object["revisionRequest"] = .string(request) }
        if let worker = message.worker { object["worker"] = .number(Double(worker)) }
        if let subtask = message.subtask { object["subtask"] = .string(subtask) }
        if let why = message.selectedBy { object["selectedBy"] = .string(why) }
        if let grounding = message.grounding {
            object["grounding"] = ["unsupported": .array(grounding.unsupported.map { .string($0) }), "action": .string(grounding.action.rawValue),
                                   "removed": .array(grounding.removed.map { .string($0) })]
        }
        if manifest.roster.first(where: { $0.id == message.agent.id })?.isReviewer == true { object["verdict"] = true }
        if let answer = RunExecutor.answer(of: messages, agents: manifest.runningAgents), answer.step == message.step { object["answer"] = true }
        if !message.toolCalls.isEmpty {
            object["toolCalls"] = .array(message.toolCalls.map {
                ["name": .string($0.name), "arguments": .string($0.arguments), "result": .string($0.result), "error": .bool($0.isError)]
            })
        }
        if !message.cuts.isEmpty { object["cuts"] = .array(message.cuts.map { .string($0) }) }
        return .object(object)
    }

    /// The transcript with this run's messages replaced by `messages` (so writing it again
    /// after a resume changes nothing), ordered by (time, id) as sync orders them.
    static func updatingTranscript(_ old: [UInt8]?, manifest: RunManifest, messages: [AgentMessage]) -> [UInt8] {
        var root: [String: JSONValue] = ["conversation": .string(manifest.conversation), "format": "relay-transcript-1"]
        var existing: [JSONValue] = []
        if let old, !old.isEmpty, let value = try? JSONDecoder().decode(JSONValue.self, from: Data(old)), let object = value.objectValue {
            root = object
            existing = object["messages"]?.arrayValue ?? []
        }
        existing.removeAll { $0["turn"]?.stringValue == manifest.id }
        existing.append(userMessageObject(manifest))
        existing += messages.map { agentMessageObject($0, manifest: manifest, messages: messages) }
        existing.sort { lhs, rhs in
            let l = (lhs["time"]?.stringValue ?? "", lhs["id"]?.stringValue ?? ""), r = (rhs["time"]?.stringValue ?? "", rhs["id"]?.stringValue ?? "")
            return l < r
        }
        root["messages"] = .array(existing)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var bytes = Array((try? encoder.encode(JSONValue.object(root))) ?? Data("{}".utf8))
        bytes.append(0x0A)
        return bytes
    }

    // MARK: The chat file

    /// The chat file with this run's answers in place: replacing the run's earlier block, or
    /// inserted after the person's message, or (when that message is gone) at the end.
    static func updatingChat(_ old: [UInt8]?, manifest: RunManifest, messages: [AgentMessage], finished: Bool) -> [UInt8] {
        let text = String(decoding: old ?? [], as: UTF8.self)
        let block = renderBlock(manifest: manifest, messages: messages, finished: finished)
        let begin = turnMarker(manifest.id)
        if let start = text.range(of: begin) {
            let endPrefix = endMarkerPrefix + manifest.id
            let stop: String.Index
            if let end = text.range(of: endPrefix, range: start.upperBound..<text.endIndex) {
                stop = text[end.upperBound...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            } else {
                stop = text.endIndex
            }
            return Array((text[..<start.lowerBound] + block + text[stop...]).utf8)
        }
        if text.isEmpty {
            return Array(((manifest.shownRequest ?? manifest.request) + "\n\n" + block).utf8)
        }
        // After the person's message (the first time this run writes).
        let searchFrom = text.range(of: endMarkerPrefix, options: .backwards).map { $0.upperBound } ?? text.startIndex
        let request = manifest.request.trimmingCharacters(in: .whitespacesAndNewlines)
        if !request.isEmpty, let found = text.range(of: request, range: searchFrom..<text.endIndex) {
            let lineEnd = text[found.upperBound...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            var head = String(text[..<lineEnd])
            if !head.hasSuffix("\n") { head += "\n" }
            return Array((head + "\n" + block + text[lineEnd...]).utf8)
        }
        var head = text
        if !head.hasSuffix("\n") { head += "\n" }
        return Array((head + "\n" + block).utf8)
    }

    static func renderBlock(manifest: RunManifest, messages: [AgentMessage], finished: Bool) -> String {
        var lines: [String] = [turnMarker(manifest.id)]
        if let analysis = manifest.analysis, manifest.document == nil {
            lines += ["> 🧭 \(analysis.shown)", ""]
        }
        func body(_ text: String) -> String {
            let body = text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "<!--", with: "&lt;!--")
            return body.isEmpty ? "_(no answer)_" : body
        }
        for message in messages {
            var heading = "### \(message.agent.label) · \(message.agent.id)"
            if manifest.roster.first(where: { $0.id == message.agent.id })?.isReviewer == true { heading += " · verdict" }
            if let by = message.revisionRequestedBy { heading += " · revision requested by \(by)" }
            if let worker = message.worker { heading += " · worker \(worker)" }
            if let why = message.selectedBy { heading += " · selected by \(why)" }
            lines.append(heading)
            lines.append("")
            if let subtask = message.subtask {
                lines.append("> Subtask \(message.worker ?? 0): \(subtask.replacingOccurrences(of: "\n", with: " "))")
                lines.append("")
            }
            if let request = message.revisionRequest {
                lines.append("> \(request.replacingOccurrences(of: "\n", with: "\n> "))")
                lines.append("")
            }
            lines.append(body(message.text))
            lines.append("")
            if let grounding = message.grounding, grounding.action == .revisionRequested {
                lines.append("> 🧭 Relay's check: \(grounding.request)")
                lines.append("")
            }
        }
        if !finished {
            lines.append("_… the relay is still working …_")
            lines.append("")
        } else if manifest.source != .file, let answer = RunExecutor.answer(of: messages, agents: manifest.runningAgents), answer.step != messages.last?.step {
            // The turn ends with its answer, not with a verdict or an earlier agent's revision.
            lines.append("### 💬 Answer · \(answer.agent.label)")
            lines.append("")
            lines.append(body(answer.text))
            lines.append("")
        }
        lines.append(endMarker(manifest.id))
        return lines.joined(separator: "\n") + "\n"
    }
}
