import Foundation
import WorkspaceCore

/// Where another replica is: a folder on this machine (a USB disk, a mounted share, a folder
/// next to this one) or `[user@]host:path` over ssh. The one reading of a peer's address, for
/// `relay sync PEER` and the daemon's `"sync": {"peers": [...]}` alike.
///
/// For example:
/// ```swift
/// PeerAddress("ada@desktop:notes", relativeTo: cwd)   // .ssh("ada@desktop:notes")
/// PeerAddress("../notes-copy", relativeTo: "/home/ada/notes")  // .folder("/home/ada/notes-copy")
/// ```
public enum PeerAddress: Sendable, Hashable, CustomStringConvertible {
    /// An absolute folder, `.` and `..` resolved and symbolic links followed.
    case folder(String)
    /// `[user@]host:path`, as written.
    case ssh(String)

    /// Reads `text`: `[user@]host:path` when a colon comes before any slash and no folder of
    /// that name exists here; otherwise a folder, relative to `base` unless absolute (a
    /// command's working folder for `relay sync`, the workspace's root for relay.json's peers).
    public init(_ text: String, relativeTo base: String) {
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/") {
            let local = text.hasPrefix("/") ? text : base + "/" + text
            if !FileManager.default.fileExists(atPath: local) {
                self = .ssh(text)
                return
            }
        }
        let absolute = text.hasPrefix("/") ? text : base + "/" + text
        self = .folder(URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path)
    }

    /// The folder, or `[user@]host:path`: what a sync with it prints as the peer's location.
    public var location: String {
        switch self {
        case .folder(let path): return path
        case .ssh(let spec): return spec
        }
    }

    public var isRemote: Bool {
        if case .ssh = self { return true }
        return false
    }

    public var description: String { location }
}
