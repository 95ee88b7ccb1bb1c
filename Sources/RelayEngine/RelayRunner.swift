import Foundation
import LanguageModels
import Logging
import WorkspaceCore

/// The relay engine of a workspace: prepares runs (from `relay ask` or a trigger), runs and
/// resumes them as a stream of events, replays them.
///
/// For example:
/// ```swift
/// let engine = RelayRunner(workspace: workspace, models: .single(model))
/// let manifest = try engine.prepare(ask: "Plan a weekend in Lisbon")
/// for try await event in engine.run(manifest.id) {
///     if case .textDelta(_, _, let text) = event { print(text, terminator: "") }
/// }
/// ```
public struct RelayRunner: Sendable {
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

    // MARK: Running

    /// Runs run `id` — from the start, or on from where its journal ends (resume) — as a stream
    /// of events. Model calls the journal already answers are not made again. Cancelling the
    /// consuming task stops the run cleanly; it stays resumable.
    ///
    /// The stream fails with `RelayError` `.busy` when another process is running it, with
    /// `RelayError` `.model` when the model fails (resumable; the message names the agent, the
    /// model and its URL, the `LanguageModelError` is its `modelCause`), and ends normally when
    /// the run is done.
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
        var manifest = try store.manifest(id)
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
        do {
            // (A sequence's answering programs use the kind; a plan's planner splits the request
            // and a route's classifier picks an agent, and neither asks the kind.)
            if let analysis = manifest.analysis, analysis.undecided == true, manifest.shape == .sequence {
                // The grammar could not tell the kind: the model chooses it, and the evidence is
                // gathered for that kind (KindChoice.swift).
                let chooser = RunExecutor(manifest: manifest, workspace: workspace, mode: .live, recorded: recorded, journal: journal, models: models,
                                          logger: logger, emit: logged)
                if let kind = try await chooser.chooseKind() {
                    manifest.analysis = analysis.chosen(kind, request: manifest.requestLead)
                    manifest.retrieved = retrieve(for: manifest)
                    noteUnknownWords(in: &manifest)
                } else {
                    manifest.analysis?.undecided = nil
                }
                try store.rewrite(manifest)
            }
            let executor = RunExecutor(manifest: manifest, workspace: workspace, mode: .live, recorded: recorded, journal: journal, models: models,
                                       logger: logger, emit: logged)
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
