import Foundation
import LanguageModels
@testable import RelayEngine
import WorkspaceCore

/// A gate a test opens once; tasks that wait on it go on when it opens (or at once if it has).
/// Lets a test make worker 1 finish after worker 2 without any timing.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            isOpen = true
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// A test double of a model that answers by what a request holds, not by its position — for
/// workers asked in parallel, whose requests arrive in any order. Records every request and the
/// order in which replies finished.
final class KeyedModel: LanguageModel, @unchecked Sendable {
    struct Reply: Sendable {
        var text: String = ""
        var tools: [ToolCall] = []
        var fails: Bool = false
        /// Waits for this gate before answering.
        var after: Gate?
        /// Opens this gate once the reply is whole.
        var opens: Gate?
        var label: String = ""
    }

    private let lock = NSLock()
    private var requests: [ModelRequest] = []
    private var finishedLabels: [String] = []
    private let answer: @Sendable (ModelRequest) -> Reply

    init(_ answer: @escaping @Sendable (ModelRequest) -> Reply) { self.answer = answer }

    var description: String { "keyed model (test double)" }
    var received: [ModelRequest] { lock.withLock { requests } }
    var finished: [String] { lock.withLock { finishedLabels } }

    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        lock.withLock { requests.append(request) }
        let reply = answer(request)
        return AsyncThrowingStream { continuation in
            let task = Task {
                if let gate = reply.after { await gate.wait() }
                if reply.fails {
                    continuation.finish(throwing: LanguageModelError(.unreachable, "keyed model: told to fail (\(reply.label))"))
                    return
                }
                if !reply.text.isEmpty { continuation.yield(.text(reply.text)) }
                for call in reply.tools { continuation.yield(.toolCall(call)) }
                continuation.yield(.usage(TokenUsage(promptTokens: 50, completionTokens: 5)))
                continuation.yield(.finished(reply.tools.isEmpty ? .stop : .toolCalls))
                self.lock.withLock { self.finishedLabels.append(reply.label) }
                continuation.finish()
                reply.opens?.open()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension ModelRequest {
    /// "3" for the request of worker 3 (its focused prompt names its subtask), nil otherwise.
    var workerNumber: Int? {
        guard let range = user.range(of: "[Your Subtask — ") else { return nil }
        return Int(user[range.upperBound...].prefix { $0.isNumber })
    }

    var schemaName: String? { options.responseSchema?.name }
}

/// Rosters and relay.json for the relay modes.
enum Modes {
    static func relayJSON(chat: String) -> String {
        """
        {
          "model": {"contextTokens": 4096},
          "relays": {
            "chat": \(chat)
          }
        }
        """
    }

    /// The four agents of RelayScratch with route rules: Wren takes poems, Remy "find …".
    static let routedRoster = RelayScratch.roster
        .replacingOccurrences(of: #""systemPrompt": "You are Wren. Write.", "order": 2,"#,
                              with: #""systemPrompt": "You are Wren. Write.", "order": 2, "route": {"keywords": ["poem", "haiku"]},"#)
        .replacingOccurrences(of: #""systemPrompt": "You are Remy. Find facts.", "order": 1,"#,
                              with: #""systemPrompt": "You are Remy. Find facts.", "order": 1, "route": {"patterns": ["^find\\b"]},"#)
}
