/// The one error type of LanguageModels: a code to switch on, a message a person can act on
/// (it names the URL or the file and says what to do), the URL concerned, and the cause.
///
/// For example:
/// ```swift
/// do { _ = try await model.complete(request) }
/// catch let error as LanguageModelError where error.code == .unreachable {
///     print(error.message)
///     // no model server at http://127.0.0.1:8080/v1 — run `make model` or set RELAY_MODEL_URL
/// }
/// ```
public struct LanguageModelError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// Nothing answers at the URL (connection refused, unknown host, connect timeout).
        case unreachable
        /// The server accepted the request and then went quiet for longer than the timeout.
        case timeout
        /// The server answered with an HTTP error status (after any retries).
        case httpStatus
        /// The server refused the key, or a key the provider needs is not in the environment.
        case authentication
        /// The server's answer is not in the wire format it promised.
        case malformedResponse
        /// The configuration (relay.json's "model" section, the environment) is wrong.
        case configuration
        /// The scripted model's file is missing, malformed, or has no reply left.
        case script
    }

    public var code: Code
    public var message: String
    /// The URL or file the error concerns.
    public var url: String?
    /// The HTTP status, for `.httpStatus` and `.authentication`.
    public var status: Int?
    /// The error underneath (from AsyncHTTPClient, NIO or the JSON decoder), if any.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, url: String? = nil, status: Int? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.url = url
        self.status = status
        self.underlying = underlying
    }

    public var description: String { message }

    /// Whether the error is the caller's configuration (exit status 2) rather than a failure
    /// of the server or the network (exit status 1).
    public var isConfigurationError: Bool { code == .configuration || code == .script }
}
