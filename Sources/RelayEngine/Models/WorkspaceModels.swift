import Foundation
import LanguageModels
import Logging
import WorkspaceCore

/// The one choice of a workspace's models, for every command that talks to one (`relay ask`,
/// `relay watch`, `relay resume`, `relay doctor`, the HTTP server): relay.json's `"model"`
/// section (the local default without one), the environment's overrides (`RELAY_MODEL_URL`,
/// `RELAY_MODEL`) applied once, here, and a command's `--model` on top. An agent's `model`
/// field asks the same server for another model.
///
/// For example:
/// ```swift
/// let models = try WorkspaceModels(workspace: workspace, model: "llama3.2")
/// let engine = RelayRunner(workspace: workspace, models: try models.provider(logger: logger), logger: logger)
/// ```
public struct WorkspaceModels: Sendable {
    /// The configuration in force: relay.json's (or the defaults), overrides applied.
    public private(set) var configuration: ModelConfiguration
    /// relay.json's path when its `"model"` section was read; nil when the defaults are used.
    public private(set) var file: String?
    /// The environment's variables that changed the configuration (`RELAY_MODEL_URL`, …).
    public private(set) var overrides: [String]
    /// What relative paths (a scripted model's file) are relative to: the workspace's root.
    public private(set) var root: String?
    /// The environment the models read their keys from (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
    private let environment: [String: String]

    /// The models of `workspace` (nil: outside a workspace, the defaults).
    /// - parameter model: a command's `--model`, over relay.json and `RELAY_MODEL`.
    /// - throws: `WorkspaceError` for a relay.json that is not JSON (naming its line and column),
    ///   `LanguageModelError` `.configuration` for a bad `"model"` section.
    public init(workspace: Workspace?, model override: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        var configuration = ModelConfiguration.localDefault
        // An unreadable relay.json leaves the local default; one that is not JSON is an error
        // naming its line and column, as every part of relay.json reports it.
        if let workspace, let document = try workspace.relayJSONIfReadable() {
            let file = workspace.root + "/" + WorkspaceLayout.configurationFileName
            configuration = try ModelConfiguration.load(relayJSON: document.document, file: file)
            self.file = file
        }
        overrides = ModelConfiguration.overridingVariables.filter { environment[$0]?.isEmpty == false }
        configuration = configuration.applyingEnvironment(environment)
        if let override { configuration.model = override }
        self.configuration = configuration
        self.environment = environment
        root = workspace?.root
    }

    /// The model `agentModel` names on the configured server (nil: the configured model).
    /// - throws: `LanguageModelError` `.configuration` (a bad URL, a missing key), `.script`.
    public func make(_ agentModel: String? = nil, settings: ModelHTTPSettings? = nil, logger: Logger) throws -> any LanguageModel {
        var chosen = configuration
        if let agentModel { chosen.model = agentModel }
        return try ModelFactory.make(resolved: chosen, keys: environment, relativeTo: root, settings: settings, logger: logger)
    }

    /// The provider a relay engine asks for each agent's model: the configured one made once.
    public func provider(logger: Logger) throws -> ModelProvider {
        let base = try make(logger: logger)
        let models = self
        return ModelProvider(description: base.description) { agentModel in
            guard let agentModel, agentModel != models.configuration.model else { return base }
            return try models.make(agentModel, logger: logger)
        }
    }
}

extension ModelProvider {
    /// The models of a workspace (`WorkspaceModels`), `--model` on top.
    public static func forWorkspace(_ workspace: Workspace, model override: String? = nil, logger: Logger = Workspace.silentLogger) throws -> ModelProvider {
        try WorkspaceModels(workspace: workspace, model: override).provider(logger: logger)
    }
}
