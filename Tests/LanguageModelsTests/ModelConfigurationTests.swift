import Foundation
import Logging
import Testing
@testable import LanguageModels

/// relay.json's "model" section: defaults, environment overrides, and errors naming file, line and field.
@Suite("Model configuration")
struct ModelConfigurationTests {
    static let logger = Logger(label: "test")

    /// The template's relay.json, as `relay init` writes it.
    static var templateRelayJSON: Data {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try Data(contentsOf: root.appendingPathComponent("workspace-template/relay.json"))
        }
    }

    @Test func theTemplatesModelSectionReadsAsTheLocalDefault() throws {
        let configuration = try ModelConfiguration.load(relayJSON: try Self.templateRelayJSON, file: "relay.json")
        #expect(configuration.provider == .openAICompatible)
        #expect(configuration.resolvedBaseURL == "http://127.0.0.1:8080/v1")
        #expect(configuration.resolvedModel == "SmolLM2-135M-Instruct")
        #expect(configuration.contextTokens == 4096 && configuration.temperature == 0 && configuration.toolMode == .auto)
        #expect(configuration.resolvedToolMode == .structured, "the local default never calls tools natively")
    }

    @Test func noModelSectionMeansTheLocalDefault() throws {
        let configuration = try ModelConfiguration.load(relayJSON: Data(#"{"version": 1}"#.utf8), file: "relay.json")
        #expect(configuration == .localDefault)
        let model = try ModelFactory.make(configuration, environment: [:], logger: Self.logger)
        #expect(model is StructuredToolModel)
        #expect(model.description == "SmolLM2-135M-Instruct (openai-compatible) at http://127.0.0.1:8080/v1, structured tool mode")
    }

    @Test func aBadValueNamesTheFileTheLineAndTheField() {
        let text = "{\n  \"version\": 1,\n  \"model\": {\n    \"provider\": \"openai-compatible\",\n    \"toolMode\": \"magic\"\n  }\n}\n"
        #expect {
            _ = try ModelConfiguration.load(relayJSON: Data(text.utf8), file: "/ws/relay.json")
        } throws: { error in
            let message = (error as? LanguageModelError)?.message ?? ""
            return message.hasPrefix("/ws/relay.json:5: model.toolMode:") && message.contains(#""magic" is not one of "auto", "native", "structured", "none""#)
        }
    }

    @Test func aWrongTypeAndAnUnknownFieldAreNamed() {
        let wrongType = "{\"model\": {\n\"contextTokens\": \"big\"}}"
        #expect {
            _ = try ModelConfiguration.load(relayJSON: Data(wrongType.utf8), file: "relay.json")
        } throws: { ($0 as? LanguageModelError)?.message == "relay.json:2: model.contextTokens: expected a whole number" }

        let unknown = "{\"model\": {\"provider\": \"anthropic\",\n\n \"temprature\": 0.5}}"
        #expect {
            _ = try ModelConfiguration.load(relayJSON: Data(unknown.utf8), file: "relay.json")
        } throws: { error in
            let message = (error as? LanguageModelError)?.message ?? ""
            return message.hasPrefix("relay.json:3: model.temprature: unknown field") && message.contains("temperature")
        }
    }

    @Test func invalidJSONNamesTheLine() {
        #expect {
            _ = try ModelConfiguration.load(relayJSON: Data("{\n\"model\": {\n\"provider\": ,\n}}".utf8), file: "relay.json")
        } throws: { error in
            let failure = error as? LanguageModelError
            return failure?.code == .configuration && failure?.message == "relay.json:3:13: expected a value, found ','"
        }
    }

    @Test func theEnvironmentOverridesURLAndModel() throws {
        let configuration = ModelConfiguration.localDefault.applyingEnvironment(["RELAY_MODEL_URL": "http://10.0.0.5:11434", "RELAY_MODEL": "llama3.2"])
        #expect(configuration.resolvedBaseURL == "http://10.0.0.5:11434/v1", "a bare host:port gets /v1")
        #expect(configuration.resolvedModel == "llama3.2")
        let model = try ModelFactory.make(.localDefault, environment: ["RELAY_MODEL_URL": "http://10.0.0.5:11434/v1", "RELAY_MODEL": "llama3.2"], logger: Self.logger)
        #expect(model.description.hasPrefix("llama3.2 (openai-compatible) at http://10.0.0.5:11434/v1"))
    }

    @Test func aBadURLFromTheEnvironmentSaysWhereItCameFrom() {
        #expect {
            _ = try ModelFactory.make(.localDefault, environment: ["RELAY_MODEL_URL": "localhost:8080"], logger: Self.logger)
        } throws: { ($0 as? LanguageModelError)?.message.hasPrefix("RELAY_MODEL_URL: \"localhost:8080\" is not an http://") == true }
    }

    @Test func anthropicNeedsItsKeyFromTheEnvironmentAndCallsToolsNatively() throws {
        let configuration = ModelConfiguration(provider: .anthropic, model: "claude-sonnet-4-5")
        #expect {
            _ = try ModelFactory.make(configuration, environment: [:], logger: Self.logger)
        } throws: { ($0 as? LanguageModelError)?.message.contains("ANTHROPIC_API_KEY") == true }
        let model = try ModelFactory.make(configuration, environment: ["ANTHROPIC_API_KEY": "sk-x"], logger: Self.logger)
        let anthropic = try #require(model as? AnthropicModel)
        #expect(anthropic.baseURL == "https://api.anthropic.com/v1" && anthropic.apiKey == "sk-x")
        #expect {
            _ = try ModelFactory.make(ModelConfiguration(provider: .anthropic, model: "c", toolMode: .structured), environment: ["ANTHROPIC_API_KEY": "k"], logger: Self.logger)
        } throws: { ($0 as? LanguageModelError)?.message.contains("model.toolMode") == true }
    }

    @Test func toolModesWrapTheClient() throws {
        let openAI = ModelConfiguration(baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini")
        #expect(try ModelFactory.make(openAI, environment: ["OPENAI_API_KEY": "sk"], logger: Self.logger) is OpenAICompatibleModel)
        var none = ModelConfiguration.localDefault
        none.toolMode = .none
        #expect(try ModelFactory.make(none, environment: [:], logger: Self.logger) is ToolsWithheldModel)
        var native = ModelConfiguration.localDefault
        native.toolMode = .native
        #expect(try ModelFactory.make(native, environment: [:], logger: Self.logger) is OpenAICompatibleModel)
    }

    @Test func theScriptedProviderReadsItsFileRelativeToTheWorkspace() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/relay-cfg-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try #"{"replies": [{"text": "hi"}]}"#.write(toFile: folder + "/script.json", atomically: true, encoding: .utf8)
        let configuration = try ModelConfiguration.load(relayJSON: Data(#"{"model": {"provider": "scripted", "script": "script.json"}}"#.utf8), file: "relay.json")
        let model = try ModelFactory.make(configuration, environment: [:], relativeTo: folder, logger: Self.logger)
        #expect(model.description == "scripted model (\(folder)/script.json)")
    }

    @Test func backOffDoublesHonoursRetryAfterAndIsCapped() {
        var settings = ModelHTTPSettings()
        settings.initialBackoff = .seconds(1)
        settings.maxBackoff = .seconds(10)
        #expect((0.8...1.2).contains(settings.backoff(afterAttempt: 1, retryAfter: nil).seconds))
        #expect((3.2...4.8).contains(settings.backoff(afterAttempt: 3, retryAfter: nil).seconds))
        #expect(settings.backoff(afterAttempt: 9, retryAfter: nil) == .seconds(10))
        #expect(settings.backoff(afterAttempt: 1, retryAfter: .seconds(3)) == .seconds(3))
        #expect(settings.backoff(afterAttempt: 1, retryAfter: .seconds(300)) == .seconds(10))
        #expect(ModelHTTPExchange.parseRetryAfter("2") == .seconds(2))
        let inFiveSeconds = Date().addingTimeInterval(5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let fromDate = ModelHTTPExchange.parseRetryAfter(formatter.string(from: inFiveSeconds))
        #expect(fromDate.map { (3.5...5.5).contains($0.seconds) } == true)
    }
}
