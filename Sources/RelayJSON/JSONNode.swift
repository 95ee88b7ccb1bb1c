// The one JSON parser of Relay's configuration files (relay.json, AgentConfiguration.json): a leaf
// module that WorkspaceCore (triggers, sync, rosters) and LanguageModels (the "model" section)
// both import, so every mistake in a hand-edited file is reported the same way, with its line
// and column.

/// A syntax error in a JSON document: the file, the line and column (1-based) and what was
/// expected there. Its description is "relay.json:4:3: expected ',' or '}' after a member, …".
public struct JSONSyntaxError: Error, CustomStringConvertible, Sendable, Equatable {
    public var file: String
    /// Nil for a document that is not UTF-8 text (the message gives the byte offset).
    public var line: Int?
    public var column: Int?
    public var message: String

    public var description: String {
        if let line, let column { return "\(file):\(line):\(column): \(message)" }
        return "\(file): \(message)"
    }
}

/// A JSON value that remembers where it was in its file, so configuration errors can name the
/// file, line, column and field ("relay.json:7:16: triggers[1].pattern: expected a string").
/// Foundation's decoders give neither lines for type errors nor a way to reject unknown keys;
/// hand-edited files deserve both.
public struct JSONNode: Sendable {
    public enum Value: Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    public struct Member: Sendable {
        public var key: String
        public var line: Int
        public var column: Int
        public var value: JSONNode
    }

    public var value: Value
    public var line: Int
    public var column: Int
    /// Where the value's text is in the document, as byte offsets (its first byte, and the one
    /// after its last): a merge that keeps a value unchanged copies these bytes as they were.
    public var bytes: Range<Int> = 0..<0

    /// What kind of value this is, in words, for messages.
    public var kindName: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "true or false"
        case .null: return "null"
        }
    }

    /// Parses a whole document.
    ///
    /// - throws: `JSONSyntaxError` naming `file`, the line and column, and what was expected:
    ///   "relay.json:4:3: expected ',' or '}' after a member, found '\"'".
    public static func parse(_ bytes: [UInt8], file: String) throws(JSONSyntaxError) -> JSONNode {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw JSONSyntaxError(file: file, message: "not UTF-8 text (invalid byte at offset \(firstInvalidUTF8Offset(bytes) ?? 0))")
        }
        var parser = JSONParser(bytes: bytes, file: file)
        parser.skipWhitespace()
        let node = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count { throw parser.error("unexpected \(parser.describeCurrent()) after the end of the document") }
        return node
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    var column: Int { index - lineStart + 1 }

    func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(file: file, line: line, column: column, message: message)
    }

    func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte >= 0x20 && byte < 0x7f { return "'\(Character(UnicodeScalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0d: index += 1
            case 0x0a:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw error("expected \(what), found \(describeCurrent())") }
        index += 1
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        if depth > 200 { throw error("nested too deeply") }
        skipWhitespace()
        let start = index
        var parsed = try parseValueHere(depth: depth)
        parsed.bytes = start..<index
        return parsed
    }

    /// The value that starts at `index` (whitespace skipped).
    mutating func parseValueHere(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        let (startLine, startColumn) = (line, column)
        func node(_ value: JSONNode.Value) -> JSONNode { JSONNode(value: value, line: startLine, column: startColumn) }
        guard index < bytes.count else { throw error("expected a value, found end of file") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [JSONNode.Member] = []
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return node(.object(members)) }
            while true {
                skipWhitespace()
                let (keyLine, keyColumn) = (line, column)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a member name in double quotes, found \(describeCurrent())")
                }
                let key = try parseString()
                if members.contains(where: { $0.key == key }) {
                    throw JSONSyntaxError(file: file, line: keyLine, column: keyColumn, message: "'\(key)' appears twice in this object")
                }
                try expect(UInt8(ascii: ":"), "':' after the member name '\(key)'")
                let value = try parseValue(depth: depth + 1)
                members.append(JSONNode.Member(key: key, line: keyLine, column: keyColumn, value: value))
                skipWhitespace()
                guard index < bytes.count else { throw error("expected ',' or '}' after a member, found end of file") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return node(.object(members)) }
                throw error("expected ',' or '}' after a member, found \(describeCurrent())")
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONNode] = []
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1; return node(.array(elements)) }
            while true {
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("expected ',' or ']' in an array, found end of file") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return node(.array(elements)) }
                throw error("expected ',' or ']' in an array, found \(describeCurrent())")
            }
        case UInt8(ascii: "\""):
            return node(.string(try parseString()))
        case UInt8(ascii: "t"): try literal("true"); return node(.bool(true))
        case UInt8(ascii: "f"): try literal("false"); return node(.bool(false))
        case UInt8(ascii: "n"): try literal("null"); return node(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return node(.number(try parseNumber()))
        default:
            throw error("expected a value, found \(describeCurrent())")
        }
    }

    mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error("expected a value, found \(describeCurrent())")
        }
        index += expected.count
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        while index < bytes.count, "0123456789.eE+-".utf8.contains(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite, !text.hasPrefix("."), !text.hasSuffix(".") else {
            index = start
            throw error("'\(text)' is not a number")
        }
        return value
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1  // the opening quote
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), index + 6 <= bytes.count,
                       bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                        index += 2
                        let low = try hex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = UnicodeScalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    index -= 2  // point at the backslash
                    throw error("invalid escape '\\\(Character(UnicodeScalar(escape)))' in a string")
                }
            case 0x0a:
                throw error("a string may not contain a line break (missing closing quote?)")
            case 0x00..<0x20:
                throw error("a string may not contain control characters")
            default:
                run.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw error("expected 4 hex digits after \\u")
        }
        index += 4
        return value
    }
}

/// The offset of the first byte that is not part of valid UTF-8, or nil (`package`: WorkspaceCore
/// names it in its own "not UTF-8 text" errors).
package func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var offset = 0
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): offset += UTF8.width(scalar)
        case .emptyInput: return nil
        case .error: return offset
        }
    }
}
