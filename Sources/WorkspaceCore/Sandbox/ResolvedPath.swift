/// A workspace path that passed the sandbox: relative, normalised, symbolic links resolved
/// (as far as the path exists), inside the root and outside `.relay/`.
public struct ResolvedPath: Sendable, Hashable, CustomStringConvertible {
    /// Relative to the root, components joined by "/", no "." or ".."; "" is the root itself.
    public let relative: String
    /// `root + "/" + relative`.
    public let absolute: String
    /// Whether every component exists on disk (the last one may be any kind of file).
    public let exists: Bool

    public var description: String { relative.isEmpty ? "." : relative }

    /// The folder that holds this path, absolute.
    var parentAbsolute: String { Workspace.parentFolder(of: absolute) }

    /// The last component.
    var name: String {
        guard let slash = relative.lastIndex(of: "/") else { return relative }
        return String(relative[relative.index(after: slash)...])
    }
}
