import Foundation
import Logging
import RelayEngine

/// The runs this server started with `POST /runs`: each executes in a task of its own (not the
/// request's, which ends at once with the run's id), so a client that goes away never stops a
/// run, and `POST /runs/ID/cancel` can stop it.
///
/// A person's cancel leaves the run `cancelled` (journaled, resumable by `relay resume`); a
/// shutdown (``stopAll()``) leaves it `interrupted`, and the daemon's next start resumes it.
final class RunHub: @unchecked Sendable {
    private struct Running {
        var task: Task<Void, Never>
        var conversation: String
        var stopReason: String?
    }

    private let lock = NSLock()
    private var running: [String: Running] = [:]
    private var stopping = false
    let engine: RelayRunner
    let logger: Logger

    init(engine: RelayRunner, logger: Logger) {
        self.engine = engine
        self.logger = logger
    }

    /// Starts executing a prepared run.
    /// - throws: ``APIError`` `.shuttingDown` once ``stopAll()`` was called.
    func start(_ manifest: RunManifest) throws {
        let id = manifest.id
        try lock.withLock {
            guard !stopping else { throw APIError(.shuttingDown, "the server is stopping; run \(id) was prepared and `relay resume \(id)` runs it") }
            let task = Task { [self] in
                do {
                    try await engine.execute(id, stopReason: { [self] in lock.withLock { running[id]?.stopReason } }) { _ in }
                    logger.info("run finished", metadata: ["relay.run.id": "\(id)"])
                } catch {
                    logger.info("run stopped", metadata: ["relay.run.id": "\(id)", "relay.error": "\(error)"])
                }
                _ = lock.withLock { running.removeValue(forKey: id) }
            }
            running[id] = Running(task: task, conversation: manifest.conversation)
        }
    }

    /// True while this server executes run `id` (also before it has taken the run's lock).
    func isActive(_ id: String) -> Bool { lock.withLock { running[id] != nil } }

    /// The run this server executes in chat `conversation` (`Chats/NAME`), if any.
    func activeRun(inChat conversation: String) -> String? {
        lock.withLock { running.first { $0.value.conversation == conversation }?.key }
    }

    /// Cancels run `id` as a person's stop and waits until the engine has journaled it.
    /// - returns: false when this server is not executing it.
    func cancel(_ id: String, reason: String) async -> Bool {
        let task: Task<Void, Never>? = lock.withLock {
            guard running[id] != nil else { return nil }
            running[id]?.stopReason = reason
            return running[id]?.task
        }
        guard let task else { return false }
        task.cancel()
        await task.value
        return true
    }

    /// A shutdown: cancels every run (they stay interrupted, resumed at the next start), refuses
    /// new ones, and waits until each has journaled its stop.
    func stopAll() async {
        let tasks = lock.withLock {
            stopping = true
            return running.values.map(\.task)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
