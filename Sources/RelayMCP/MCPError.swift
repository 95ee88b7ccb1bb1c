/// The one error type of RelayMCP: a JSON-RPC error code a client can switch on and a message a
/// person (or a model) can act on.
///
/// Only failures of the protocol itself are sent as JSON-RPC errors (a line that is not JSON,
/// an unknown method, a request without its parameters). A tool that cannot do what it was asked
/// — a path the sandbox refuses, a stale expected version, a bad argument — answers with a tool
/// result marked `isError` instead, which the calling model sees and can correct (MCP's rule).
public struct MCPError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: Int, Sendable {
        case parseError = -32700
        case invalidRequest = -32600
        case methodNotFound = -32601
        case invalidParameters = -32602
        case internalError = -32603
        /// MCP: resources/read of a URI the server does not have.
        case resourceNotFound = -32002
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// What a tool reports when it cannot do what it was asked: becomes a result with `isError`.
struct ToolFailure: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
