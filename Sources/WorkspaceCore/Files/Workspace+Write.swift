extension Workspace {
    /// What a write, update or restore did.
    public struct WriteResult: Sendable, Equatable {
        public var path: String
        public var hash: ContentHash
        public var size: Int
        /// The version it displaced (kept in the object store), nil when the file was new.
        public var replaced: ContentHash?
        /// How many times an update ran its transformation (more than 1 when somebody
        /// changed the file while it worked).
        public var attempts: Int
    }

    /// Replaces the whole file at `path` atomically: at every instant, also across `kill -9`
    /// and power loss, the file holds either all of its old content or all of `bytes`.
    ///
    /// Takes the coordinated-write lock; writes a temporary file in the same folder, fsyncs
    /// it, swaps it in with `renameat2(RENAME_EXCHANGE)` and fsyncs the folder (no fsyncs when
    /// `durable` is off). The old file's permissions are kept; the displaced version goes to
    /// the object store; missing folders are created.
    ///
    /// For example:
    /// ```swift
    /// try workspace.write("Research/llamas/summary.md", string: "# Llamas\n")
    /// ```
    /// - throws: `WorkspaceError`: `.pathRefused`, `.isADirectory`, `.lockTimeout`, `.io`.
    @discardableResult
    public func write(_ path: String, bytes: [UInt8], operation: String = "write") throws -> WriteResult {
        let target = try resolve(path)
        return try coordinated(target) { lock in
            try createParentFolders(of: target)
            let existing = try FileSnapshot.identity(target.absolute, displayPath: target.relative)
            if let existing { try Self.requireRegularFile(existing, target) }
            let temporary = try writeTemporary(for: target, bytes: bytes, permissions: existing?.permissions, owner: .lock(lock))
            let displaced = try install(temporary, at: target)
            let previous = try read(displaced, path: target)
            try archive(displaced, snapshot: previous, installed: temporary, path: target, operation: operation, lock: lock)
            return WriteResult(path: target.relative, hash: temporary.hash, size: temporary.size, replaced: previous?.hash, attempts: 1)
        }
    }

    @discardableResult
    public func write(_ path: String, string: String) throws -> WriteResult {
        try write(path, bytes: Array(string.utf8))
    }

    static func requireRegularFile(_ identity: FileIdentity, _ path: ResolvedPath) throws {
        switch FileKind(identity.mode) {
        case .regular: return
        case .directory: throw WorkspaceError(.isADirectory, "\(path.relative): is a folder, not a file", path: path.relative)
        default: throw WorkspaceError(.invalidInput, "\(path.relative): is not a regular file", path: path.relative)
        }
    }
}

extension Workspace {
    /// Deletes the file at `path` under its lock, keeping its content in the store (a delete is
    /// a replacement by nothing). With `expected`, deletes only if the file still has that hash,
    /// so a person's edit made meanwhile is never deleted; returns false then.
    ///
    /// - throws: `.notFound` when there is no file, `.isADirectory` for a folder.
    @discardableResult
    public func remove(_ path: String, expected: ContentHash? = nil, operation: String = "delete") throws -> Bool {
        let target = try resolve(path)
        return try coordinated(target) { lock in
            guard let snapshot = try FileSnapshot.read(target.absolute, displayPath: target.relative) else {
                throw WorkspaceError(.notFound, "\(target.relative): no such file", path: target.relative)
            }
            if let expected, snapshot.hash != expected { return false }
            let stored = snapshot.bytes.count <= maximumArchivedSize
            if stored { try objects.store(snapshot.bytes) }
            try Trash.discard(target.absolute, into: layout.trash).orThrow("delete", path: target.relative)
            if durable { try syncFolder(target.parentAbsolute) }
            let record = VersionRecord(
                timeNanoseconds: Syscall.nowNanoseconds(), path: target.relative, operation: operation,
                replaced: snapshot.hash, replacedSize: snapshot.bytes.count, replacedStored: stored,
                installed: ContentHash(of: [UInt8]()), installedSize: 0)
            try appendHistory(record, key: Self.lockKey(target.relative))
            return true
        }
    }
}
