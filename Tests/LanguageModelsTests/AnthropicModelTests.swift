import Foundation
import Logging
import NIOCore
import RelayTestKit
import Testing
@testable import LanguageModels

/// The Anthropic Messages client against a real HTTP server on loopback speaking its streaming
/// wire format (named events, content blocks, input_json_delta).
@Suite("Anthropic Messages client")
struct AnthropicModelTests {
    static func model(_ server: FakeModelServer) -> AnthropicModel {
        var settings = ModelHTTPSettings()
        settings.initialBackoff = .milliseconds(10)
        return AnthropicModel(baseURL: server.baseURL, model: "claude-test", apiKey: "sk-test", settings: settings, logger: Logger(label: "test"))
    }

    static func event(_ name: String, _ json: String) -> String { "event: \(name)\ndata: \(json)\n\n" }

    static let start = event("message_start", #"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":42,"output_tokens":1}}}"#)

    static let textStream = start
        + event("content_block_start", #"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#)
        + event("ping", #"{"type":"ping"}"#)
        + event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Alpacas 🦙 "}}"#)
        + event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"are smaller — ça va."}}"#)
        + event("content_block_stop", #"{"type":"content_block_stop","index":0}"#)
        + event("message_delta", #"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}"#)
        + event("message_stop", #"{"type":"message_stop"}"#)

    @Test func aStreamCutMidLineAndMidCharacterGivesTheTextAndUsage() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse(bytes: byteChunks(Self.textStream, size: 5), gap: .milliseconds(1)) }
        defer { Task { await server.stop() } }
        let request = ModelRequest(messages: [.system("Be kind."), .user("Alpacas?")], options: ModelOptions(temperature: 0.2))
        let (events, error) = await collect(Self.model(server).stream(request))
        #expect(error == nil)
        #expect(events.compactMap { if case .text(let t) = $0 { t } else { nil } }.joined() == "Alpacas 🦙 are smaller — ça va.")
        #expect(events.suffix(2) == [.usage(TokenUsage(promptTokens: 42, completionTokens: 9)), .finished(.stop)])

        let sent = try #require(server.requests.first)
        #expect(sent.uri == "/v1/messages")
        #expect(sent.headers["x-api-key"] == "sk-test" && sent.headers["anthropic-version"] == "2023-06-01")
        let json = try #require(sent.json)
        #expect(json["system"] as? String == "Be kind." && json["stream"] as? Bool == true && json["max_tokens"] as? Int == 1024)
        #expect((json["messages"] as? [[String: Any]])?.map { $0["role"] as? String } == ["user"])
    }

    @Test func toolUseWithInputSpreadOverManyDeltasBecomesOneCall() async throws {
        let input = #"{"path":"Research/alpacas.md","depth":2}"#
        var stream = Self.start
            + Self.event("content_block_start", #"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#)
            + Self.event("content_block_delta", #"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}"#)
            + Self.event("content_block_stop", #"{"type":"content_block_stop","index":0}"#)
            + Self.event("content_block_start", #"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"read_file","input":{}}}"#)
        var index = input.startIndex
        while index < input.endIndex {
            let end = input.index(index, offsetBy: 5, limitedBy: input.endIndex) ?? input.endIndex
            let escaped = String(decoding: try JSONEncoder().encode(String(input[index..<end])), as: UTF8.self)
            stream += Self.event("content_block_delta", #"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":\#(escaped)}}"#)
            index = end
        }
        stream += Self.event("content_block_stop", #"{"type":"content_block_stop","index":1}"#)
            + Self.event("message_delta", #"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#)
            + Self.event("message_stop", #"{"type":"message_stop"}"#)
        let body = stream
        let server = try await FakeModelServer.start { _, _ in .sse(bytes: byteChunks(body, size: 64), gap: .milliseconds(1)) }
        defer { Task { await server.stop() } }
        let tool = ToolDefinition(name: "read_file", description: "Read a file.", parameters: ["type": "object"])
        let (events, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("read")], tools: [tool], options: ModelOptions(toolChoice: .required))))
        #expect(error == nil)
        #expect(events == [
            .text("Let me look."),
            .toolCall(ToolCall(id: "toolu_01", name: "read_file", arguments: input)),
            .usage(TokenUsage(promptTokens: 42, completionTokens: 30)),
            .finished(.toolCalls),
        ])
        let json = try #require(server.requests.first?.json)
        #expect(((json["tools"] as? [[String: Any]])?.first?["input_schema"] as? [String: Any])?["type"] as? String == "object")
        #expect((json["tool_choice"] as? [String: Any])?["type"] as? String == "any")
    }

    @Test func toolResultsGoBackAsToolResultBlocksOfAUserTurn() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse(Self.textStream) }
        defer { Task { await server.stop() } }
        let call = ToolCall(id: "toolu_01", name: "read_file", arguments: #"{"path":"a.md"}"#)
        _ = try await Self.model(server).complete(ModelRequest(messages: [
            .user("read a.md"), .assistant("", toolCalls: [call]), .toolResult(id: "toolu_01", "contents of a"), .user("and now?"),
        ]))
        let messages = try #require(server.requests.first?.json?["messages"] as? [[String: Any]])
        #expect(messages.map { $0["role"] as? String } == ["user", "assistant", "user"])
        let assistant = try #require(messages[1]["content"] as? [[String: Any]])
        #expect(assistant.first?["type"] as? String == "tool_use" && (assistant.first?["input"] as? [String: Any])?["path"] as? String == "a.md")
        let results = try #require(messages[2]["content"] as? [[String: Any]])
        #expect(results.map { $0["type"] as? String } == ["tool_result", "text"])
        #expect(results.first?["tool_use_id"] as? String == "toolu_01")
    }

    @Test func anOverloadedServerIsRetried() async throws {
        let server = try await FakeModelServer.start { _, number in
            number == 0 ? .json(529, #"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#) : .sse(Self.textStream)
        }
        defer { Task { await server.stop() } }
        let reply = try await Self.model(server).complete(ModelRequest(messages: [.user("hi")]))
        #expect(reply.finishReason == .stop && reply.text.hasPrefix("Alpacas"))
        #expect(server.requests.count == 2)
    }

    @Test func anErrorEventMidStreamIsAnErrorWithItsMessage() async throws {
        let stream = Self.start + Self.event("error", #"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
        let server = try await FakeModelServer.start { _, _ in .sse([stream]) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.message.contains("overloaded_error") && failure.message.contains("Overloaded") && failure.message.contains(server.baseURL))
    }

    @Test func malformedEventJSONIsAClearError() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse([Self.start, "event: content_block_delta\ndata: {not json\n\n"]) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect((error as? LanguageModelError)?.code == .malformedResponse)
    }

    @Test func aStreamWithoutMessageStopIsAnError() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse([Self.start]) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect((error as? LanguageModelError)?.message.contains("message_stop") == true)
    }

    @Test func noServerNamesTheURL() async throws {
        let url = "http://127.0.0.1:\(FakeModelServer.freePort())/v1"
        let model = AnthropicModel(baseURL: url, model: "m", apiKey: "k", logger: Logger(label: "test"))
        let (_, error) = await collect(model.stream(ModelRequest(messages: [.user("hi")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .unreachable && failure.message.contains(url))
    }
}
