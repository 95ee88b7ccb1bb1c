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
    /// descending into folders when `recursive`, skipping `.relay/` and temporary files.
    private func walk(from start: String, recursive: Bool, temporary: () -> Void = {}, _ visit: (String, stat) -> Void) throws {
        var folders = [start]
        while let folder = folders.popLast() {
            let absolute = layout.absolute(folder)
            let names: [String]
            switch Syscall.listDirectory(absolute) {
            case .success(let found): names = found
            // A folder below the one asked for that vanished (or became a file) mid-walk: a
            // busy workspace changes while it is listed; skip it rather than fail the listing.
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory) where folder != start: continue
            case .failure(let errno): throw WorkspaceError.system(errno, "list", path: folder.isEmpty ? "." : folder)
            }
            for name in names {
                if folder.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
                if WorkspaceLayout.isTemporaryName(name) { temporary(); continue }
                let relative = folder.isEmpty ? name : folder + "/" + name
                guard case .success(let child) = Syscall.lstat(layout.absolute(relative)) else { continue }
                visit(relative, child)
                if recursive && FileKind(child.st_mode) == .directory { folders.append(relative) }
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
