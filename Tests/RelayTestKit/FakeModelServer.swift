import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A fake model server — a test double, not a model: a real HTTP/1.1 server on 127.0.0.1
/// (SwiftNIO, in the test's process) that answers each request from a script. A reply is a
/// status, headers and body chunks written one by one with a pause between them, so the client
/// reads them as separate pieces — or the server stalls, or hangs up mid-reply. The script
/// ``openAICompatible(delay:log:)`` answers as llama-server does, for the tests that run the
/// real `relay` binary against a model.
///
/// For example:
///
///     let server = try await FakeModelServer.start { request, number in .sse(["data: …\n\n"]) }
///     defer { Task { await server.stop() } }
///     let model = OpenAICompatibleModel(baseURL: server.baseURL, model: "m", logger: logger)
public final class FakeModelServer: @unchecked Sendable {
    public struct Request: Sendable {
        public var method: String
        public var uri: String
        public var headers: [String: String]
        public var body: String
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }
        /// The chat messages of a chat completion request.
        public var messages: [[String: Any]] { json?["messages"] as? [[String: Any]] ?? [] }
        /// The first user message.
        public var user: String { messages.first { $0["role"] as? String == "user" }?["content"] as? String ?? "" }
        /// The system prompt.
        public var system: String { messages.first { $0["role"] as? String == "system" }?["content"] as? String ?? "" }
        /// The agent whose system prompt this is ("You are Wren, …" → "Wren"), or "someone".
        public var agent: String {
            guard let range = system.range(of: #"You are \w+"#, options: .regularExpression) else { return "someone" }
            return String(system[range].dropFirst("You are ".count))
        }
    }

    public enum Response: Sendable {
        /// Writes `chunks` one at a time, `gap` apart, then ends the response (or, with
        /// `hangUp`, closes the connection without ending it). Chunked transfer encoding.
        case reply(status: Int, headers: [(String, String)], chunks: [[UInt8]], gap: TimeAmount, hangUp: Bool)
        /// Waits `delay`, then writes `body` whole with its Content-Length.
        case whole(status: Int, contentType: String, body: [UInt8], delay: TimeAmount)
        /// Reads the request and never answers.
        case stall

        public static func sse(_ chunks: [String], gap: TimeAmount = .milliseconds(5)) -> Response {
            .reply(status: 200, headers: [("Content-Type", "text/event-stream")], chunks: chunks.map { Array($0.utf8) }, gap: gap, hangUp: false)
        }
        public static func sse(_ text: String) -> Response { sse([text]) }
        public static func sse(bytes chunks: [[UInt8]], gap: TimeAmount = .milliseconds(5)) -> Response {
            .reply(status: 200, headers: [("Content-Type", "text/event-stream")], chunks: chunks, gap: gap, hangUp: false)
        }
        public static func json(_ status: Int, _ body: String, headers: [(String, String)] = []) -> Response {
            .reply(status: status, headers: [("Content-Type", "application/json")] + headers, chunks: [Array(body.utf8)], gap: .zero, hangUp: false)
        }
    }

    /// The port it listens on (chosen when it was made).
    public let port: Int
    public var baseURL: String { "http://127.0.0.1:\(port)/v1" }
    public var requests: [Request] { received.value }

    private let respond: @Sendable (Request, Int) -> Response
    private let received = LockedBox<[Request]>([])
    private let arrived = NSCondition()
    private let running = LockedBox<(group: MultiThreadedEventLoopGroup, channel: any Channel)?>(nil)

    /// A server on `port` (a free one by default) that is not listening yet: `start()` it.
    ///
    /// - parameter respond: the response to a request, given the request and its number (0, 1, …).
    public init(port: Int? = nil, respond: @escaping @Sendable (Request, Int) -> Response) {
        self.port = port ?? Self.freePort()
        self.respond = respond
    }

    /// A server that answers as llama-server does (``openAICompatible(delay:log:)``), not
    /// listening yet.
    ///
    /// - parameter delay: seconds it waits before each reply.
    /// - parameter log: a file it appends one JSON line to per chat request.
    public convenience init(port: Int? = nil, delay: Double = 0, log: String) {
        self.init(port: port, respond: Self.openAICompatible(delay: delay, log: log))
    }

    /// Makes a server on a free port and starts it.
    public static func start(_ respond: @escaping @Sendable (Request, Int) -> Response) async throws -> FakeModelServer {
        let server = FakeModelServer(respond: respond)
        try await server.start()
        return server
    }

    // Never blocks: the last reference may go on any thread, an event loop's included.
    deinit {
        guard let running = running.value else { return }
        running.channel.close(promise: nil)
        running.group.shutdownGracefully { _ in }
    }

    private func bootstrap(_ group: MultiThreadedEventLoopGroup) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Weak: the connections must not keep the server alive (it stops when released).
            .childChannelInitializer { [weak self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(server: self))
                }
            }
    }

    /// Starts listening; returns once connections are accepted.
    public func start() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await bootstrap(group).bind(host: "127.0.0.1", port: port).get()
            running.mutate { $0 = (group, channel) }
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Starts listening, from a thread that may block; returns once connections are accepted.
    @available(*, noasync, message: "use the async start()")
    public func start() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try bootstrap(group).bind(host: "127.0.0.1", port: port).wait()
            running.mutate { $0 = (group, channel) }
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// Closes every connection and stops listening.
    public func stop() async {
        guard let running = running.mutate({ running in defer { running = nil }; return running }) else { return }
        try? await running.channel.close()
        try? await running.group.shutdownGracefully()
    }

    /// Closes every connection and stops listening, from a thread that may block.
    @available(*, noasync, message: "use the async stop()")
    public func stop() {
        guard let running = running.mutate({ running in defer { running = nil }; return running }) else { return }
        try? running.channel.close().wait()
        try? running.group.syncShutdownGracefully()
    }

    fileprivate func record(_ request: Request) -> Response {
        let number = received.mutate { received -> Int in
            received.append(request)
            return received.count - 1
        }
        arrived.lock()
        arrived.broadcast()
        arrived.unlock()
        return respond(request, number)
    }

    /// Blocks until the server has received `count` requests (each arrival is the event a test
    /// waits for, not a clock), and returns them.
    ///
    /// - parameter guardSeconds: a guard against a hang, never a measure: the wait fails then.
    @discardableResult
    public func waitForRequests(_ count: Int, guardSeconds: Double = 120) throws -> [Request] {
        let guardEnd = Date(timeIntervalSinceNow: guardSeconds)
        arrived.lock()
        defer { arrived.unlock() }
        while received.value.count < count {
            guard arrived.wait(until: guardEnd) || received.value.count >= count else {
                throw FileEventsError("the fake model server got \(received.value.count) of \(count) requests within \(Int(guardSeconds)) s (the guard against a hang): \(received.value.map(\.agent))")
            }
        }
        return received.value
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        weak var server: FakeModelServer?
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(server: FakeModelServer?) { self.server = server }

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
                answer(server?.record(request) ?? .stall, context: context)
            }
        }

        private func answer(_ response: Response, context: ChannelHandlerContext) {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            switch response {
            case .stall:
                return
            case .whole(let status, let contentType, let body, let delay):
                context.eventLoop.scheduleTask(in: delay) {
                    let context = bound.value
                    var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                    head.headers.add(name: "Content-Type", value: contentType)
                    head.headers.add(name: "Content-Length", value: "\(body.count)")
                    context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
                    context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
                    context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
                }
            case .reply(let status, let headers, let chunks, let gap, let hangUp):
                var responseHead = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
                for (name, value) in headers { responseHead.headers.add(name: name, value: value) }
                responseHead.headers.add(name: "Transfer-Encoding", value: "chunked")
                context.writeAndFlush(wrapOutboundOut(.head(responseHead)), promise: nil)
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
}

extension FakeModelServer {
    /// A port on 127.0.0.1 where nothing listens (bound, then closed).
    public static func freePort() -> Int {
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

    /// Whether something on 127.0.0.1 accepts connections on `port`.
    public static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
