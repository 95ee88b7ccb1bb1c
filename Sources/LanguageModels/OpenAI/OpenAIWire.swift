import Foundation

/// The request side of OpenAI's chat completions wire format.
enum OpenAIWire {
    static func requestBody(_ request: ModelRequest, model: String, temperature: Double?, maxTokens: Int?) throws -> Data {
        var body: [String: JSONValue] = [
            "model": .string(model),
            "messages": .array(request.messages.map(message)),
            "stream": true,
            "stream_options": ["include_usage": true],
        ]
        if let temperature = request.options.temperature ?? temperature { body["temperature"] = .number(temperature) }
        if let maxTokens = request.options.maxTokens ?? maxTokens { body["max_tokens"] = .number(Double(maxTokens)) }
        if !request.tools.isEmpty {
            body["tools"] = .array(request.tools.map { tool in
                ["type": "function", "function": ["name": .string(tool.name), "description": .string(tool.description), "parameters": tool.parameters]]
            })
            if let choice = request.options.toolChoice { body["tool_choice"] = .string(choice.rawValue) }
        }
        if let schema = request.options.responseSchema {
            body["response_format"] = ["type": "json_schema", "json_schema": ["name": .string(schema.name), "schema": schema.schema]]
        }
        let encoder = JSONEncoder()
        // Sorted: the same request gives the same bytes in every process (a dictionary's order
        // is seeded per process), and a JSON schema's properties reach the server's grammar in
        // one order, so a reply at temperature 0 is the same every time.
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return try encoder.encode(JSONValue.object(body))
    }

    static func message(_ message: ChatMessage) -> JSONValue {
        var object: [String: JSONValue] = ["role": .string(message.role.rawValue), "content": .string(message.content)]
        if message.role == .assistant && !message.toolCalls.isEmpty {
            if message.content.isEmpty { object["content"] = .null }
            object["tool_calls"] = .array(message.toolCalls.map { call in
                ["id": .string(call.id), "type": "function", "function": ["name": .string(call.name), "arguments": .string(call.arguments)]]
            })
        }
        if let id = message.toolCallID { object["tool_call_id"] = .string(id) }
        return .object(object)
    }
}

/// The response side: turns `chat.completion.chunk` events into ``ModelEvent``s, gathering
/// tool-call deltas by index until the reply says why it finished.
struct OpenAIStreamDecoder {
    let url: String
    private(set) var isDone = false
    private var calls: [Int: ToolCall] = [:]
    private var callOrder: [Int] = []
    private var callsEmitted = false
    private var finishReason: FinishReason?
    private var usage: TokenUsage?
    private let decoder = JSONDecoder()

    init(url: String) { self.url = url }

    struct Chunk: Decodable {
        var choices: [Choice]?
        var usage: Usage?
        var error: JSONValue?
    }
    struct Choice: Decodable {
        var delta: Delta?
        var finish_reason: String?
    }
    struct Delta: Decodable {
        var content: String?
        var tool_calls: [ToolCallDelta]?
    }
    struct ToolCallDelta: Decodable {
        var index: Int?
        var id: String?
        var function: FunctionDelta?
    }
    struct FunctionDelta: Decodable {
        var name: String?
        /// A string in OpenAI's format; some servers send the object itself.
        var arguments: JSONValue?
    }
    struct Usage: Decodable {
        var prompt_tokens: Int?
        var completion_tokens: Int?
    }

    mutating func decode(_ event: ServerSentEvent) throws -> [ModelEvent] {
        let data = event.data.trimmingCharacters(in: .whitespaces)
        if data == "[DONE]" {
            isDone = true
            return []
        }
        if data.isEmpty { return [] }
        let chunk: Chunk
        do {
            chunk = try decoder.decode(Chunk.self, from: Data(data.utf8))
        } catch {
            throw LanguageModelError(
                .malformedResponse, "the model server at \(url) sent a stream chunk that is not valid JSON: \(data.prefix(200))",
                url: url, underlying: error)
        }
        if let error = chunk.error {
            let message = error["message"]?.stringValue ?? error.stringValue ?? error.jsonText
            throw LanguageModelError(.httpStatus, "the model server at \(url) reported an error mid-reply: \(message)", url: url, status: error["code"]?.intValue)
        }
        var events: [ModelEvent] = []
        for choice in chunk.choices ?? [] {
            if let text = choice.delta?.content, !text.isEmpty { events.append(.text(text)) }
            for delta in choice.delta?.tool_calls ?? [] { add(delta) }
            if let reason = choice.finish_reason {
                finishReason = FinishReason(wireName: reason)
                events += takeCalls()
            }
        }
        if let usage = chunk.usage {
            self.usage = TokenUsage(promptTokens: usage.prompt_tokens ?? 0, completionTokens: usage.completion_tokens ?? 0)
        }
        return events
    }

    /// The end of the stream: any calls not yet emitted, the usage, and `finished`.
    mutating func finish() throws -> [ModelEvent] {
        guard let finishReason else {
            throw LanguageModelError(.malformedResponse, "the reply from \(url) ended before the server said it was finished (no finish_reason)", url: url)
        }
        var events = takeCalls()
        if let usage { events.append(.usage(usage)) }
        events.append(.finished(finishReason))
        return events
    }

    private mutating func add(_ delta: ToolCallDelta) {
        let index = delta.index ?? (delta.id != nil ? callOrder.count : max(callOrder.count - 1, 0))
        if calls[index] == nil {
            calls[index] = ToolCall(id: "", name: "", arguments: "")
            callOrder.append(index)
        }
        if let id = delta.id, !id.isEmpty { calls[index]!.id = id }
        if let name = delta.function?.name { calls[index]!.name += name }
        switch delta.function?.arguments {
        case .string(let piece)?: calls[index]!.arguments += piece
        case let value?: calls[index]!.arguments += value.jsonText
        case nil: break
        }
    }

    private mutating func takeCalls() -> [ModelEvent] {
        guard !callsEmitted, !callOrder.isEmpty else { return [] }
        callsEmitted = true
        return callOrder.enumerated().map { position, index in
            var call = calls[index]!
            if call.id.isEmpty { call.id = "call_\(position)" }
            return .toolCall(call)
        }
    }
}
