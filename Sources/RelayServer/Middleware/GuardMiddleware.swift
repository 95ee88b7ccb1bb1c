import Hummingbird

/// The rules every request meets before a route sees it (promises 7 and 9):
/// - a bearer token on everything but `/health`, when one is configured, compared in constant
///   time (the token never appears in a URL or a log);
/// - without a token (loopback only), a `Host` that names this machine, so a web page that
///   rebinds a DNS name to 127.0.0.1 cannot reach the API;
/// - a JSON `Content-Type` on bodies, so a browser's cross-site form post (which sends no
///   preflight and needs none of CORS, which this server never answers) is refused;
/// - a declared `Content-Length` over the cap answered with 413 before anything is read.
struct GuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: APIToken?
    let maxBodyBytes: Int
    let maxUploadBytes: Int

    /// What answers without a token: the health check, and the web page itself (static text
    /// holding no workspace data; the page asks for the token and sends it with every call).
    static func isOpen(_ request: Request) -> Bool {
        request.uri.path == "/health" || (request.method == .get && ["/", "/app.js", "/app.css"].contains(request.uri.path))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !Self.isOpen(request) {
            if let token {
                guard let header = request.headers[.authorization], header.count > 7,
                      header.prefix(7).lowercased() == "bearer " else {
                    throw APIError(.unauthorized, "this endpoint needs 'Authorization: Bearer TOKEN' (RELAY_API_TOKEN or .relay/api-token)")
                }
                guard token.matches(header.dropFirst(7).utf8) else {
                    throw APIError(.unauthorized, "the bearer token is not this server's")
                }
            } else if !Self.isLocalHost(request.head.authority) {
                throw APIError(.forbidden, "without a token this server answers only requests addressed to localhost")
            }
        }
        let isUpload = request.method == .put && request.uri.path.hasPrefix("/research/")
        let limit = isUpload ? maxUploadBytes : maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.tooLarge, "the request body is \(length) bytes; this server accepts at most \(limit) (\(isUpload ? "--max-upload-bytes" : "--max-body-bytes"))")
        }
        if request.method == .post {
            let type = request.headers[.contentType]?.lowercased() ?? ""
            guard type.hasPrefix("application/json") else {
                throw APIError(.unsupportedMediaType, "send the body as JSON with 'Content-Type: application/json'")
            }
        }
        return try await next(request, context)
    }

    static func isLocalHost(_ authority: String?) -> Bool {
        guard var host = authority?.lowercased() else { return true }  // HTTP/1.0 without Host
        if host.hasPrefix("[") {
            host = String(host.dropFirst().prefix { $0 != "]" })
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
