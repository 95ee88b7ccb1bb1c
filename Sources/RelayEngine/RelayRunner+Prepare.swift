import Foundation
import LanguageModels
import Logging
import WorkspaceCore

/// Preparing runs: a question from `relay ask` or a chat file, a file dropped under a trigger —
/// everything a run starts from, written to `run.json` before the first model call.
extension RelayRunner {
    // MARK: Preparing runs

    /// A run for `relay ask`: `message` to the relay (default: `chat`), or to one agent.
    /// - parameter conversation: continue `Chats/NAME.md` instead of starting a new one.
    /// - throws: `RelayError` `.notFound`/`.usage` for an unknown relay or agent,
    ///   `WorkspaceError` `.invalidInput` for an invalid relay.json or roster.
    public func prepare(ask message: String, relay relayName: String? = nil, agent: String? = nil, conversation: String? = nil) throws -> RunManifest {
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw RelayError(.usage, "the message is empty; say what you want, e.g. relay ask \"Summarise context.md\"") }
        let configuration = try RelayConfiguration.load(from: workspace)
        let (relay, roster, note) = try relayAndRoster(relayName, configuration: configuration)
        var single: String?
        if let agent {
            guard let found = roster.agent(named: agent) else {
                throw RelayError(.usage, "no agent '\(agent)' in \(roster.file) (agents: \(roster.agents.map { "\($0.name) (\($0.id))" }.joined(separator: ", ")))")
            }
            single = found.id
        }
        let now = Date()
        let (date, time) = Self.localDateAndTime(now)
        var name: String
        if let conversation {
            name = conversation.hasSuffix(".md") ? String(conversation.dropLast(3)) : conversation
            if name.hasPrefix("Chats/") { name = String(name.dropFirst(6)) }
            guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
                throw RelayError(.usage, "--chat '\(conversation)': give the name of a chat in Chats/, e.g. weekend-trip")
            }
        } else {
            name = Conversation.name(for: text, date: date)
            var candidate = name, number = 2
            while (try? workspace.resolve(Conversation.chatPath(candidate)).exists) == true
                || (try? workspace.resolve(Conversation.transcriptPath(forChat: Conversation.chatPath(candidate))).exists) == true {
                candidate = "\(name)-\(number)"
                number += 1
            }
            name = candidate
        }
        let chatFile = Conversation.chatPath(name)
        _ = try workspace.resolve(chatFile)  // the sandbox has its say before the run exists
        var manifest = RunManifest(
            id: RunStore.makeID(now), relay: relay.name, created: RunExecutor.timestamp(now), localDate: date, localTime: time, source: .ask,
            request: text, conversation: name, chatFile: chatFile, name: name, roster: roster.agents, rosterFile: roster.file,
            singleAgent: single, context: readContext(), contextTokens: configuration.contextTokens, model: models.description)
        manifest.inputNote = note
        (manifest.files, manifest.folders) = listing()
        if conversation != nil, let bytes = try? workspace.read(chatFile) {
            manifest.previousExchange = Conversation.lastExchange(in: String(decoding: bytes, as: UTF8.self))
        }
        manifest.analysis = Self.analysis(of: text, roster: manifest.roster, today: Self.today(date))
        applyShape(of: relay, roster: roster, message: single == nil ? text : nil,
                   transcript: conversation == nil ? nil : transcript(ofChat: chatFile), to: &manifest)
        manifest.retrieved = retrieve(for: manifest)
        noteUnknownWords(in: &manifest)
        if let conversation, (try? workspace.resolve(chatFile).exists) == true {
            // Continuing a chat: the message goes at its end, as if the person had written it there.
            _ = conversation
            try workspace.update(chatFile, operation: "relay ask") { old in
                var text = String(decoding: old ?? [], as: UTF8.self)
                if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
                return Array((text + (text.isEmpty ? "" : "\n") + manifest.request + "\n").utf8)
            }
        }
        try store.create(&manifest)
        return manifest
    }

    /// A run for a file that settled under a trigger: the relay's input decides what the request
    /// is. Returns nil when there is nothing to do (a chat file whose newest message has been
    /// answered, a file gone).
    ///
    /// `run` is the id the daemon's trigger queue gave the run before it existed (its one record
    /// of which run answers the drop): when run `run` exists, it is returned as it is, to be
    /// resumed (or, finished, shown again without a model call), so a trigger re-queued after a
    /// crash never makes a second run. Without `run`, the run gets a new id.
    ///
    /// The run works on the bytes that settled: the file is read once, and its SHA-256 must be
    /// `hash`; a converter (pdftotext, pandoc) reads a private copy of those bytes, not the file.
    ///
    /// - throws: `RelayError` `.superseded` when the file holds other bytes than `hash` now (it
    ///   was rewritten after it settled; the run for its newer content stands in); `.corruptRun`
    ///   when run `run` exists and answers another relay or content.
    public func prepare(trigger relayName: String, path: String, hash: String, run: String? = nil) throws -> RunManifest? {
        if let run, store.exists(run) {
            let existing = try store.manifest(run)
            // The path may differ: the file was renamed while its run waited to resume.
            guard existing.relay == relayName, existing.triggerHash == hash else {
                throw RelayError(.corruptRun, "run \(run), which the trigger queue names for \(relayName) on \(path) (\(hash.prefix(12))), is a run of \(existing.relay) on \(existing.triggerPath ?? "a question") (\(existing.triggerHash?.prefix(12) ?? "no file"))")
            }
            return existing
        }
        let configuration = try RelayConfiguration.load(from: workspace)
        let (relay, roster, note) = try relayAndRoster(relayName, configuration: configuration)
        let resolved = try workspace.resolve(path)
        guard resolved.exists, let settled = try workspace.fingerprint(ofFileAt: resolved.relative, keepingContentUpTo: Self.settledCopyLimit) else {
            return nil
        }
        guard settled.hash.hex == hash else {
            throw RelayError(.superseded, "\(resolved.relative) changed after it settled (its trigger's content \(hash.prefix(12)), the file's now \(settled.hash.hex.prefix(12))): the run for the newer content stands in", path: resolved.relative)
        }
        let now = Date()
        let (date, time) = Self.localDateAndTime(now)
        let stem = Self.stem(of: path)
        var manifest = RunManifest(
            id: run ?? RunStore.makeID(now), relay: relay.name, created: RunExecutor.timestamp(now), localDate: date, localTime: time, source: .file,
            triggerPath: resolved.relative, triggerHash: hash, request: "", conversation: stem, chatFile: "", name: stem,
            roster: roster.agents, rosterFile: roster.file, context: readContext(), contextTokens: configuration.contextTokens, model: models.description)
        manifest.inputNote = note
        switch relay.input {
        case .chat:
            guard let bytes = settled.content else {
                throw RelayError(.usage, "\(resolved.relative) is larger than \(Self.settledCopyLimit >> 20) MiB: too large for a chat")
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let message = Conversation.newMessage(in: text) else { return nil }
            manifest.source = .chat
            manifest.request = message
            manifest.chatFile = resolved.relative
            manifest.conversation = stem
            manifest.previousExchange = Conversation.lastExchange(in: text)
            manifest.analysis = Self.analysis(of: message, roster: manifest.roster, today: Self.today(date))
        case .file:
            manifest.chatFile = Conversation.chatPath("\(relay.name)-\(stem)")
            manifest.conversation = "\(relay.name)-\(stem)"
            let lead = relay.request.replacingOccurrences(of: "{path}", with: resolved.relative).replacingOccurrences(of: "{name}", with: stem)
            let input: InputConverter.Outcome
            if let bytes = settled.content {
                input = InputConverter.text(ofBytes: bytes, path: resolved.relative, copyFolder: workspace.layout.state + "/tmp")
            } else {
                // Too large to keep a copy of: converted from the file, then checked again.
                input = InputConverter.text(ofFileAt: resolved.absolute, path: resolved.relative)
                guard (try workspace.fingerprint(ofFileAt: resolved.relative))?.hash.hex == hash else {
                    throw RelayError(.superseded, "\(resolved.relative) changed while it was read: the run for the newer content stands in", path: resolved.relative)
                }
            }
            switch input {
            case .text(var text, let how):
                let limit = 400_000
                if text.count > limit { text = String(text.prefix(limit)) + "\n[… cut by Relay: the file has more than \(limit) characters …]" }
                manifest.request = lead + "\n\n--- \(resolved.relative) ---\n" + text
                manifest.document = text
                manifest.shownRequest = "📎 \(resolved.relative)" + (how.map { " (\($0))" } ?? "")
                manifest.inputNote = [note, how.map { "\(resolved.relative): \($0)" }].compactMap { $0 }.joined(separator: "; ").nilIfEmpty
            case .skipped(let reason):
                manifest.request = lead
                manifest.shownRequest = "📎 \(resolved.relative) (skipped)"
                manifest.inputNote = reason
                manifest.skipped = true
            }
        }
        (manifest.files, manifest.folders) = listing()
        applyShape(of: relay, roster: roster, message: manifest.source == .chat ? manifest.request : nil,
                   transcript: manifest.source == .chat ? transcript(ofChat: manifest.chatFile) : nil, to: &manifest)
        manifest.retrieved = retrieve(for: manifest)
        noteUnknownWords(in: &manifest)
        try store.create(&manifest, given: run != nil)
        return manifest
    }
    /// The largest dropped file whose bytes a run keeps in memory to work on (and to hand a
    /// converter as a private copy); a larger one is converted from the file and checked after.
    static let settledCopyLimit = 64 << 20

    private func relayAndRoster(_ name: String?) throws -> (RelayDefinition, Roster, String?) {
        try relayAndRoster(name, configuration: RelayConfiguration.load(from: workspace))
    }

    /// The relay called `name` in `configuration`, or its default relay when `name` is nil.
    /// - throws: `RelayError` `.notFound` naming the relays there are.
    static func relay(_ name: String?, in configuration: RelayConfiguration) throws -> RelayDefinition {
        guard let name else { return configuration.defaultRelay }
        guard let found = configuration.relay(named: name) else {
            throw RelayError(.notFound, "no relay '\(name)' in relay.json (relays: \(configuration.relays.map(\.name).joined(separator: ", ")))")
        }
        return found
    }

    private func relayAndRoster(_ name: String?, configuration: RelayConfiguration) throws -> (RelayDefinition, Roster, String?) {
        let relay = try Self.relay(name, in: configuration)
        if let rosterKeeper {
            let (roster, warning) = try rosterKeeper.roster(for: relay, configuration: configuration, in: workspace)
            return (relay, roster, warning)
        }
        return (relay, try configuration.roster(for: relay, in: workspace), nil)
    }

    /// The workspace's files and folders for the tools' path arguments (nil when too many).
    private func listing() -> ([String]?, [String]?) {
        guard let entries = try? workspace.list(".", recursive: true) else { return (nil, nil) }
        // Hidden files (.stignore, editors' state) and transcripts (long JSON) are not what
        // an agent should spend its few tokens on; it can still name them where no list applies.
        let visible = entries.filter { !$0.path.split(separator: "/").contains { $0.hasPrefix(".") } }
        let files = visible.filter { $0.kind == .file && !($0.path.hasPrefix("Chats/") && $0.path.hasSuffix(".json")) }.map(\.path).sorted()
        let folders = ["."] + visible.filter { $0.kind == .folder }.map(\.path).sorted()
        return (files.count <= RunManifest.pathLimit ? files : nil, folders.count <= RunManifest.pathLimit ? folders : nil)
    }

    private func readContext() -> String {
        guard let bytes = try? workspace.read("context.md") else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The request's analysis, for a roster that uses it (an agent that retrieves evidence or
    /// answers by the kind's program); nil for one whose agents only write.
    static func analysis(of request: String, roster: [AgentDefinition], today: String) -> RequestAnalysis? {
        guard roster.contains(where: { $0.extract == .answer || ($0.retrieve ?? 0) > 0 }) else { return nil }
        return RequestRules.analyse(request, today: today)
    }

    /// The day "today", "this week" and "yesterday" are counted from: the local date, or
    /// `RELAY_TODAY` (`yyyy-MM-dd`) when set — for an evaluation or a test whose notes are dated.
    static func today(_ localDate: String) -> String {
        if let fixed = ProcessInfo.processInfo.environment["RELAY_TODAY"], DayWords.date(fixed) != nil { return fixed }
        return localDate
    }

    static func stem(of path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let stem = file.contains(".") && !file.hasPrefix(".") ? String(file[..<file.lastIndex(of: ".")!]) : file
        return stem.isEmpty ? "file" : stem
    }

    static func localDateAndTime(_ date: Date) -> (String, String) {
        (Timestamp.localDay(date), Timestamp.localHourMinute(date))
    }
}
