import Foundation
import LanguageModels
import Logging
import ServiceLifecycle

/// The daemon's runs (`relay watch`, `relay serve`): a settled file starts (or, after a crash,
/// resumes) its relay run. While the model server does not answer, the run waits and tries
/// again — a little longer each time, up to 30 s — so no triggered run is dropped; a shutdown
/// (the task cancelled) ends the wait and leaves the run resumable.
///
/// The watcher calls `run(relay:path:hash:run:)` through its `RelayLauncher` protocol (the
/// executable declares the conformance: the engine and the watcher do not import each other).
/// The watcher's trigger row names the run (`RunStore.makeID(forTrigger:)`) before it exists;
/// nothing in the engine records which trigger has which run.
public struct DaemonRuns: Sendable {
    public let engine: RelayRunner
    let logger: Logger

    public init(engine: RelayRunner, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }

    /// Prepares the trigger's run `run` (nothing when the file holds nothing new), or finds it
    /// when it exists, and runs it to the end.
    public func run(relay: String, path: String, hash: String, run: String) async throws {
        // Preparing converts the dropped file (pdftotext, pandoc: seconds for a big document):
        // on a thread of its own, so the daemon's few cooperative threads keep serving.
        let engine = self.engine
        let prepared = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RunManifest?, any Error>) in
            Thread { continuation.resume(with: Result { try engine.prepare(trigger: relay, path: path, hash: hash, run: run) }) }.start()
        }
        guard let manifest = prepared else {
            logger.info("nothing new to answer", metadata: ["relay.path": "\(path)", "relay.relay": "\(relay)"])
            return
        }
        try await runToTheEnd(manifest.id, about: path)
    }

    /// Runs (or resumes) a run, waiting out a model server that is down or busy.
    public func runToTheEnd(_ id: String, about path: String) async throws {
        var delay = Duration.seconds(1)
        var waiting = false
        while true {
            do {
                try await engine.execute(id) { event in log(event, run: id, path: path) }
                if waiting { logger.notice("the model answers again; run finished", metadata: ["relay.run": "\(id)"]) }
                return
            } catch let error as RelayError where error.modelCause.map(Self.isWorthWaiting) == true {
                if !waiting {
                    logger.warning("run waits for the model server", metadata: ["relay.run": "\(id)", "relay.path": "\(path)", "relay.error": "\(error.message)"])
                    waiting = true
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(30))
            } catch let error as RelayError where error.code == .busy {
                // Another process runs it (a `relay resume` by hand): wait for it to finish.
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// The runs an older Relay recorded for triggers in `.relay/runs/by-trigger/`, nil where
    /// there is none (the watcher names them in its queue once, then `forgetLegacyTriggerRecords`).
    public func legacyRuns(for triggers: [(relay: String, path: String, hash: String)]) -> [String?] {
        triggers.map { engine.store.legacyRun(forTrigger: "\($0.relay)|\($0.path)|\($0.hash)") }
    }

    public func forgetLegacyTriggerRecords() { engine.store.removeLegacyTriggerRecords() }

    /// A server that is down, overloaded or restarting; not a request it refuses.
    public static func isWorthWaiting(_ error: LanguageModelError) -> Bool {
        switch error.code {
        case .unreachable, .timeout: return true
        case .httpStatus: return (error.status ?? 0) >= 500 || error.status == 429 || error.status == 408
        default: return false
        }
    }

    private func log(_ event: RelayEvent, run: String, path: String) {
        switch event {
        case .runStarted(_, let relay, _, _, let resumed):
            logger.notice(resumed ? "relay run resumed" : "relay run started", metadata: ["relay.run": "\(run)", "relay.relay": "\(relay)", "relay.path": "\(path)"])
        case .agentFinished(let message) where !message.restored:
            logger.info("agent finished", metadata: [
                "relay.run": "\(run)", "relay.agent": "\(message.agent.name)", "relay.ms": "\(message.milliseconds)",
                "relay.tokens": "\(message.promptTokens + message.completionTokens)",
            ])
        case .revisionRequested(_, let by, let target, _, let accepted, _):
            logger.info("revision requested", metadata: ["relay.run": "\(run)", "relay.by": "\(by.name)", "relay.target": "\(target)", "relay.accepted": "\(accepted)"])
        case .note(let text):
            logger.notice("\(text)", metadata: ["relay.run": "\(run)"])
        case .final(_, _, let files):
            logger.notice("relay run finished", metadata: ["relay.run": "\(run)", "relay.path": "\(path)", "relay.files": "\(files.joined(separator: ", "))"])
        case .error(_, let message):
            logger.warning("relay run stopped", metadata: ["relay.run": "\(run)", "relay.error": "\(message)"])
        default:
            break
        }
    }

    /// Runs `relay ask` runs that were interrupted (killed, or the machine went down), once
    /// each, when the daemon starts; triggered runs resume through their re-queued trigger.
    public func resumeInterruptedAskRuns() async {
        guard let summaries = try? engine.store.summaries() else { return }
        for summary in summaries where summary.state == .interrupted {
            guard let manifest = try? engine.store.manifest(summary.id), manifest.source == .ask else { continue }
            logger.notice("resuming an interrupted run", metadata: ["relay.run": "\(summary.id)"])
            do {
                try await runToTheEnd(summary.id, about: manifest.chatFile)
            } catch is CancellationError {
                return
            } catch {
                logger.warning("could not resume run", metadata: ["relay.run": "\(summary.id)", "relay.error": "\(error)"])
            }
        }
    }
}

/// Resumes interrupted `relay ask` runs once when the daemon starts, then idles until shutdown,
/// which cancels a resume still under way (the run stays resumable).
public struct ResumeAtStart: Service {
    let runs: DaemonRuns

    public init(runs: DaemonRuns) { self.runs = runs }

    public func run() async throws {
        let resume = Task { await runs.resumeInterruptedAskRuns() }
        try? await gracefulShutdown()
        resume.cancel()
        await resume.value
    }
}
