/// How a file merges when two replicas changed it concurrently (design §7).
public enum MergeKind: String, Sendable, Equatable {
    /// Line-based three-way merge; overlapping changes: a deterministic winner in the file and
    /// the other side's whole version in a conflict copy.
    case text
    /// Union of appended entries (falls back to `text` when a side did more than append).
    case journal
    /// Union of messages by id, ordered by (time, id).
    case transcript
    /// Newer by version vector; concurrent: a deterministic winner and a conflict copy.
    case binary

    static let textExtensions: Set<String> = [
        "md", "markdown", "txt", "text", "rst", "org", "adoc", "csv", "tsv", "yaml", "yml", "toml", "ini", "cfg",
        "html", "htm", "xml", "css", "js", "ts", "py", "swift", "rs", "go", "c", "h", "sh", "tex", "bib",
    ]

    /// The default kind of a workspace path.
    public static func of(_ path: String) -> MergeKind {
        let components = path.split(separator: "/")
        let name = components.last.map(String.init) ?? path
        let lowered = name.lowercased()
        let ext = lowered.contains(".") ? String(lowered.split(separator: ".").last!) : ""
        if components.first == "Journal" && (ext == "md" || ext == "txt" || ext == "") { return .journal }
        if components.count == 2 && components.first == "Chats" && ext == "json" { return .transcript }
        if textExtensions.contains(ext) { return .text }
        return .binary
    }
}
