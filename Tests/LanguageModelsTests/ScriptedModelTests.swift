import Foundation
import RelayTestKit
import Testing
@testable import LanguageModels

/// The scripted model: replies and tool calls from a file, in order, labelled as scripted.
@Suite("Scripted model")
struct ScriptedModelTests {
    static func writeScript(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/relay-script-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func repliesComeInOrderWithToolCallsAndAreLabelledScripted() async throws {
        let path = try Self.writeScript("""
            {"replies": [
              {"toolCalls": [{"name": "read_file", "arguments": {"path": "context.md"}}]},
              {"text": "Llamas are camelids.", "usage": {"promptTokens": 12, "completionTokens": 4}}
            ]}
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let model = try ScriptedModel(contentsOf: path)
        #expect(model.description == "scripted model (\(path))")

        let first = try await model.complete(ModelRequest(messages: [.user("What is in context.md?")]))
        #expect(first.toolCalls == [ToolCall(id: "call_0", name: "read_file", arguments: #"{"path":"context.md"}"#)])
        #expect(first.finishReason == .toolCalls && first.text.isEmpty)

        let (events, _) = await collect(model.stream(ModelRequest(messages: [.user("And?")])))
        #expect(events == [.text("Llamas "), .text("are "), .text("camelids."), .usage(TokenUsage(promptTokens: 12, completionTokens: 4)), .finished(.stop)])

        let (_, error) = await collect(model.stream(ModelRequest(messages: [.user("More?")])))
        let failure = try #require(error as? LanguageModelError)
        #expect(failure.code == .script && failure.message.contains("no reply left") && failure.message.contains(path))
        #expect(model.receivedRequests.map { $0.messages.last?.content } == ["What is in context.md?", "And?", "More?"])
    }

    @Test func whenPicksTheReplyThatFitsAndRepeatStartsOver() async throws {
        let model = ScriptedModel(script: .init(replies: [
            .init(when: "alpaca", text: "Alpacas are smaller."),
            .init(text: "Something else."),
        ], repeat: true))
        #expect(try await model.complete(ModelRequest(messages: [.user("tell me")])).text == "Something else.")
        #expect(try await model.complete(ModelRequest(messages: [.user("an alpaca?")])).text == "Alpacas are smaller.")
        #expect(try await model.complete(ModelRequest(messages: [.user("again")])).text == "Something else.")
    }

    @Test func usageIsEstimatedWhenTheScriptGivesNone() async throws {
        let model = ScriptedModel(script: .init(replies: [.init(text: "12345678")]))
        let reply = try await model.complete(ModelRequest(messages: [.user("abcdefghijklmnop")]))
        #expect(reply.usage == TokenUsage(promptTokens: 4, completionTokens: 2))
    }

    @Test func aMissingOrMalformedScriptNamesTheFileAndTheField() throws {
        #expect {
            _ = try ScriptedModel(contentsOf: "/nonexistent/script.json")
        } throws: { ($0 as? LanguageModelError)?.message.contains("/nonexistent/script.json") == true }

        let path = try Self.writeScript(#"{"replies": [{"text": 5}]}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try ScriptedModel(contentsOf: path)
        } throws: { error in
            guard let error = error as? LanguageModelError else { return false }
            return error.code == .script && error.message.contains(path) && error.message.contains("replies[0].text")
        }
    }
}
