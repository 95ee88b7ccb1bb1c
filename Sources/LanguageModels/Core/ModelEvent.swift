/// One step of a streamed reply.
///
/// A stream gives any number of `text` deltas, then the `toolCall`s (each whole, arguments
/// included, however many chunks the server spread it over), then `usage` when the server
/// reports it, then one `finished`.
public enum ModelEvent: Sendable, Equatable {
    /// A piece of the answer's text, in order.
    case text(String)
    /// A complete tool call the model asks the caller to run.
    case toolCall(ToolCall)
    /// Tokens the request and the reply used, as the server counted them.
    case usage(TokenUsage)
    /// The reply is over, and why.
    case finished(FinishReason)
}

/// Tokens counted by the server (or estimated by the scripted model, which says so).
public struct TokenUsage: Sendable, Equatable, Codable {
    public var promptTokens: Int
    public var completionTokens: Int

    public init(promptTokens: Int, completionTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }

    public var totalTokens: Int { promptTokens + completionTokens }
}

/// Why a reply ended.
public enum FinishReason: Sendable, Equatable, Codable {
    /// The model finished its answer.
    case stop
    /// The reply hit the output token limit.
    case length
    /// The model stopped to have tools run.
    case toolCalls
    /// Anything else the server said (`content_filter`, `refusal`, …), kept verbatim.
    case other(String)

    /// Maps the names OpenAI-compatible servers and Anthropic use.
    public init(wireName: String) {
        switch wireName {
        case "stop", "end_turn", "stop_sequence": self = .stop
        case "length", "max_tokens": self = .length
        case "tool_calls", "tool_use", "function_call": self = .toolCalls
        default: self = .other(wireName)
        }
    }
}
