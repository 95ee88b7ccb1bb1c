import Foundation
import LanguageModels
import Logging
import WorkspaceCore

// RunExecutor: the files a run writes — the chat file and transcript, declared outputs,
// context.md's knowledge lines — each an effect journaled before it is made and checked in replay.

extension RunExecutor {
    /// The chat file and transcript are rewritten after an agent finishes when the last
    /// rewrite is at least this old (so a person watching sees each answer arrive with a real
    /// model, while a fast model's run writes them once, at the end). A test that needs the
    /// rewrite after every agent sets it to zero for its task
    /// (`RunExecutor.$conversationInterval.withValue(.zero) { … }`) instead of sleeping past it.
    @TaskLocal static var conversationInterval = Duration.milliseconds(250)

    func writeConversation(after step: Int, finished: Bool) throws {
        let suffix = finished ? "final" : String(step)
        if !finished {
            switch mode {
            case .replay:
                // Do what the recorded run did.
                guard recorded.effects["transcript/\(suffix)"] != nil || recorded.effects["chat/\(suffix)"] != nil else { return }
            case .live:
                guard recorded.effects["transcript/\(suffix)"] == nil else { break }
                guard ContinuousClock.now - lastConversationWrite >= Self.conversationInterval else { return }
            }
        }
        defer { lastConversationWrite = ContinuousClock.now }
        let messages = self.messages, manifest = self.manifest
        try effect("transcript/\(suffix)", path: manifest.transcriptFile, mode: .update) { old in
            Conversation.updatingTranscript(old, manifest: manifest, messages: messages)
        }
        try effect("chat/\(suffix)", path: manifest.chatFile, mode: .update) { old in
            Conversation.updatingChat(old, manifest: manifest, messages: messages, finished: finished)
        }
    }

    func writeDeclaredOutputs(_ outputs: [String: String]) throws {
        var values = manifest.placeholderValues
        // What a knowledge line links to: the file another agent of the run writes (the
        // summary), else the file that started the run.
        let written = agents.compactMap { agent -> String? in
            guard let output = agent.output, output.mode == .write, outputs[agent.id] != nil else { return nil }
            var values = manifest.placeholderValues
            values["agent"] = agent.id
            return output.resolvedPath(values)
        }
        for agent in agents {
            guard let output = agent.output, let text = outputs[agent.id] else { continue }
            values["agent"] = agent.id
            let path = output.resolvedPath(values)
            switch output.mode {
            case .write:
                var bytes = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
                bytes.append(0x0A)
                try effect("output/\(agent.id)", path: path, mode: .write) { _ in bytes }
            case .append:
                let entry = "\n## \(manifest.localTime.replacingOccurrences(of: "-", with: ":")) · \(agent.label) · \(manifest.relay) (run \(manifest.id))\n\n"
                    + text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
                try effect("output/\(agent.id)", path: path, mode: .append) { _ in Array(entry.utf8) }
            case .context:
                guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, !text.hasPrefix("Not found:") else { continue }
                try addKnowledge(text, heading: output.path, link: written.first ?? manifest.triggerPath ?? manifest.chatFile, agent: agent)
            }
        }
    }

    /// context.md's size budget in bytes: about half the window (at four bytes a token). Each
    /// prompt gets what fits of it; search reaches all of it.
    static func contextBudget(_ contextTokens: Int) -> Int { contextTokens * 2 }

    /// A knowledge line in context.md through the coordinated update (a person's edit made
    /// meanwhile is kept); the oldest lines past the budget go to `Research/index.md`, after it.
    func addKnowledge(_ text: String, heading: String, link: String, agent: AgentDefinition) throws {
        let line = KnowledgeSection.line(name: manifest.name, link: link, text: text)
        let budget = Self.contextBudget(manifest.contextTokens)
        let moved = MovedLines()
        try effect("output/\(agent.id)", path: "context.md", mode: .update, detail: { moved.lines.joined(separator: "\n") }) { old in
            let current = String(decoding: old ?? [], as: UTF8.self)
            let moving = KnowledgeSection.overflow(adding: line, to: current, heading: heading, budget: budget)
            moved.lines = moving
            return Array(KnowledgeSection.adding(line, to: current, heading: heading, removing: Set(moving)).utf8)
        }
        // Resumed after the update: the journal says what it moved.
        if moved.lines.isEmpty, let recordedDetail = recorded.effects["output/\(agent.id)"]?.message, !recordedDetail.isEmpty {
            moved.lines = recordedDetail.components(separatedBy: "\n")
        }
        guard !moved.lines.isEmpty else { return }
        let index = "Research/index.md"
        let header = (try? workspace.resolve(index).exists) == true ? "" : "# Research index\n\nOlder entries moved here from context.md to keep it within its size budget.\n\n"
        try effect("index/\(agent.id)", path: index, mode: .append) { _ in Array((header + moved.lines.joined(separator: "\n") + "\n").utf8) }
    }

    final class MovedLines: @unchecked Sendable { var lines: [String] = [] }

    /// A line in the agents' journal, `Journal/agent/{date}.md`.
    func journalLine(_ line: String) throws {
        try effect("journal", path: "Journal/agent/\(manifest.localDate).md", mode: .append) { _ in Array((line + "\n").utf8) }
    }

    /// Changes a file once per key: done now unless the journal says it was done before the
    /// interruption; on replay, done in the scratch folder from the recorded starting version
    /// and compared with the recorded result.
    func effect(_ key: String, path: String, mode effectMode: FileEffect.Mode, detail: (() -> String?)? = nil,
                        _ transform: @escaping ([UInt8]?) -> [UInt8]) throws {
        let done = recorded.effects[key]
        if mode == .live, done != nil { filesWritten.append(path); return }
        if mode == .replay {
            guard let done else {
                report.files.append(.init(what: path, matches: false, detail: "the replay wrote \(path) (\(key)) and the recording did not"))
                return
            }
            try seed(path, before: done.before, mode: done.mode)
        }
        let result: FileEffect
        do {
            switch effectMode {
            case .write:
                let written = try workspace.write(path, bytes: transform(nil), operation: "relay")
                result = FileEffect(path: written.path, mode: .write, before: written.replaced?.hex, after: written.hash.hex)
            case .update:
                let written = try workspace.update(path, operation: "relay", transform)
                result = FileEffect(path: written.path, mode: .update, before: written.replaced?.hex, after: written.hash.hex)
            case .append:
                let bytes = transform(nil)
                if mode == .live, let made = appendAlreadyMade(key, path: path, bytes: bytes) {
                    result = FileEffect(path: made, mode: .append, before: nil, after: ContentHash(of: bytes).hex)
                } else {
                    if mode == .live { try recordIntent(key, path: path) }
                    let appended = try workspace.append(path, bytes: bytes, wholeLines: false)
                    result = FileEffect(path: appended.path, mode: .append, before: nil, after: ContentHash(of: bytes).hex)
                }
            }
        } catch let error as WorkspaceError {
            // A declared output into a refused path is the roster's fault, not the run's.
            if key.hasPrefix("output/") {
                emit(.note("could not write the declared output \(path): \(error.message)"))
                return
            }
            throw error
        }
        filesWritten.append(result.path)
        if mode == .replay, let done {
            check(result, against: done, what: path)
            return
        }
        var effectRecord = JournalRecord(.effect)
        effectRecord.key = key
        effectRecord.path = result.path
        effectRecord.mode = result.mode.rawValue
        effectRecord.before = result.before
        effectRecord.after = result.after
        effectRecord.message = detail?()
        try journal?.append(effectRecord)
    }

    /// Records, before an append, the size the file has: if the run dies after the append and
    /// before the append's own record, resume finds the bytes instead of appending them twice.
    func recordIntent(_ key: String, path: String) throws {
        guard let resolved = try? workspace.resolve(path) else { return }  // the append itself says why
        var intent = JournalRecord(.intent)
        intent.key = key
        intent.path = resolved.relative
        intent.offset = workspace.stamp(ofFileAt: resolved.relative)?.size ?? 0
        try journal?.append(intent)
    }

    /// The path, if an append recorded as intended before an interruption is already in the
    /// file: `bytes` at or after the size the file had then.
    func appendAlreadyMade(_ key: String, path: String, bytes: [UInt8]) -> String? {
        guard let intent = recorded.intents[key], let offset = intent.offset, let relative = intent.path, !bytes.isEmpty,
              let content = try? workspace.read(relative), content.count >= offset + bytes.count else { return nil }
        return content[offset...].firstRange(of: bytes) != nil ? relative : nil
    }

    func check(_ effect: FileEffect, against recorded: JournalRecord, what: String, by: String? = nil) {
        let same = effect.after == recorded.after
        let detail = same ? (effect.mode == .append ? "same bytes appended" : "byte for byte")
            : "replay gave \(effect.after.prefix(12)), the recording \(recorded.after?.prefix(12) ?? "nothing")"
        report.files.append(.init(what: what, matches: same, detail: by.map { "\($0): \(detail)" } ?? detail))
    }

    /// Puts the version an effect started from into the replay folder.
    func seed(_ path: String, before: String?, mode effectMode: String?) throws {
        guard effectMode != FileEffect.Mode.append.rawValue else { return }
        let target = try workspace.resolve(path)
        guard let before else {
            if target.exists { _ = try workspace.remove(path, operation: "replay") }
            return
        }
        if target.exists, (try? workspace.hash(path).hex) == before { return }
        guard let source, let hash = ContentHash(hex: before), let bytes = try? source.objects.load(hash) else {
            report.files.append(.init(what: path, matches: false, detail: "the version \(before.prefix(12)) it started from is not in the object store"))
            return
        }
        try workspace.write(path, bytes: bytes, operation: "replay")
    }

    func record(_ record: JournalRecord, state: String) throws {
        guard mode == .live, recorded.ended == nil else { return }
        var record = record
        record.state = state
        record.started = Self.timestamp()
        try journal?.append(record)
    }
}
