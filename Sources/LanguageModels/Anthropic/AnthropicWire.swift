import Foundation

/// The request side of Anthropic's Messages wire format.
enum AnthropicWire {
    static func requestBody(_ request: ModelRequest, model: String, temperature: Double?, maxTokens: Int) throws -> Data {
        let system = request.messages.filter { $0.role == .system }.map(\.content).joined(separator: "\n\n")
        var turns: [(role: String, blocks: [JSONValue])] = []
        for message in request.messages where message.role != .system {
            let role: String
            var blocks: [JSONValue] = []
            switch message.role {
            case .user, .system:
                role = "user"
                blocks.append(["type": "text", "text": .string(message.content)])
            case .assistant:
                role = "assistant"
                if !message.content.isEmpty { blocks.append(["type": "text", "text": .string(message.content)]) }
                for call in message.toolCalls {
                    blocks.append(["type": "tool_use", "id": .string(call.id), "name": .string(call.name), "input": call.parsedArguments ?? [:]])
                }
            case .tool:
                role = "user"
                blocks.append(["type": "tool_result", "tool_use_id": .string(message.toolCallID ?? ""), "content": .string(message.content)])
            }
            // The API wants user and assistant turns to alternate: runs of one role become one turn.
            if let last = turns.last, last.role == role {
                turns[turns.count - 1].blocks += blocks
            } else {
                turns.append((role, blocks))
            }
        }
        var body: [String: JSONValue] = [
            "model": .string(model),
            "max_tokens": .number(Double(request.options.maxTokens ?? maxTokens)),
            "stream": true,
            "messages": .array(turns.map { ["role": .string($0.role), "content": .array($0.blocks)] }),
        ]
        if !system.isEmpty { body["system"] = .string(system) }
        if let temperature = request.options.temperature ?? temperature { body["temperature"] = .number(temperature) }
        if !request.tools.isEmpty {
            body["tools"] = .array(request.tools.map { ["name": .string($0.name), "description": .string($0.description), "input_schema": $0.parameters] })
            switch request.options.toolChoice {
            case .required?: body["tool_choice"] = ["type": "any"]
            case .none?: body["tool_choice"] = ["type": "none"]
            case .auto?: body["tool_choice"] = ["type": "auto"]
            case nil: break
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(JSONValue.object(body))
    }
}

/// The response side: `message_start`, `content_block_*`, `message_delta`, `message_stop`.
/// A `tool_use` block's `input_json_delta`s are gathered and the call emitted at its stop.
struct AnthropicStreamDecoder {
    let url: String
    private(set) var isDone = false
    private var blocks: [Int: ToolCall] = [:]
    private var promptTokens = 0
    private var completionTokens = 0
    private var stopReason: FinishReason?
    private let decoder = JSONDecoder()

    init(url: String) { self.url = url }

    struct Event: Decodable {
        var type: String
        var message: Message?
        var index: Int?
        var content_block: Block?
        var delta: Delta?
        var usage: Usage?
        var error: JSONValue?
    }
    struct Message: Decodable { var usage: Usage? }
    struct Block: Decodable {
        var type: String
        var id: String?
        var name: String?
        var text: String?
        var input: JSONValue?
    }
    struct Delta: Decodable {
        var type: String?
        var text: String?
        var partial_json: String?
        var stop_reason: String?
    }
    struct Usage: Decodable {
        var input_tokens: Int?
        var output_tokens: Int?
        var cache_read_input_tokens: Int?
        var cache_creation_input_tokens: Int?
    }

    mutating func decode(_ sse: ServerSentEvent) throws -> [ModelEvent] {
        guard !sse.data.isEmpty else { return [] }
        let event: Event
        do {
            event = try decoder.decode(Event.self, from: Data(sse.data.utf8))
        } catch {
            throw LanguageModelError(
                .malformedResponse, "the model server at \(url) sent an event that is not valid JSON: \(sse.data.prefix(200))", url: url, underlying: error)
        }
        switch event.type {
        case "message_start":
            if let usage = event.message?.usage { record(usage) }
        case "content_block_start":
            if let block = event.content_block, let index = event.index {
                if block.type == "text", let text = block.text, !text.isEmpty { return [.text(text)] }
                if block.type == "tool_use" {
                    let preset = block.input.flatMap { $0 == [:] ? nil : $0.jsonText } ?? ""
                    blocks[index] = ToolCall(id: block.id ?? "call_\(index)", name: block.name ?? "", arguments: preset)
                }
            }
        case "content_block_delta":
            guard let delta = event.delta, let index = event.index else { return [] }
            if let text = delta.text, !text.isEmpty { return [.text(text)] }
            if let json = delta.partial_json, blocks[index] != nil { blocks[index]!.arguments += json }
        case "content_block_stop":
            if let index = event.index, let call = blocks.removeValue(forKey: index) {
                var whole = call
                if whole.arguments.isEmpty { whole.arguments = "{}" }
                return [.toolCall(whole)]
            }
        case "message_delta":
            if let reason = event.delta?.stop_reason { stopReason = FinishReason(wireName: reason) }
            if let usage = event.usage { record(usage) }
        case "message_stop":
            isDone = true
            return [.usage(TokenUsage(promptTokens: promptTokens, completionTokens: completionTokens)), .finished(stopReason ?? .stop)]
        case "error":
            let message = event.error?["message"]?.stringValue ?? event.error?.jsonText ?? "unknown error"
            let kind = event.error?["type"]?.stringValue ?? "error"
            throw LanguageModelError(.httpStatus, "the model server at \(url) reported \(kind) mid-reply: \(message)", url: url)
        default:
            break  // ping, and event types added later
        }
        return []
    }

    private mutating func record(_ usage: Usage) {
        if let input = usage.input_tokens {
            promptTokens = input + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)
        }
        if let output = usage.output_tokens { completionTokens = output }
    }
}
