/// A tool the model may call: a name, what it does, and a JSON schema of its arguments.
///
/// For example:
/// ```swift
/// let readFile = ToolDefinition(
///     name: "read_file", description: "Read a file of the workspace.",
///     parameters: ["type": "object", "properties": ["path": ["type": "string"]], "required": ["path"]])
/// ```
public struct ToolDefinition: Sendable, Equatable, Codable {
    public var name: String
    public var description: String
    /// A JSON schema (`"type": "object"`) of the arguments.
    public var parameters: JSONValue

    public init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }
}

/// A call of a tool by the model.
public struct ToolCall: Sendable, Equatable, Codable {
    /// The id the caller echoes in the tool result message (the server's, or one Relay made).
    public var id: String
    public var name: String
    /// The arguments as the JSON text the model wrote. Small models write invalid JSON at
    /// times; ``parsedArguments`` tells, and the caller decides what to tell the model.
    public var arguments: String

    public init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }

    /// The arguments parsed, or nil when the model wrote something that is not JSON.
    public var parsedArguments: JSONValue? { try? JSONValue(parsing: arguments.isEmpty ? "{}" : arguments) }
}
