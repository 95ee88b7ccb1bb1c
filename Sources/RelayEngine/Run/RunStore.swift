import Foundation
import LanguageModels
import WorkspaceCore

/// The runs of a workspace: `.relay/runs/<id>/` with `run.json` (the manifest), `journal.jsonl`
/// (the write-ahead journal) and `lock` (held by the process running it, released by the
/// kernel when that process dies).
public struct RunStore: Sendable {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    public var folder: String { workspace.layout.state + "/runs" }
    func directory(_ id: String) -> String { folder + "/" + id }
    func journalPath(_ id: String) -> String { directory(id) + "/journal.jsonl" }
    /// The run's event log (``RunEventLog``): what it emitted, for streaming and reconnects.
    public func eventsPath(_ id: String) -> String { directory(id) + "/events.jsonl" }

    /// A new run id: UTC time and four random hex digits, so ids sort by age.
    static func makeID(_ date: Date = Date()) -> String {
        Timestamp.compactUTC(date) + "-" + String(format: "%04x", UInt16.random(in: 0...UInt16.max))
    }

    /// The id of the run for the watcher's trigger row `number` ("20261127-153012-t42"): UTC
    /// time, then the row, so it sorts with the others and is never an ask run's id.
    public static func makeID(forTrigger number: Int64, _ date: Date = Date()) -> String {
        Timestamp.compactUTC(date) + "-t\(number)"
    }

    /// Writes a new run's manifest (atomically, fsynced) before anything else happens. The
    /// run's folder is created exclusively: should two runs get the same id in the same
    /// second, the second gets another — unless the id was `given` (the trigger queue named the
    /// run before it existed): then a folder without a manifest (a creation a crash cut short)
    /// is taken over, and one with a manifest is an error.
    func create(_ manifest: inout RunManifest, given: Bool = false) throws {
        do {
            try StateFile.makeFolders(folder)
            var attempts = 0
            while try !StateFile.makeFolderExclusively(directory(manifest.id)) {
                if given {
                    guard !StateFile.exists(directory(manifest.id) + "/run.json") else {
                        throw RelayError(.io, "run \(manifest.id) exists already and is another run", path: directory(manifest.id))
                    }
                    break
                }
                guard attempts < 100 else {
                    throw RelayError(.io, "cannot create a new run folder in \(folder): 100 ids taken", path: folder)
                }
                attempts += 1
                manifest.id = String(manifest.id.dropLast(4)) + String(format: "%04x", UInt16.random(in: 0...UInt16.max))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            do {
                try StateFile.replace(directory(manifest.id) + "/run.json", with: Array(try encoder.encode(manifest)), durable: workspace.durable)
            } catch {
                // No half-made run: the folder goes with its manifest.
                try? StateFile.removeFolder(directory(manifest.id))
                throw error
            }
        } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot record the new run: \(error.message)", path: error.path, cause: error)
        }
    }

    /// Writes run `manifest`'s changed manifest over its old one (atomically): once, before its
    /// agents run, when the model has chosen an undecided request's kind.
    func rewrite(_ manifest: RunManifest) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            try StateFile.replace(directory(manifest.id) + "/run.json", with: Array(try encoder.encode(manifest)), durable: workspace.durable)
        } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot record run \(manifest.id)'s request kind: \(error.message)", path: error.path, cause: error)
        }
    }

    /// Whether run `id` exists (its manifest is there).
    func exists(_ id: String) -> Bool { StateFile.exists(directory(id) + "/run.json") }

    // MARK: Records of older versions

    /// Relay before the watcher's trigger rows named their runs kept trigger key → run id in
    /// `by-trigger/` (one file per key, named by the key's SHA-256). Only read, once, by the
    /// daemon's first start with the new queue (through `DaemonRuns.legacyRuns(for:)`), then
    /// removed.
    var legacyTriggerFolder: String { folder + "/by-trigger" }

    /// The run an older Relay recorded for a trigger ("relay|path|hash"), if it still exists.
    func legacyRun(forTrigger key: String) -> String? {
        guard let bytes = try? StateFile.read(legacyTriggerFolder + "/" + ContentHash(of: key).hex) else { return nil }
        let id = String(decoding: bytes, as: UTF8.self)
        return !id.contains("/") && exists(id) ? id : nil
    }

    func removeLegacyTriggerRecords() {
        try? StateFile.removeFolder(legacyTriggerFolder)
    }

    /// The manifest of run `id` (a unique prefix of an id works too).
    public func manifest(_ id: String) throws -> RunManifest {
        let id = try resolveID(id)
        let path = directory(id) + "/run.json"
        let read: [UInt8]?
        do { read = try StateFile.read(path) } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot read the manifest of run \(id): \(error.message)", path: path, cause: error)
        }
        guard let bytes = read else { throw RelayError(.notFound, "no run \(id) in \(folder)") }
        do { return try JSONDecoder().decode(RunManifest.self, from: Data(bytes)) } catch {
            throw RelayError(.corruptRun, "\(path) is not a run manifest: \(error)")
        }
    }

    func records(_ id: String) throws -> [JournalRecord] { try RunJournalReader.read(journalPath(id)) }

    /// The full id for an id or a unique prefix of one ("20261122-1540" → the run).
    public func resolveID(_ id: String) throws -> String {
        if StateFile.exists(directory(id) + "/run.json") { return id }
        let all = ids()
        let matches = all.filter { $0.hasPrefix(id) }
        guard matches.count == 1 else {
            if matches.isEmpty { throw RelayError(.notFound, "no run '\(id)' (`relay runs` lists them)") }
            throw RelayError(.usage, "'\(id)' matches \(matches.count) runs (\(matches.prefix(4).joined(separator: ", "))…); give more of the id")
        }
        return matches[0]
    }

    func ids() -> [String] {
        ((try? StateFile.names(in: folder)) ?? [])
            .filter { $0 != "by-trigger" && StateFile.exists(folder + "/" + $0 + "/run.json") }
    }

    // MARK: The run lock

    /// A held run: only one process runs a run at a time (a `ProcessLease` on its `lock`).
    typealias Lease = ProcessLease

    func lease(_ id: String) throws -> Lease? {
        do { return try ProcessLease.acquire(directory(id) + "/lock") } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot take the lock of run \(id): \(error.message)", path: error.path, cause: error)
        }
    }

    /// Whether a process (this one or another) holds run `id`'s lock: it is executing.
    public func isRunning(_ id: String) -> Bool { ProcessLease.isHeld(directory(id) + "/lock") }

    // MARK: Listing

    /// The runs, oldest first, with per-agent figures (`relay runs`).
    public func summaries() throws -> [RunSummary] {
        try ids().map { try summary($0) }
    }

    /// The newest `limit` runs, oldest first, and how many runs there are. Only those runs'
    /// files are read (ids sort by age), so a long history costs a directory listing.
    public func newestSummaries(_ limit: Int) throws -> (runs: [RunSummary], total: Int) {
        let all = ids()
        return (try all.suffix(max(0, limit)).map { try summary($0) }, all.count)
    }

    public func summary(_ id: String) throws -> RunSummary {
        let manifest = try manifest(id)
        let records = try self.records(manifest.id)
        var summary = RunSummary(id: manifest.id, relay: manifest.relay, created: manifest.created, request: manifest.shownRequest ?? manifest.request,
                                 source: manifest.triggerPath ?? manifest.source.rawValue, chatFile: manifest.chatFile, state: .interrupted)
        var calls: [Int: Int] = [:]
        for record in records {
            switch record.type {
            case .response: if let step = record.step { calls[step, default: 0] += 1 }
            case .step:
                guard let step = record.step, let agent = manifest.roster.first(where: { $0.id == record.agent }) else { continue }
                summary.steps.append(.init(step: step, agent: agent.id, name: agent.name, emoji: agent.emoji, milliseconds: record.milliseconds ?? 0,
                                           promptTokens: record.usage?.promptTokens ?? 0, completionTokens: record.usage?.completionTokens ?? 0,
                                           modelCalls: calls[step] ?? 0, revision: record.message))
            case .effect, .tool:
                if let path = record.path, !summary.files.contains(path) { summary.files.append(path) }
            case .finished:
                summary.state = manifest.skipped ? .skipped : .done
                summary.finished = record.started
            case .failed:
                summary.state = .failed
                summary.error = record.message
            case .interrupted:
                summary.state = record.state == RunSummary.State.cancelled.rawValue ? .cancelled : .interrupted
                summary.error = record.message
            case .request, .note, .intent: break
            }
        }
        if summary.state != .done, summary.state != .skipped, isRunning(manifest.id) { summary.state = .running }
        return summary
    }
}

/// A run as `relay runs` shows it.
public struct RunSummary: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable {
        case running, done, failed, interrupted, skipped
        /// Stopped by a person (over HTTP): resumable by hand, not resumed by the daemon at start.
        case cancelled
        /// Whether `relay resume` can continue it.
        public var isResumable: Bool { self == .failed || self == .interrupted || self == .cancelled }
    }

    public struct Step: Sendable, Codable, Equatable {
        public var step: Int
        public var agent: String
        public var name: String
        public var emoji: String
        public var milliseconds: Int
        public var promptTokens: Int
        public var completionTokens: Int
        public var modelCalls: Int
        /// "revision requested by Vera: …" for a revision.
        public var revision: String?
    }

    public var id: String
    public var relay: String
    public var created: String
    public var request: String
    public var source: String
    public var chatFile: String
    public var state: State
    public var finished: String?
    public var error: String?
    public var steps: [Step] = []
    public var files: [String] = []

    public var revisions: Int { steps.filter { $0.revision != nil }.count }
    public var milliseconds: Int { steps.reduce(0) { $0 + $1.milliseconds } }
    public var tokens: Int { steps.reduce(0) { $0 + $1.promptTokens + $1.completionTokens } }
}
