import Foundation
import LanguageModels
import RelayEngine
import WorkspaceCore

extension ModelProvider {
    /// The models of a workspace: relay.json's `"model"` section with the environment's
    /// overrides (`RELAY_MODEL_URL`, `RELAY_MODEL`), `--model` on top; an agent's `model`
    /// field asks the same server for another model.
    /// - throws: `LanguageModelError` `.configuration` or `WorkspaceError` for a bad relay.json.
    static func forWorkspace(_ workspace: Workspace, model override: String? = nil) throws -> ModelProvider {
        var configuration = ModelConfiguration.localDefault
        // An unreadable relay.json leaves the local default; one that is not JSON is an error
        // naming its line and column, as every part of relay.json reports it.
        if let document = try workspace.relayJSONIfReadable() {
            configuration = try ModelConfiguration.load(relayJSON: document.document, file: workspace.root + "/relay.json")
        }
        var environment = ProcessInfo.processInfo.environment
        configuration = configuration.applyingEnvironment(environment)
        if let override { configuration.model = override }
        // Applied already; the factory would apply RELAY_MODEL again over --model and agents' models.
        environment["RELAY_MODEL"] = nil
        let root = workspace.root
        let base = try ModelFactory.make(configuration, environment: environment, relativeTo: root, logger: RelayLogging.logger)
        let frozen = configuration, frozenEnvironment = environment
        return ModelProvider(description: base.description) { agentModel in
            guard let agentModel, agentModel != frozen.model else { return base }
            var changed = frozen
            changed.model = agentModel
            return try ModelFactory.make(changed, environment: frozenEnvironment, relativeTo: root, logger: RelayLogging.logger)
        }
    }
}
