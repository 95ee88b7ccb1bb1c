/// A name from a request path that becomes one file name in a workspace folder (`Chats/NAME.md`,
/// `Research/NAME`): percent-decoded, then refused unless it is a single visible component —
/// no `/` or `\`, not `.`/`..` or hidden, no control characters, at most 255 bytes. The
/// workspace's sandbox checks the resulting path again.
enum FileName {
    /// - throws: ``APIError`` `.invalidRequest` naming what is wrong with `raw`.
    static func validated(_ raw: String, what: String) throws -> String {
        guard let name = raw.removingPercentEncoding else {
            throw APIError(.invalidRequest, "\(what) '\(raw.prefix(80))' is not valid percent-encoded UTF-8")
        }
        let shown = String(name.prefix(80)).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        if name.isEmpty { throw APIError(.invalidRequest, "\(what) is empty") }
        if name.contains("/") || name.contains("\\") {
            throw APIError(.invalidRequest, "\(what) '\(shown)' has a path separator; give a plain file name")
        }
        if name.hasPrefix(".") { throw APIError(.invalidRequest, "\(what) '\(shown)' starts with a dot (hidden files and .. are refused)") }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw APIError(.invalidRequest, "\(what) '\(shown)' has a control character")
        }
        if name.utf8.count > 255 { throw APIError(.invalidRequest, "\(what) is longer than 255 bytes") }
        return name
    }
}
