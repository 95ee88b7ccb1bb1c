import Foundation
import Logging
import Testing
@testable import LanguageModels
import RelayTestKit

/// The real local model (`make model`: llama-server with SmolLM2-135M-Instruct) at
/// RELAY_MODEL_URL or http://127.0.0.1:8080/v1. Without one these tests are skipped, and the
/// test report says why — they never pass without a server.
@Suite("Local llama-server, end to end", .enabled(if: LocalServer.isAnswering, "no model server answers at \(LocalServer.baseURL) — run `make model` to run these tests"))
struct LocalModelEndToEndTests {
    static let logger = Logger(label: "test")

    static var client: OpenAICompatibleModel {
        OpenAICompatibleModel(baseURL: LocalServer.baseURL, model: ProcessInfo.processInfo.environment["RELAY_MODEL"] ?? "SmolLM2-135M-Instruct", logger: logger)
    }

    @Test func aStreamedAnswerArrivesInPiecesWithUsageCounted() async throws {
        let request = ModelRequest(messages: [.system("You are a helpful assistant."), .user("Name three animals.")], options: ModelOptions(temperature: 0, maxTokens: 48))
        let (events, error) = await collect(Self.client.stream(request))
        #expect(error == nil)
        let deltas = events.compactMap { if case .text(let t) = $0 { t } else { nil } }
        #expect(deltas.count > 3, "the answer should stream in several deltas, got \(deltas.count)")
        #expect(!deltas.joined().trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        guard case .usage(let usage)? = events.dropLast().last else {
            Issue.record("no usage before finished: \(events.suffix(2))")
            return
        }
        #expect(usage.promptTokens > 5 && usage.completionTokens > 3 && usage.completionTokens <= 48)
        #expect(events.last == .finished(.stop) || events.last == .finished(.length))
    }

    @Test func aStructuredToolCallIsParsed() async throws {
        let readFile = ToolDefinition(
            name: "read_file", description: "Read a file of the workspace.",
            parameters: ["type": "object", "properties": ["path": ["type": "string"]], "required": ["path"]])
        let request = ModelRequest(
            messages: [.system("You help with files."), .user("Read the file notes.md.")], tools: [readFile],
            options: ModelOptions(temperature: 0, maxTokens: 64, toolChoice: .required))
        let reply = try await StructuredToolModel(wrapping: Self.client).complete(request)
        let call = try #require(reply.toolCalls.first)
        #expect(call.name == "read_file")
        #expect(call.parsedArguments?["path"]?.stringValue?.isEmpty == false)
        #expect(reply.finishReason == .toolCalls)
        #expect((reply.usage?.completionTokens ?? 0) > 0)
    }

    @Test func theServerListsItsModel() async throws {
        #expect(try await Self.client.servedModels().isEmpty == false)
    }
}

/// Where the local model server is, and whether something accepts connections there.
enum LocalServer {
    static var baseURL: String {
        ModelConfiguration.localDefault.applyingEnvironment(ProcessInfo.processInfo.environment).resolvedBaseURL
    }

    static var isAnswering: Bool {
        guard let parts = URLComponents(string: baseURL), let host = parts.host else { return false }
        let port = parts.port ?? (parts.scheme == "https" ? 443 : 80)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
