import Foundation
import LanguageModels

/// A test double of a model (not a real one; its description says so). It answers each request
/// with a step: the next of a list (by position), or one chosen from what the request holds
/// (for workers asked in parallel, whose requests arrive in any order). It records every
/// request, and the labels of gated replies in the order they finished.
///
/// For example:
///
///     let model = TestModel([.text("plan"), .tools([TestModel.call("read_file", ["path": "a.md"])]), .text("done")])
///     let parallel = TestModel { request in request.user.contains("2 of 3") ? .gated(after: first, then: .text("two")) : .text("one") }
public final class TestModel: LanguageModel, @unchecked Sendable {
    public indirect enum Step: Sendable {
        /// Streams `text` word by word, then usage and `.stop`.
        case text(String)
        case tools([ToolCall])
        case fail(LanguageModelError)
        /// Streams `partial`, then waits until the request is cancelled — what a model server
        /// does when it dies mid-reply.
        case hang(partial: String)
        /// Runs `action` (e.g. a person editing a file) and then answers as `then`.
        case act(@Sendable () -> Void, then: Step)
        /// Waits for `after` (if given), answers as `then`, and once that reply is whole records
        /// `label` in `finished` and opens `opens` (if given).
        case gated(after: Gate? = nil, opens: Gate? = nil, label: String = "", then: Step)
    }

    private enum Script {
        case steps([Step])
        case keyed(@Sendable (ModelRequest) -> Step)
    }

    private let lock = NSLock()
    private var script: Script
    private var requests: [ModelRequest] = []
    private var finishedLabels: [String] = []

    /// Answers the requests in turn with `steps`; a request after the last step fails.
    public init(_ steps: [Step]) { script = .steps(steps) }

    /// Answers each request with the step `answer` chooses for it.
    public init(_ answer: @escaping @Sendable (ModelRequest) -> Step) { script = .keyed(answer) }

    public var description: String { "test model (test double)" }
    public var received: [ModelRequest] { lock.withLock { requests } }
    /// The labels of `.gated` replies, in the order they were whole.
    public var finished: [String] { lock.withLock { finishedLabels } }

    public static func call(_ name: String, _ arguments: JSONValue, id: String = "call_0") -> ToolCall {
        ToolCall(id: id, name: name, arguments: arguments.jsonText)
    }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        var step: Step? = lock.withLock {
            requests.append(request)
            switch script {
            case .steps(var steps):
                defer { script = .steps(steps) }
                return steps.isEmpty ? nil : steps.removeFirst()
            case .keyed:
                return nil
            }
        }
        if case .keyed(let answer) = script { step = answer(request) }
        if case .act(let action, let then) = step {
            action()
            step = then
        }
        let chosen = step
        return AsyncThrowingStream { continuation in
            let task = Task {
                guard let chosen else {
                    continuation.finish(throwing: LanguageModelError(.script, "test model: no step left for request \(self.received.count)"))
                    return
                }
                await self.answer(chosen, into: continuation)
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func answer(_ step: Step, into continuation: AsyncThrowingStream<ModelEvent, any Error>.Continuation) async {
        switch step {
        case .act(let action, let then):
            action()
            await answer(then, into: continuation)
        case .text(let text):
            for piece in text.split(separator: " ", omittingEmptySubsequences: false).enumerated().map({ $0.offset == 0 ? String($0.element) : " " + $0.element }) {
                continuation.yield(.text(piece))
            }
            continuation.yield(.usage(TokenUsage(promptTokens: 100, completionTokens: 10)))
            continuation.yield(.finished(.stop))
            continuation.finish()
        case .tools(let calls):
            for call in calls { continuation.yield(.toolCall(call)) }
            continuation.yield(.usage(TokenUsage(promptTokens: 100, completionTokens: 5)))
            continuation.yield(.finished(.toolCalls))
            continuation.finish()
        case .fail(let error):
            continuation.finish(throwing: error)
        case .hang(let partial):
            continuation.yield(.text(partial))
            // Hangs until the request is cancelled: the cancellation wakes the sleep at once.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(86_400)) }
            continuation.finish(throwing: CancellationError())
        case .gated(let after, let opens, let label, let then):
            if let after { await after.wait() }
            if case .fail(let error) = then {
                continuation.finish(throwing: error)
                return
            }
            // The reply is whole once `then` has finished the stream; a relay continuation
            // records it first, so the label is in `finished` before the engine sees the end.
            let (relay, relayed) = AsyncThrowingStream<ModelEvent, any Error>.makeStream()
            await answer(then, into: relayed)
            do {
                for try await event in relay { continuation.yield(event) }
            } catch {
                continuation.finish(throwing: error)
                return
            }
            lock.withLock { finishedLabels.append(label) }
            continuation.finish()
            opens?.open()
        }
    }
}

extension ModelRequest {
    /// The first user message's text.
    public var user: String { messages.first { $0.role == .user }?.content ?? "" }
    /// The system prompt.
    public var system: String { messages.first { $0.role == .system }?.content ?? "" }
}

/// Gathers a stream's events, or the error that ended it.
public func collect(_ stream: AsyncThrowingStream<ModelEvent, any Error>) async -> (events: [ModelEvent], error: (any Error)?) {
    var events: [ModelEvent] = []
    do {
        for try await event in stream { events.append(event) }
        return (events, nil)
    } catch {
        return (events, error)
    }
}
