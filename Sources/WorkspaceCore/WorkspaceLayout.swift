/// Where things live in a workspace. Visible content is the people's; `.relay/` is the
/// engine's and never synced as content.
///
/// ```
/// <root>/.relay/
///   format           layout version, "1"
///   replica-id       this replica's id (16 hex digits), made by `relay init`
///   locks/<key>      one lock file per coordinated path (key = SHA-256 of the relative path)
///   objects/ab/cd…   content-addressed store of displaced versions (SHA-256)
///   history/<key>.jsonl   what replaced what, per path (single writes)
///   history/batches/      the same, one file per write batch (`HistoryLog`)
///   trash/           files no longer needed, unlinked later in the background (`Trash`)
/// ```
public struct WorkspaceLayout: Sendable {
    public static let stateFolderName = ".relay"
    /// Prefix of Relay's temporary files, in the folder of the file being replaced. The
    /// watcher ignores it; `relay status` and the next writer reclaim leftovers.
    public static let temporaryPrefix = ".relay-tmp-"
    public static let formatVersion = "1"
    /// The workspace's configuration, at its root (`Workspace.relayJSON`).
    public static let configurationFileName = "relay.json"

    public let root: String
    public var state: String { root + "/" + Self.stateFolderName }
    public var locks: String { state + "/locks" }
    public var objects: String { state + "/objects" }
    public var history: String { state + "/history" }
    public var historyBatches: String { history + "/batches" }
    public var trash: String { state + "/trash" }
    public var replicaIDFile: String { state + "/replica-id" }
    public var formatFile: String { state + "/format" }

    public init(root: String) { self.root = root }

    /// The absolute path of a workspace-relative path that has already been resolved.
    public func absolute(_ relative: String) -> String {
        relative.isEmpty ? root : root + "/" + relative
    }

    static func isWorkspaceRoot(_ folder: String) -> Bool {
        let state = (folder == "/" ? "" : folder) + "/" + stateFolderName
        guard case .success(let info) = Syscall.lstat(state) else { return false }
        return FileKind(info.st_mode) == .directory
    }

    /// Whether a file name is one of Relay's temporary files.
    public static func isTemporaryName(_ name: String) -> Bool { name.hasPrefix(temporaryPrefix) }
}
