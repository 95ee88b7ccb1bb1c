import Foundation
import Logging

/// A client of OpenAI-compatible chat completions (`POST {baseURL}/chat/completions`, streamed
/// as server-sent events): llama.cpp's `llama-server`, Ollama, vLLM, LM Studio and OpenAI.
///
/// Tools go out as `tools` and come back as `tool_calls` deltas, which may be spread over any
/// number of chunks; they are emitted whole. A ``ModelOptions/responseSchema`` goes out as
/// `response_format: {"type": "json_schema", …}`. Usage is asked for with
/// `stream_options.include_usage`.
///
/// For example:
/// ```swift
/// let model = OpenAICompatibleModel(baseURL: "http://127.0.0.1:8080/v1", model: "SmolLM2-135M-Instruct", logger: logger)
/// let reply = try await model.complete(ModelRequest(messages: [.user("Say hi.")]))
/// ```
public struct OpenAICompatibleModel: LanguageModel {
    public var baseURL: String
    public var model: String
    /// Sent as `Authorization: Bearer …` when set (OpenAI, vLLM with --api-key); local servers need none.
    public var apiKey: String?
    public var defaultTemperature: Double?
    public var defaultMaxTokens: Int?
    public var settings: ModelHTTPSettings
    public var logger: Logger

    public init(
        baseURL: String, model: String, apiKey: String? = nil, defaultTemperature: Double? = nil, defaultMaxTokens: Int? = nil,
        settings: ModelHTTPSettings = ModelHTTPSettings(), logger: Logger
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.model = model
        self.apiKey = apiKey
        self.defaultTemperature = defaultTemperature
        self.defaultMaxTokens = defaultMaxTokens
        self.settings = settings
        self.logger = logger
    }

    public var description: String { "\(model) (openai-compatible) at \(baseURL)" }

    private var exchange: ModelHTTPExchange {
        ModelHTTPExchange(baseURL: baseURL, settings: settings, logger: logger, unreachableHint: "run `make model` or set RELAY_MODEL_URL", keyVariable: "OPENAI_API_KEY")
    }

    private var headers: [(String, String)] {
        apiKey.map { [("Authorization", "Bearer \($0)")] } ?? []
    }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        let url = baseURL + "/chat/completions"
        let body: Data
        do {
            body = try OpenAIWire.requestBody(request, model: model, temperature: defaultTemperature, maxTokens: defaultMaxTokens)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let exchange = self.exchange, headers = self.headers
        return makeEventStream { continuation in
            let response = try await exchange.post(url, headers: headers, body: body)
            var decoder = OpenAIStreamDecoder(url: url)
            try await exchange.pump(response, into: &decoder, url: url, continuation)
            for modelEvent in try decoder.finish() { continuation.yield(modelEvent) }
        }
    }

    public func servedModels() async throws -> [String] {
        let data = try await exchange.get(baseURL + "/models", headers: headers)
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw LanguageModelError(.malformedResponse, "\(baseURL)/models did not answer with JSON", url: baseURL + "/models")
        }
        let entries = json["data"]?.arrayValue ?? json["models"]?.arrayValue ?? []
        return entries.compactMap { $0["id"]?.stringValue ?? $0["model"]?.stringValue ?? $0["name"]?.stringValue }
    }

    /// How many requests the server works on at once — llama-server's slots (`GET /props`'s
    /// `total_slots`, else the length of `GET /slots`); nil for servers that say nothing of it
    /// (vLLM, OpenAI). The paths are at the server's root, beside `/v1`.
    public func concurrentRequests() async -> Int? {
        let root = baseURL.hasSuffix("/v1") ? String(baseURL.dropLast(3)) : baseURL
        if let data = try? await exchange.get(root + "/props", headers: headers),
           let json = try? JSONDecoder().decode(JSONValue.self, from: data), let slots = json["total_slots"]?.intValue {
            return slots
        }
        if let data = try? await exchange.get(root + "/slots", headers: headers),
           let json = try? JSONDecoder().decode(JSONValue.self, from: data), let slots = json.arrayValue {
            return slots.count
        }
        return nil
    }
}
