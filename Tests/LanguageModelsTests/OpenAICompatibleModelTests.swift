import Foundation
import Logging
import NIOCore
import RelayTestKit
import Testing
@testable import LanguageModels

/// The OpenAI-compatible client against a real HTTP server on loopback speaking the chat
/// completions wire format (as llama-server, Ollama, vLLM and OpenAI do).
@Suite("OpenAI-compatible client")
struct OpenAICompatibleModelTests {
    static let logger = Logger(label: "test")

    static func model(_ server: FakeModelServer, settings: ModelHTTPSettings = fastSettings) -> OpenAICompatibleModel {
        OpenAICompatibleModel(baseURL: server.baseURL, model: "test-model", settings: settings, logger: logger)
    }

    static var fastSettings: ModelHTTPSettings {
        var settings = ModelHTTPSettings()
        settings.initialBackoff = .milliseconds(10)
        // Generous: on a loaded two-core machine an in-process server can stall for seconds.
        settings.idleTimeout = .seconds(60)
        return settings
    }

    static func chunk(_ delta: String, finish: String? = nil) -> String {
        let reason = finish.map { "\"\($0)\"" } ?? "null"
        return #"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":\#(delta),"finish_reason":\#(reason)}]}"# + "\n\n"
    }

    static let usageChunk = #"data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":21,"completion_tokens":7,"total_tokens":28}}"# + "\n\n"

    static let textStream = chunk(#"{"role":"assistant","content":""}"#) + chunk(#"{"content":"Llamas 🦙 "}"#)
        + Self.chunk(#"{"content":"are camélids."}"#) + Self.chunk("{}", finish: "stop") + Self.usageChunk + "data: [DONE]\n\n"

    @Test func aStreamCutMidLineAndMidCharacterGivesTheWholeTextAndUsage() async throws {
        // 7-byte pieces cut "🦙" (4 bytes) and "é" (2 bytes) and nearly every line.
        let server = try await FakeModelServer.start { _, _ in .sse(bytes: byteChunks(Self.textStream, size: 7), gap: .milliseconds(2)) }
        defer { Task { await server.stop() } }
        let (events, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.system("Be brief."), .user("Llamas?")])))
        #expect(error == nil)
        let text = events.compactMap { if case .text(let t) = $0 { t } else { nil } }.joined()
        #expect(text == "Llamas 🦙 are camélids.")
        #expect(events.suffix(2) == [.usage(TokenUsage(promptTokens: 21, completionTokens: 7)), .finished(.stop)])

        let sent = try #require(server.requests.first)
        #expect(sent.uri == "/v1/chat/completions" && sent.method == "POST")
        let json = try #require(sent.json)
        #expect(json["stream"] as? Bool == true && json["model"] as? String == "test-model")
        #expect((json["stream_options"] as? [String: Any])?["include_usage"] as? Bool == true)
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.map { $0["role"] as? String } == ["system", "user"])
    }

    @Test func toolCallDeltasSpreadOverManyChunksBecomeWholeCalls() async throws {
        let arguments = #"{"path": "Research/llamas/summary.md", "note": "ünïcode"}"#
        var stream = Self.chunk(#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_","arguments":""}}]}"#)
        stream += Self.chunk(#"{"tool_calls":[{"index":0,"function":{"name":"file"}}]}"#)
        // Argument text in 4-character pieces, each JSON-escaped into its own chunk.
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let end = arguments.index(index, offsetBy: 4, limitedBy: arguments.endIndex) ?? arguments.endIndex
            let piece = String(arguments[index..<end])
            let escaped = String(decoding: try JSONEncoder().encode(piece), as: UTF8.self)
            stream += Self.chunk(#"{"tool_calls":[{"index":0,"function":{"arguments":\#(escaped)}}]}"#)
            index = end
        }
        stream += Self.chunk(#"{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"list_files","arguments":"{}"}}]}"#)
        stream += Self.chunk("{}", finish: "tool_calls") + Self.usageChunk + "data: [DONE]\n\n"
        let body = stream
        let server = try await FakeModelServer.start { _, _ in .sse(bytes: byteChunks(body, size: 50), gap: .milliseconds(1)) }
        defer { Task { await server.stop() } }
        let readFile = ToolDefinition(name: "read_file", description: "Read a file.", parameters: ["type": "object", "properties": ["path": ["type": "string"]]])
        let (events, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("read it")], tools: [readFile])))
        #expect(error == nil)
        #expect(events == [
            .toolCall(ToolCall(id: "call_abc", name: "read_file", arguments: arguments)),
            .toolCall(ToolCall(id: "call_def", name: "list_files", arguments: "{}")),
            .usage(TokenUsage(promptTokens: 21, completionTokens: 7)),
            .finished(.toolCalls),
        ])
        let tools = try #require(server.requests.first?.json?["tools"] as? [[String: Any]])
        #expect((tools.first?["function"] as? [String: Any])?["name"] as? String == "read_file")
    }

    @Test func a429IsRetriedAfterTheServersRetryAfter() async throws {
        let server = try await FakeModelServer.start { _, number in
            number == 0 ? .json(429, #"{"error":{"message":"slow down"}}"#, headers: [("Retry-After", "1")]) : .sse(Self.textStream)
        }
        defer { Task { await server.stop() } }
        // The wait the client chose, from its log line, not from a clock: Retry-After's
        // 1 second, not the 10 ms back-off of these settings.
        let lines = LockedBox<[CapturedLine]>([])
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines) }
        logger.logLevel = .info
        let model = OpenAICompatibleModel(baseURL: server.baseURL, model: "test-model", settings: Self.fastSettings, logger: logger)
        let reply = try await model.complete(ModelRequest(messages: [.user("hi")]))
        #expect(reply.text == "Llamas 🦙 are camélids.")
        #expect(server.requests.count == 2)
        let retry = try #require(lines.value.first { $0.metadata["relay.model.status"] == "429" }, "no retry was logged")
        #expect(retry.metadata["relay.model.retry_in_s"] == "1.0", "Retry-After: 1 was not honoured: \(retry.metadata)")
    }

    @Test func repeated500sFailAfterTheLastAttemptWithTheServersMessage() async throws {
        let server = try await FakeModelServer.start { _, _ in .json(500, #"{"error":{"message":"out of memory"}}"#) }
        defer { Task { await server.stop() } }
        await #expect {
            _ = try await Self.model(server).complete(ModelRequest(messages: [.user("hi")]))
        } throws: { error in
            guard let error = error as? LanguageModelError else { return false }
            return error.code == .httpStatus && error.status == 500 && error.message.contains(server.baseURL)
                && error.message.contains("out of memory") && error.message.contains("tried 3 times")
        }
        #expect(server.requests.count == 3)
    }

    @Test func aBadRequestIsNotRetried() async throws {
        let server = try await FakeModelServer.start { _, _ in .json(400, #"{"error":{"message":"bad schema"}}"#) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect((error as? LanguageModelError)?.status == 400 && (error as? LanguageModelError)?.message.contains("bad schema") == true)
        #expect(server.requests.count == 1)
    }

    @Test func aRefusedKeyNamesTheVariableToSet() async throws {
        let server = try await FakeModelServer.start { _, _ in .json(401, #"{"error":{"message":"invalid api key"}}"#) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .authentication && failure.message.contains("OPENAI_API_KEY"))
    }

    @Test func aChunkThatIsNotJSONIsAClearErrorNamingTheURL() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse([Self.chunk(#"{"content":"ok"}"#), "data: {\"choices\": [oops\n\n"]) }
        defer { Task { await server.stop() } }
        let (events, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect(events == [.text("ok")])
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .malformedResponse && failure.message.contains(server.baseURL) && failure.message.contains("oops"))
    }

    @Test func aStreamThatEndsWithoutFinishingIsAnError() async throws {
        let server = try await FakeModelServer.start { _, _ in
            .reply(status: 200, headers: [("Content-Type", "text/event-stream")], chunks: [Array(Self.chunk(#"{"content":"half"}"#).utf8)], gap: .milliseconds(5), hangUp: true)
        }
        defer { Task { await server.stop() } }
        let (events, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect(events == [.text("half")])
        #expect((error as? LanguageModelError)?.code == .malformedResponse)
    }

    @Test func aServerThatStallsTimesOut() async throws {
        let server = try await FakeModelServer.start { _, _ in .stall }
        defer { Task { await server.stop() } }
        var settings = Self.fastSettings
        settings.idleTimeout = .milliseconds(500)
        let (_, error) = await collect(Self.model(server, settings: settings).stream(ModelRequest(messages: [.user("hi")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .timeout && failure.message.contains(server.baseURL) && failure.message.contains("before answering"))
    }

    @Test func aServerThatStallsMidReplyTimesOut() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse([Self.chunk(#"{"content":"first"}"#), Self.chunk(#"{"content":"never"}"#)], gap: .seconds(30)) }
        defer { Task { await server.stop() } }
        var settings = Self.fastSettings
        settings.idleTimeout = .milliseconds(400)
        let (events, error) = await collect(Self.model(server, settings: settings).stream(ModelRequest(messages: [.user("hi")])))
        #expect(events == [.text("first")])
        #expect((error as? LanguageModelError)?.code == .timeout)
    }

    @Test func noServerIsAClearErrorThatNamesTheURLAndWhatToDo() async throws {
        let url = "http://127.0.0.1:\(FakeModelServer.freePort())/v1"
        var settings = Self.fastSettings
        settings.connectTimeout = .seconds(60)
        let model = OpenAICompatibleModel(baseURL: url, model: "m", settings: settings, logger: Self.logger)
        let (_, error) = await collect(model.stream(ModelRequest(messages: [.user("hi")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .unreachable)
        // "connection refused", not "connecting timed out": it failed at once, without waiting.
        #expect(failure.message.hasPrefix("no model server at \(url) (connection refused) — "))
        #expect(failure.message.contains("make model") && failure.message.contains("RELAY_MODEL_URL"))
    }

    @Test func aResponseSchemaGoesOutAsResponseFormat() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse(Self.textStream) }
        defer { Task { await server.stop() } }
        let schema: JSONValue = ["type": "object", "properties": ["answer": ["type": "string"]]]
        _ = try await Self.model(server).complete(ModelRequest(messages: [.user("hi")], options: ModelOptions(maxTokens: 5, responseSchema: ResponseSchema(name: "reply", schema: schema))))
        let json = try #require(server.requests.first?.json)
        let format = try #require(json["response_format"] as? [String: Any])
        #expect(format["type"] as? String == "json_schema")
        #expect(((format["json_schema"] as? [String: Any])?["schema"] as? [String: Any])?["type"] as? String == "object")
        #expect(json["max_tokens"] as? Int == 5)
    }

    @Test func stoppingEarlyCancelsTheRequestAndTheNextOneStillWorks() async throws {
        let server = try await FakeModelServer.start { _, number in
            number == 0 ? .sse([Self.chunk(#"{"content":"one"}"#), Self.chunk(#"{"content":"two"}"#)], gap: .seconds(30)) : .sse(Self.textStream)
        }
        defer { Task { await server.stop() } }
        let model = Self.model(server)
        var first: ModelEvent?
        for try await event in model.stream(ModelRequest(messages: [.user("long")])) {
            first = event
            break  // the consumer has seen enough; the 30 s pause must not hold it
        }
        #expect(first == .text("one"))
        let reply = try await model.complete(ModelRequest(messages: [.user("again")]))
        #expect(reply.text == "Llamas 🦙 are camélids." && server.requests.count == 2)
    }

    @Test func servedModelsReadsTheModelList() async throws {
        let server = try await FakeModelServer.start { request, _ in
            request.uri == "/v1/models" ? .json(200, #"{"object":"list","data":[{"id":"SmolLM2-135M-Instruct","object":"model"}]}"#) : .json(404, "{}")
        }
        defer { Task { await server.stop() } }
        #expect(try await Self.model(server).servedModels() == ["SmolLM2-135M-Instruct"])
    }

    @Test func anErrorEventMidStreamEndsTheStreamWithTheServersMessage() async throws {
        let server = try await FakeModelServer.start { _, _ in .sse([Self.chunk(#"{"content":"a"}"#), #"data: {"error":{"code":500,"message":"context size exceeded"}}"# + "\n\n"]) }
        defer { Task { await server.stop() } }
        let (_, error) = await collect(Self.model(server).stream(ModelRequest(messages: [.user("hi")])))
        #expect((error as? LanguageModelError)?.message.contains("context size exceeded") == true)
    }
}

/// A log line a test reads back: message and metadata as strings.
struct CapturedLine: Sendable {
    var message: String
    var metadata: [String: String]
}

/// A swift-log handler that keeps every line in a lock box.
struct CapturingLogHandler: LogHandler {
    let log: LockedBox<[CapturedLine]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    init(_ log: LockedBox<[CapturedLine]>) { self.log = log }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let all = self.metadata.merging(metadata ?? [:]) { _, new in new }
        log.mutate { $0.append(CapturedLine(message: message.description, metadata: all.mapValues { "\($0)" })) }
    }
}
