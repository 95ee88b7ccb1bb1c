import Foundation
import LanguageModels
@testable import RelayEngine
import WorkspaceCore

/// A test double of a model (not a real one; its description says so): replies from a list of
/// steps, one per request, recording every request. A step can also fail, or stream some text
/// and then hang until cancelled — what a model server does when it dies mid-reply.
final class StepModel: LanguageModel, @unchecked Sendable {
    indirect enum Step: Sendable {
        case text(String)
        case tools([ToolCall])
        case fail(LanguageModelError)
        /// Streams `partial`, then waits until the request is cancelled.
        case hang(partial: String)
        /// Runs `action` (e.g. a person editing a file) and then answers as `then`.
        case act(@Sendable () -> Void, then: Step)
    }

    private let lock = NSLock()
    private var steps: [Step]
    private var requests: [ModelRequest] = []

    init(_ steps: [Step]) { self.steps = steps }

    var description: String { "step model (test double)" }
    var received: [ModelRequest] { lock.withLock { requests } }

    static func call(_ name: String, _ arguments: JSONValue, id: String = "call_0") -> ToolCall {
        ToolCall(id: id, name: name, arguments: arguments.jsonText)
    }

    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        var step: Step? = lock.withLock {
            requests.append(request)
            return steps.isEmpty ? nil : steps.removeFirst()
        }
        if case .act(let action, let then) = step {
            action()
            step = then
        }
        let chosen = step
        return AsyncThrowingStream { continuation in
            let task = Task {
                switch chosen {
                case nil:
                    continuation.finish(throwing: LanguageModelError(.script, "step model: no step left for request \(self.received.count)"))
                case .act:
                    continuation.finish()
                case .text(let text):
                    for piece in text.split(separator: " ", omittingEmptySubsequences: false).enumerated().map({ $0.offset == 0 ? String($0.element) : " " + $0.element }) {
                        continuation.yield(.text(piece))
                    }
                    continuation.yield(.usage(TokenUsage(promptTokens: 100, completionTokens: 10)))
                    continuation.yield(.finished(.stop))
                    continuation.finish()
                case .tools(let calls):
                    for call in calls { continuation.yield(.toolCall(call)) }
                    continuation.yield(.usage(TokenUsage(promptTokens: 100, completionTokens: 5)))
                    continuation.yield(.finished(.toolCalls))
                    continuation.finish()
                case .fail(let error):
                    continuation.finish(throwing: error)
                case .hang(let partial):
                    continuation.yield(.text(partial))
                    while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                    continuation.finish(throwing: CancellationError())
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A workspace in a temporary folder with a roster, removed afterwards.
final class RelayScratch {
    let base: String
    let workspace: Workspace

    /// The relay's mechanics under test; the grounding check (its own tests) is off, so the
    /// placeholder replies here ("ANSWER-3") pass as they are.
    static let roster = """
        [
          {"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Plan.", "order": 0, "tools": [], "grounding": false},
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Find facts.", "order": 1, "grounding": false,
           "tools": ["read_file", "list_files", "search_files"]},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Write.", "order": 2, "grounding": false,
           "tools": ["write_file", "append_file", "update_context"]},
          {"id": "reviewer", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "You are Vera. Review.", "order": 3, "grounding": false,
           "tools": ["request_revision"]}
        ]
        """

    static let relayJSON = """
        {
          "model": {"contextTokens": 4096},
          "relays": {
            "chat": {"roster": "AgentConfiguration.json", "input": "chat"},
            "research": {"roster": "AgentConfiguration.json", "input": "file",
                         "agents": {"writer": {"output": {"write": "Research/{name}/summary.md"}},
                                    "reviewer": {"output": {"append": "Journal/agent/{date}.md"}}}}
          }
        }
        """

    init(roster: String = RelayScratch.roster, relayJSON: String = RelayScratch.relayJSON) throws {
        base = FileManager.default.temporaryDirectory.path + "/relay-engine-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        try "secret\n".write(toFile: base + "/outside/secret.txt", atomically: false, encoding: .utf8)
        var (workspace, _) = try Workspace.initialize(at: base + "/ws", template: WorkspaceTemplate(files: []))
        workspace.durable = false
        self.workspace = workspace
        try put("AgentConfiguration.json", roster)
        try put("relay.json", relayJSON)
        try put("context.md", "# Context\n\nThe team keeps llamas.\n")
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    func put(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: workspace.root + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }

    func text(_ relative: String) -> String? { try? String(contentsOfFile: workspace.root + "/" + relative, encoding: .utf8) }
    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: workspace.root + "/" + relative) }

    func engine(_ model: any LanguageModel) -> RelayEngine { RelayEngine(workspace: workspace, models: .single(model)) }

    /// Runs to the end and returns the events.
    @discardableResult
    func run(_ engine: RelayEngine, _ id: String) async throws -> [RelayEvent] {
        let box = EventBox()
        try await engine.execute(id) { box.add($0) }
        return box.events
    }

    func records(_ id: String) throws -> [JournalRecord] { try RunStore(workspace: workspace).records(id) }
}

final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RelayEvent] = []
    func add(_ event: RelayEvent) { lock.withLock { stored.append(event) } }
    var events: [RelayEvent] { lock.withLock { stored } }
}

extension ModelRequest {
    var user: String { messages.first { $0.role == .user }?.content ?? "" }
    var system: String { messages.first { $0.role == .system }?.content ?? "" }
}
