import Foundation
import Glibc
import Synchronization
import SystemPackage

// The files Relay keeps for itself under `.relay/` that are not workspace content — a run's
// manifest, its write-ahead journal, the lock of the process running it — written through the
// same system-call layer as the workspace's files, with every fsync's result checked. The
// engine (RelayEngine) and sync use these through `package` access: they are not public API.

/// Atomic replacement of a state file: a temporary of a name no other writer uses, in the same
/// folder, written, fsynced, renamed over the file, and the folder fsynced.
package enum StateFile {
    /// Replaces (or creates) `path` with `bytes`. With `durable` off (tests, benchmarks) the
    /// fsyncs are skipped, never the rename.
    /// - throws: `WorkspaceError` naming the file and the call that failed; the file is then
    ///   unchanged and no temporary is left.
    package static func replace(_ path: String, with bytes: [UInt8], durable: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent
        let temporary = folder + "/." + (path as NSString).lastPathComponent
            + ".tmp-\(Syscall.processID)-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_EXCL).orThrow("open", path: temporary)
        do {
            try bytes.withUnsafeBytes { Syscall.writeAll(fd, $0) }.orThrow("write", path: temporary)
            if durable { try FsyncFaults.fsync(fd, path: path).orThrow("fsync", path: path) }
            Syscall.close(fd)
        } catch {
            Syscall.close(fd)
            _ = Syscall.unlink(temporary)
            throw error
        }
        do {
            try Syscall.rename(temporary, path).orThrow("rename", path: path)
        } catch {
            _ = Syscall.unlink(temporary)
            throw error
        }
        if durable { try syncFolder(folder) }
    }

    /// Creates `path`, which must not exist, holding `bytes`, with `mode` from the start (a
    /// secret is never readable by others, not even briefly); the file and its folder are
    /// fsynced when `durable`. On failure nothing is left.
    /// - throws: `WorkspaceError` naming the file and the call (EEXIST as its cause when the
    ///   file is there).
    package static func create(_ path: String, with bytes: [UInt8], mode: mode_t, durable: Bool) throws {
        try Syscall.createFile(path, bytes: bytes, mode: mode, sync: durable).orThrow("create", path: path)
        if durable { try syncFolder((path as NSString).deletingLastPathComponent) }
    }

    /// The bytes of the state file `path`; nil when there is no such file.
    /// - throws: `WorkspaceError` naming the file and the call that failed.
    package static func read(_ path: String) throws -> [UInt8]? {
        let fd: CInt
        switch Syscall.open(path, O_RDONLY) {
        case .success(let opened): fd = opened
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw WorkspaceError.system(errno, "open", path: path)
        }
        defer { Syscall.close(fd) }
        let size = (try? Syscall.fstat(fd).get()).map { Int($0.st_size) }
        return try Syscall.readAll(fd, sizeHint: size).orThrow("read", path: path)
    }

    /// The bytes of the state file `path` from byte `offset` to its end (a log read on from
    /// where the last read stopped); nil when there is no such file.
    /// - throws: `WorkspaceError` naming the file and the call that failed.
    package static func read(_ path: String, from offset: Int) throws -> [UInt8]? {
        let fd: CInt
        switch Syscall.open(path, O_RDONLY) {
        case .success(let opened): fd = opened
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let errno): throw WorkspaceError.system(errno, "open", path: path)
        }
        defer { Syscall.close(fd) }
        let size = Int(try Syscall.fstat(fd).orThrow("fstat", path: path).st_size)
        guard size > offset else { return [] }
        return try Syscall.pread(fd, count: size - offset, offset: offset).orThrow("read", path: path)
    }

    /// Whether something (a file, a folder, a link) is at `path`.
    package static func exists(_ path: String) -> Bool {
        if case .success = Syscall.lstat(path) { return true }
        return false
    }

    /// The target of the symbolic link `path` (`/proc/self/exe`: this program).
    /// - throws: `WorkspaceError` naming the link when it cannot be read.
    package static func linkTarget(_ path: String) throws -> String {
        try Syscall.readlink(path).orThrow("readlink", path: path)
    }

    /// Removes the state folder `path` and the files in it (not folders below it): a folder
    /// made for a state file that could not be written. A missing folder is no error.
    /// - throws: `WorkspaceError` naming what could not be removed.
    package static func removeFolder(_ path: String) throws {
        for name in try names(in: path) { try remove(path + "/" + name) }
        switch Syscall.rmdir(path) {
        case .success, .failure(.noSuchFileOrDirectory): return
        case .failure(let errno): throw WorkspaceError.system(errno, "rmdir", path: path)
        }
    }

    /// The names in the state folder `path` (not "." or ".."), sorted; empty when there is no such folder.
    /// - throws: `WorkspaceError` naming the folder when it cannot be listed.
    package static func names(in path: String) throws -> [String] {
        switch Syscall.listDirectory(path) {
        case .success(let names): return names.sorted()
        case .failure(.noSuchFileOrDirectory): return []
        case .failure(let errno): throw WorkspaceError.system(errno, "opendir", path: path)
        }
    }

    /// Removes the state file `path`: false when it was not there.
    /// - throws: `WorkspaceError` naming the file when the unlink fails otherwise.
    @discardableResult
    package static func remove(_ path: String) throws -> Bool {
        switch Syscall.unlink(path) {
        case .success: return true
        case .failure(.noSuchFileOrDirectory): return false
        case .failure(let errno): throw WorkspaceError.system(errno, "unlink", path: path)
        }
    }

    /// Creates the folder `path` and the folders above it that are missing.
    /// - throws: `WorkspaceError` naming the folder when a mkdir fails (not for one that exists).
    package static func makeFolders(_ path: String) throws {
        switch Syscall.mkdir(path) {
        case .success, .failure(.fileExists): return
        case .failure(.noSuchFileOrDirectory):
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw WorkspaceError.system(.noSuchFileOrDirectory, "mkdir", path: path) }
            try makeFolders(parent)
            switch Syscall.mkdir(path) {
            case .success, .failure(.fileExists): return
            case .failure(let errno): throw WorkspaceError.system(errno, "mkdir", path: path)
            }
        case .failure(let errno): throw WorkspaceError.system(errno, "mkdir", path: path)
        }
    }

    /// Asks the kernel to read the state file `path` into the page cache now, without waiting
    /// (`posix_fadvise(WILLNEED)`): for a caller about to read most of it (the sync index).
    /// Advice only: a missing file, or any failure, is no error.
    package static func readAhead(_ path: String) {
        guard case .success(let fd) = Syscall.open(path, O_RDONLY) else { return }
        Syscall.adviseWillNeed(fd)
        Syscall.close(fd)
    }

    /// Makes the folder's entries (a rename, a new file) durable.
    package static func syncFolder(_ folder: String) throws {
        let fd = try Syscall.open(folder, O_RDONLY | O_DIRECTORY).orThrow("open", path: folder)
        defer { Syscall.close(fd) }
        try FsyncFaults.fsync(fd, path: folder).orThrow("fsync", path: folder)
    }

    /// Creates the folder `path` only if it does not exist: false when it does (EEXIST).
    package static func makeFolderExclusively(_ path: String) throws -> Bool {
        switch Syscall.mkdir(path) {
        case .success: return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw WorkspaceError.system(errno, "mkdir", path: path)
        }
    }
}

/// A file only ever appended to, one record per line (a run's journal): a writer killed mid-line
/// leaves a line without its newline, which opening ends so the next record starts on its own.
package final class AppendOnlyFile: @unchecked Sendable {
    package let path: String
    private let descriptor: CInt
    private let lock = NSLock()

    package init(path: String) throws {
        self.path = path
        descriptor = try Syscall.open(path, O_RDWR | O_APPEND | O_CREAT).orThrow("open", path: path)
        let size = (try? Syscall.fstat(descriptor).get()).map { Int($0.st_size) } ?? 0
        if size > 0, case .success(let last) = Syscall.pread(descriptor, count: 1, offset: size - 1), last != [0x0A] {
            do {
                try [UInt8(0x0A)].withUnsafeBytes { Syscall.writeAll(descriptor, $0) }.orThrow("write", path: path)
            } catch {
                Syscall.close(descriptor)
                throw error
            }
        }
    }

    deinit { Syscall.close(descriptor) }

    /// Appends `bytes` in one `write` loop under the file's lock (records never interleave);
    /// with `sync` they are on the disk when this returns.
    /// - throws: `WorkspaceError` naming the file when the write or the fsync fails.
    package func append(_ bytes: [UInt8], sync: Bool) throws {
        try lock.withLock {
            try bytes.withUnsafeBytes { Syscall.writeAll(descriptor, $0) }.orThrow("write", path: path)
            if sync { try FsyncFaults.fsync(descriptor, path: path).orThrow("fsync", path: path) }
        }
    }
}

/// A lock file held by one process while it works (a run being run): an OFD lock, released by
/// the kernel when the holder closes it or dies, whatever way it dies.
package final class ProcessLease: @unchecked Sendable {
    private var descriptor: CInt

    private init(descriptor: CInt) { self.descriptor = descriptor }

    /// The lease on `path` (created if missing), or nil when another holder has it.
    package static func acquire(_ path: String) throws -> ProcessLease? {
        let fd = try Syscall.open(path, O_RDWR | O_CREAT).orThrow("open", path: path)
        switch Syscall.lockExclusive(fd, wait: false) {
        case .success: return ProcessLease(descriptor: fd)
        case .failure(let errno) where errno == .resourceTemporarilyUnavailable || errno == .permissionDenied:
            Syscall.close(fd)
            return nil
        case .failure(let errno):
            Syscall.close(fd)
            throw WorkspaceError.system(errno, "lock", path: path)
        }
    }

    /// Whether some holder has the lease on `path` now (false when there is no such file).
    package static func isHeld(_ path: String) -> Bool {
        guard case .success(let fd) = Syscall.open(path, O_RDONLY) else { return false }
        defer { Syscall.close(fd) }
        return (try? Syscall.isLockedElsewhere(fd).get()) ?? false
    }

    package func release() {
        if descriptor >= 0 { Syscall.close(descriptor) }
        descriptor = -1
    }

    deinit { release() }
}

/// A test hook: fsyncs of state files under given folders fail with a given error instead of
/// being made, so tests can prove a failed fsync is an error and not silence. Keyed by folder so
/// tests running at the same time in one process do not see each other's faults.
package enum FsyncFaults {
    private static let failing = Mutex<[String: Errno]>([:])

    /// From now on, fsyncs of state files under `folder` fail with `errno` (EIO by default).
    package static func fail(under folder: String, with errno: Errno = .ioError) {
        failing.withLock { $0[folder.hasSuffix("/") ? folder : folder + "/"] = errno }
    }

    /// Ends `fail(under:)` for `folder`.
    package static func clear(under folder: String) {
        failing.withLock { _ = $0.removeValue(forKey: folder.hasSuffix("/") ? folder : folder + "/") }
    }

    static func fsync(_ fd: CInt, path: String) -> Result<Void, Errno> {
        let injected: Errno? = failing.withLock { failing in
            failing.isEmpty ? nil : failing.first { path.hasPrefix($0.key) || path + "/" == $0.key }?.value
        }
        if let injected { return .failure(injected) }
        return Syscall.fsync(fd)
    }
}
