import Foundation
import LanguageModels
import RelayEngine
import ServiceLifecycle
import WorkspaceCore

/// One relay turn asked over HTTP: the same run `relay ask` makes (journaled, resumable, its
/// conversation in `Chats/NAME.md` and `NAME.json`), started and awaited for a request.
struct TurnRequest: Sendable {
    var message: String
    var relay: String?
    var agent: String?
    /// `Chats/NAME`: continued when it exists, started when not; nil starts a new one named
    /// after the message.
    var conversation: String?
}

/// How a finished turn went: the answer (the engine's `final` text) and its cost.
struct TurnOutcome: Sendable {
    var runID: String
    var conversation: String
    var answer: String
    var promptTokens = 0
    var completionTokens = 0
}

/// Starts and runs turns on the daemon's engine. A graceful shutdown (SIGTERM) cancels a
/// running turn; the engine leaves it interrupted, and the daemon's next start resumes it.
struct RelayTurns: Sendable {
    let engine: RelayRunner

    /// Writes the run's manifest (nothing asked yet); errors are the request's fault.
    func prepare(_ request: TurnRequest) throws -> RunManifest {
        do {
            return try engine.prepare(ask: request.message, relay: request.relay, agent: request.agent, conversation: request.conversation)
        } catch let error as RelayError {
            switch error.code {
            case .notFound: throw APIError(.modelNotFound, error.message)
            case .busy: throw APIError(.busy, error.message)
            default: throw APIError(.invalidRequest, error.message)
            }
        } catch let error as WorkspaceError {
            throw APIError(.invalidRequest, "\(error)")
        }
    }

    /// Runs a prepared turn to its end, handing each event to `observe`.
    /// - throws: ``APIError`` for a model that fails (502) or a shutdown (503).
    func run(_ manifest: RunManifest, observe: @escaping @Sendable (RelayEvent) -> Void = { _ in }) async throws -> TurnOutcome {
        let outcome = OutcomeBox(TurnOutcome(runID: manifest.id, conversation: manifest.conversation, answer: ""))
        do {
            try await cancelWhenGracefulShutdown {
                try await engine.execute(manifest.id) { event in
                    outcome.record(event)
                    observe(event)
                }
            }
        } catch is CancellationError {
            throw APIError(.shuttingDown, "the server is stopping; run \(manifest.id) is kept and resumes at the next start")
        } catch let error as RelayError where error.code == .model {
            throw APIError(.modelUnavailable, "the model failed (run \(manifest.id) is kept; `relay resume \(manifest.id)` continues it): \(error.message)")
        } catch let error as RelayError {
            throw APIError(error.code == .busy ? .busy : .internalError, "run \(manifest.id): \(error.message)")
        }
        if let failure = outcome.failure { throw APIError(.internalError, failure) }
        return outcome.value
    }
}

/// Collects a turn's answer and token counts from its events (emitted from the engine's tasks).
private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: TurnOutcome
    private var failureMessage: String?

    init(_ outcome: TurnOutcome) { self.outcome = outcome }

    func record(_ event: RelayEvent) {
        lock.withLock {
            switch event {
            case .agentFinished(let message):
                outcome.promptTokens += message.promptTokens
                outcome.completionTokens += message.completionTokens
            case .final(_, let text, _):
                outcome.answer = text
            case .error(_, let message):
                failureMessage = message
            default:
                break
            }
        }
    }

    var value: TurnOutcome { lock.withLock { outcome } }
    var failure: String? { lock.withLock { failureMessage } }
}
