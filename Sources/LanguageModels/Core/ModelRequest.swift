/// What a model is asked: the conversation, the tools it may call, and the sampling options.
///
/// For example:
/// ```swift
/// var request = ModelRequest(messages: [.user("What is in context.md?")], tools: [readFile])
/// request.options.maxTokens = 256
/// ```
public struct ModelRequest: Sendable, Equatable {
    public var messages: [ChatMessage]
    public var tools: [ToolDefinition]
    public var options: ModelOptions

    public init(messages: [ChatMessage], tools: [ToolDefinition] = [], options: ModelOptions = ModelOptions()) {
        self.messages = messages
        self.tools = tools
        self.options = options
    }
}

/// Sampling and output options; nil leaves the server's (or the configuration's) default.
public struct ModelOptions: Sendable, Equatable {
    public var temperature: Double?
    /// The most tokens the reply may have.
    public var maxTokens: Int?
    /// Constrain the reply to a JSON schema (OpenAI-compatible servers; llama.cpp enforces it
    /// with a grammar). The structured tool mode sets this itself.
    public var responseSchema: ResponseSchema?
    /// Whether the model must call a tool (`.required`), may (`.auto`), or must not (`.none`).
    public var toolChoice: ToolChoice?

    public init(temperature: Double? = nil, maxTokens: Int? = nil, responseSchema: ResponseSchema? = nil, toolChoice: ToolChoice? = nil) {
        self.temperature = temperature
        self.maxTokens = maxTokens
        self.responseSchema = responseSchema
        self.toolChoice = toolChoice
    }
}

public enum ToolChoice: String, Sendable, Equatable { case auto, required, none }

/// A named JSON schema the reply must match (`response_format: {"type": "json_schema", …}`).
public struct ResponseSchema: Sendable, Equatable {
    public var name: String
    public var schema: JSONValue

    public init(name: String, schema: JSONValue) {
        self.name = name
        self.schema = schema
    }
}
