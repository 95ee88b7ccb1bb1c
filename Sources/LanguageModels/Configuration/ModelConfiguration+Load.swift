import Foundation
import RelayJSON

extension ModelConfiguration {
    /// Reads the `"model"` section of a relay.json; a file without one gives ``localDefault``.
    ///
    /// For example:
    /// ```swift
    /// let configuration = try ModelConfiguration.load(relayJSON: data, file: "/home/ada/notes/relay.json")
    /// ```
    /// - parameter file: the file's path, named in errors.
    /// - throws: ``LanguageModelError/Code/configuration`` naming the file, the line and the
    ///   field: `relay.json:8: model.toolMode: "magic" is not one of "auto", …`.
    public static func load(relayJSON data: Data, file: String) throws -> ModelConfiguration {
        // The same parser (and the same "file:line:column: what" errors) as the rest of relay.json.
        let document: JSONNode
        do { document = try JSONNode.parse(Array(data), file: file) } catch {
            throw LanguageModelError(.configuration, error.description, url: file, underlying: error)
        }
        return try load(relayJSON: document, file: file)
    }

    /// `load(relayJSON:file:)` of a document already parsed (the workspace's relay.json, parsed
    /// once for every part of it a command reads).
    public static func load(relayJSON document: JSONNode, file: String) throws -> ModelConfiguration {
        guard case .object(let members) = document.value else {
            throw LanguageModelError(.configuration, "\(file):\(document.line):\(document.column): the document must be an object, not \(document.kindName)", url: file)
        }
        guard let model = members.last(where: { $0.key == "model" }) else { return .localDefault }
        guard case .object(let fields) = model.value.value else {
            throw LanguageModelError(.configuration, "\(file):\(model.line): \"model\" must be an object, not \(model.value.kindName)", url: file)
        }
        do {
            // The values are decoded by ModelConfiguration's Decodable rules (defaults, enums);
            // the lines come from the parsed document.
            return try JSONDecoder().decode(ModelConfiguration.self, from: JSONEncoder().encode(JSONValue(model.value)))
        } catch let error as DecodingError {
            let field = fieldName(error) ?? ""
            let lineNumber = fields.last(where: { $0.key == field })?.line ?? model.line
            let problem: String
            switch error {
            case .dataCorrupted(let context): problem = context.debugDescription
            case .typeMismatch(let type, _): problem = "expected \(type == String.self ? "a string" : type == Int.self ? "a whole number" : type == Double.self ? "a number" : "\(type)")"
            default: problem = describe(error)
            }
            let name = field.isEmpty ? "model" : "model.\(field)"
            throw LanguageModelError(.configuration, "\(file):\(lineNumber): \(name): \(problem)", url: file, underlying: error)
        }
    }

    private static func fieldName(_ error: DecodingError) -> String? {
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let c), .typeMismatch(_, let c), .valueNotFound(_, let c): context = c
        case .keyNotFound(let key, _): return key.stringValue
        @unknown default: return nil
        }
        return context.codingPath.first?.stringValue
    }
}

extension JSONValue {
    /// The parsed document's value, for a Decodable type to read.
    init(_ node: JSONNode) {
        switch node.value {
        case .object(let members):
            var object: [String: JSONValue] = [:]
            for member in members { object[member.key] = JSONValue(member.value) }
            self = .object(object)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .string(let text): self = .string(text)
        case .number(let number): self = .number(number)
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        }
    }
}
