import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RelayEngine

/// The OpenAI-compatible API: `GET /v1/models` and `POST /v1/chat/completions`, with and
/// without `"stream": true`, so the OpenAI SDKs, Open WebUI and curl can use the relays.
///
/// The completion's content is the relay's answer (the engine's `final` text). While a streamed
/// turn runs, each agent's start and finish go out as SSE comments (`: 📋 Paige is working`),
/// which clients ignore and which keep proxies from closing a quiet connection.
struct OpenAIRoutes {
    let turns: RelayTurns
    let maxBodyBytes: Int
    let defaultRelay: String?

    func add(to router: Router<BasicRequestContext>) {
        router.get("/v1/models") { _, _ in
            let catalog = try ModelCatalog(workspace: turns.engine.workspace, defaultRelay: defaultRelay)
            let data: [[String: Any]] = catalog.entries.map {
                ["id": $0.id, "object": "model", "created": 0, "owned_by": "relay", "description": $0.description]
            }
            return JSONBody.response(["object": "list", "data": data])
        }
        router.post("/v1/chat/completions") { request, _ in
            let body = try await JSONBody.decode(ChatCompletionRequest.self, from: request, limit: maxBodyBytes)
            guard let last = body.messages.last(where: { $0.role == "user" }),
                  !last.content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw APIError(.invalidRequest, "\"messages\" has no user message with text to answer")
            }
            let catalog = try ModelCatalog(workspace: turns.engine.workspace, defaultRelay: defaultRelay)
            let model = try catalog.resolve(body.model)
            let conversation = body.chat ?? request.headers[HTTPField.Name("X-Relay-Chat")!] ?? body.derivedConversation
            let manifest = try turns.prepare(TurnRequest(message: last.content, relay: model.relay, agent: model.agent, conversation: conversation))
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Relay-Chat")!] = manifest.conversation
            headers[HTTPField.Name("X-Relay-Run")!] = manifest.id
            if body.stream == true {
                headers[.contentType] = "text/event-stream"
                headers[.cacheControl] = "no-cache"
                let stream = CompletionStream(turns: turns, manifest: manifest, model: model.id, includeUsage: body.stream_options?.include_usage == true)
                return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await stream.write(to: &writer) })
            }
            let outcome = try await turns.run(manifest)
            var response = JSONBody.response([
                "id": "chatcmpl-\(outcome.runID)", "object": "chat.completion", "created": Int(Date().timeIntervalSince1970),
                "model": model.id,
                "choices": [["index": 0, "message": ["role": "assistant", "content": outcome.answer], "finish_reason": "stop"]],
                "usage": Self.usage(outcome),
            ])
            response.headers.append(contentsOf: headers)
            return response
        }
    }

    static func usage(_ outcome: TurnOutcome) -> [String: Int] {
        ["prompt_tokens": outcome.promptTokens, "completion_tokens": outcome.completionTokens,
         "total_tokens": outcome.promptTokens + outcome.completionTokens]
    }
}
