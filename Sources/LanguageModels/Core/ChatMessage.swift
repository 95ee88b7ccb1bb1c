/// One message of a conversation sent to a model.
///
/// For example:
/// ```swift
/// let messages: [ChatMessage] = [
///     .system("You are Andrea, the Architect."),
///     .user("Plan a llama farm."),
///     .assistant("", toolCalls: [ToolCall(id: "call_0", name: "read_file", arguments: #"{"path":"context.md"}"#)]),
///     .toolResult(id: "call_0", "Llamas are camelids."),
/// ]
/// ```
public struct ChatMessage: Sendable, Equatable, Codable {
    public enum Role: String, Sendable, Codable { case system, user, assistant, tool }

    public var role: Role
    public var content: String
    /// Tool calls an assistant message made (replayed to the model in later turns).
    public var toolCalls: [ToolCall]
    /// For a `tool` message: the id of the call it answers.
    public var toolCallID: String?

    public init(role: Role, content: String, toolCalls: [ToolCall] = [], toolCallID: String? = nil) {
        self.role = role
        self.content = content
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
    }

    public static func system(_ text: String) -> ChatMessage { ChatMessage(role: .system, content: text) }
    public static func user(_ text: String) -> ChatMessage { ChatMessage(role: .user, content: text) }
    public static func assistant(_ text: String, toolCalls: [ToolCall] = []) -> ChatMessage {
        ChatMessage(role: .assistant, content: text, toolCalls: toolCalls)
    }
    public static func toolResult(id: String, _ text: String) -> ChatMessage {
        ChatMessage(role: .tool, content: text, toolCallID: id)
    }
}
