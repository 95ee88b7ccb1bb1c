import SystemPackage

/// The one error type of WorkspaceCore: a code a program can switch on, a message a person can
/// act on (it names the file and the rule), the workspace-relative or absolute path concerned,
/// and the system error underneath, when there is one.
///
/// For example:
/// ```swift
/// do { try workspace.write("../notes.md", contents: bytes) }
/// catch let error as WorkspaceError where error.code == .pathRefused { print(error.message) }
/// // refused path '../notes.md': '..' would leave the workspace root
/// ```
public struct WorkspaceError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// No workspace at or above the folder, or the folder is missing.
        case notAWorkspace
        /// A path that must be a folder is a file (or the reverse).
        case notADirectory
        case isADirectory
        /// The path breaks a sandbox rule; the message says which.
        case pathRefused
        case notFound
        /// A coordinated lock was not acquired within its timeout.
        case lockTimeout
        /// A read-modify-write kept finding the file changed under it.
        case tooManyConcurrentChanges
        /// A stored version or a template file that is not there or does not match.
        case versionNotFound
        case invalidInput
        /// Any other failure of the system underneath; `underlying` holds the errno.
        case io
    }

    public var code: Code
    public var message: String
    public var path: String?
    public var underlying: Errno?

    public init(_ code: Code, _ message: String, path: String? = nil, underlying: Errno? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlying = underlying
    }

    public var description: String { message }

    /// Whether the error is the caller's (bad path, missing workspace, wrong kind of file):
    /// the command line exits 2 for these and 1 for failures of the operation itself.
    public var isUsageError: Bool {
        switch code {
        case .notAWorkspace, .notADirectory, .isADirectory, .pathRefused, .invalidInput: return true
        case .notFound, .lockTimeout, .tooManyConcurrentChanges, .versionNotFound, .io: return false
        }
    }

    /// Maps a failed system call on `path` to an error that names the path and the operation.
    static func system(_ errno: Errno, _ operation: String, path: String) -> WorkspaceError {
        switch errno {
        case .noSuchFileOrDirectory:
            return WorkspaceError(.notFound, "\(path): no such file or folder", path: path, underlying: errno)
        case .notDirectory:
            return WorkspaceError(
                .notADirectory, "\(path): a part of this path is a file where a folder is expected",
                path: path, underlying: errno)
        case .isDirectory:
            return WorkspaceError(.isADirectory, "\(path): is a folder, not a file", path: path, underlying: errno)
        default:
            return WorkspaceError(.io, "\(path): \(operation) failed: \(errno)", path: path, underlying: errno)
        }
    }
}

extension Result where Failure == Errno {
    /// Unwraps, turning an errno into a `WorkspaceError` that names `path`.
    func orThrow(_ operation: String, path: String) throws -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let errno): throw WorkspaceError.system(errno, operation, path: path)
        }
    }
}
