import LanguageModels

/// A tool as `tools/list` declares it and `tools/call` runs it.
struct MCPTool: Sendable {
    /// MCP's tool annotations: hints a client shows a person before it lets a model call the tool.
    struct Hints: Sendable {
        var readOnly = false
        var destructive = false
        var idempotent = false
        /// Whether the tool reaches beyond the workspace (only `ask`, which calls the model server).
        var openWorld = false
    }

    var name: String
    var title: String
    var description: String
    var inputSchema: JSONValue
    var outputSchema: JSONValue
    var hints: Hints
    var call: @Sendable (ToolArguments) async throws -> ToolOutput

    /// The tool's `tools/list` entry. Fields the negotiated revision does not know are left out:
    /// annotations came with 2025-03-26, titles and output schemas with 2025-06-18.
    func declaration(for version: ProtocolVersion) -> JSONValue {
        var object: [String: JSONValue] = ["name": .string(name), "description": .string(description), "inputSchema": inputSchema]
        if version >= .v2025_03_26 {
            object["annotations"] = [
                "title": .string(title), "readOnlyHint": .bool(hints.readOnly), "destructiveHint": .bool(hints.destructive),
                "idempotentHint": .bool(hints.idempotent), "openWorldHint": .bool(hints.openWorld),
            ]
        }
        if version >= .v2025_06_18 {
            object["title"] = .string(title)
            object["outputSchema"] = outputSchema
        }
        return .object(object)
    }
}

/// What a tool returns: the text a model reads, and the same as structured data.
struct ToolOutput: Sendable {
    var text: String
    var structured: JSONValue

    /// The `tools/call` result: a text block (what every client shows), `structuredContent`
    /// for clients of 2025-06-18 on.
    func result(for version: ProtocolVersion) -> JSONValue {
        var object: [String: JSONValue] = ["content": [["type": "text", "text": .string(text)]], "isError": false]
        if version >= .v2025_06_18 { object["structuredContent"] = structured }
        return .object(object)
    }

    /// A refusal or failure the calling model should read and act on (not a protocol error).
    static func failure(_ message: String) -> JSONValue {
        ["content": [["type": "text", "text": .string(message)]], "isError": true]
    }
}

/// A tool call's arguments, checked against what the tool takes. Every problem is a
/// `ToolFailure` naming the tool and the argument, so the model can correct its call.
struct ToolArguments: Sendable {
    let tool: String
    let values: [String: JSONValue]

    init(tool: String, arguments: JSONValue?, allowed: [String]) throws {
        self.tool = tool
        switch arguments {
        case nil, .null?: values = [:]
        case .object(let object)?: values = object
        default: throw ToolFailure("\(tool): \"arguments\" must be an object")
        }
        if let unknown = values.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw ToolFailure("\(tool) has no argument '\(unknown)'; it takes \(allowed.joined(separator: ", "))")
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = try optionalString(name) else { throw ToolFailure("\(tool) needs \"\(name)\", a string") }
        return value
    }

    func optionalString(_ name: String) throws -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw ToolFailure("\(tool): \"\(name)\" must be a string, not \(other.jsonText)")
        }
    }

    func optionalInteger(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        switch values[name] {
        case nil, .null?: return nil
        case .number(let value)? where value.rounded() == value && range.contains(Int(exactly: value) ?? Int.min):
            return Int(value)
        case let other?: throw ToolFailure("\(tool): \"\(name)\" must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(other.jsonText)")
        }
    }

    func optionalBool(_ name: String) throws -> Bool? {
        switch values[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw ToolFailure("\(tool): \"\(name)\" must be true or false, not \(other.jsonText)")
        }
    }
}

/// JSON Schema helpers for the tools' declarations.
enum Schema {
    static func object(_ properties: [String: JSONValue], required: [String] = []) -> JSONValue {
        ["type": "object", "properties": .object(properties), "required": .array(required.map { .string($0) }), "additionalProperties": false]
    }
    static func string(_ description: String) -> JSONValue { ["type": "string", "description": .string(description)] }
    static func integer(_ description: String, minimum: Int, maximum: Int) -> JSONValue {
        ["type": "integer", "description": .string(description), "minimum": .number(Double(minimum)), "maximum": .number(Double(maximum))]
    }
    static func boolean(_ description: String) -> JSONValue { ["type": "boolean", "description": .string(description)] }
    static func array(of items: JSONValue) -> JSONValue { ["type": "array", "items": items] }
    static let text: JSONValue = ["type": "string"]
    static let int: JSONValue = ["type": "integer"]
    static let bool: JSONValue = ["type": "boolean"]
    static let optionalText: JSONValue = ["type": ["string", "null"]]
    static let optionalInt: JSONValue = ["type": ["integer", "null"]]
    /// An output object: the listed properties, all required unless said.
    static func output(_ properties: [String: JSONValue], optional: Set<String> = []) -> JSONValue {
        ["type": "object", "properties": .object(properties),
         "required": .array(properties.keys.sorted().filter { !optional.contains($0) }.map { .string($0) })]
    }
}
