// The one error type of WorkspaceSync.

/// Why a sync, or one operation of it, did not happen: a code a program can switch on, a
/// message a person can act on, the path concerned when there is one, and the failure
/// underneath when there is one (a sandbox refusal, a system error, a malformed message).
///
/// For example:
/// ```swift
/// do { summary = try Reconciler(local: here, peer: there).run() }
/// catch let error as SyncError { print(error.message) }
/// // refusing to delete 8 of 10 files on /backup/notes because they were deleted on …
/// ```
public struct SyncError: Error, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The file is not what the index says any more (somebody edited it during the sync):
        /// left for the next sync.
        case changed
        /// A path the sandbox refuses (usually one the peer sent).
        case refused
        /// The connection to the peer, or the peer, failed; the message says how.
        case transport
        /// The sync stopped before changing anything: a mass deletion, a replica that is this
        /// one or a copy of it.
        case stopped
        /// The sync index is not as this code wrote it.
        case corruptIndex
        /// The peer cannot be a replica of this workspace: it is this workspace, or one of the
        /// two is inside the other. The caller's mistake (`relay sync` exits 2).
        case badPeer
        /// The sync index's database failed (SQLite's error, naming the file and the
        /// statement, is the cause).
        case database
    }

    public var code: Code
    public var message: String
    /// The workspace-relative path concerned (or a file of Relay's own, such as the index).
    public var path: String?
    /// The failure underneath, when there is one.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, path: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
    }

    public var description: String { message }

    /// Whether the error is the caller's (a peer that is this workspace or nested in it): the
    /// command line exits 2 for these and 1 for failures of the sync itself.
    public var isUsageError: Bool { code == .badPeer }

    /// `path` changed during the sync.
    public static func changed(_ path: String) -> SyncError {
        SyncError(.changed, "\(path) changed during the sync", path: path)
    }

    /// A path refused; `message` names it and the rule.
    public static func refused(_ message: String, path: String? = nil, cause: (any Error)? = nil) -> SyncError {
        SyncError(.refused, message, path: path, cause: cause)
    }

    /// The transport failed; `message` says how.
    public static func transport(_ message: String, cause: (any Error)? = nil) -> SyncError {
        SyncError(.transport, message, cause: cause)
    }
}
