import Glibc

extension Workspace {
    /// One entry of a listing.
    public struct Entry: Sendable, Equatable, Codable {
        public enum Kind: String, Sendable, Codable { case file, folder, symlink, other }
        /// Relative to the workspace root.
        public var path: String
        public var kind: Kind
        public var size: Int
        /// Modification time, nanoseconds since 1970.
        public var modifiedNanoseconds: Int64
    }

    /// The entries of a folder (or the one file `path` names), sorted by path. Relay's own
    /// state (`.relay/`) and temporary files are never listed; symbolic links are listed, not
    /// followed, when `recursive`.
    public func list(_ path: String = ".", recursive: Bool = false) throws -> [Entry] {
        let target: ResolvedPath
        if path == "." || path.isEmpty {
            target = ResolvedPath(relative: "", absolute: root, exists: true)
        } else {
            target = try resolve(path)
        }
        let info = try Syscall.lstat(target.absolute).orThrow("stat", path: target.description)
        guard FileKind(info.st_mode) == .directory else {
            return [Self.entry(target.relative, info)]
        }
        var entries: [Entry] = []
        try walk(from: target.relative, recursive: recursive) { relative, info in
            entries.append(Self.entry(relative, info))
        }
        return entries.sorted { $0.path < $1.path }
    }

    /// The stamp of every regular file under the root (not `.relay/`, not temporaries), from
    /// one `lstat` each: what the sync index's refresh compares with what it recorded.
    public func fileStamps() throws -> [(path: String, stamp: FileStamp)] {
        var sawTemporary = false
        return try fileStamps(sawTemporary: &sawTemporary)
    }

    /// `fileStamps()`, also telling whether the walk passed a temporary file (a writer's, or
    /// one a killed writer left: `reclaimTemporaries()` tells them apart).
    public func fileStamps(sawTemporary: inout Bool) throws -> [(path: String, stamp: FileStamp)] {
        var result: [(path: String, stamp: FileStamp)] = []
        var temporaries = false
        try walk(from: "", recursive: true, temporary: { temporaries = true }) { relative, info in
            if FileKind(info.st_mode) == .regular { result.append((relative, FileStamp(FileIdentity(info)))) }
        }
        sawTemporary = temporaries
        return result
    }

    /// Visits every entry under the folder `start` (relative; "" is the root) with its `lstat`,
    /// descending into folders when `recursive`, skipping `.relay/` and temporary files. Each
    /// folder is opened once and its entries are looked at relative to it (`fstatat`, `openat`):
    /// no path is walked from the root again per file, and a folder swapped for a symbolic link
    /// mid-walk is not followed.
    private func walk(from start: String, recursive: Bool, temporary: () -> Void = {}, _ visit: (String, stat) -> Void) throws {
        let fd = try Syscall.open(layout.absolute(start), O_RDONLY | O_DIRECTORY)
            .orThrow("list", path: start.isEmpty ? "." : start)
        try walk(folder: fd, relative: start, recursive: recursive, temporary: temporary, visit)
    }

    /// `walk` of the open folder `fd` (closed when done), whose path is `folder`.
    private func walk(folder fd: CInt, relative folder: String, recursive: Bool, temporary: () -> Void,
                      _ visit: (String, stat) -> Void) throws {
        defer { Syscall.close(fd) }
        let names = try Syscall.listDirectory(fd).orThrow("list", path: folder.isEmpty ? "." : folder)
        for name in names {
            if folder.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
            if WorkspaceLayout.isTemporaryName(name) { temporary(); continue }
            let relative = folder.isEmpty ? name : folder + "/" + name
            guard case .success(let child) = Syscall.lstat(in: fd, name) else { continue }
            visit(relative, child)
            guard recursive && FileKind(child.st_mode) == .directory else { continue }
            switch Syscall.openDirectory(in: fd, name) {
            case .success(let sub): try walk(folder: sub, relative: relative, recursive: true, temporary: temporary, visit)
            // A folder that vanished (or became a file or a link) mid-walk: a busy workspace
            // changes while it is listed; skip it rather than fail the listing.
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory), .failure(.tooManySymbolicLinkLevels): continue
            case .failure(let errno): throw WorkspaceError.system(errno, "list", path: relative)
            }
        }
    }

    static func entry(_ relative: String, _ info: stat) -> Entry {
        let kind: Entry.Kind
        switch FileKind(info.st_mode) {
        case .regular: kind = .file
        case .directory: kind = .folder
        case .symlink: kind = .symlink
        case .other: kind = .other
        }
        return Entry(path: relative, kind: kind, size: Int(info.st_size), modifiedNanoseconds: FileIdentity(info).modifiedNanoseconds)
    }
}
