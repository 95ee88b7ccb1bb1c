import LanguageModels

/// The models a run may use: the workspace's, and others by name for agents with a `model`.
public struct ModelProvider: Sendable {
    /// Who answers, for the transcript ("openai-compatible SmolLM2-135M-Instruct at http://…").
    public var description: String
    public var make: @Sendable (_ agentModel: String?) throws -> any LanguageModel

    public init(description: String, make: @escaping @Sendable (_ agentModel: String?) throws -> any LanguageModel) {
        self.description = description
        self.make = make
    }

    /// One model for every agent (tests, the scripted model).
    public static func single(_ model: any LanguageModel) -> ModelProvider {
        ModelProvider(description: model.description) { _ in model }
    }
}
