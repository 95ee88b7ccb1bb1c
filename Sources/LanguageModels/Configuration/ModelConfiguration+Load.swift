import Foundation

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
        let text = String(decoding: data, as: UTF8.self)
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let error as DecodingError {
            let (line, detail) = syntaxError(in: data) ?? (nil, describe(error))
            throw LanguageModelError(.configuration, "\(file)\(line.map { ":\($0)" } ?? ""): not valid JSON (\(detail))", url: file, underlying: error)
        }
        guard root.objectValue != nil else {
            throw LanguageModelError(.configuration, "\(file):1: the file must hold a JSON object", url: file)
        }
        guard let section = root["model"] else { return .localDefault }
        guard section.objectValue != nil else {
            throw LanguageModelError(.configuration, "\(file):\(line(of: "model", in: text, after: nil)): \"model\" must be an object", url: file)
        }
        do {
            return try JSONDecoder().decode(ModelConfiguration.self, from: JSONEncoder().encode(section))
        } catch let error as DecodingError {
            let field = fieldName(error) ?? ""
            let lineNumber = field.isEmpty ? line(of: "model", in: text, after: nil) : line(of: field, in: text, after: "model")
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

    /// Where JSON text goes wrong: JSONDecoder on Linux does not say, JSONSerialization gives
    /// "around character N", turned here into a line and column.
    private static func syntaxError(in data: Data) -> (line: Int, detail: String)? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            guard let match = description.firstMatch(of: /(.*) around character (\d+)/), let offset = Int(match.2) else { return nil }
            let before = data.prefix(offset)
            let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
            let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            return (line, "\(match.1.lowercased()) at line \(line), column \(column)")
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

    /// The 1-based line of `"key":` in `text`, looking only after `"section":` when given.
    static func line(of key: String, in text: String, after section: String?) -> Int {
        var searchFrom = text.startIndex
        if let section, let found = text.firstMatch(of: try! Regex("\"\(NSRegularExpression.escapedPattern(for: section))\"\\s*:")) {
            searchFrom = found.range.upperBound
        }
        let pattern = try! Regex("\"\(NSRegularExpression.escapedPattern(for: key))\"\\s*:")
        guard let match = text[searchFrom...].firstMatch(of: pattern) else { return 1 }
        return text[..<match.range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }
}
