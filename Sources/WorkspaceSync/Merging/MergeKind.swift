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
    /// A JSON configuration file (relay.json, a roster): three-way by key path, a roster's
    /// agents matched by `"id"` (`JSONMerge`); the same key changed on both sides, or a version
    /// that is not JSON: a deterministic winner and a conflict copy.
    case json

    static let textExtensions: Set<String> = [
        "md", "markdown", "txt", "text", "rst", "org", "adoc", "csv", "tsv", "yaml", "yml", "toml", "ini", "cfg",
        "html", "htm", "xml", "css", "js", "ts", "py", "swift", "rs", "go", "c", "h", "sh", "tex", "bib",
    ]

    /// The default kind of a workspace path. Read from its bytes: this is asked of every path
    /// a sync stages or a refresh finds changed (Foundation's `contains` and `split` made it
    /// 8% of a server's work per staged file). A name made only of dots ("...", a valid file
    /// name) has no extension; it used to crash here.
    public static func of(_ path: String) -> MergeKind {
        let bytes = path.utf8
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        let name = bytes[(bytes.lastIndex(of: slash).map { bytes.index(after: $0) } ?? bytes.startIndex)...]
        let ext = lastExtension(of: name)
        var components = bytes.split(separator: slash, maxSplits: 2, omittingEmptySubsequences: true)[...]
        let first = components.popFirst()
        if let first, first.elementsEqual("Journal".utf8) && (ext == "md" || ext == "txt" || ext == "") { return .journal }
        if components.count == 1, let first, first.elementsEqual("Chats".utf8) && ext == "json" { return .transcript }
        if ext == "json" { return .json }
        if textExtensions.contains(ext) { return .text }
        return .binary
    }

    /// The last non-empty part of `name` after a dot, lowercased ("" without a dot): "a.MD" →
    /// "md", "a.tar.gz" → "gz", "notes.md." → "md", ".bashrc" → "bashrc", "..." → "".
    private static func lastExtension(of name: Substring.UTF8View) -> String {
        let dot = UInt8(ascii: ".")
        guard name.contains(dot) else { return "" }
        var end = name.endIndex
        while end > name.startIndex && name[name.index(before: end)] == dot { end = name.index(before: end) }
        let part = name[(name[..<end].lastIndex(of: dot).map { name.index(after: $0) } ?? name.startIndex)..<end]
        // ASCII, as every extension in the table is, lowered by hand; anything else by Unicode's rules.
        if part.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: part.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        return String(decoding: part, as: UTF8.self).lowercased()
    }
}
