import Foundation
import Hummingbird
import NIOCore

/// Reading and writing the API's JSON.
enum JSONBody {
    /// Decodes a request body of at most `limit` bytes.
    /// - throws: ``APIError`` `.tooLarge` (413) over the limit, `.invalidRequest` naming the field.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.tooLarge, "the request body is larger than \(limit) bytes (--max-body-bytes)")
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError(.tooLarge, "the request body is larger than \(limit) bytes (--max-body-bytes)")
        }
        let data = Data(buffer.readableBytesView)
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw APIError(.invalidRequest, "the body has no \"\(Self.path(context.codingPath + [key]))\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError(.invalidRequest, "\"\(Self.path(context.codingPath))\" has the wrong type: \(context.debugDescription)")
        } catch let DecodingError.valueNotFound(_, context) {
            throw APIError(.invalidRequest, "\"\(Self.path(context.codingPath))\" is null")
        } catch {
            throw APIError(.invalidRequest, "the body is not valid JSON")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    static func data(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    /// A 200 (or `status`) response with `object` as JSON.
    static func response(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data(object))))
    }
}
