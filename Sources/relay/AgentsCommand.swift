import ArgumentParser
import Foundation
import RelayEngine
import WorkspaceCore

struct AgentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agents",
        abstract: "Show each relay's roster, validated.",
        discussion: """
            Reads relay.json's relays and their roster files the way a run does; an invalid \
            roster is reported with its file, line, agent and field, and exit status 2.

            Examples:
              relay agents
              relay agents --relay research
              relay agents --json
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Option(name: .long, help: ArgumentHelp("Only this relay.", valueName: "name"))
    var relay: String?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() async throws {
        let workspace = try options.open()
        let configuration = try RelayConfiguration.load(from: workspace)
        var relays = configuration.relays
        if let relay {
            guard let found = configuration.relay(named: relay) else {
                throw CommandFailure(message: "no relay '\(relay)' in relay.json (relays: \(relays.map(\.name).joined(separator: ", ")))", status: 2)
            }
            relays = [found]
        }
        struct Shown: Encodable { var relay: String; var input: String; var roster: String; var description: String; var agents: [AgentDefinition] }
        var shown: [Shown] = []
        for relay in relays {
            let roster = try configuration.roster(for: relay, in: workspace)
            shown.append(Shown(relay: relay.name, input: relay.input.rawValue, roster: roster.file, description: relay.description, agents: roster.agents))
        }
        if json { return try printJSON(shown) }
        for (index, relay) in shown.enumerated() {
            if index > 0 { print("") }
            print(Terminal.paint("relay \(relay.relay)", .bold, stream: 1) + " · input: \(relay.input) · roster: \(relay.roster)" + (relay.description.isEmpty ? "" : " — \(relay.description)"))
            for agent in relay.agents {
                let tools = agent.allowedTools.map(\.rawValue).joined(separator: ", ")
                var line = "  \(agent.order). \(agent.emoji) \(agent.name) (\(agent.id)) · tools: \(tools.isEmpty ? "none" : tools)"
                if let output = agent.output { line += " · \(output.mode.rawValue) → \(output.path)" }
                if let model = agent.model { line += " · model: \(model)" }
                if let budget = agent.tokenBudget { line += " · budget: \(budget) tokens" }
                if agent.isReviewer { line += " · reviews" }
                if let count = agent.retrieve, count > 0 { line += " · retrieves \(count) lines" }
                if let extract = agent.extract { line += " · chooses: \(extract.rawValue)" }
                if !agent.isGrounded { line += " · grounding off" }
                print(line)
                let prompt = agent.systemPrompt.replacingOccurrences(of: "\n", with: " ")
                print(Terminal.paint("     \(prompt.prefix(110))\(prompt.count > 110 ? "…" : "")", .dim, stream: 1))
            }
        }
        print(Terminal.paint("\nall rosters valid", .green, stream: 1))
    }
}
