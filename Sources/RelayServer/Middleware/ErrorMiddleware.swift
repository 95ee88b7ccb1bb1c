import Hummingbird
import Logging

/// Answers every error in the API's shape, `{"error": {"code", "message"}}`: the router's
/// 404, Hummingbird's 413 for a body over the cap, and anything unexpected as a 500 (logged,
/// without the request's headers).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            return try Self.translate(error).response(from: request, context: context)
        } catch is CancellationError {
            return try APIError(.shuttingDown, "the server is stopping; the run is kept and resumes at the next start").response(from: request, context: context)
        } catch {
            logger.warning("request failed", metadata: ["relay.http.path": "\(request.uri.path)", "relay.error": "\(error)"])
            return try APIError(.internalError, "\(error)").response(from: request, context: context)
        }
    }

    static func translate(_ error: HTTPError) -> APIError {
        let message = error.body ?? error.status.reasonPhrase
        switch error.status {
        case .notFound: return APIError(.notFound, "no such endpoint (see GET /v1/models, POST /v1/chat/completions, POST /agent/chat, GET /health)")
        case .contentTooLarge: return APIError(.tooLarge, "the request body is larger than the server accepts (--max-body-bytes)")
        case .methodNotAllowed: return APIError(.methodNotAllowed, message)
        case .unauthorized: return APIError(.unauthorized, message)
        default:
            return APIError(error.status.code >= 500 ? .internalError : .invalidRequest, message, status: error.status)
        }
    }
}
