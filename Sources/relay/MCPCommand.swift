import ArgumentParser
import Foundation
import LanguageModels
import RelayEngine
import RelayMCP
import ServiceLifecycle
import WorkspaceCore

struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the workspace to other agents over the Model Context Protocol (stdio).",
        discussion: """
            An MCP server on standard input and output, for agents Relay did not write (Claude \
            Code, Claude Desktop, editors). Its tools — read, write, append, list, history, \
            restore, edit, update_context, search, ask, runs — go through the sandbox and the \
            coordinated lock and keep every replaced version, as `relay fs` does; a write into a \
            trigger folder starts its relay as a person's drop does. context.md, the chats and the \
            research summaries are resources (relay://workspace/PATH). Logs go to standard error \
            only (RELAY_LOG_LEVEL=info shows each client and refusal). It ends when its input \
            closes.

            Examples:
              claude mcp add relay -- relay mcp -w ~/notes
              relay mcp -w ~/notes 2>/tmp/relay-mcp.log
            """
    )

    @OptionGroup var options: WorkspaceOptions

    func run() async throws {
        let workspace = try options.open()
        let server = MCPServer(
            workspace: workspace, models: { try ModelProvider.forWorkspace(workspace) }, logger: RelayLogging.logger,
            version: Relay.configuration.version)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: server, successTerminationBehavior: .gracefullyShutdownGroup)], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [],
                logger: RelayLogging.logger))
        try await group.run()
    }
}
