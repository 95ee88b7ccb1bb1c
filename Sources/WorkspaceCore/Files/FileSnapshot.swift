import Glibc

/// What a file was at one instant: its identity on disk and, when read, its bytes and hash.
/// A read-modify-write compares the snapshot it started from with the file just before it
/// replaces it; any difference means somebody else (a person's editor) wrote in between.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modifiedNanoseconds: Int64
    var changedNanoseconds: Int64
    var mode: mode_t

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changedNanoseconds = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        mode = info.st_mode
    }

    /// Permission bits only (what a replacement keeps).
    var permissions: mode_t { mode & 0o7777 }
}

/// The part of a file's identity that tells one version from the next: inode, size, mtime.
public struct FileStamp: Sendable, Hashable, Codable {
    public var inode: UInt64
    public var size: Int
    public var modifiedNanoseconds: Int64

    public init(inode: UInt64, size: Int, modifiedNanoseconds: Int64) {
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    init(_ identity: FileIdentity) {
        self.init(inode: identity.inode, size: identity.size, modifiedNanoseconds: identity.modifiedNanoseconds)
    }
}

struct FileSnapshot: Sendable {
    var identity: FileIdentity
    var bytes: [UInt8]
    var hash: ContentHash

    /// Reads a regular file whole, consistently: if its size or times move while it is being
    /// read (an editor saving in place), it is read again.
    static func read(_ absolute: String, displayPath: String) throws -> FileSnapshot? {
        for _ in 0..<50 {
            let fd: CInt
            switch Syscall.open(absolute, O_RDONLY | O_NOFOLLOW) {
            case .success(let value): fd = value
            case .failure(.noSuchFileOrDirectory): return nil
            case .failure(.tooManySymbolicLinkLevels):
                throw WorkspaceError(.pathRefused, "\(displayPath): became a symbolic link while being opened", path: displayPath)
            case .failure(let errno): throw WorkspaceError.system(errno, "open", path: displayPath)
            }
            defer { Syscall.close(fd) }
            let before = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: displayPath))
            guard FileKind(before.mode) == .regular else {
                if FileKind(before.mode) == .directory {
                    throw WorkspaceError(.isADirectory, "\(displayPath): is a folder, not a file", path: displayPath)
                }
                throw WorkspaceError(.invalidInput, "\(displayPath): is not a regular file", path: displayPath)
            }
            let bytes = try Syscall.readAll(fd, sizeHint: before.size).orThrow("read", path: displayPath)
            let after = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: displayPath))
            if before == after && after.size == bytes.count {
                return FileSnapshot(identity: after, bytes: bytes, hash: ContentHash(of: bytes))
            }
            Syscall.sleep(nanoseconds: 2_000_000)
        }
        throw WorkspaceError(.tooManyConcurrentChanges, "\(displayPath): kept changing while being read", path: displayPath)
    }

    /// The identity of the file at `absolute` now, or nil when there is none.
    static func identity(_ absolute: String, displayPath: String) throws -> FileIdentity? {
        switch Syscall.lstat(absolute) {
        case .success(let info): return FileIdentity(info)
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw WorkspaceError.system(errno, "stat", path: displayPath)
        }
    }
}
