import AsyncHTTPClient
import Foundation
import NIOCore

/// One `HTTPClient` per pair of timeouts, made on first use and kept for the life of the
/// process (AsyncHTTPClient's timeouts are set per client, and a client must be shut down
/// before it is released; these are never released, like `HTTPClient.shared`).
enum HTTPClientPool {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var clients: [Key: HTTPClient] = [:]

    private struct Key: Hashable {
        var connect: Duration
        var idle: Duration
    }

    static func client(for settings: ModelHTTPSettings) -> HTTPClient {
        let key = Key(connect: settings.connectTimeout, idle: settings.idleTimeout)
        lock.lock()
        defer { lock.unlock() }
        if let client = clients[key] { return client }
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(
            connect: .nanoseconds(settings.connectTimeout.nanosecondsClamped),
            read: .nanoseconds(settings.idleTimeout.nanosecondsClamped))
        // A refused connection should fail the request at once with its own error, not be
        // retried quietly until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        clients[key] = client
        return client
    }
}
