import Foundation
import Logging
import RelayTestKit
import Testing
@testable import LanguageModels

/// The structured tool mode turns a schema-constrained reply into the same events a native tool
/// call gives, so the relay engine cannot tell the two apart.
@Suite("Structured tool mode")
struct StructuredToolModelTests {
    static let readFile = ToolDefinition(
        name: "read_file", description: "Read a file of the workspace.",
        parameters: ["type": "object", "properties": ["path": ["type": "string"]], "required": ["path"]])
    static let listFiles = ToolDefinition(name: "list_files", description: "List a folder.", parameters: ["type": "object", "properties": [:]])

    static func chunk(_ content: String? = nil, finish: String? = nil) -> String {
        let delta = content.map { #"{"content":\#(String(decoding: try! JSONEncoder().encode($0), as: UTF8.self))}"# } ?? "{}"
        let reason = finish.map { "\"\($0)\"" } ?? "null"
        return #"data: {"choices":[{"index":0,"delta":\#(delta),"finish_reason":\#(reason)}]}"# + "\n\n"
    }
    static let usage = #"data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":12}}"# + "\n\n"

    static func client(_ server: FakeModelServer) -> OpenAICompatibleModel {
        OpenAICompatibleModel(baseURL: server.baseURL, model: "m", logger: Logger(label: "test"))
    }

    @Test func aStructuredReplyGivesTheSameEventsAsANativeToolCall() async throws {
        let native = try await FakeModelServer.start { _, _ in
            .sse([
                #"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]},"finish_reason":null}]}"# + "\n\n",
                #"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"context.md\"}"}}]},"finish_reason":null}]}"# + "\n\n",
                Self.chunk(finish: "tool_calls"), Self.usage, "data: [DONE]\n\n",
            ])
        }
        // What llama-server streams under a json_schema grammar: the JSON as ordinary content.
        let structured = try await FakeModelServer.start { _, _ in
            .sse([Self.chunk(#"{"tool": "read_"#), Self.chunk(#"file", "arguments": {"path": "#), Self.chunk(#""context.md"}}"#), Self.chunk(finish: "stop"), Self.usage, "data: [DONE]\n\n"])
        }
        defer { Task { await native.stop(); await structured.stop() } }
        let request = ModelRequest(messages: [.system("You are Andrea."), .user("What is in context.md?")], tools: [Self.readFile, Self.listFiles])

        let nativeEvents = await collect(Self.client(native).stream(request))
        let structuredEvents = await collect(StructuredToolModel(wrapping: Self.client(structured)).stream(request))
        #expect(nativeEvents.error == nil && structuredEvents.error == nil)
        #expect(structuredEvents.events == nativeEvents.events)
        #expect(structuredEvents.events == [
            .toolCall(ToolCall(id: "call_0", name: "read_file", arguments: #"{"path":"context.md"}"#)),
            .usage(TokenUsage(promptTokens: 50, completionTokens: 12)),
            .finished(.toolCalls),
        ])

        // The structured request offers no native tools: it constrains the reply instead.
        let sent = try #require(structured.requests.first?.json)
        #expect(sent["tools"] == nil)
        let format = try #require(sent["response_format"] as? [String: Any])
        let schema = try #require((format["json_schema"] as? [String: Any])?["schema"] as? [String: Any])
        let options = try #require(schema["anyOf"] as? [[String: Any]])
        #expect(options.count == 3, "one object per tool plus the plain answer")
        let messages = try #require(sent["messages"] as? [[String: Any]])
        #expect(messages.count == 2 && (messages[0]["content"] as? String)?.contains("read_file: Read a file of the workspace.") == true)
    }

    @Test func aPlainAnswerStreamsAsTextInPieces() async throws {
        let pieces = [#"{ "answer""#, #": "Llamas "#, #"hum.\n\u00"#, #"e9 \ud83e"#, #"\udd99 \"ok\""#, #""}"#]
        let server = try await FakeModelServer.start { _, _ in .sse(pieces.map { Self.chunk($0) } + [Self.chunk(finish: "stop"), "data: [DONE]\n\n"]) }
        defer { Task { await server.stop() } }
        let (events, error) = await collect(StructuredToolModel(wrapping: Self.client(server)).stream(ModelRequest(messages: [.user("hi")], tools: [Self.readFile])))
        #expect(error == nil)
        let deltas = events.compactMap { if case .text(let t) = $0 { t } else { nil } }
        #expect(deltas == ["Llamas ", "hum.\n", "é ", "🦙 \"ok\""], "the answer should stream as it arrives")
        #expect(events.last == .finished(.stop))
    }

    @Test func theAnswerDecoderGivesTheSameTextWhereverTheReplyIsCut() throws {
        let reply = #"{"answer": "Line\none \"quoted\" caf\u00e9 \ud83e\udd99 tab\tslash\/ back\\ 🦙 done"}"#
        let expected = try #require(try JSONValue(parsing: reply)["answer"]?.stringValue)
        let characters = Array(reply)
        for cut in 0...characters.count {
            var streamer = AnswerStreamer()
            let text = streamer.feed(String(characters[..<cut])) + streamer.feed(String(characters[cut...]))
            #expect(text == expected, "cut at \(cut)")
        }
        var toolCall = AnswerStreamer()
        #expect(toolCall.feed(#"{"tool": "read_file", "arguments": {"answer": "no"}}"#).isEmpty)
    }

    @Test func aRequiredToolCallLeavesTheAnswerOutOfTheSchema() {
        let request = StructuredToolModel.constrain(ModelRequest(messages: [.user("x")], tools: [Self.readFile], options: ModelOptions(toolChoice: .required)))
        let schema = request.options.responseSchema?.schema
        #expect(schema?["anyOf"] == nil)
        #expect(schema?["properties"]?["tool"]?["enum"] == ["read_file"])
        #expect(request.options.toolChoice == nil && request.tools.isEmpty)
    }

    @Test func earlierToolCallsAndResultsAreReplayedAsJSONText() {
        let call = ToolCall(id: "call_0", name: "read_file", arguments: #"{"path":"a.md"}"#)
        let request = StructuredToolModel.constrain(ModelRequest(
            messages: [.user("read a.md"), .assistant("", toolCalls: [call]), .toolResult(id: "call_0", "alpha")], tools: [Self.readFile]))
        #expect(request.messages.map(\.role) == [.system, .user, .assistant, .user])
        #expect(request.messages[2].content == #"{"arguments":{"path":"a.md"},"tool":"read_file"}"#)
        #expect(request.messages[3].content == "Result of tool call call_0:\nalpha")
    }

    @Test func aReplyThatIsNotJSONIsAClearError() async throws {
        let base = ScriptedModel(script: .init(replies: [.init(text: #"{"tool": "read_file", "argu"#)]))
        let (_, error) = await collect(StructuredToolModel(wrapping: base).stream(ModelRequest(messages: [.user("x")], tools: [Self.readFile])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .malformedResponse && failure.message.contains("not a JSON object") && failure.message.contains("scripted model"))
    }

    @Test func aToolThatWasNotOfferedIsRefused() async throws {
        let base = ScriptedModel(script: .init(replies: [.init(text: #"{"tool": "delete_everything", "arguments": {}}"#)]))
        let (_, error) = await collect(StructuredToolModel(wrapping: base).stream(ModelRequest(messages: [.user("x")], tools: [Self.readFile])))
        #expect((error as? LanguageModelError)?.message.contains("delete_everything") == true)
    }

    @Test func aRequestWithoutToolsPassesThrough() async throws {
        let base = ScriptedModel(script: .init(replies: [.init(text: "plain words")]))
        let reply = try await StructuredToolModel(wrapping: base).complete(ModelRequest(messages: [.user("x")]))
        #expect(reply.text == "plain words")
        #expect(base.receivedRequests.first?.options.responseSchema == nil)
    }
}
