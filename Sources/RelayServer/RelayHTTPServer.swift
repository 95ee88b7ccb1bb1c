import Foundation
import Hummingbird
import NIOCore
import Logging
import RelayEngine
import ServiceLifecycle

/// The HTTP API of a workspace's daemon, as one more Service in `relay watch`'s ServiceGroup:
/// graceful shutdown stops accepting, interrupts running turns (which stay resumable) and
/// lets their responses end.
///
/// For example:
/// ```swift
/// let http = try RelayHTTPServer(engine: engine, configuration: ServerConfiguration(
///     address: try ListenAddress(parsing: "8000"), token: nil), logger: logger)
/// let group = ServiceGroup(services: [watcher, http], gracefulShutdownSignals: [.sigterm], logger: logger)
/// ```
public struct RelayHTTPServer: Service {
    public let configuration: ServerConfiguration
    let engine: RelayRunner
    let logger: Logger

    /// - throws: ``APIError`` `.configuration` for a non-loopback address without a token.
    public init(engine: RelayRunner, configuration: ServerConfiguration, logger: Logger) throws {
        try configuration.validate()
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
    }

    /// The routes and the rules in front of them, without a socket.
    func router(hub: RunHub) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware(logger: logger))
        router.add(middleware: GuardMiddleware(token: configuration.token, maxBodyBytes: configuration.maxBodyBytes, maxUploadBytes: configuration.maxUploadBytes))
        let turns = RelayTurns(engine: engine)
        HealthRoutes().add(to: router)
        SeedRoutes(turns: turns, maxBodyBytes: configuration.maxBodyBytes, defaultRelay: configuration.defaultRelay).add(to: router)
        OpenAIRoutes(turns: turns, maxBodyBytes: configuration.maxBodyBytes, defaultRelay: configuration.defaultRelay).add(to: router)
        RunRoutes(turns: turns, hub: hub, maxBodyBytes: configuration.maxBodyBytes, defaultRelay: configuration.defaultRelay).add(to: router)
        ChatRoutes(engine: engine).add(to: router)
        UploadRoutes(workspace: engine.workspace, maxUploadBytes: configuration.maxUploadBytes).add(to: router)
        WebRoutes().add(to: router)
        return router
    }

    public func run() async throws {
        let address = configuration.address
        let logger = self.logger
        let authenticated = configuration.token != nil
        let hub = RunHub(engine: engine, logger: logger)
        let application = Application(
            router: router(hub: hub),
            configuration: ApplicationConfiguration(address: .hostname(address.host, port: address.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? address.port
                logger.notice("relay http listening", metadata: [
                    "relay.http.address": "http://\(ListenAddress(host: address.host, port: port))",
                    "relay.http.auth": "\(authenticated ? "bearer token" : "none (loopback only)")",
                ])
            },
            logger: logger)
        // Runs started with POST /runs live in the hub, not in a request: a shutdown stops
        // them (interrupted, resumed at the next start) before the server waits for its streams.
        do {
            try await withGracefulShutdownHandler {
                try await application.run()
            } onGracefulShutdown: {
                Task { await hub.stopAll() }
            }
            await hub.stopAll()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw APIError(.configuration, "cannot listen on \(address): the port is in use (another relay serve, or another program); choose another with --http")
        } catch let error as IOError {
            throw APIError(.configuration, "cannot listen on \(address): \(error)")
        }
    }
}
