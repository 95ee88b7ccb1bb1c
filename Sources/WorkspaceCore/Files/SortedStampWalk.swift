import Glibc

/// The workspace's regular files with their stamps, one at a time, in the byte order of their
/// paths — SQLite's `ORDER BY path` — so a caller can walk the tree and an index side by side
/// (a merge join) and keep neither whole in memory: only the listings of the folders on the
/// way down are held.
///
/// A folder's names are sorted with a folder counted as "name/" (so "a.txt" comes before the
/// files of folder "a", as "a.txt" < "a/b" in bytes). Like `StampWalk`, `.relay/` and
/// temporary files are skipped, symbolic links are not followed, and each folder is opened
/// relative to its open parent with `O_NOFOLLOW`; a folder that vanishes mid-walk is skipped.
///
/// For example:
/// ```swift
/// var walk = SortedStampWalk(workspace)
/// while let (path, stamp) = try walk.next() { print(path, stamp.size) }
/// ```
public struct SortedStampWalk {
    private struct Level {
        var fd: CInt
        var prefix: String
        /// Names still to visit, sorted descending (the next is last), with whether each is a folder.
        var names: [(key: [UInt8], name: String, info: Glibc.stat)]
    }

    private var levels: [Level] = []
    private let root: String
    private var started = false

    public init(_ workspace: Workspace) { root = workspace.root }

    /// The next file, or nil when the walk is done.
    ///
    /// - throws: `WorkspaceError` when the root or a folder cannot be listed.
    public mutating func next() throws -> (path: String, stamp: FileStamp)? {
        if !started {
            started = true
            let fd = try Syscall.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC).orThrow("list", path: ".")
            try push(fd, prefix: "")
        }
        while var level = levels.last {
            guard let entry = level.names.popLast() else {
                Syscall.close(level.fd)
                levels.removeLast()
                continue
            }
            levels[levels.count - 1] = level
            let relative = level.prefix + entry.name
            switch FileKind(entry.info.st_mode) {
            case .regular:
                return (relative, FileStamp(FileIdentity(entry.info)))
            case .directory:
                switch Syscall.openDirectory(in: level.fd, entry.name) {
                case .success(let fd): try push(fd, prefix: relative + "/")
                case .failure(.noSuchFileOrDirectory), .failure(.notDirectory), .failure(.tooManySymbolicLinkLevels): continue
                case .failure(let errno): throw WorkspaceError.system(errno, "list", path: relative)
                }
            default: continue
            }
        }
        return nil
    }

    /// Closes the folders still open (a walk stopped before its end).
    public mutating func close() {
        for level in levels { Syscall.close(level.fd) }
        levels = []
    }

    private mutating func push(_ fd: CInt, prefix: String) throws {
        let names: [String]
        switch Syscall.listDirectory(fd) {
        case .success(let list): names = list
        case .failure(let errno):
            Syscall.close(fd)
            throw WorkspaceError.system(errno, "list", path: prefix.isEmpty ? "." : String(prefix.dropLast()))
        }
        var keyed: [(key: [UInt8], name: String, info: Glibc.stat)] = []
        keyed.reserveCapacity(names.count)
        for name in names {
            if prefix.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
            if WorkspaceLayout.isTemporaryName(name) { continue }
            // The kind decides the sort key, and the file's stamp is this same lstat.
            guard case .success(let info) = Syscall.lstat(in: fd, name) else { continue }
            var key = Array(name.utf8)
            switch FileKind(info.st_mode) {
            case .regular: break
            case .directory: key.append(UInt8(ascii: "/"))
            default: continue
            }
            keyed.append((key, name, info))
        }
        // Descending: the next name to visit is the last.
        keyed.sort { $1.key.lexicographicallyPrecedes($0.key) }
        levels.append(Level(fd: fd, prefix: prefix, names: keyed))
    }
}
