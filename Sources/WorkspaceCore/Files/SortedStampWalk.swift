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
    /// A name still to visit: a folder, or a regular file with its stamp (from the listing's
    /// lstat). 40 bytes, not a 144-byte `stat`: a folder's listing is sorted and popped.
    private struct Entry {
        var name: String
        var folder: Bool
        var stamp: FileStamp
    }

    private struct Level {
        var fd: CInt
        var prefix: String
        /// Names still to visit, sorted descending (the next is last).
        var names: [Entry]
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
        while !levels.isEmpty {
            let top = levels.count - 1
            // Popped in place: a copy of the level would copy its whole listing per name.
            guard let entry = levels[top].names.popLast() else {
                Syscall.close(levels[top].fd)
                levels.removeLast()
                continue
            }
            let relative = levels[top].prefix + entry.name
            guard entry.folder else { return (relative, entry.stamp) }
            switch Syscall.openDirectory(in: levels[top].fd, entry.name) {
            case .success(let fd): try push(fd, prefix: relative + "/")
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory), .failure(.tooManySymbolicLinkLevels): continue
            case .failure(let errno): throw WorkspaceError.system(errno, "list", path: relative)
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
        let listed: [(name: String, kind: UInt8)]
        switch Syscall.listDirectoryWithKinds(fd) {
        case .success(let list): listed = list
        case .failure(let errno):
            Syscall.close(fd)
            throw WorkspaceError.system(errno, "list", path: prefix.isEmpty ? "." : String(prefix.dropLast()))
        }
        var keyed: [Entry] = []
        keyed.reserveCapacity(listed.count)
        let none = FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0)
        for (name, kind) in listed {
            if prefix.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
            if WorkspaceLayout.isTemporaryName(name) { continue }
            switch Int(kind) {
            case Int(DT_DIR):
                // A folder needs no lstat: opening it (O_DIRECTORY | O_NOFOLLOW) checks what it
                // is when the walk gets there.
                keyed.append(Entry(name: name, folder: true, stamp: none))
            case Int(DT_REG), Int(DT_UNKNOWN):
                // The file's stamp is this lstat (and, where the listing did not say, its kind).
                guard case .success(let info) = Syscall.lstat(in: fd, name) else { continue }
                switch FileKind(info.st_mode) {
                case .regular: keyed.append(Entry(name: name, folder: false, stamp: FileStamp(FileIdentity(info))))
                case .directory: keyed.append(Entry(name: name, folder: true, stamp: none))
                default: continue
                }
            default: continue  // links, sockets, devices: never walked
            }
        }
        // Descending: the next name to visit is the last.
        keyed.sort { Self.precedes($1.name, folder: $1.folder, $0.name, folder: $0.folder) }
        levels.append(Level(fd: fd, prefix: prefix, names: keyed))
    }

    /// Byte order of the names, a folder's name read as "name/" (no key is built: 100,000
    /// small arrays were a restart's largest allocation). The common part is one `memcmp`;
    /// a name holds no "/", so when one name is the other's start, the "/" a folder's name
    /// ends with decides against the other's next byte.
    static func precedes(_ a: String, folder aIsFolder: Bool, _ b: String, folder bIsFolder: Bool) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0 {
                    let order = memcmp(x.baseAddress!, y.baseAddress!, common)
                    if order != 0 { return order < 0 }
                }
                let slash = UInt8(ascii: "/")
                if x.count == y.count { return !aIsFolder && bIsFolder }
                if x.count < y.count { return !aIsFolder || slash < y[common] }
                return bIsFolder && x[common] < slash
            }
        }
    }
}
