import Foundation
import LanguageModels
import Logging
import WorkspaceCore

/// The relay engine of a workspace: prepares runs (from `relay ask` or a trigger), runs and
/// resumes them as a stream of events, replays them.
///
/// For example:
/// ```swift
/// let engine = RelayEngine(workspace: workspace, models: .single(model))
/// let manifest = try engine.prepare(ask: "Plan a weekend in Lisbon")
/// for try await event in engine.run(manifest.id) {
///     if case .textDelta(_, _, let text) = event { print(text, terminator: "") }
/// }
/// ```
public struct RelayEngine: Sendable {
    public var workspace: Workspace
    public var models: ModelProvider
    public var logger: Logger
    /// Keeps the last valid roster of each relay, for a daemon whose roster is edited into an
    /// invalid state while it runs; nil: an invalid roster is an error.
    public var rosterKeeper: RosterKeeper?

    public init(workspace: Workspace, models: ModelProvider, logger: Logger = Workspace.silentLogger, rosterKeeper: RosterKeeper? = nil) {
        var workspace = workspace
        workspace.writesTrigger = false  // the engine's writes start no triggers
        self.workspace = workspace
        self.models = models
        self.logger = logger
        self.rosterKeeper = rosterKeeper
    }

    public var store: RunStore { RunStore(workspace: workspace) }

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
    /// answered), and the existing run when this trigger already has one (the daemon resumes it).
    public func prepare(trigger relayName: String, path: String, hash: String) throws -> RunManifest? {
        if let existing = try run(forTrigger: "\(relayName)|\(path)|\(hash)") { return existing }
        let configuration = try RelayConfiguration.load(from: workspace)
        let (relay, roster, note) = try relayAndRoster(relayName, configuration: configuration)
        let resolved = try workspace.resolve(path)
        guard resolved.exists else { return nil }
        let now = Date()
        let (date, time) = Self.localDateAndTime(now)
        let stem = Self.stem(of: path)
        var manifest = RunManifest(
            id: RunStore.makeID(now), relay: relay.name, created: RunExecutor.timestamp(now), localDate: date, localTime: time, source: .file,
            triggerPath: resolved.relative, triggerHash: hash, request: "", conversation: stem, chatFile: "", name: stem,
            roster: roster.agents, rosterFile: roster.file, context: readContext(), contextTokens: configuration.contextTokens, model: models.description)
        manifest.inputNote = note
        switch relay.input {
        case .chat:
            let text = String(decoding: try workspace.read(path), as: UTF8.self)
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
            switch InputConverter.text(ofFileAt: resolved.absolute, path: resolved.relative) {
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
        try store.create(&manifest)
        return manifest
    }

    /// The evidence for the request: the workspace lines that best match it (and, for a
    /// follow-up, the previous message), or — when its kind says where to look — the lines the
    /// workspace's structure gives (the open tasks, the notes of the days asked about, every row
    /// of a table), with a second search for a name the first lines bring in (two hops). As many
    /// as the roster's most retrieving agent takes (more for a list, a summary, a comparison);
    /// nil when none retrieves. Read once, at the start, so resume and replay see the same lines.
    private func retrieve(for manifest: RunManifest) -> [RetrievedLine]? {
        let count = manifest.roster.compactMap(\.retrieve).max() ?? 0
        guard count > 0, !manifest.skipped else { return nil }
        let analysis = manifest.analysis
        let evidence = Evidence(workspace: workspace)
        switch analysis?.kind {
        case .list? where analysis?.tasks == true:
            let tasks = evidence.openTasks(in: analysis?.days)
            if !tasks.isEmpty { return Array(tasks.prefix(Self.mostEvidence)) }
        case .summarise?:
            if let days = analysis?.days {
                let lines = evidence.noteLines(in: days)
                if !lines.isEmpty { return Array(lines.prefix(Self.mostEvidence)) }
            }
        default:
            break
        }
        let previous = manifest.previousExchange?.message
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay"])
        // "What is his email address?": the person is the one the previous answer named.
        let query = manifest.searchQuery(ignoring: ignoring)
        // The chat itself is not searched: its last exchange is given whole, the rest is old answers.
        let excluded: Set<String> = manifest.chatFile.isEmpty ? [] : [manifest.chatFile]
        let wide = [.list, .summarise, .compare, .compute].contains(analysis?.kind)
        let keep = wide ? max(count, Self.mostEvidence / 2) : count
        // More lines than are kept, so the ones that hold the answer can rise above the ones that
        // only name what the question is about (AnswerEvidence).
        let found = WorkspaceSearch(workspace: workspace).lines(matching: query, context: previous,
                                                                limit: keep * Self.retrievalPool, excluding: excluded)
        let widened = self.widened(found, evidence: evidence)
        let judge = AnswerEvidence(question: query, previous: previous, ignoring: ignoring, asked: analysis?.value?.asked)
        var ranked = judge.rerank(widened, keep: keep)
        if analysis?.kind == .compare, let top = found.first(where: { $0.text.hasPrefix("|") }) {
            // A comparison is over every row of the table the best line is in.
            let rows = evidence.tableRows(around: top)
            if rows.count >= 2 { ranked = rows + ranked.filter { line in !rows.contains { $0.path == line.path && $0.line == line.line } } }
        }
        if let analysis, let value = analysis.value, [.lookup, .yesNo].contains(analysis.kind) {
            ranked = secondHop(ranked, value: value, question: query, ignoring: ignoring, excluded: excluded, evidence: evidence)
        }
        return ranked
    }

    /// The most lines of evidence a run keeps (a week of notes, a to-do list, a table).
    static let mostEvidence = 16

    /// Lines as evidence: a table row with its header, a hard-wrapped line as its sentences.
    private func widened(_ found: [RetrievedLine], evidence: Evidence) -> [RetrievedLine] {
        var files: [String: [String]] = [:]
        return found.map { line in
            var line = line
            if files[line.path] == nil { files[line.path] = evidence.lines(of: line.path) }
            let lines = files[line.path] ?? []
            line.text = Evidence.tableRow(at: line.line - 1, in: lines) ?? Self.sentences(around: line.line, in: lines) ?? line.text
            line.heading = Evidence.heading(above: line.line - 1, in: lines)
            return line
        }
    }

    /// Two hops: when the best line lacks the kind of value asked for (an address, an email)
    /// but names someone the question only describes ("the person I lent my drill to"), the
    /// workspace is searched again for that name, and the lines that hold such a value follow
    /// the first one.
    private func secondHop(_ ranked: [RetrievedLine], value: ValueKind, question: String, ignoring: Set<String>, excluded: Set<String>,
                           evidence: Evidence) -> [RetrievedLine] {
        guard value.isSpan || value == .place, let first = ranked.first else { return ranked }
        func holds(_ line: RetrievedLine) -> Bool {
            value.isSpan ? !ValueSpans.find(value, in: line.text).isEmpty : !Claims.extract(from: line.text, ignoring: ignoring).filter { $0.kind == .name }.isEmpty
        }
        guard !holds(first) || value == .place else { return ranked }
        let names = Evidence.newNames(in: first.text, question: question, ignoring: ignoring)
        guard let name = names.first else { return ranked }
        let hop = WorkspaceSearch(workspace: workspace).lines(matching: name + " " + RequestRules.slotWords(for: value), limit: 12, excluding: excluded)
        let nameTerms = Set(SearchTerms.terms(of: name))
        let found = widened(hop, evidence: evidence).filter { line in
            !(line.path == first.path && line.line == first.line) && !nameTerms.isDisjoint(with: SearchTerms.terms(of: line.text))
                && (value == .place ? ValueSpans.find(.address, in: line.text).count > 0 || holds(line) : holds(line))
        }
        guard !found.isEmpty else { return ranked }
        // Found by the name the first line brought in: kept whatever the model chooses.
        let hopped = found.prefix(2).map { line in
            var line = line
            line.score = Evidence.structural
            return line
        }
        return [first] + hopped + ranked.dropFirst().filter { line in !hopped.contains { $0.path == line.path && $0.line == line.line } }
    }

    /// How many times the lines kept are searched for, to be ranked again by their evidence.
    static let retrievalPool = 3

    /// The whole sentences a line of a hard-wrapped paragraph belongs to (a line of prose cut at
    /// 80 columns is half a sentence), without a list marker; nil when the line stands alone.
    static func sentences(around number: Int, in lines: [String]) -> String? {
        let index = number - 1
        guard lines.indices.contains(index) else { return nil }
        func prose(_ line: String) -> Bool {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !trimmed.hasPrefix("#") && !trimmed.hasPrefix("- ") && !trimmed.hasPrefix("* ") && !trimmed.hasPrefix("|") && !trimmed.hasPrefix("<!--")
        }
        guard prose(lines[index]) else { return RunExecutor.bare(lines[index]) }
        var start = index, end = index
        while start > 0, prose(lines[start - 1]) { start -= 1 }
        while end + 1 < lines.count, prose(lines[end + 1]) { end += 1 }
        guard start < end else { return nil }
        var offset = 0, lineStart = 0, lineEnd = 0
        var joined = ""
        for position in start...end {
            let piece = lines[position].trimmingCharacters(in: .whitespaces)
            if position == index { lineStart = offset; lineEnd = offset + piece.count }
            joined += (joined.isEmpty ? "" : " ") + piece
            offset = joined.count + 1
        }
        var kept: [String] = []
        var cursor = joined.startIndex
        for sentence in Sentences.split(joined) {
            guard let found = joined.range(of: sentence, range: cursor..<joined.endIndex) else { continue }
            cursor = found.upperBound
            let from = joined.distance(from: joined.startIndex, to: found.lowerBound), to = joined.distance(from: joined.startIndex, to: found.upperBound)
            if to > lineStart, from < lineEnd { kept.append(sentence) }
        }
        let text = kept.joined(separator: " ")
        guard !text.isEmpty else { return nil }
        return text.count > 600 ? String(text.prefix(600)) + "…" : text
    }

    /// The run started for a trigger ("relay|path|hash"), if any.
    public func run(forTrigger key: String) throws -> RunManifest? {
        guard let id = store.run(forTrigger: key), let manifest = try? store.manifest(id), manifest.triggerKey == key else { return nil }
        return manifest
    }

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
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd"
        let day = formatter.string(from: date)
        formatter.dateFormat = "HH-mm"
        return (day, formatter.string(from: date))
    }

    // MARK: Running

    /// Runs run `id` — from the start, or on from where its journal ends (resume) — as a stream
    /// of events. Model calls the journal already answers are not made again. Cancelling the
    /// consuming task stops the run cleanly; it stays resumable.
    ///
    /// The stream fails with `RelayError` `.busy` when another process is running it, with the
    /// model's `LanguageModelError` when the model fails (resumable), and ends normally when the
    /// run is done.
    public func run(_ id: String) -> AsyncThrowingStream<RelayEvent, any Error> {
        let engine = self
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await engine.execute(id) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs run `id` to its end, handing each event to `emit` (see ``run(_:)``).
    public func execute(_ id: String, emit: @escaping @Sendable (RelayEvent) -> Void) async throws {
        try await execute(id, stopReason: { nil }, emit: emit)
    }

    /// Runs run `id` to its end, handing each event to `emit` and appending it to the run's
    /// event log (``RunEventLog``). When the run is cancelled, `stopReason` says whether a
    /// person stopped it (their words go into the journal and the run counts as `cancelled`:
    /// resumable by `relay resume`, not resumed by the daemon at its next start) or not (nil: a
    /// shutdown; the run is `interrupted` and the daemon resumes it).
    public func execute(_ id: String, stopReason: @escaping @Sendable () -> String?, emit: @escaping @Sendable (RelayEvent) -> Void) async throws {
        let store = self.store
        let manifest = try store.manifest(id)
        guard let lease = try store.lease(manifest.id) else {
            throw RelayError(.busy, "run \(manifest.id) is being run by another process")
        }
        defer { lease.release() }
        let recorded = RecordedRun(try store.records(manifest.id))
        if recorded.ended != nil {
            // Finished before: show it again from the journal, ask nothing.
            let executor = RunExecutor(manifest: manifest, workspace: workspace, mode: .live, recorded: recorded, journal: nil, models: nil, logger: logger, emit: emit)
            try await executor.execute()
            return
        }
        let journal = try RunJournalWriter(path: store.journalPath(manifest.id), durable: workspace.durable)
        let events = try RunEventLog.Writer(path: store.eventsPath(manifest.id), runID: manifest.id)
        let logged: @Sendable (RelayEvent) -> Void = { event in
            events.append(event)
            emit(event)
        }
        let executor = RunExecutor(manifest: manifest, workspace: workspace, mode: .live, recorded: recorded, journal: journal, models: models, logger: logger, emit: logged)
        do {
            try await executor.execute()
            events.end(.done)
        } catch is CancellationError {
            var record = JournalRecord(.interrupted)
            let reason = stopReason()
            record.message = "\(reason ?? "cancelled"); `relay resume \(manifest.id)` continues it"
            if reason != nil { record.state = RunSummary.State.cancelled.rawValue }
            record.started = RunExecutor.timestamp()
            try? journal.append(record)
            events.end(reason == nil ? .interrupted : .cancelled, message: record.message)
            throw CancellationError()
        } catch {
            var record = JournalRecord(.failed)
            record.message = "\(error)"
            record.started = RunExecutor.timestamp()
            try? journal.append(record)
            logged(.error(runID: manifest.id, message: "\(error)"))
            events.end(.failed, message: "\(error)")
            throw error
        }
    }

    // MARK: Replay

    /// Re-runs run `id` offline against its recorded replies, writing into `folder` (a scratch
    /// workspace) instead of the workspace, and compares every request and every file with the
    /// recording. With `roster`, the run uses that roster instead of the one it recorded — the
    /// report then shows which prompts the change altered.
    public func replay(_ id: String, into folder: String, roster: Roster? = nil, emit: @escaping @Sendable (RelayEvent) -> Void = { _ in }) async throws -> ReplayReport {
        var manifest = try store.manifest(id)
        if let roster { manifest.roster = roster.agents }
        let recorded = RecordedRun(try store.records(manifest.id))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var scratch = try Workspace.initialize(at: folder, template: WorkspaceTemplate(files: [])).0
        scratch.durable = false
        scratch.writesTrigger = false
        let executor = RunExecutor(manifest: manifest, workspace: scratch, mode: .replay, recorded: recorded, journal: nil, models: nil,
                                   source: workspace, logger: logger, emit: emit)
        try await executor.execute()
        var report = executor.report
        report.folder = folder
        for key in recorded.effects.keys.sorted() where !report.files.contains(where: { $0.what == recorded.effects[key]?.path }) {
            report.files.append(.init(what: recorded.effects[key]?.path ?? key, matches: false, detail: "the recording wrote it (\(key)) and the replay did not"))
        }
        return report
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// Keeps the last valid roster of each relay: when a person saves an invalid roster while the
/// daemon runs, runs go on with the last good one and say why, instead of failing.
public final class RosterKeeper: @unchecked Sendable {
    private let lock = NSLock()
    private var lastGood: [String: (roster: Roster, loaded: Date)] = [:]
    private let log: @Sendable (String) -> Void

    public init(log: @escaping @Sendable (String) -> Void = { _ in }) { self.log = log }

    func roster(for relay: RelayDefinition, configuration: RelayConfiguration, in workspace: Workspace) throws -> (Roster, String?) {
        do {
            let roster = try configuration.roster(for: relay, in: workspace)
            lock.withLock { lastGood[relay.name] = (roster, Date()) }
            return (roster, nil)
        } catch let error as WorkspaceError {
            guard let kept = lock.withLock({ lastGood[relay.name] }) else { throw error }
            let warning = "\(error.message) — using the last valid roster of relay '\(relay.name)', loaded \(RunExecutor.timestamp(kept.loaded)); fix the file to use the new one"
            log(warning)
            return (kept.roster, warning)
        }
    }
}
