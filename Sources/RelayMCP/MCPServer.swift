import Foundation
import LanguageModels
import Logging
import RelayEngine
import ServiceLifecycle
import Synchronization
import WorkspaceCore

/// `relay mcp`: the workspace's safe primitives, its retrieval and its relays as an MCP server
/// on standard input and output (newline-delimited JSON-RPC 2.0), for agents Relay did not
/// write — Claude Code, Claude Desktop, editors.
///
/// Every tool goes through the workspace: the sandbox refuses paths that leave it, writers take
/// the coordinated lock, every replaced version is kept, and a file written into a trigger
/// folder starts its relay as a person's drop does. Requests are answered in the order they
/// come, except `ask`, which runs beside them (a `ping` is answered while a relay turn runs);
/// the server ends when its input ends, after answering what it was asked, or on graceful
/// shutdown.
///
/// For example:
/// ```swift
/// let server = MCPServer(workspace: workspace, models: { try ModelProvider.forWorkspace(workspace) }, logger: logger)
/// try await server.run()  // until the client closes standard input
/// ```
public final class MCPServer: Service, Sendable {
    public static let serverName = "relay"

    private let workspace: Workspace
    private let channel: LineChannel
    private let logger: Logger
    private let version: String
    private let tools: [String: MCPTool]
    private let toolOrder: [String]
    private let catalog: ResourceCatalog
    private let state = Mutex(State())
    /// How often subscribed resources are looked at for changes (a `stat` each).
    private let pollInterval: Duration

    private struct State {
        var protocolVersion: ProtocolVersion?
        /// Subscribed URIs and the stamp each had when last looked at.
        var subscriptions: [String: [Int64]?] = [:]
        var listedURIs: Set<String>?
    }

    /// - parameter workspace: where the tools work; its writes start triggers, as a person's do.
    /// - parameter models: the model server for `ask`, made at the first `ask` (so a workspace
    ///   without a model configured still serves its files).
    /// - parameter input: the file descriptor messages come in on (standard input), `output`
    ///   the one they go out on (standard output).
    public init(
        workspace: Workspace, models: @escaping @Sendable () throws -> ModelProvider, logger: Logger, version: String = "0",
        input: CInt = 0, output: CInt = 1, pollInterval: Duration = .milliseconds(500)
    ) {
        var workspace = workspace
        workspace.writesTrigger = true
        self.workspace = workspace
        self.logger = logger
        self.version = version
        self.channel = LineChannel(input: input, output: output)
        self.catalog = ResourceCatalog(workspace: workspace)
        self.pollInterval = pollInterval
        let all = WorkspaceTools.all(workspace) + EngineTools.all(workspace, models: models, logger: logger)
        self.tools = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
        self.toolOrder = all.map(\.name)
    }

    public func run() async throws {
        logger.info("relay mcp serving", metadata: ["relay.workspace": "\(workspace.root)"])
        await withTaskGroup(of: Void.self) { background in
            background.addTask { await self.watchResources() }
            await withTaskGroup(of: Void.self) { requests in
                for await incoming in channel.lines().cancelOnGracefulShutdown() {
                    switch incoming {
                    case .tooLong(let length):
                        send(JSONRPCOutgoing.error(id: .null, MCPError(.parseError, "a message of \(length) bytes is longer than \(LineChannel.longestLine); skipped")))
                    case .line(let line):
                        let message: JSONRPCMessage
                        do { message = try JSONRPCMessage(line: line) } catch let error as MCPError {
                            send(JSONRPCOutgoing.error(id: JSONRPCMessage.id(ofInvalid: line), error))
                            continue
                        } catch { continue }
                        switch message.kind {
                        case .request(let id, let method, let params) where method == "tools/call" && params?["name"] == "ask":
                            // A relay turn takes as long as the model: in the background, so
                            // the client can go on (ping, read, even another ask).
                            requests.addTask { await self.respond(id: id, method: method, params: params) }
                        case .request(let id, let method, let params):
                            // The rest in the order they came: a client that sends a write and
                            // then a read without waiting reads what it wrote.
                            await respond(id: id, method: method, params: params)
                        case .notification(let method, _):
                            notified(method)
                        case .response:
                            break
                        }
                    }
                }
                // The input ended: answer what was asked before it did. On a shutdown (SIGTERM)
                // a relay turn under way is stopped instead: its run stays resumable.
                if Task.isShuttingDownGracefully { requests.cancelAll() }
                await requests.waitForAll()
            }
            background.cancelAll()
        }
        logger.info("relay mcp: input closed, stopping")
    }

    private func send(_ message: JSONValue) { channel.send(JSONRPCOutgoing.line(message)) }

    private var negotiated: ProtocolVersion { state.withLock { $0.protocolVersion } ?? .latest }

    private func notified(_ method: String) {
        switch method {
        case "notifications/initialized":
            logger.debug("client initialized")
        default:
            // notifications/cancelled and the rest: nothing to undo (a tool's write is atomic
            // and either happened or did not).
            logger.debug("notification ignored", metadata: ["relay.mcp.method": "\(method)"])
        }
    }

    private func respond(id: JSONValue, method: String, params: JSONValue?) async {
        do {
            send(JSONRPCOutgoing.result(id: id, try await handle(method, params: params)))
        } catch let error as MCPError {
            send(JSONRPCOutgoing.error(id: id, error))
        } catch {
            send(JSONRPCOutgoing.error(id: id, MCPError(.internalError, "\(error)")))
        }
    }

    func handle(_ method: String, params: JSONValue?) async throws -> JSONValue {
        switch method {
        case "initialize":
            let requested = params?["protocolVersion"]?.stringValue
            let chosen = ProtocolVersion.negotiate(requested)
            state.withLock { $0.protocolVersion = chosen }
            logger.info("client connected", metadata: [
                "relay.mcp.client": "\(params?["clientInfo"]?["name"]?.stringValue ?? "?")", "relay.mcp.requested": "\(requested ?? "?")",
                "relay.mcp.protocol": "\(chosen)",
            ])
            var serverInfo: [String: JSONValue] = ["name": .string(Self.serverName), "version": .string(version)]
            if chosen >= .v2025_06_18 { serverInfo["title"] = "Relay" }
            return [
                "protocolVersion": .string(chosen.name),
                "capabilities": ["tools": ["listChanged": false], "resources": ["subscribe": true, "listChanged": true]],
                "serverInfo": .object(serverInfo),
                "instructions": .string(Self.instructions),
            ]
        case "ping":
            return [:]
        case "tools/list":
            let version = negotiated
            return ["tools": .array(toolOrder.compactMap { tools[$0]?.declaration(for: version) })]
        case "tools/call":
            return await callTool(params)
        case "resources/list":
            let version = negotiated
            let entries = catalog.entries()
            state.withLock { $0.listedURIs = Set(entries.map { ResourceCatalog.uri($0.path) }) }
            return ["resources": .array(entries.map { catalog.declaration($0, version: version) })]
        case "resources/templates/list":
            return ["resourceTemplates": [ResourceCatalog.template]]
        case "resources/read":
            return try catalog.read(try uri(params))
        case "resources/subscribe":
            let uri = try uri(params)
            _ = try ResourceCatalog.path(of: uri)
            let stamp = catalog.stamp(uri)
            state.withLock { $0.subscriptions[uri] = .some(stamp) }
            return [:]
        case "resources/unsubscribe":
            let uri = try uri(params)
            _ = state.withLock { $0.subscriptions.removeValue(forKey: uri) }
            return [:]
        default:
            throw MCPError(.methodNotFound, "no method '\(method)' (this server has tools and resources)")
        }
    }

    private func uri(_ params: JSONValue?) throws -> String {
        guard let uri = params?["uri"]?.stringValue else { throw MCPError(.invalidParameters, "params need \"uri\", a string") }
        return uri
    }

    /// A tool call: a result, with `isError` when the tool refused or failed. Only a call that
    /// names no tool, or an unknown one, is a protocol error.
    private func callTool(_ params: JSONValue?) async -> JSONValue {
        guard let name = params?["name"]?.stringValue, let tool = tools[name] else {
            let name = params?["name"]?.jsonText ?? "nothing"
            return ToolOutput.failure("no tool \(name); the tools are \(toolOrder.joined(separator: ", "))")
        }
        let allowed = tool.inputSchema["properties"]?.objectValue.map { Array($0.keys).sorted() } ?? []
        do {
            let arguments = try ToolArguments(tool: name, arguments: params?["arguments"], allowed: allowed)
            let output = try await tool.call(arguments)
            logger.debug("tool call", metadata: ["relay.mcp.tool": "\(name)"])
            return output.result(for: negotiated)
        } catch {
            let message: String
            switch error {
            case let failure as ToolFailure: message = failure.message
            case let failure as WorkspaceError: message = "\(name): " + failure.message
            case let failure as RelayError: message = "\(name): " + failure.message
            default: message = "\(name) failed: \(error)"
            }
            logger.info("tool call refused", metadata: ["relay.mcp.tool": "\(name)", "relay.mcp.error": "\(message)"])
            return ToolOutput.failure(message)
        }
    }

    /// Tells the client when a subscribed resource changes, or the list of resources does —
    /// whoever changed it: a tool, a person's editor, the daemon's agents, sync. A `stat` per
    /// subscription each interval: cheaper than a watch of the whole tree, and it sees every
    /// writer the same way.
    private func watchResources() async {
        var rounds = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: pollInterval) } catch { return }
            rounds += 1
            let subscribed = state.withLock { $0.subscriptions }
            for (uri, old) in subscribed {
                let now = catalog.stamp(uri)
                guard now != old else { continue }
                let changed = state.withLock { state -> Bool in
                    guard state.subscriptions[uri] != nil else { return false }
                    state.subscriptions[uri] = .some(now)
                    return true
                }
                if changed { send(JSONRPCOutgoing.notification("notifications/resources/updated", ["uri": .string(uri)])) }
            }
            // The list (a listing of Chats/ and Research/) every fourth round, once the client has read it.
            guard rounds % 4 == 0, let listed = state.withLock({ $0.listedURIs }) else { continue }
            let current = Set(catalog.entries().map { ResourceCatalog.uri($0.path) })
            if current != listed {
                state.withLock { $0.listedURIs = current }
                send(JSONRPCOutgoing.notification("notifications/resources/list_changed"))
            }
        }
    }

    static let instructions = """
        A Relay workspace: a folder of Markdown notes (context.md, Journal/, Research/, Chats/) shared with people \
        and Relay's own agents. Use these tools instead of writing the files directly: they stay inside the workspace, \
        take the lock other writers take, keep every replaced version (history, restore), and never lose a person's \
        concurrent edit. Read a file before you edit it, and pass its version as expectedVersion. Use search to find \
        facts with their path:line, and ask to have the workspace's agents answer.
        """
}
