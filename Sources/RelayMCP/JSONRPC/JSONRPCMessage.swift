import Foundation
import LanguageModels

/// One JSON-RPC 2.0 message from the client, as MCP's stdio transport carries it: a JSON object
/// on one line. A request has an `id` and wants a response; a notification has none.
struct JSONRPCMessage: Sendable {
    enum Kind: Sendable {
        case request(id: JSONValue, method: String, params: JSONValue?)
        case notification(method: String, params: JSONValue?)
        /// A response to a request of ours (we send none that want one): ignored.
        case response
    }

    let kind: Kind

    /// Parses a line. Throws `MCPError` `.parseError` for text that is not JSON and
    /// `.invalidRequest` for JSON that is not a JSON-RPC 2.0 message (the error's `id`, when
    /// the line had one, comes back through `id(ofInvalid:)`).
    init(line: [UInt8]) throws {
        let value: JSONValue
        do { value = try JSONDecoder().decode(JSONValue.self, from: Data(line)) } catch {
            throw MCPError(.parseError, "not JSON: \(Self.describe(error))")
        }
        guard case .object(let object) = value else {
            // MCP (2025-06-18 on) has no batches: an array is not a message.
            throw MCPError(.invalidRequest, "a message must be a JSON object (batches are not supported)")
        }
        guard object["jsonrpc"] == .string("2.0") else {
            throw MCPError(.invalidRequest, "\"jsonrpc\" must be \"2.0\"")
        }
        if let method = object["method"] {
            guard case .string(let name) = method else { throw MCPError(.invalidRequest, "\"method\" must be a string") }
            let params = object["params"]
            if let params, params.objectValue == nil, params.arrayValue == nil {
                throw MCPError(.invalidRequest, "\"params\" must be an object")
            }
            if let id = object["id"] {
                guard Self.isValidID(id) else { throw MCPError(.invalidRequest, "\"id\" must be a string or a number") }
                kind = .request(id: id, method: name, params: params)
            } else {
                kind = .notification(method: name, params: params)
            }
        } else if object["result"] != nil || object["error"] != nil {
            kind = .response
        } else {
            throw MCPError(.invalidRequest, "a message needs \"method\" (or \"result\"/\"error\" for a response)")
        }
    }

    /// The id of a line that failed to be a valid message, when one can be read from it.
    static func id(ofInvalid line: [UInt8]) -> JSONValue {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line)), let id = value["id"], isValidID(id) else { return .null }
        return id
    }

    static func isValidID(_ id: JSONValue) -> Bool {
        switch id {
        case .string, .number: return true
        default: return false
        }
    }

    private static func describe(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
        }
        return "\(error)"
    }
}

/// The messages the server sends.
enum JSONRPCOutgoing {
    static func result(id: JSONValue, _ result: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "result": result]
    }

    static func error(id: JSONValue, _ error: MCPError) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "error": ["code": .number(Double(error.code.rawValue)), "message": .string(error.message)]]
    }

    static func notification(_ method: String, _ params: JSONValue? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { object["params"] = params }
        return .object(object)
    }

    /// One line of compact JSON: never a raw newline inside (JSON escapes those in strings).
    static func line(_ value: JSONValue) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = (try? Array(encoder.encode(value))) ?? Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unencodable response"}}"#.utf8)
        bytes.append(10)
        return bytes
    }
}
