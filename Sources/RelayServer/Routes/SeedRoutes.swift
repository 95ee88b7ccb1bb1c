import Hummingbird

/// The seed app's endpoint: `POST /agent/chat` with `{"query": "…"}` (and, to continue a chat,
/// `"session": NAME`) answers `{"response": "…"}` — the relay's answer, the engine's `final`
/// text — plus the `session` (the `Chats/NAME` file) and the `run` id.
struct SeedRoutes {
    struct ChatRequest: Decodable {
        var query: String
        var session: String?
    }

    let turns: RelayTurns
    let maxBodyBytes: Int
    let defaultRelay: String?

    func add(to router: Router<BasicRequestContext>) {
        router.post("/agent/chat") { request, _ in
            let body = try await JSONBody.decode(ChatRequest.self, from: request, limit: maxBodyBytes)
            let manifest = try turns.prepare(TurnRequest(message: body.query, relay: defaultRelay, conversation: body.session))
            let outcome = try await turns.run(manifest)
            return JSONBody.response(["response": outcome.answer, "session": outcome.conversation, "run": outcome.runID])
        }
    }
}
