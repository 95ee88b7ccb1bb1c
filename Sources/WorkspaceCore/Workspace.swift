import Logging

/// An open Relay workspace: a folder with a `.relay/` state folder at its root.
///
/// Every file operation goes through here: paths are resolved inside the sandbox, writers take
/// the coordinated-write lock, replacements are atomic and keep the version they displace.
///
/// For example:
/// ```swift
/// let workspace = try Workspace.discover(from: "/home/ada/notes")
/// try workspace.append("Journal/agent/2026-11-22.md", line: "- planner: outlined the essay")
/// let context = try workspace.readString("context.md")
/// ```
public struct Workspace: Sendable {
    /// The workspace folder: absolute, symbolic links resolved, no trailing slash.
    public let root: String
    public let layout: WorkspaceLayout
    /// Whether writes fsync the file and its folder (default). Off trades power-loss
    /// durability for speed; atomicity against crashes of the process is kept either way.
    public var durable: Bool
    /// How long a writer waits for the coordinated-write lock before failing with
    /// `WorkspaceError.Code.lockTimeout`.
    public var lockTimeout: Duration
    /// Files larger than this are replaced without keeping their old version in the store.
    public var maximumArchivedSize: Int
    public var logger: Logger
    /// Whether this workspace's writes may start triggers. Off (the default) for the engine —
    /// agents' outputs and files sync brings are recognised by the watcher and start nothing;
    /// on for `relay fs`, where a person or a script is dropping a file on purpose.
    public var writesTrigger: Bool
    /// Whether a write batch may give a new file its installed record as an extended attribute
    /// (`InstalledRecord`) instead of a lock file of its own. Off where the file system keeps
    /// none — found by the first refusal — and in the tests of that case.
    package var installedRecordsInFiles = true

    /// The environment variable that names the workspace when `-w` is not given.
    public static let environmentVariable = "RELAY_WORKSPACE"

    init(root: String, logger: Logger) {
        self.root = root
        self.layout = WorkspaceLayout(root: root)
        self.durable = true
        self.lockTimeout = .seconds(30)
        self.maximumArchivedSize = 64 * 1024 * 1024
        self.logger = logger
        self.writesTrigger = false
    }

    /// Opens the workspace whose root is exactly `path`.
    ///
    /// - throws: `WorkspaceError` `.notAWorkspace` when the folder is missing or has no
    ///   `.relay/`, `.notADirectory` when `path` is a file.
    public static func open(at path: String, logger: Logger = Workspace.silentLogger) throws -> Workspace {
        let root = try canonicalFolder(path)
        guard WorkspaceLayout.isWorkspaceRoot(root) else {
            throw WorkspaceError(
                .notAWorkspace, "\(root) is not a Relay workspace (it has no .relay/ folder); run `relay init \(path)` to make it one",
                path: root)
        }
        return Workspace(root: root, logger: logger)
    }

    /// Finds the workspace containing `path`: the nearest folder at or above it with a
    /// `.relay/` folder, the way git finds `.git`.
    ///
    /// - throws: `WorkspaceError` `.notAWorkspace` naming the folder searched from.
    public static func discover(from path: String, logger: Logger = Workspace.silentLogger) throws -> Workspace {
        let start = try canonicalFolder(path)
        var candidate = start
        while true {
            if WorkspaceLayout.isWorkspaceRoot(candidate) { return Workspace(root: candidate, logger: logger) }
            if candidate == "/" { break }
            candidate = parentFolder(of: candidate)
        }
        throw WorkspaceError(
            .notAWorkspace,
            "no Relay workspace at \(start) or any folder above it; run `relay init` there, or pass -w DIR or set \(environmentVariable)",
            path: start)
    }

    /// The absolute, symlink-free form of `path`, which must be an existing folder.
    static func canonicalFolder(_ path: String) throws -> String {
        let resolved: String
        switch Syscall.realpath(path) {
        case .success(let value): resolved = value
        case .failure(.noSuchFileOrDirectory):
            throw WorkspaceError(.notAWorkspace, "\(path): no such folder", path: path)
        case .failure(.notDirectory):
            throw WorkspaceError(.notADirectory, "\(path): a part of this path is a file, not a folder", path: path)
        case .failure(let errno):
            throw WorkspaceError.system(errno, "resolve", path: path)
        }
        let info = try Syscall.lstat(resolved).orThrow("stat", path: resolved)  // realpath left no links
        guard FileKind(info.st_mode) == .directory else {
            throw WorkspaceError(.notADirectory, "\(path) is a file, not a folder; a workspace is a folder", path: path)
        }
        return resolved
    }

    static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A logger that drops everything, for callers that configure none.
    public static var silentLogger: Logger { Logger(label: "relay.workspace", factory: { _ in SwiftLogNoOpLogHandler() }) }
}

/// The kind of a file system entry, from `st_mode`.
enum FileKind: Equatable {
    case regular, directory, symlink, other

    init(_ mode: UInt32) {
        switch mode & 0o170000 {
        case 0o100000: self = .regular
        case 0o040000: self = .directory
        case 0o120000: self = .symlink
        default: self = .other
        }
    }
}
