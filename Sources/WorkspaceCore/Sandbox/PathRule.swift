/// The sandbox rule a refused path broke. Agents' tool calls, scripts and sync peers all get
/// the same rules; the message is written to be shown to a model as a tool error.
public enum PathRule: Sendable, Equatable {
    case empty
    case containsNUL
    case absolute
    /// `..` would climb above the workspace root.
    case parentEscape
    /// The path is in, or resolves into, the engine's `.relay/` folder.
    case engineState
    /// A symbolic link on the way points outside the workspace; the associated value is its target.
    case symlinkEscape(link: String, target: String)
    /// More than `maximumSymlinkHops` symbolic links on the way (a loop, most likely).
    case symlinkLoop
    /// The path is one of Relay's own temporary files.
    case temporaryFile

    static let maximumSymlinkHops = 40

    func message(for path: String) -> String {
        switch self {
        case .empty: return "refused path '': a path is required"
        case .containsNUL: return "refused path \(quoted(path)): it contains a NUL byte"
        case .absolute: return "refused path \(quoted(path)): absolute paths are not allowed; give a path relative to the workspace root"
        case .parentEscape: return "refused path \(quoted(path)): '..' would leave the workspace root"
        case .engineState: return "refused path \(quoted(path)): .relay/ holds the engine's state and is not accessible"
        case .symlinkEscape(let link, let target):
            return "refused path \(quoted(path)): the symbolic link '\(link)' points outside the workspace (to '\(target)')"
        case .symlinkLoop: return "refused path \(quoted(path)): too many symbolic links (a loop?)"
        case .temporaryFile: return "refused path \(quoted(path)): names starting with \(WorkspaceLayout.temporaryPrefix) are Relay's temporary files"
        }
    }

    private func quoted(_ path: String) -> String { "'" + path + "'" }
}
