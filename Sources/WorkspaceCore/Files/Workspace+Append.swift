import Glibc

extension Workspace {
    /// What an append did.
    public struct AppendResult: Sendable, Equatable {
        public var path: String
        /// The offset the appended bytes start at, and how many were written (including a
        /// newline added before or after them).
        public var offset: Int
        public var length: Int
    }

    /// Appends whole lines under the coordinated lock: `O_APPEND`, one write, fsync.
    ///
    /// With `wholeLines` (the default) a newline is added after `bytes` when they lack one, and
    /// before them when the file does not end in one, so entries never run together. Before
    /// the write, the lock file records the offset and length; if the writer dies in the middle
    /// (`kill -9`), the next writer of the file cuts the torn tail back off, so a reader only
    /// ever sees whole appends.
    ///
    /// For example:
    /// ```swift
    /// try workspace.append("Journal/agent/2026-11-22.md", line: "- 14:02 researcher: read 3 sources")
    /// ```
    @discardableResult
    public func append(_ path: String, bytes: [UInt8], wholeLines: Bool = true) throws -> AppendResult {
        let target = try resolve(path)
        return try coordinated(target) { lock in
            try createParentFolders(of: target)
            let fd = try Syscall.open(target.absolute, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW, mode: 0o644)
                .orThrow("open for appending", path: target.relative)
            defer { Syscall.close(fd) }
            let identity = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: target.relative))
            try Self.requireRegularFile(identity, target)

            var payload = bytes
            if wholeLines {
                if payload.last != 10 { payload.append(10) }
                if identity.size > 0, let lastByte = try Syscall.pread(fd, count: 1, offset: identity.size - 1)
                    .orThrow("read", path: target.relative).first, lastByte != 10 {
                    payload.insert(10, at: 0)
                }
            }
            guard !payload.isEmpty else { return AppendResult(path: target.relative, offset: identity.size, length: 0) }
            try lock.recordIntent(.append(inode: identity.inode, start: identity.size, length: payload.count), durable: durable)
            do {
                try payload.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("append", path: target.relative) }
                if durable { try Syscall.fsync(fd).orThrow("fsync", path: target.relative) }
            } catch {
                // A full disk mid-write: take the partial entry back off.
                _ = Syscall.ftruncate(fd, identity.size)
                lock.clearIntent()
                throw error
            }
            lock.clearIntent()
            if identity.size == 0 || isLastInstalled(identity, at: target.absolute, lock: lock), case .success(let after) = Syscall.fstat(fd) {
                // Still a file only Relay has written since it last looked: remember it as such.
                lock.recordInstalled(FileIdentity(after), triggers: writesTrigger)
            }
            return AppendResult(path: target.relative, offset: identity.size, length: payload.count)
        }
    }

    @discardableResult
    public func append(_ path: String, line: String) throws -> AppendResult {
        try append(path, bytes: Array(line.utf8))
    }
}
