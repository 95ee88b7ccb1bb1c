import Foundation
import Hummingbird
import NIOCore

/// RelayServer's error: an HTTP status, a stable code and a message, answered as
/// `{"error": {"code": "…", "message": "…"}}`.
public struct APIError: Error, HTTPResponseError, CustomStringConvertible {
    public enum Code: String, Sendable {
        case configuration = "configuration_error"
        case unauthorized = "unauthorized"
        case forbidden = "forbidden"
        case notFound = "not_found"
        case methodNotAllowed = "method_not_allowed"
        case invalidRequest = "invalid_request"
        case unsupportedMediaType = "unsupported_media_type"
        case tooLarge = "request_too_large"
        case modelNotFound = "model_not_found"
        case busy = "busy"
        case conflict = "conflict"
        case modelUnavailable = "model_unavailable"
        case shuttingDown = "shutting_down"
        case internalError = "internal_error"
    }

    public var code: Code
    public var message: String
    public var status: HTTPResponse.Status

    public init(_ code: Code, _ message: String, status: HTTPResponse.Status? = nil) {
        self.code = code
        self.message = message
        self.status = status ?? Self.defaultStatus(code)
    }

    static func defaultStatus(_ code: Code) -> HTTPResponse.Status {
        switch code {
        case .configuration, .internalError: .internalServerError
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound, .modelNotFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .invalidRequest: .badRequest
        case .unsupportedMediaType: .unsupportedMediaType
        case .tooLarge: .contentTooLarge
        case .busy, .conflict: .conflict
        case .modelUnavailable: .badGateway
        case .shuttingDown: .serviceUnavailable
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The error as the JSON object the API answers with.
    var body: [String: Any] { ["error": ["code": code.rawValue, "message": message]] }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONBody.data(body))))
    }
}
