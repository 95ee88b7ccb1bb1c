import Foundation
import LanguageModels
import Logging
import RelayEngine
import WorkspaceCore

/// The engine's tools: its retrieval, a relay turn, and the runs.
enum EngineTools {
    static func all(_ workspace: Workspace, models: @escaping @Sendable () throws -> ModelProvider, logger: Logger) -> [MCPTool] {
        [search(workspace), ask(workspace, models: models, logger: logger), runs(workspace)]
    }

    static func search(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "search", title: "Search the workspace",
            description: "Find the lines of the workspace's notes (context.md, Journal/, Research/, Chats/) that best match a question or some words, ranked (BM25), each with its path:line — the retrieval Relay's own agents answer from.",
            inputSchema: Schema.object([
                "query": Schema.string("A question or keywords."),
                "limit": Schema.integer("How many lines at most; default 8.", minimum: 1, maximum: 100),
            ], required: ["query"]),
            outputSchema: Schema.output([
                "lines": Schema.array(of: Schema.output(["path": Schema.text, "line": Schema.int, "text": Schema.text, "score": ["type": "number"]])),
            ]),
            hints: .init(readOnly: true, idempotent: true)
        ) { arguments in
            let query = try arguments.string("query")
            guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ToolFailure("search: \"query\" is empty") }
            let hits = WorkspaceSearch(workspace: workspace).lines(matching: query, limit: try arguments.optionalInteger("limit", in: 1...100) ?? 8)
            let text = hits.isEmpty ? "no lines of the workspace match '\(query)'" : hits.map { "\($0.path):\($0.line): \($0.text)" }.joined(separator: "\n")
            return ToolOutput(text: text, structured: ["lines": .array(hits.map {
                ["path": .string($0.path), "line": .number(Double($0.line)), "text": .string($0.text), "score": .number(($0.score * 1000).rounded() / 1000)]
            })])
        }
    }

    static func ask(_ workspace: Workspace, models: @escaping @Sendable () throws -> ModelProvider, logger: Logger) -> MCPTool {
        MCPTool(
            name: "ask", title: "Ask the workspace's relay of agents",
            description: "Run one relay turn: the workspace's agents answer the message in turn, grounded in the workspace's notes. The turn is written to Chats/ (the chat file to read or continue) and journaled as a run (the runs tool shows it). Takes as long as the model needs.",
            inputSchema: Schema.object([
                "message": Schema.string("The request or question."),
                "relay": Schema.string("The relay to run (relay.json's \"relays\"); default chat."),
                "agent": Schema.string("Ask one agent of the roster only (its name or id)."),
                "chat": Schema.string("Continue the conversation in Chats/NAME.md instead of starting a new one."),
            ], required: ["message"]),
            outputSchema: Schema.output([
                "answer": Schema.text, "chatFile": Schema.text, "transcriptFile": Schema.text, "runId": Schema.text,
                "files": Schema.array(of: Schema.text),
            ]),
            hints: .init(openWorld: true)
        ) { arguments in
            let engine = RelayRunner(workspace: workspace, models: try models(), logger: logger)
            let manifest = try engine.prepare(ask: try arguments.string("message"), relay: try arguments.optionalString("relay"),
                                              agent: try arguments.optionalString("agent"), conversation: try arguments.optionalString("chat"))
            let ending = Ending()
            do {
                try await engine.execute(manifest.id) { event in
                    switch event {
                    case .final(_, let text, let files): ending.set(text: text, files: files)
                    case .error(_, let message): ending.set(error: message)
                    default: break
                    }
                }
            } catch {
                throw ToolFailure("run \(manifest.id) stopped: \(error) — it is kept; `relay resume \(manifest.id)` continues it")
            }
            let (text, files, failure) = ending.value
            if let failure { throw ToolFailure("run \(manifest.id) stopped: \(failure) — `relay resume \(manifest.id)` continues it") }
            let answer = text ?? ""
            return ToolOutput(text: answer + "\n\n(chat: \(manifest.chatFile) · run: \(manifest.id))", structured: [
                "answer": .string(answer), "chatFile": .string(manifest.chatFile), "transcriptFile": .string(manifest.transcriptFile),
                "runId": .string(manifest.id), "files": .array(files.map { .string($0) }),
            ])
        }
    }

    /// What a run's events ended with.
    private final class Ending: @unchecked Sendable {
        private let lock = NSLock()
        private var text: String?
        private var files: [String] = []
        private var error: String?
        func set(text: String, files: [String]) { lock.withLock { self.text = text; self.files = files } }
        func set(error: String) { lock.withLock { self.error = error } }
        var value: (String?, [String], String?) { lock.withLock { (text, files, error) } }
    }

    static func runs(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "runs", title: "List relay runs",
            description: "List the newest relay runs (state: done, running, interrupted, cancelled, failed, skipped) with their agents' timings and tokens, or one run by id (a unique prefix works).",
            inputSchema: Schema.object([
                "id": Schema.string("A run id or a unique prefix of one, to show only that run."),
                "limit": Schema.integer("How many of the newest runs; default 20.", minimum: 1, maximum: 1000),
            ]),
            outputSchema: Schema.output(["runs": Schema.array(of: ["type": "object"]), "total": Schema.int]),
            hints: .init(readOnly: true, idempotent: true)
        ) { arguments in
            let store = RunStore(workspace: workspace)
            let summaries: [RunSummary]
            let total: Int
            if let id = try arguments.optionalString("id") {
                summaries = [try store.summary(try store.resolveID(id))]
                total = 1
            } else {
                let limit = try arguments.optionalInteger("limit", in: 1...1000) ?? 20
                let listing = try store.newestSummaries(limit)
                summaries = listing.runs
                total = listing.total
            }
            let lines = summaries.map { "\($0.id)  \($0.relay)  \($0.state.rawValue)  \($0.steps.count) steps  \($0.tokens) tokens  \($0.request.split(separator: "\n").first ?? "")" }
            return ToolOutput(text: lines.isEmpty ? "no runs yet" : lines.joined(separator: "\n"),
                              structured: ["runs": .array(try summaries.map { try JSONValue(encoding: $0) }), "total": .number(Double(total))])
        }
    }
}

extension JSONValue {
    /// A Codable value as JSON.
    init<T: Encodable>(encoding value: T) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }
}
