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
        /// Names still to visit, sorted descending (the next is last), with their lstat.
        var names: [(name: String, info: Glibc.stat)]
    }

    private var levels: [Level] = []
    private let root: String
    private var started = false
    /// Called with each folder's relative path ("" for the root) after it is opened and before
    /// it is listed: the watcher adds its inotify watch there, so the walk's listing is also the
    /// watch's (a file made after the watch is reported by it, one made before is listed).
    private let willList: ((String) throws -> Void)?

    public init(_ workspace: Workspace, willList: ((String) throws -> Void)? = nil) {
        root = workspace.root
        self.willList = willList
    }

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
        do {
            try willList?(prefix.isEmpty ? "" : String(prefix.dropLast()))
        } catch {
            Syscall.close(fd)
            throw error
        }
        let names: [String]
        switch Syscall.listDirectory(fd) {
        case .success(let list): names = list
        case .failure(let errno):
            Syscall.close(fd)
            throw WorkspaceError.system(errno, "list", path: prefix.isEmpty ? "." : String(prefix.dropLast()))
        }
        var keyed: [(name: String, info: Glibc.stat)] = []
        keyed.reserveCapacity(names.count)
        for name in names {
            if prefix.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
            if WorkspaceLayout.isTemporaryName(name) { continue }
            // The kind decides the sort key, and the file's stamp is this same lstat.
            guard case .success(let info) = Syscall.lstat(in: fd, name) else { continue }
            switch FileKind(info.st_mode) {
            case .regular, .directory: keyed.append((name, info))
            default: continue
            }
        }
        // Descending: the next name to visit is the last.
        keyed.sort { Self.precedes($1.name, folder: FileKind($1.info.st_mode) == .directory, $0.name, folder: FileKind($0.info.st_mode) == .directory) }
        levels.append(Level(fd: fd, prefix: prefix, names: keyed))
    }

    /// Byte order of the names, a folder's name read as "name/" (no key is built: 100,000
    /// small arrays were a restart's largest allocation).
    static func precedes(_ a: String, folder aIsFolder: Bool, _ b: String, folder bIsFolder: Bool) -> Bool {
        var i = a.utf8.makeIterator(), j = b.utf8.makeIterator()
        var aDone = false, bDone = false
        while true {
            var x = i.next(), y = j.next()
            if x == nil { if aIsFolder && !aDone { x = UInt8(ascii: "/") }; aDone = true }
            if y == nil { if bIsFolder && !bDone { y = UInt8(ascii: "/") }; bDone = true }
            switch (x, y) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): if x != y { return x < y }
            }
            if aDone && bDone { return false }
        }
    }
}
