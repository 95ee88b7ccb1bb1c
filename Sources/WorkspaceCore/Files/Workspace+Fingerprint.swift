import Crypto
import Glibc

extension Workspace {
    /// The stamp (inode, size, mtime) of a regular file, without reading it; nil when the path
    /// is missing or not a regular file. `relative` must already be a workspace path the caller
    /// trusts (the watcher's own listing), it is not resolved through the sandbox.
    public func stamp(ofFileAt relative: String) -> FileStamp? {
        guard case .success(let info) = Syscall.lstat(layout.absolute(relative)), FileKind(info.st_mode) == .regular else { return nil }
        return FileStamp(FileIdentity(info))
    }

    /// The stamp and SHA-256 of a regular file, hashed in 64 KiB pieces (any size, little
    /// memory). Returns nil when the file is missing, not regular, or kept changing while read.
    public func fingerprint(ofFileAt relative: String) throws -> (stamp: FileStamp, hash: ContentHash)? {
        try fingerprint(ofFileAt: relative, keepingContentUpTo: 0).map { ($0.stamp, $0.hash) }
    }

    /// `fingerprint(ofFileAt:)`, also returning the bytes read when the file is at most
    /// `limit` bytes long: a caller that needs both (the sync index keeps a mergeable file's
    /// new version as a merge base) reads the file once. The bytes are exactly those hashed.
    public func fingerprint(ofFileAt relative: String, keepingContentUpTo limit: Int)
        throws -> (stamp: FileStamp, hash: ContentHash, content: [UInt8]?)? {
        let absolute = layout.absolute(relative)
        for _ in 0..<5 {
            guard let (fd, before) = try openRegularFile(absolute, relative: relative) else { return nil }
            defer { Syscall.close(fd) }
            var hasher = SHA256()
            var offset = 0
            var content: [UInt8]? = before.size <= limit ? [] : nil
            while true {
                // The size the file had, plus one byte to see that it ends there: one read for
                // most files. A new 64 KiB buffer per read, twice per file, was a first sync's
                // largest allocation (its pages zeroed by the kernel each time).
                let wanted = offset < before.size ? min(before.size - offset + 1, 1 << 20) : 65_536
                let chunk = try Syscall.pread(fd, count: wanted, offset: offset).orThrow("read", path: relative)
                if chunk.isEmpty { break }
                hasher.update(data: chunk)
                offset += chunk.count
                if content != nil {
                    if offset > limit { content = nil } else if content!.isEmpty { content = chunk } else { content!.append(contentsOf: chunk) }
                }
                // Short of what was asked: the end of the file (a file that grew is read on).
                if chunk.count < wanted && offset >= before.size { break }
            }
            let after = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: relative))
            if before == after && offset == after.size {
                return (FileStamp(after), ContentHash(digest: Array(hasher.finalize())), content)
            }
            Syscall.sleep(nanoseconds: 5_000_000)
        }
        return nil
    }

    /// Copies the regular file `relative` to `destination` (created or truncated, mode 0600) while
    /// hashing what it copies, in 1 MiB pieces (any size, little memory): the copy holds exactly
    /// the bytes the returned hash is of. Returns nil (and leaves no copy) when the file is
    /// missing, not regular, or kept changing while read. `relative` must be a path the caller
    /// trusts, as for `stamp(ofFileAt:)`.
    ///
    /// For example, a trigger command gets the bytes that settled, whatever is saved after:
    /// ```swift
    /// guard let hash = try workspace.copy(ofFileAt: "inbox/a.txt", to: copy), hash.hex == key else { … }
    /// ```
    /// - throws: `WorkspaceError` naming the file and the call that failed (no copy is left).
    public func copy(ofFileAt relative: String, to destination: String) throws -> ContentHash? {
        let absolute = layout.absolute(relative)
        for _ in 0..<5 {
            guard let (fd, before) = try openRegularFile(absolute, relative: relative) else { return nil }
            defer { Syscall.close(fd) }
            let out = try Syscall.open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600).orThrow("open", path: destination)
            var hasher = SHA256()
            var offset = 0
            do {
                while true {
                    // As `fingerprint` reads: the size the file had plus one byte, so a small
                    // file is one read (a command per file of a burst copies each).
                    let wanted = offset < before.size ? min(before.size - offset + 1, 1 << 20) : 65_536
                    let chunk = try Syscall.pread(fd, count: wanted, offset: offset).orThrow("read", path: relative)
                    if chunk.isEmpty { break }
                    hasher.update(data: chunk)
                    try chunk.withUnsafeBytes { Syscall.writeAll(out, $0) }.orThrow("write", path: destination)
                    offset += chunk.count
                    if chunk.count < wanted && offset >= before.size { break }
                }
                Syscall.close(out)
            } catch {
                Syscall.close(out)
                _ = Syscall.unlink(destination)
                throw error
            }
            let after = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: relative))
            if before == after && offset == after.size { return ContentHash(digest: Array(hasher.finalize())) }
            Syscall.sleep(nanoseconds: 5_000_000)
        }
        _ = Syscall.unlink(destination)
        return nil
    }

    /// Opens `absolute` for reading without following a symbolic link, with what `fstat` says of
    /// it; nil when it is missing, a link, or not a regular file (then nothing is left open).
    private func openRegularFile(_ absolute: String, relative: String) throws -> (fd: CInt, identity: FileIdentity)? {
        let fd: CInt
        switch Syscall.open(absolute, O_RDONLY | O_NOFOLLOW) {
        case .success(let value): fd = value
        case .failure(.noSuchFileOrDirectory), .failure(.tooManySymbolicLinkLevels), .failure(.notDirectory): return nil
        case .failure(let errno): throw WorkspaceError.system(errno, "open", path: relative)
        }
        let identity: FileIdentity
        do { identity = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: relative)) } catch {
            Syscall.close(fd)
            throw error
        }
        guard FileKind(identity.mode) == .regular else {
            Syscall.close(fd)
            return nil
        }
        return (fd, identity)
    }
}
