import Foundation

/// Which model Relay talks to: the `"model"` section of a workspace's relay.json.
///
/// ```json
/// "model": {
///   "provider": "openai-compatible",
///   "baseURL": "http://127.0.0.1:8080/v1",
///   "model": "SmolLM2-135M-Instruct",
///   "contextTokens": 4096,
///   "temperature": 0.3,
///   "toolMode": "auto"
/// }
/// ```
///
/// Every field may be left out; the defaults are the local llama-server of `make model`.
/// Unknown fields are an error that names them. The environment overrides the file:
/// `RELAY_MODEL_URL` (baseURL) and `RELAY_MODEL` (model); keys come only from the environment
/// (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), never from a file.
///
/// For example:
/// ```swift
/// let configuration = try ModelConfiguration.load(relayJSON: data, file: "relay.json")
///     .applyingEnvironment(ProcessInfo.processInfo.environment)
/// let model = try ModelFactory.make(configuration, logger: logger)
/// ```
public struct ModelConfiguration: Sendable, Equatable {
    public enum Provider: String, Codable, Sendable, CaseIterable {
        case openAICompatible = "openai-compatible"
        case anthropic
        case scripted
    }

    /// How tools reach the model: `native` tool calls, the `structured` reply schema (for
    /// models that cannot call tools), `none` (no tools), or `auto` (native for Anthropic and
    /// OpenAI's own API, structured for other OpenAI-compatible servers — the local default
    /// never calls tools natively; `relay doctor` says whether a server does).
    public enum ToolMode: String, Codable, Sendable, CaseIterable { case auto, native, structured, none }

    public static let defaultBaseURL = "http://127.0.0.1:8080/v1"
    public static let defaultLocalModel = "SmolLM2-135M-Instruct"

    public var provider: Provider = .openAICompatible
    /// The server's API root, e.g. `http://127.0.0.1:8080/v1`; nil: the provider's default.
    public var baseURL: String?
    /// The model's name as the server knows it; nil: the local default (OpenAI-compatible).
    public var model: String?
    /// The model's context window in tokens (prompts are cut to fit by the relay engine).
    public var contextTokens: Int = 4096
    public var temperature: Double?
    public var toolMode: ToolMode = .auto
    /// The scripted provider's reply file (relative paths: to the workspace).
    public var script: String?
    /// The most tokens a reply may have, unless a request says otherwise.
    public var maxTokens: Int?
    /// The longest silence allowed from the server, in seconds (default 120).
    public var timeoutSeconds: Double?

    public init(
        provider: Provider = .openAICompatible, baseURL: String? = nil, model: String? = nil, contextTokens: Int = 4096,
        temperature: Double? = nil, toolMode: ToolMode = .auto, script: String? = nil, maxTokens: Int? = nil, timeoutSeconds: Double? = nil
    ) {
        self.provider = provider
        self.baseURL = baseURL
        self.model = model
        self.contextTokens = contextTokens
        self.temperature = temperature
        self.toolMode = toolMode
        self.script = script
        self.maxTokens = maxTokens
        self.timeoutSeconds = timeoutSeconds
    }

    /// No configuration at all: the local llama-server of `make model`.
    public static let localDefault = ModelConfiguration()

    /// The base URL in use: the configured one (with `/v1` added to a bare `http://host:port`
    /// for OpenAI-compatible servers), or the provider's default.
    public var resolvedBaseURL: String {
        guard var url = baseURL?.trimmingCharacters(in: .whitespaces), !url.isEmpty else {
            return provider == .anthropic ? AnthropicModel.defaultBaseURL : Self.defaultBaseURL
        }
        while url.hasSuffix("/") { url.removeLast() }
        if let parsed = URLComponents(string: url), parsed.path.isEmpty, provider != .scripted { url += "/v1" }
        return url
    }

    /// The model name in use.
    public var resolvedModel: String? {
        if let model, !model.isEmpty { return model }
        return provider == .openAICompatible ? Self.defaultLocalModel : nil
    }

    /// The tool mode `auto` stands for with this provider and URL.
    public var resolvedToolMode: ToolMode {
        guard toolMode == .auto else { return toolMode }
        switch provider {
        case .anthropic, .scripted: return .native
        case .openAICompatible:
            return URLComponents(string: resolvedBaseURL)?.host == "api.openai.com" ? .native : .structured
        }
    }

    /// The environment variables that override the file.
    public static let overridingVariables = ["RELAY_MODEL_URL", "RELAY_MODEL"]

    /// This configuration with `RELAY_MODEL_URL` and `RELAY_MODEL` applied (empty values are ignored).
    public func applyingEnvironment(_ environment: [String: String]) -> ModelConfiguration {
        var result = self
        if let url = environment["RELAY_MODEL_URL"], !url.isEmpty { result.baseURL = url }
        if let model = environment["RELAY_MODEL"], !model.isEmpty { result.model = model }
        return result
    }
}

extension ModelConfiguration: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case provider, baseURL, model, contextTokens, temperature, toolMode, script, maxTokens, timeoutSeconds
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [unknown], debugDescription: "unknown field; the fields are \(CodingKeys.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func choice<T: RawRepresentable & CaseIterable>(_ key: CodingKeys, _ type: T.Type) throws -> T? where T.RawValue == String {
            guard let raw = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            guard let value = T(rawValue: raw) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "\"\(raw)\" is not one of \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            }
            return value
        }
        provider = try choice(.provider, Provider.self) ?? .openAICompatible
        toolMode = try choice(.toolMode, ToolMode.self) ?? .auto
        baseURL = try container.decodeIfPresent(String.self, forKey: .baseURL)
        model = try container.decodeIfPresent(String.self, forKey: .model)
        contextTokens = try container.decodeIfPresent(Int.self, forKey: .contextTokens) ?? 4096
        temperature = try container.decodeIfPresent(Double.self, forKey: .temperature)
        script = try container.decodeIfPresent(String.self, forKey: .script)
        maxTokens = try container.decodeIfPresent(Int.self, forKey: .maxTokens)
        timeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .timeoutSeconds)
        if contextTokens < 256 {
            throw DecodingError.dataCorruptedError(forKey: .contextTokens, in: container, debugDescription: "must be at least 256 tokens, not \(contextTokens)")
        }
        if let temperature, !(0...2).contains(temperature) {
            throw DecodingError.dataCorruptedError(forKey: .temperature, in: container, debugDescription: "must be between 0 and 2, not \(temperature)")
        }
        if let maxTokens, maxTokens < 1 {
            throw DecodingError.dataCorruptedError(forKey: .maxTokens, in: container, debugDescription: "must be 1 or more")
        }
        if let timeoutSeconds, !(timeoutSeconds > 0) {
            throw DecodingError.dataCorruptedError(forKey: .timeoutSeconds, in: container, debugDescription: "must be more than 0 seconds")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(provider, forKey: .provider)
        try container.encodeIfPresent(baseURL, forKey: .baseURL)
        try container.encodeIfPresent(model, forKey: .model)
        try container.encode(contextTokens, forKey: .contextTokens)
        try container.encodeIfPresent(temperature, forKey: .temperature)
        try container.encode(toolMode, forKey: .toolMode)
        try container.encodeIfPresent(script, forKey: .script)
        try container.encodeIfPresent(maxTokens, forKey: .maxTokens)
        try container.encodeIfPresent(timeoutSeconds, forKey: .timeoutSeconds)
    }
}
