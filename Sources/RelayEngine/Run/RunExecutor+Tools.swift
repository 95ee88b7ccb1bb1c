import Foundation
import LanguageModels
import Logging
import WorkspaceCore

// RunExecutor: tool calls (journaled results, sandboxed files) and revision requests.

extension RunExecutor {
    struct ToolAnswer { var outcome: ToolOutcome; var milliseconds: Int }

    func toolResult(_ key: String, step: Int, agent: AgentDefinition, call: ToolCall, allowed: [AgentTool], limit: Int,
                            revisions: inout [Revision], outputs: [String: String], quiet: Bool) throws -> ToolAnswer {
        let recordedTool = recorded.tools[key]
        let tool = AgentTool(rawValue: call.name)
        let arguments = call.parsedArguments
        var outcome: ToolOutcome
        var milliseconds = recordedTool?.milliseconds ?? 0
        if let worker, Self.spawns(call.name) {
            // Issue 19: a worker that tries to plan, delegate or have another agent run is refused.
            let refusal = worker.spawnRefusal(agent: agent, tool: call.name)
            outcome = .failure(refusal.message)
            if !quiet { emit(.refused(step: step, agent: AgentInfo(agent), error: refusal)) }
        } else if tool == nil || !allowed.contains(tool!) {
            let may = allowed.map(\.rawValue).joined(separator: ", ")
            outcome = .failure(tool == nil ? "there is no tool named '\(call.name)' (yours: \(may.isEmpty ? "none" : may))"
                               : "\(agent.name) may not use \(call.name) (allowed: \(may.isEmpty ? "no tools" : may))")
        } else if arguments?.objectValue == nil {
            outcome = .failure("the arguments of \(call.name) are not a JSON object: \(call.arguments.prefix(200))")
        } else if tool == .requestRevision {
            let target = arguments?["targetAgentName"]?.stringValue ?? ""
            let ask = arguments?["revisionRequest"]?.stringValue ?? ""
            if target.isEmpty || ask.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                outcome = .failure("request_revision needs \"targetAgentName\" and \"revisionRequest\", both non-empty strings")
            } else {
                let wanted = target.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                let already = revisions.first { revision in agents.contains { $0.id == revision.target && ($0.name.lowercased() == wanted || $0.id.lowercased() == wanted) } }
                let decision = already != nil
                    ? (accepted: nil, reason: "already requested: \(target) will revise once, after you finish; add to your answer instead")
                    : decideRevision(target: target, request: ask, by: agent, outputs: outputs)
                if let accepted = decision.accepted { revisions.append(accepted) }
                if !quiet {
                    emit(.revisionRequested(step: step, by: AgentInfo(agent), target: target, request: ask, accepted: decision.accepted != nil, reason: decision.reason))
                }
                outcome = decision.accepted != nil
                    ? ToolOutcome(result: "Revision requested from \(target): they will run again after you finish.", isError: false)
                    : .failure(decision.reason ?? "refused")
            }
        } else if let recordedTool, mode == .live || AgentToolbox.isReadOnly(call.name) {
            // Done before the interruption (or, on replay, a read the recording answers).
            outcome = ToolOutcome(result: recordedTool.result ?? "", isError: recordedTool.isError ?? false)
            if let path = recordedTool.path, recordedTool.mode != nil { filesWritten.append(path) }
            return ToolAnswer(outcome: outcome, milliseconds: milliseconds)
        } else {
            if mode == .replay, let recordedTool, let path = recordedTool.path { try seed(path, before: recordedTool.before, mode: recordedTool.mode) }
            let clock = ContinuousClock.now
            let appendPath = tool == .appendFile ? arguments?["path"]?.stringValue : nil
            let appendBytes = AgentToolbox.appendBytes(arguments?["text"]?.stringValue ?? "")
            if mode == .live, let appendPath, let made = appendAlreadyMade(key, path: appendPath, bytes: appendBytes) {
                // Appended before a crash that came before its record: not again.
                outcome = ToolOutcome(result: "added \(appendBytes.count) bytes to \(made)", isError: false,
                                      effects: [FileEffect(path: made, mode: .append, before: nil, after: ContentHash(of: appendBytes).hex)])
            } else {
                if mode == .live, let appendPath { try recordIntent(key, path: appendPath) }
                outcome = AgentToolbox(workspace: workspace).run(tool!, arguments: arguments!, limit: limit)
            }
            let elapsed = ContinuousClock.now - clock
            if mode == .live { milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) }
            if mode == .replay {
                if let recordedTool, let effect = outcome.effects.first {
                    check(effect, against: recordedTool, what: effect.path, by: "\(call.name) in step \(step)")
                }
                // Replay reproduces the model's view exactly as recorded.
                if let recordedTool { outcome = ToolOutcome(result: recordedTool.result ?? "", isError: recordedTool.isError ?? false, effects: outcome.effects) }
            }
        }
        filesWritten += outcome.effects.map(\.path)
        if mode == .live, recordedTool == nil {
            var toolRecord = JournalRecord(.tool)
            toolRecord.key = key
            toolRecord.step = step
            toolRecord.agent = agent.id
            toolRecord.tool = call.name
            toolRecord.result = outcome.result
            toolRecord.isError = outcome.isError
            toolRecord.milliseconds = milliseconds
            if let effect = outcome.effects.first {
                toolRecord.path = effect.path
                toolRecord.mode = effect.mode.rawValue
                toolRecord.before = effect.before
                toolRecord.after = effect.after
            }
            try journal?.append(toolRecord)
        }
        return ToolAnswer(outcome: outcome, milliseconds: milliseconds)
    }

    /// The engine's rules for revisions: a known agent other than the asker that has spoken in
    /// this turn, and at most ``maximumRevisions`` a turn.
    func decideRevision(target: String, request: String, by agent: AgentDefinition, outputs: [String: String]) -> (accepted: Revision?, reason: String?) {
        let wanted = target.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard let found = agents.first(where: { $0.name.lowercased() == wanted || $0.id.lowercased() == wanted }) else {
            return (nil, "refused: there is no agent named '\(target)' (agents: \(agents.map(\.name).joined(separator: ", ")))")
        }
        guard found.id != agent.id else { return (nil, "refused: \(agent.name) cannot ask for a revision of their own work; answer with the corrected text instead") }
        guard outputs[found.id] != nil else { return (nil, "refused: \(found.name) has not spoken yet in this turn") }
        guard revisionsUsed < Self.maximumRevisions else {
            return (nil, "refused: the relay allows \(Self.maximumRevisions) revisions per turn and \(revisionsUsed) have been requested; finish with your own answer")
        }
        revisionsUsed += 1
        return (Revision(target: found.id, request: request), nil)
    }

    /// "REVISION for Wren: the second paragraph repeats the first." anywhere in a reply.
    static func writtenRevision(in text: String) -> (String, String)? {
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: CharacterSet(charactersIn: " *_>-`"))
            guard trimmed.lowercased().hasPrefix("revision for ") else { continue }
            let rest = trimmed.dropFirst("revision for ".count)
            guard let colon = rest.firstIndex(of: ":") else { continue }
            let name = rest[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: " *_`"))
            let ask = rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty, !ask.isEmpty, !name.contains(" ") { return (name, ask) }
        }
        return nil
    }
}
