import Foundation
import Logging

/// Makes the model a ``ModelConfiguration`` describes, with the environment's overrides and
/// keys, wrapped for its tool mode.
///
/// For example:
/// ```swift
/// // No configuration: the local llama-server of `make model`, in structured tool mode.
/// let model = try ModelFactory.make(.localDefault, logger: logger)
/// ```
public enum ModelFactory {
    /// - parameter environment: where overrides (`RELAY_MODEL_URL`, `RELAY_MODEL`) and keys
    ///   (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) come from.
    /// - parameter directory: what a relative scripted-model path is relative to (the workspace).
    /// - throws: ``LanguageModelError/Code/configuration`` for a bad URL, a missing model name
    ///   or key, or a tool mode the provider cannot do; ``LanguageModelError/Code/script`` for a
    ///   bad script file.
    public static func make(
        _ configuration: ModelConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
        relativeTo directory: String? = nil, settings: ModelHTTPSettings? = nil, logger: Logger
    ) throws -> any LanguageModel {
        try make(resolved: configuration.applyingEnvironment(environment), keys: environment, relativeTo: directory,
                 settings: settings, logger: logger)
    }

    /// The model of a configuration whose overrides are applied already (RelayEngine's
    /// `WorkspaceModels` applies them once, before `--model` and agents' models): `keys` is
    /// read for API keys only, never for `RELAY_MODEL_URL` or `RELAY_MODEL`.
    public static func make(
        resolved configuration: ModelConfiguration, keys: [String: String], relativeTo directory: String? = nil,
        settings: ModelHTTPSettings? = nil, logger: Logger
    ) throws -> any LanguageModel {
        let environment = keys
        var settings = settings ?? ModelHTTPSettings()
        if let seconds = configuration.timeoutSeconds { settings.idleTimeout = .milliseconds(Int64(seconds * 1000)) }
        let base: any LanguageModel
        switch configuration.provider {
        case .scripted:
            guard let script = configuration.script, !script.isEmpty else {
                throw LanguageModelError(.configuration, "model.script: the scripted provider needs \"script\", the path of its reply file")
            }
            let path = script.hasPrefix("/") || directory == nil ? script : directory! + "/" + script
            base = try ScriptedModel(contentsOf: path)
        case .openAICompatible:
            let url = try validatedURL(configuration, environment: environment)
            base = OpenAICompatibleModel(
                baseURL: url, model: configuration.resolvedModel ?? ModelConfiguration.defaultLocalModel,
                apiKey: environment["OPENAI_API_KEY"].flatMap { $0.isEmpty ? nil : $0 },
                defaultTemperature: configuration.temperature, defaultMaxTokens: configuration.maxTokens, settings: settings, logger: logger)
        case .anthropic:
            let url = try validatedURL(configuration, environment: environment)
            guard let key = environment["ANTHROPIC_API_KEY"], !key.isEmpty else {
                throw LanguageModelError(.configuration, "provider \"anthropic\" needs a key: set ANTHROPIC_API_KEY in the environment (keys are never read from relay.json)", url: url)
            }
            guard let model = configuration.resolvedModel else {
                throw LanguageModelError(.configuration, "model.model: provider \"anthropic\" needs a model name, e.g. \"claude-sonnet-4-5\" (or set RELAY_MODEL)", url: url)
            }
            base = AnthropicModel(
                baseURL: url, model: model, apiKey: key, defaultTemperature: configuration.temperature,
                defaultMaxTokens: configuration.maxTokens ?? 1024, settings: settings, logger: logger)
        }
        switch configuration.resolvedToolMode {
        case .native, .auto: return base
        case .none: return ToolsWithheldModel(wrapping: base)
        case .structured:
            guard configuration.provider == .openAICompatible else {
                throw LanguageModelError(.configuration, "model.toolMode: \"structured\" needs an OpenAI-compatible server (it uses response_format); \(configuration.provider.rawValue) calls tools natively — use \"native\" or \"auto\"")
            }
            return StructuredToolModel(wrapping: base)
        }
    }

    private static func validatedURL(_ configuration: ModelConfiguration, environment: [String: String]) throws -> String {
        let url = configuration.resolvedBaseURL
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, ["http", "https"].contains(scheme), parts.host?.isEmpty == false else {
            let from = environment["RELAY_MODEL_URL"].map { $0.isEmpty ? "model.baseURL" : "RELAY_MODEL_URL" } ?? "model.baseURL"
            throw LanguageModelError(.configuration, "\(from): \"\(url)\" is not an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1)", url: url)
        }
        return url
    }
}
