import Foundation
import Logging

/// A client of Anthropic's Messages API (`POST {baseURL}/messages`, streamed), with tools.
///
/// The key comes from the environment (`ANTHROPIC_API_KEY`, read by ``ModelFactory``), never
/// from a workspace file. System messages become the `system` field; tool results go back as
/// `tool_result` blocks of a user turn, as the API wants.
///
/// For example:
/// ```swift
/// let model = AnthropicModel(model: "claude-sonnet-4-5", apiKey: key, logger: logger)
/// for try await event in model.stream(ModelRequest(messages: [.user("Hi")])) { print(event) }
/// ```
public struct AnthropicModel: LanguageModel {
    public static let defaultBaseURL = "https://api.anthropic.com/v1"
    public static let apiVersion = "2023-06-01"

    public var baseURL: String
    public var model: String
    public var apiKey: String
    public var defaultTemperature: Double?
    /// The API requires a limit on the reply; this one applies when the request names none.
    public var defaultMaxTokens: Int
    public var settings: ModelHTTPSettings
    public var logger: Logger

    public init(
        baseURL: String = AnthropicModel.defaultBaseURL, model: String, apiKey: String, defaultTemperature: Double? = nil,
        defaultMaxTokens: Int = 1024, settings: ModelHTTPSettings = ModelHTTPSettings(), logger: Logger
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.model = model
        self.apiKey = apiKey
        self.defaultTemperature = defaultTemperature
        self.defaultMaxTokens = defaultMaxTokens
        self.settings = settings
        self.logger = logger
    }

    public var description: String { "\(model) (anthropic) at \(baseURL)" }

    private var exchange: ModelHTTPExchange {
        ModelHTTPExchange(baseURL: baseURL, settings: settings, logger: logger, unreachableHint: "check the network, or set RELAY_MODEL_URL", keyVariable: "ANTHROPIC_API_KEY")
    }

    private var headers: [(String, String)] { [("x-api-key", apiKey), ("anthropic-version", Self.apiVersion)] }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        let url = baseURL + "/messages"
        if request.options.responseSchema != nil {
            let error = LanguageModelError(
                .configuration, "Anthropic's Messages API (\(url)) takes no response schema — use toolMode \"native\" with provider \"anthropic\"", url: url)
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let body: Data
        do {
            body = try AnthropicWire.requestBody(request, model: model, temperature: defaultTemperature, maxTokens: defaultMaxTokens)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let exchange = self.exchange, headers = self.headers
        return makeEventStream { continuation in
            let response = try await exchange.post(url, headers: headers, body: body)
            var decoder = AnthropicStreamDecoder(url: url)
            try await exchange.pump(response, into: &decoder, url: url, continuation)
            guard decoder.isDone else {
                throw LanguageModelError(.malformedResponse, "the reply from \(url) ended before message_stop", url: url)
            }
        }
    }

    public func servedModels() async throws -> [String] {
        let data = try await exchange.get(baseURL + "/models", headers: headers)
        let json = try? JSONDecoder().decode(JSONValue.self, from: data)
        return (json?["data"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }
}
