/// What the HTTP service needs: where to listen, the token, and its limits.
public struct ServerConfiguration: Sendable {
    public var address: ListenAddress
    /// Required on every endpoint but `/health` when set; must be set off loopback.
    public var token: APIToken?
    /// The largest request body accepted; bigger ones get 413.
    public var maxBodyBytes: Int
    /// The largest file `PUT /research/NAME` accepts; bigger ones get 413.
    public var maxUploadBytes: Int
    /// The relay a request without a model runs.
    public var defaultRelay: String?

    public static let defaultMaxBodyBytes = 1 << 20
    public static let defaultMaxUploadBytes = 32 << 20

    public init(address: ListenAddress, token: APIToken?, maxBodyBytes: Int = defaultMaxBodyBytes,
                maxUploadBytes: Int = defaultMaxUploadBytes, defaultRelay: String? = nil) {
        self.address = address
        self.token = token
        self.maxBodyBytes = maxBodyBytes
        self.maxUploadBytes = maxUploadBytes
        self.defaultRelay = defaultRelay
    }

    /// Promise 9: nothing listens beyond loopback without a token.
    /// - throws: ``APIError`` `.configuration` for a non-loopback address without a token.
    public func validate() throws {
        if !address.isLoopback && token == nil {
            throw APIError(.configuration, "refusing to listen on \(address) without a token: set RELAY_API_TOKEN, or start with --new-token to generate one into .relay/api-token (or listen on 127.0.0.1)")
        }
        if maxBodyBytes < 1 { throw APIError(.configuration, "--max-body-bytes must be 1 or more") }
        if maxUploadBytes < 1 { throw APIError(.configuration, "--max-upload-bytes must be 1 or more") }
    }
}
