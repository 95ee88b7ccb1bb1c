import ArgumentParser

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon with the HTTP API (relay watch --http).",
        discussion: """
            The same daemon as `relay watch` — it watches the workspace and runs relays when \
            files arrive — plus the HTTP API: the seed app's POST /agent/chat, the \
            OpenAI-compatible GET /v1/models and POST /v1/chat/completions (streamed too), \
            runs (POST /runs, GET /runs/ID/events as server-sent events, POST /runs/ID/cancel), \
            GET /chats, PUT /research/NAME, GET /health, and the web group chat at /. It listens on 127.0.0.1:8000 unless --http says otherwise. Any address \
            beyond loopback needs a token (RELAY_API_TOKEN, or --new-token to generate one into \
            .relay/api-token); with a token, every endpoint but /health wants \
            'Authorization: Bearer TOKEN'. Conversations are ordinary Chats/NAME files. SIGTERM \
            or Ctrl-C stops it cleanly; a turn it interrupts resumes at the next start.

            Examples:
              relay serve
              relay serve --http 8080
              RELAY_API_TOKEN=s3cret relay serve --http 0.0.0.0:8000
              relay serve --http 0.0.0.0:8000 --new-token
              curl -s localhost:8000/agent/chat -H 'Content-Type: application/json' -d '{"query": "Hello"}'
              xdg-open http://127.0.0.1:8000/                 # the web group chat
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var httpOptions: HTTPOptions

    func run() async throws {
        try await WatchCommand.runDaemon(options: options, http: httpOptions, defaultAddress: "127.0.0.1:8000")
    }
}
