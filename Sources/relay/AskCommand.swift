import ArgumentParser
import Foundation
import RelayEngine
import WorkspaceCore

struct AskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ask",
        abstract: "Run one relay turn on a message and show the agents' group chat.",
        discussion: """
            The agents of the relay (default: chat) answer in turn, each in a fresh model \
            session that sees only your message and the previous agent's answer. The turn is \
            written to Chats/ (NAME.md to read and reply in, NAME.json the full transcript) and \
            to any outputs the roster declares. Every model reply is journaled first under \
            .relay/runs/, so Ctrl-C, a crash or a model server going away leave a run that \
            `relay resume ID` continues without asking again what was answered. A relay whose \
            relay.json entry says "mode": "route" asks one agent (by @mention, rule or \
            classifier); "mode": "plan" splits the request among parallel workers.

            Examples:
              relay ask "What should I pack for two days of hiking in March?"
              relay ask --agent Wren "Rewrite my notes in Journal/user/ as one paragraph"
              relay ask "@Remy @Wren what did I note about the plumber?"  # only them
              relay ask --chat weekend-trip "And if it rains?"
              relay ask --relay research --json "Summarise Research/llamas.md" | jq .event
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Argument(help: ArgumentHelp("The message (several words are joined; '-' reads standard input).", valueName: "message"))
    var message: [String]

    @Option(name: .long, help: ArgumentHelp("The relay to run (relay.json's \"relays\"; default: chat).", valueName: "name"))
    var relay: String?

    @Option(name: .long, help: ArgumentHelp("Talk to one agent of the roster only (its name or id).", valueName: "name"))
    var agent: String?

    @Option(name: .long, help: ArgumentHelp("Continue the conversation in Chats/NAME.md instead of starting a new one.", valueName: "name"))
    var chat: String?

    @Option(name: .long, help: ArgumentHelp("Ask this model of the configured server instead of relay.json's.", valueName: "name"))
    var model: String?

    @Flag(name: .long, help: "Print the events as JSON lines instead of the group chat.")
    var json = false

    func run() async throws {
        let workspace = try options.open()
        var text = message.joined(separator: " ")
        if text == "-" { text = String(decoding: try Terminal.readStandardInput(), as: UTF8.self) }
        let engine = RelayRunner(workspace: workspace, models: try .forWorkspace(workspace, model: model, logger: RelayLogging.logger), logger: RelayLogging.logger)
        let manifest = try engine.prepare(ask: text, relay: relay, agent: agent, conversation: chat)
        let chatView = GroupChat(style: GroupChat.style(json: json))
        try await RunInTerminal.run(engine, id: manifest.id, chat: chatView)
        if !json {
            Terminal.standardError(Terminal.paint("chat: \(manifest.chatFile) · transcript: \(manifest.transcriptFile) · run: \(manifest.id)\n", .dim))
        }
    }
}
