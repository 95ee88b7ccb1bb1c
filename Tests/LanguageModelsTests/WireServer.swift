@testable import LanguageModels
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 (SwiftNIO) that answers each request from a test's
/// script: a status, headers, and body chunks written one by one with a pause between them, so
/// the client reads them as separate pieces — or it stalls, or hangs up mid-reply.
final class WireServer: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var uri: String
        var headers: [String: String]
        var body: String
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }
    }

    enum Response: Sendable {
        /// Writes `chunks` one at a time, `gap` apart, then ends the response (or, with
        /// `hangUp`, closes the connection without ending it).
        case reply(status: Int, headers: [(String, String)], chunks: [[UInt8]], gap: TimeAmount, hangUp: Bool)
        /// Reads the request and never answers.
        case stall

        static func sse(_ chunks: [String], gap: TimeAmount = .milliseconds(5)) -> Response {
            .reply(status: 200, headers: [("Content-Type", "text/event-stream")], chunks: chunks.map { Array($0.utf8) }, gap: gap, hangUp: false)
        }
        static func sse(_ text: String) -> Response { sse([text]) }
        static func sse(bytes chunks: [[UInt8]], gap: TimeAmount = .milliseconds(5)) -> Response {
            .reply(status: 200, headers: [("Content-Type", "text/event-stream")], chunks: chunks, gap: gap, hangUp: false)
        }
        static func json(_ status: Int, _ body: String, headers: [(String, String)] = []) -> Response {
            .reply(status: status, headers: [("Content-Type", "application/json")] + headers, chunks: [Array(body.utf8)], gap: .zero, hangUp: false)
        }
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: (any Channel)?
    private let lock = NSLock()
    private var received: [Request] = []
    private let respond: @Sendable (Request, Int) -> Response

    /// - parameter respond: the response to the request, given the request and its number (0, 1, …).
    init(_ respond: @escaping @Sendable (Request, Int) -> Response) async throws {
        self.respond = respond
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(server: self))
                }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    }

    var port: Int { channel?.localAddress?.port ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)/v1" }
    var requests: [Request] { lock.withLock { received } }

    func stop() async {
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func record(_ request: Request) -> Response {
        let number = lock.withLock { () -> Int in
            received.append(request)
            return received.count - 1
        }
        return respond(request, number)
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let server: WireServer
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(server: WireServer) { self.server = server }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                guard let head else { return }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let request = Request(method: "\(head.method)", uri: head.uri, headers: headers, body: String(decoding: body, as: UTF8.self))
                answer(server.record(request), context: context)
            }
        }

        private func answer(_ response: Response, context: ChannelHandlerContext) {
            guard case .reply(let status, let headers, let chunks, let gap, let hangUp) = response else { return }
            var responseHead = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
            for (name, value) in headers { responseHead.headers.add(name: name, value: value) }
            responseHead.headers.add(name: "Transfer-Encoding", value: "chunked")
            context.writeAndFlush(wrapOutboundOut(.head(responseHead)), promise: nil)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            for (index, chunk) in chunks.enumerated() {
                context.eventLoop.scheduleTask(in: gap * Int64(index)) {
                    let context = bound.value
                    let part = HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(bytes: chunk)))
                    context.writeAndFlush(NIOAny(part), promise: nil)
                }
            }
            context.eventLoop.scheduleTask(in: gap * Int64(chunks.count)) {
                let context = bound.value
                if hangUp { context.close(promise: nil) } else { context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil) }
            }
        }
    }
}

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
func refusedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Splits `text`'s bytes into pieces of `size` bytes — cutting lines and multi-byte characters
/// wherever they fall.
func byteChunks(_ text: String, size: Int) -> [[UInt8]] {
    let bytes = Array(text.utf8)
    return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
}

/// Gathers a stream's events, or the error that ended it.
func collect(_ stream: AsyncThrowingStream<ModelEvent, any Error>) async -> (events: [ModelEvent], error: (any Error)?) {
    var events: [ModelEvent] = []
    do {
        for try await event in stream { events.append(event) }
        return (events, nil)
    } catch {
        return (events, error)
    }
}
