import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RelayEngine

/// The native runs API:
/// - `POST /runs` `{"message", "relay"?, "agent"?, "chat"?}` → 202 `{"run", "chat", "relay", "events"}`;
///   the run executes in the daemon whether or not anyone listens;
/// - `GET /runs` (`?chat=NAME`, `?limit=N`) → the runs, newest first, as `relay runs --json`;
/// - `GET /runs/ID` → one run;
/// - `GET /runs/ID/events` → its events as SSE (``RunEventStream``), `Last-Event-ID` to go on;
/// - `POST /runs/ID/cancel` → stops a run this server executes; it stays resumable.
struct RunRoutes {
    struct StartRequest: Decodable {
        var message: String
        var relay: String?
        var agent: String?
        var chat: String?
    }

    let turns: RelayTurns
    let hub: RunHub
    let maxBodyBytes: Int
    let defaultRelay: String?

    func add(to router: Router<BasicRequestContext>) {
        router.post("/runs") { request, _ in
            let body = try await JSONBody.decode(StartRequest.self, from: request, limit: maxBodyBytes)
            // One turn at a time in a chat: a second would answer without the first's answer.
            if let chat = body.chat, let running = hub.activeRun(inChat: chat.hasSuffix(".md") ? String(chat.dropLast(3)) : chat) {
                throw APIError(.conflict, "chat '\(chat)' has run \(running) going; wait for its end (GET /runs/\(running)/events) or stop it (POST /runs/\(running)/cancel)")
            }
            let manifest = try turns.prepare(TurnRequest(message: body.message, relay: body.relay ?? defaultRelay, agent: body.agent, conversation: body.chat))
            try hub.start(manifest)
            var response = JSONBody.response([
                "run": manifest.id, "chat": manifest.conversation, "relay": manifest.relay, "events": "/runs/\(manifest.id)/events",
            ], status: .accepted)
            response.headers[.location] = "/runs/\(manifest.id)"
            return response
        }
        router.get("/runs") { request, _ in
            let chat = request.uri.queryParameters["chat"].map(String.init)
            let limitText = request.uri.queryParameters["limit"].map(String.init)
            let limit = try limitText.map {
                guard let value = Int($0), value > 0 else { throw APIError(.invalidRequest, "\"limit\" must be a whole number above 0, not '\($0)'") }
                return value
            } ?? 100
            let store = turns.engine.store
            var summaries = try store.summaries().reversed().map { $0 }
            if let chat { summaries = summaries.filter { $0.chatFile == "Chats/\(chat).md" } }
            let runs = try summaries.prefix(limit).map { try Self.object($0) }
            return JSONBody.response(["runs": runs])
        }
        router.get("/runs/{id}") { _, context in
            let id = try Self.runID(context)
            return JSONBody.response(try Self.object(try summary(id)))
        }
        router.get("/runs/{id}/events") { request, context in
            let id = try Self.runID(context)
            _ = try summary(id)
            let header = request.headers[HTTPField.Name("Last-Event-ID")!]
            let after: Int
            if let header {
                guard let value = Int(header.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                    throw APIError(.invalidRequest, "the Last-Event-ID header must be an event id this stream sent (a whole number), not '\(header)'")
                }
                after = value
            } else {
                after = 0
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            let stream = RunEventStream(runID: id, after: after, engine: turns.engine, hub: hub)
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await stream.write(to: &writer) })
        }
        router.post("/runs/{id}/cancel") { _, context in
            let id = try Self.runID(context)
            let before = try summary(id)
            guard await hub.cancel(id, reason: "stopped by a person over HTTP") else {
                if before.state == .running {
                    throw APIError(.conflict, "run \(id) is executed by another process (a `relay resume` or the daemon's watcher), not by this server's API; stop it there")
                }
                throw APIError(.conflict, "run \(id) is not running (it is \(before.state.rawValue))")
            }
            return JSONBody.response(try Self.object(try summary(id)))
        }
    }

    private func summary(_ id: String) throws -> RunSummary {
        do { return try turns.engine.store.summary(id) } catch let error as RelayError where error.code == .notFound {
            throw APIError(.notFound, "no run '\(id)' (GET /runs lists them)")
        }
    }

    /// The run id of the path, which must look like one (`20261125-151723-a3f9`): it names a
    /// folder under `.relay/runs/`, so nothing else may reach the file system.
    static func runID(_ context: BasicRequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        let valid = parts.count == 3 && parts[0].count == 8 && parts[1].count == 6 && parts[2].count == 4
            && parts[0].allSatisfy(\.isASCIIDigit) && parts[1].allSatisfy(\.isASCIIDigit) && parts[2].allSatisfy(\.isHexDigit)
        guard valid else { throw APIError(.notFound, "no run '\(id.prefix(80))': a run id looks like 20261125-151723-a3f9 (GET /runs lists them)") }
        return id
    }

    static func object(_ summary: RunSummary) throws -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try JSONSerialization.jsonObject(with: try encoder.encode(summary))
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
