import RelayJSON

/// A JSON object being read as configuration, with the path that leads to it, so every error
/// names the file, the line and the field.
///
/// For example:
/// ```swift
/// let root = try ConfigurationObject(parsing: bytes, file: "relay.json")
/// for trigger in try root.objects("triggers") {
///     try trigger.allowOnly(["pattern", "relay", "command"])
///     let pattern = try trigger.string("pattern")
/// }
/// ```
public struct ConfigurationObject: Sendable {
    public let file: String
    /// The field path to this object, e.g. "triggers[2]"; "" for the root.
    public let path: String
    let node: JSONNode
    /// This object's parsed JSON (with lines and columns), for a reader outside WorkspaceCore
    /// that has its own rules for it (LanguageModels' model section).
    package var document: JSONNode { node }
    let members: [JSONNode.Member]
    /// What joins this object's path and a member's name in messages ("." normally).
    var separator = "."

    public init(parsing bytes: [UInt8], file: String) throws {
        try self.init(node: try Self.parse(bytes, file: file), file: file, path: "")
    }

    /// The document, or a `WorkspaceError` `.invalidInput` holding the parser's line and column.
    static func parse(_ bytes: [UInt8], file: String) throws -> JSONNode {
        do { return try JSONNode.parse(bytes, file: file) } catch {
            throw WorkspaceError(.invalidInput, error.description, path: file)
        }
    }

    init(node: JSONNode, file: String, path: String) throws {
        guard case .object(let members) = node.value else {
            throw WorkspaceError(.invalidInput, "\(file):\(node.line):\(node.column): \(path.isEmpty ? "the document" : path) must be an object, not \(node.kindName)", path: file)
        }
        self.file = file
        self.path = path
        self.node = node
        self.members = members
    }

    public var keys: [String] { members.map(\.key) }
    public var line: Int { node.line }
    public var column: Int { node.column }

    func field(_ key: String) -> String { path.isEmpty ? key : path + separator + key }

    /// The objects of a document whose root is an array of objects (a roster), each with the
    /// path "[index]".
    /// - throws: `WorkspaceError` `.invalidInput` naming the file, line and column when the
    ///   document is not JSON, not an array, or holds something that is not an object.
    public static func array(parsing bytes: [UInt8], file: String) throws -> [ConfigurationObject] {
        let node = try parse(bytes, file: file)
        guard case .array(let elements) = node.value else {
            throw WorkspaceError(.invalidInput, "\(file):\(node.line):\(node.column): the document must be an array of objects, not \(node.kindName)", path: file)
        }
        return try elements.enumerated().map { try ConfigurationObject(node: $1, file: file, path: "[\($0)]") }
    }

    /// The same object under a name people recognise, e.g. `agent 'writer'`: messages then
    /// read "…: agent 'writer', field tools[1]: unknown tool".
    public func labelled(_ label: String) -> ConfigurationObject {
        var copy = ConfigurationObject(copying: self, path: label)
        copy.separator = ", field "
        return copy
    }

    private init(copying other: ConfigurationObject, path: String) {
        file = other.file
        self.path = path
        node = other.node
        members = other.members
    }

    /// An error about the member `key` (at its line, or the object's when it is absent).
    public func failure(at key: String, _ message: String) -> WorkspaceError {
        guard let member = members.first(where: { $0.key == key }) else {
            return WorkspaceError(.invalidInput, "\(file):\(node.line):\(node.column): \(field(key)): \(message)", path: file)
        }
        return fail(member, message)
    }

    func fail(_ member: JSONNode.Member, _ message: String) -> WorkspaceError {
        WorkspaceError(.invalidInput, "\(file):\(member.value.line):\(member.value.column): \(field(member.key)): \(message)", path: file)
    }

    /// An error about this object as a whole, at its line.
    public func failure(_ message: String) -> WorkspaceError {
        WorkspaceError(.invalidInput, "\(file):\(node.line):\(node.column): \(path.isEmpty ? "" : path + ": ")\(message)", path: file)
    }

    /// Rejects any member not in `allowed`, naming it and listing what is allowed.
    public func allowOnly(_ allowed: [String]) throws {
        for member in members where !allowed.contains(member.key) {
            throw WorkspaceError(
                .invalidInput,
                "\(file):\(member.line):\(member.column): \(field(member.key)): unknown field '\(member.key)' (allowed here: \(allowed.joined(separator: ", ")))",
                path: file)
        }
    }

    public func contains(_ key: String) -> Bool { members.contains { $0.key == key } }

    private func member(_ key: String, required: Bool) throws -> JSONNode.Member? {
        if let member = members.first(where: { $0.key == key }) {
            if case .null = member.value.value, !required { return nil }
            return member
        }
        if required { throw failure("missing field '\(key)'") }
        return nil
    }

    public func string(_ key: String) throws -> String {
        try optionalString(key, required: true)!
    }

    public func optionalString(_ key: String, required: Bool = false) throws -> String? {
        guard let member = try member(key, required: required) else { return nil }
        guard case .string(let text) = member.value.value else { throw fail(member, "expected a string, found \(member.value.kindName)") }
        return text
    }

    public func optionalNumber(_ key: String, in range: ClosedRange<Double>? = nil) throws -> Double? {
        guard let member = try member(key, required: false) else { return nil }
        guard case .number(let value) = member.value.value else { throw fail(member, "expected a number, found \(member.value.kindName)") }
        if let range, !range.contains(value) {
            throw fail(member, "\(value) is out of range (\(range.lowerBound)…\(range.upperBound))")
        }
        return value
    }

    public func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try optionalNumber(key) else { return nil }
        let member = members.first { $0.key == key }!
        guard value == value.rounded(), let integer = Int(exactly: value), range.contains(integer) else {
            throw fail(member, "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(value)")
        }
        return integer
    }

    public func optionalBool(_ key: String) throws -> Bool? {
        guard let member = try member(key, required: false) else { return nil }
        guard case .bool(let value) = member.value.value else { throw fail(member, "expected true or false, found \(member.value.kindName)") }
        return value
    }

    /// An array of strings (a missing field is an empty array).
    public func strings(_ key: String) throws -> [String] {
        guard let member = try member(key, required: false) else { return [] }
        guard case .array(let elements) = member.value.value else { throw fail(member, "expected an array of strings, found \(member.value.kindName)") }
        return try elements.enumerated().map { offset, element in
            guard case .string(let text) = element.value else {
                throw WorkspaceError(.invalidInput, "\(file):\(element.line):\(element.column): \(field(key))[\(offset)]: expected a string, found \(element.kindName)", path: file)
            }
            return text
        }
    }

    public func optionalObject(_ key: String) throws -> ConfigurationObject? {
        guard let member = try member(key, required: false) else { return nil }
        return try ConfigurationObject(node: member.value, file: file, path: field(key))
    }

    /// An array of objects (a missing field is an empty array).
    public func objects(_ key: String) throws -> [ConfigurationObject] {
        guard let member = try member(key, required: false) else { return [] }
        guard case .array(let elements) = member.value.value else { throw fail(member, "expected an array, found \(member.value.kindName)") }
        return try elements.enumerated().map { offset, element in
            try ConfigurationObject(node: element, file: file, path: "\(field(key))[\(offset)]")
        }
    }

    /// The members of an object-valued field, each as an object (`"relays": {"chat": {…}}`).
    public func objectMembers(_ key: String) throws -> [(name: String, object: ConfigurationObject)] {
        guard let container = try optionalObject(key) else { return [] }
        return try container.members.map { member in
            (member.key, try ConfigurationObject(node: member.value, file: file, path: container.field(member.key)))
        }
    }
}
