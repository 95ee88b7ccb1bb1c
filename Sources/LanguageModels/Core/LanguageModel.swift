/// A chat model that streams its reply: messages, tool definitions and options in, an
/// `AsyncThrowingStream` of ``ModelEvent``s out.
///
/// Every implementation ends a successful stream with exactly one ``ModelEvent/finished(_:)``,
/// after any ``ModelEvent/usage(_:)``; a failure ends it with a ``LanguageModelError``.
///
/// For example:
/// ```swift
/// let model = try ModelFactory.make(ModelConfiguration.localDefault, logger: logger)
/// let request = ModelRequest(messages: [.system("Be brief."), .user("Name a camelid.")])
/// for try await event in model.stream(request) {
///     if case .text(let delta) = event { print(delta, terminator: "") }
/// }
/// ```
public protocol LanguageModel: Sendable {
    /// Who answers, for logs, transcripts and `relay doctor`: the provider, the model and its
    /// URL — or "scripted model" and its file, so a scripted reply is never mistaken for a real one.
    var description: String { get }

    /// Streams the reply to `request`. The stream ends after ``ModelEvent/finished(_:)`` or
    /// with a thrown ``LanguageModelError``; cancelling the consuming task cancels the request.
    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error>

    /// The models the server offers (`GET /models`); empty where the idea does not apply.
    func servedModels() async throws -> [String]
}

extension LanguageModel {
    public func servedModels() async throws -> [String] { [] }

    /// Collects a whole reply: the text, the tool calls, the usage and why it stopped.
    ///
    /// For example:
    /// ```swift
    /// let reply = try await model.complete(ModelRequest(messages: [.user("Hello")]))
    /// print(reply.text, reply.usage?.completionTokens ?? 0)
    /// ```
    public func complete(_ request: ModelRequest) async throws -> ModelReply {
        var reply = ModelReply()
        for try await event in stream(request) { reply.add(event) }
        return reply
    }
}

/// A whole reply, gathered from a stream of events by ``LanguageModel/complete(_:)``.
public struct ModelReply: Sendable, Equatable {
    public var text = ""
    public var toolCalls: [ToolCall] = []
    public var usage: TokenUsage?
    public var finishReason: FinishReason?

    public init() {}

    public mutating func add(_ event: ModelEvent) {
        switch event {
        case .text(let delta): text += delta
        case .toolCall(let call): toolCalls.append(call)
        case .usage(let usage): self.usage = usage
        case .finished(let reason): finishReason = reason
        }
    }
}
