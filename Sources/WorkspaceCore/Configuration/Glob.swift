/// A path pattern over workspace-relative paths: `*` and `?` within one path component,
/// `**` for any number of components (none included), everything else literal.
///
/// For example: `Research/**` matches `Research/paper.pdf` and `Research/a/b.md`;
/// `Chats/*.md` matches `Chats/today.md` but not `Chats/old/today.md`; `**/README.md`
/// matches a README in any folder.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let components: [String]

    /// - throws: a message (for `WorkspaceError`) when the pattern is empty or absolute.
    public init(_ pattern: String) throws {
        guard !pattern.isEmpty else { throw GlobError(message: "a pattern may not be empty") }
        guard !pattern.hasPrefix("/") else { throw GlobError(message: "'\(pattern)' is absolute; patterns are relative to the workspace root") }
        guard !pattern.split(separator: "/").contains("..") else { throw GlobError(message: "'\(pattern)' contains '..'") }
        self.pattern = pattern
        self.components = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    public var description: String { pattern }

    public func matches(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map { Array($0.utf8) }
        return Self.match(components.map { Array($0.utf8) }[...], parts[...])
    }

    private static func match(_ pattern: ArraySlice<[UInt8]>, _ path: ArraySlice<[UInt8]>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == Array("**".utf8) {
            let rest = pattern.dropFirst()
            if rest.isEmpty { return !path.isEmpty }  // `a/**` matches files below a, not a itself
            var remaining = path
            while true {
                if match(rest, remaining) { return true }
                guard !remaining.isEmpty else { return false }
                remaining = remaining.dropFirst()
            }
        }
        guard let component = path.first, matchComponent(first[...], component[...]) else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }

    private static func matchComponent(_ pattern: ArraySlice<UInt8>, _ name: ArraySlice<UInt8>) -> Bool {
        guard let p = pattern.first else { return name.isEmpty }
        switch p {
        case UInt8(ascii: "*"):
            var rest = name
            while true {
                if matchComponent(pattern.dropFirst(), rest) { return true }
                guard !rest.isEmpty else { return false }
                rest = rest.dropFirst()
            }
        case UInt8(ascii: "?"):
            return !name.isEmpty && matchComponent(pattern.dropFirst(), name.dropFirst())
        default:
            return name.first == p && matchComponent(pattern.dropFirst(), name.dropFirst())
        }
    }
}

/// Why a pattern cannot be used, for the caller's message (it names the file and field).
public struct GlobError: Error, Sendable {
    public var message: String
}
