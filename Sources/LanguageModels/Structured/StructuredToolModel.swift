import Foundation

/// Tool use for models that cannot call tools: the reply is constrained to a JSON schema of the
/// allowed tool calls plus a plain answer, and turned into the same ``ModelEvent/toolCall(_:)``
/// events a native call gives.
///
/// With tools in the request, the wrapped model is asked (through
/// ``ModelOptions/responseSchema``, which llama.cpp enforces with a grammar) for exactly one of
///
/// ```json
/// {"tool": "read_file", "arguments": {"path": "context.md"}}
/// {"answer": "Llamas are camelids."}
/// ```
///
/// and the reply becomes a tool call (id `call_0`, finish reason `.toolCalls`) or the answer's
/// text. Earlier tool calls and results in the conversation are replayed in the same JSON form,
/// so servers whose chat template knows no tool role still accept them. The answer's text
/// streams as it arrives (``AnswerStreamer`` decodes the JSON string on the fly); a tool call is
/// emitted once the reply is whole. A request without tools passes through unchanged.
///
/// For example:
/// ```swift
/// let model = StructuredToolModel(wrapping: OpenAICompatibleModel(baseURL: url, model: "SmolLM2-135M-Instruct", logger: logger))
/// let reply = try await model.complete(ModelRequest(messages: [.user("Read context.md")], tools: [readFile]))
/// reply.toolCalls.first?.name  // "read_file"
/// ```
public struct StructuredToolModel: LanguageModel {
    public let base: any LanguageModel

    public init(wrapping base: any LanguageModel) { self.base = base }

    public var description: String { base.description + ", structured tool mode" }

    public func servedModels() async throws -> [String] { try await base.servedModels() }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        guard !request.tools.isEmpty, request.options.toolChoice != ToolChoice.none else {
            var plain = request
            plain.tools = []
            return base.stream(plain)
        }
        let constrained = Self.constrain(request)
        let base = self.base
        let toolNames = Set(request.tools.map(\.name))
        return makeEventStream { continuation in
            var text = ""
            var streamer = AnswerStreamer()
            var usage: TokenUsage?
            var finish: FinishReason = .stop
            for try await event in base.stream(constrained) {
                switch event {
                case .text(let delta):
                    text += delta
                    let piece = streamer.feed(delta)
                    if !piece.isEmpty { continuation.yield(.text(piece)) }
                case .toolCall(let call): continuation.yield(.toolCall(call))  // a model that called natively anyway
                case .usage(let counted): usage = counted
                case .finished(let reason): finish = reason
                }
            }
            let reply = try Self.interpret(text, allowedTools: toolNames, finish: finish, model: base.description)
            for event in reply {
                guard case .text(let answer) = event else {
                    continuation.yield(event)
                    continue
                }
                // The answer has streamed already; give only what the streamer could not (none, normally).
                let streamed = streamer.emitted.unicodeScalars
                if answer.unicodeScalars.starts(with: streamed) {
                    let rest = String(String.UnicodeScalarView(answer.unicodeScalars.dropFirst(streamed.count)))
                    if !rest.isEmpty { continuation.yield(.text(rest)) }
                }
            }
            if let usage { continuation.yield(.usage(usage)) }
            let called = reply.contains { if case .toolCall = $0 { return true } else { return false } }
            continuation.yield(.finished(called ? .toolCalls : finish))
        }
    }

    /// The JSON schema of a reply: one object per tool (`tool` fixed to its name, `arguments`
    /// its parameters) and, unless a tool call is required, `{"answer": string}`.
    public static func replySchema(for tools: [ToolDefinition], allowAnswer: Bool = true) -> JSONValue {
        var options: [JSONValue] = tools.map { tool in
            [
                "type": "object",
                "properties": ["tool": ["type": "string", "enum": [.string(tool.name)]], "arguments": tool.parameters],
                "required": ["tool", "arguments"],
                "additionalProperties": false,
            ]
        }
        if allowAnswer {
            options.append(["type": "object", "properties": ["answer": ["type": "string"]], "required": ["answer"], "additionalProperties": false])
        }
        return options.count == 1 ? options[0] : ["anyOf": .array(options)]
    }

    static func constrain(_ request: ModelRequest) -> ModelRequest {
        let allowAnswer = request.options.toolChoice != .required
        var lines = [
            "You can use tools. Reply with one JSON object and nothing else:",
            #"  {"tool": "<tool name>", "arguments": {...}} to call a tool,"#,
        ]
        if allowAnswer { lines.append(#"  {"answer": "<your answer>"} to answer directly."#) }
        lines.append("Tools:")
        for tool in request.tools {
            lines.append("- \(tool.name): \(tool.description) Arguments (JSON schema): \(tool.parameters.jsonText)")
        }
        let instruction = lines.joined(separator: "\n")

        var messages: [ChatMessage] = []
        for message in request.messages {
            switch message.role {
            case .assistant where !message.toolCalls.isEmpty:
                let calls = message.toolCalls.map { call in
                    JSONValue.object(["tool": .string(call.name), "arguments": call.parsedArguments ?? .string(call.arguments)]).jsonText
                }
                messages.append(.assistant(calls.joined(separator: "\n")))
            case .tool:
                messages.append(.user("Result of tool call \(message.toolCallID ?? ""):\n\(message.content)"))
            default:
                messages.append(message)
            }
        }
        if let first = messages.firstIndex(where: { $0.role == .system }) {
            messages[first].content += "\n\n" + instruction
        } else {
            messages.insert(.system(instruction), at: 0)
        }
        var options = request.options
        options.toolChoice = nil
        options.responseSchema = ResponseSchema(name: "reply", schema: replySchema(for: request.tools, allowAnswer: allowAnswer))
        return ModelRequest(messages: messages, tools: [], options: options)
    }

    /// Reads a structured reply: a tool call, or the answer's text.
    /// - throws: ``LanguageModelError/Code/malformedResponse`` when the reply is not one of the
    ///   allowed objects (cut off by the token limit, say).
    static func interpret(_ text: String, allowedTools: Set<String>, finish: FinishReason, model: String) throws -> [ModelEvent] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let json = try? JSONValue(parsing: trimmed), json.objectValue != nil else {
            let why = finish == .length ? " (the reply hit the token limit; allow more tokens)" : ""
            throw LanguageModelError(
                .malformedResponse, "\(model) gave a structured tool reply that is not a JSON object\(why): \(trimmed.prefix(200))", url: nil)
        }
        if let name = json["tool"]?.stringValue {
            guard allowedTools.contains(name) else {
                throw LanguageModelError(.malformedResponse, "\(model) asked for tool '\(name)', which it was not offered (offered: \(allowedTools.sorted().joined(separator: ", ")))")
            }
            let arguments = json["arguments"] ?? [:]
            return [.toolCall(ToolCall(id: "call_0", name: name, arguments: arguments.jsonText))]
        }
        if let answer = json["answer"]?.stringValue {
            return answer.isEmpty ? [] : [.text(answer)]
        }
        throw LanguageModelError(.malformedResponse, "\(model) gave a structured reply with neither \"tool\" nor \"answer\": \(trimmed.prefix(200))")
    }
}

/// A model whose tools are withheld (`toolMode: "none"`): every request goes out without
/// tools, so the model only ever answers in text.
public struct ToolsWithheldModel: LanguageModel {
    public let base: any LanguageModel

    public init(wrapping base: any LanguageModel) { self.base = base }

    public var description: String { base.description + ", tools withheld" }

    public func servedModels() async throws -> [String] { try await base.servedModels() }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        var plain = request
        plain.tools = []
        plain.options.toolChoice = nil
        return base.stream(plain)
    }
}
