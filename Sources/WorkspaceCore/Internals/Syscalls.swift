// Every system call WorkspaceCore makes is made here, and only here. Each wrapper retries
// EINTR and returns a typed `Errno`; callers turn that into a `WorkspaceError` that names the
// file. The shape follows swift-system's Internals/Syscalls.swift.

import CRelaySystem
import Glibc
import SystemPackage

/// `package`: RelayRunner and WorkspaceSync make their system calls here too (the sync protocol's
/// pipes, state files), not public API.
package enum Syscall {
    /// Runs `body` until it stops failing with EINTR; -1 becomes the current errno.
    @inline(__always)
    fileprivate static func retrying<I: FixedWidthInteger>(_ body: () -> I) -> Result<I, Errno> {
        while true {
            let value = body()
            if value != -1 { return .success(value) }
            let code = errno
            if code != EINTR { return .failure(Errno(rawValue: code)) }
        }
    }

    /// The corresponding C function is `open`. O_CLOEXEC is always added.
    static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o644) -> Result<CInt, Errno> {
        retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// The corresponding C function is `close`. EINTR is not retried (Linux closes anyway).
    package static func close(_ fd: CInt) {
        _ = Glibc.close(fd)
    }

    /// The corresponding C function is `read`, looped until end of file. With `sizeHint` (the
    /// size `fstat` gave), the first read asks for one byte more than that, straight into the
    /// result: a file that did not grow is read in one call and copied once.
    package static func readAll(_ fd: CInt, sizeHint: Int? = nil) -> Result<[UInt8], Errno> {
        var result: [UInt8] = []
        if let sizeHint, sizeHint < 16 * 1024 * 1024 {
            var first = [UInt8](repeating: 0, count: sizeHint + 1)
            let n = first.withUnsafeMutableBytes { buffer in
                retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            switch n {
            case .failure(let error): return .failure(error)
            case .success(let count):
                first.removeLast(first.count - count)
                if count <= sizeHint { return .success(first) }
                result = first
            }
        }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { buffer in
                retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
            }
            switch n {
            case .failure(let error): return .failure(error)
            case .success(0): return .success(result)
            case .success(let count): result.append(contentsOf: chunk[0..<count])
            }
        }
    }

    /// The corresponding C function is `pread`, for one exact range (short at end of file).
    static func pread(_ fd: CInt, count: Int, offset: Int) -> Result<[UInt8], Errno> {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                retrying { Glibc.pread(fd, raw.baseAddress! + filled, count - filled, off_t(offset + filled)) }
            }
            switch n {
            case .failure(let error): return .failure(error)
            case .success(0): return .success(Array(buffer[0..<filled]))
            case .success(let got): filled += got
            }
        }
        return .success(buffer)
    }

    /// The corresponding C function is `read`, looped until `count` bytes or end of file: a
    /// shorter result means the end came first (empty: at once).
    package static func read(_ fd: CInt, count: Int) -> Result<[UInt8], Errno> {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                retrying { Glibc.read(fd, raw.baseAddress! + filled, count - filled) }
            }
            switch n {
            case .failure(let error): return .failure(error)
            case .success(0): return .success(Array(buffer[0..<filled]))
            case .success(let got): filled += got
            }
        }
        return .success(buffer)
    }

    /// The corresponding C function is `write`, looped until every byte is written.
    package static func writeAll(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) -> Result<Void, Errno> {
        var offset = 0
        while offset < bytes.count {
            let n = retrying { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            switch n {
            case .failure(let error): return .failure(error)
            case .success(let written): offset += written
            }
        }
        return .success(())
    }

    /// Creates the file `path`, which must not exist (`O_EXCL`), holding `bytes`, fsynced when
    /// `sync`. On any failure the file is removed again.
    static func createFile(_ path: String, bytes: [UInt8], mode: mode_t = 0o644, sync: Bool) -> Result<Void, Errno> {
        let fd: CInt
        switch open(path, O_WRONLY | O_CREAT | O_EXCL, mode: mode) {
        case .success(let value): fd = value
        case .failure(let errno): return .failure(errno)
        }
        var result = bytes.withUnsafeBytes { writeAll(fd, $0) }
        if sync, case .success = result { result = fsync(fd) }
        if !sync, case .success = result {
            BackgroundWriteback.startThenClose(fd)
            return result
        }
        close(fd)
        if case .failure = result { _ = unlink(path) }
        return result
    }

    /// The corresponding C function is `pwrite`, looped until every byte is written.
    static func pwriteAll(_ fd: CInt, _ bytes: [UInt8], offset: Int) -> Result<Void, Errno> {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = retrying { Glibc.pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done)) }
                switch n {
                case .failure(let error): return .failure(error)
                case .success(let written): done += written
                }
            }
            return .success(())
        }
    }

    /// The corresponding C function is `fsync`.
    static func fsync(_ fd: CInt) -> Result<Void, Errno> {
        retrying { Glibc.fsync(fd) }.map { _ in () }
    }

    /// Starts writing the file's dirty pages to the disk and returns at once
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): a batch's `syncfs` later finds them written
    /// or on their way instead of starting them all. Durability still comes from that flush.
    /// Writers hand their files to `BackgroundWriteback`, which calls this off their thread.
    static func startWriteback(_ fd: CInt) {
        _ = relay_start_writeback(fd)
    }

    /// The corresponding C function is `posix_fadvise(POSIX_FADV_WILLNEED)`: the kernel reads
    /// the file into the page cache in the background. Advice only; failures do not matter.
    static func adviseWillNeed(_ fd: CInt) {
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED)
    }

    /// The corresponding C function is `madvise(MADV_DONTNEED)`: the process lets go of the
    /// pages of a range. For a private file mapping never written (code, read-only data), a
    /// later access maps the page again from the page cache (or the file).
    static func adviseDontNeed(_ address: UnsafeMutableRawPointer, _ length: Int) -> Result<Void, Errno> {
        retrying { madvise(address, length, MADV_DONTNEED) }.map { _ in () }
    }

    /// The corresponding C function is `syncfs`: flushes every dirty file and folder of the
    /// file system that holds `fd`, in one journal commit.
    static func syncfs(_ fd: CInt) -> Result<Void, Errno> {
        retrying { relay_syncfs(fd) }.map { _ in () }
    }

    /// The corresponding C function is `ftruncate`.
    static func ftruncate(_ fd: CInt, _ length: Int) -> Result<Void, Errno> {
        retrying { Glibc.ftruncate(fd, off_t(length)) }.map { _ in () }
    }

    /// The corresponding C function is `fchmod`.
    static func fchmod(_ fd: CInt, _ mode: mode_t) -> Result<Void, Errno> {
        retrying { Glibc.fchmod(fd, mode) }.map { _ in () }
    }

    /// The corresponding C function is `fstat`.
    static func fstat(_ fd: CInt) -> Result<Glibc.stat, Errno> {
        var info = Glibc.stat()
        return retrying { Glibc.fstat(fd, &info) }.map { _ in info }
    }

    /// The corresponding C function is `lstat` (does not follow a final symbolic link).
    static func lstat(_ path: String) -> Result<Glibc.stat, Errno> {
        var info = Glibc.stat()
        return retrying { Glibc.lstat(path, &info) }.map { _ in info }
    }

    /// The corresponding C function is `readlink`.
    static func readlink(_ path: String) -> Result<String, Errno> {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        return retrying { Glibc.readlink(path, &buffer, buffer.count - 1) }.map { count in
            String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The corresponding C function is `realpath`.
    static func realpath(_ path: String) -> Result<String, Errno> {
        guard let resolved = Glibc.realpath(path, nil) else { return .failure(Errno(rawValue: errno)) }
        defer { free(resolved) }
        return .success(String(cString: resolved))
    }

    /// The corresponding C function is `mkdir`.
    static func mkdir(_ path: String, mode: mode_t = 0o755) -> Result<Void, Errno> {
        retrying { Glibc.mkdir(path, mode) }.map { _ in () }
    }

    /// The corresponding C function is `rmdir`.
    static func rmdir(_ path: String) -> Result<Void, Errno> {
        retrying { Glibc.rmdir(path) }.map { _ in () }
    }

    /// The corresponding C function is `unlink`.
    package static func unlink(_ path: String) -> Result<Void, Errno> {
        retrying { Glibc.unlink(path) }.map { _ in () }
    }

    /// The corresponding C function is `fsetxattr`: sets (creates or replaces) an attribute of
    /// the open file.
    static func setAttribute(_ fd: CInt, _ name: String, _ value: [UInt8]) -> Result<Void, Errno> {
        retrying { value.withUnsafeBytes { relay_fsetxattr(fd, name, $0.baseAddress, $0.count) } }.map { _ in () }
    }

    /// The corresponding C function is `lgetxattr`: an attribute of the file at `path` (not
    /// followed if a link), up to `limit` bytes; `.noData` when it has none.
    static func attribute(_ path: String, _ name: String, limit: Int = 256) -> Result<[UInt8], Errno> {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = retrying { buffer.withUnsafeMutableBytes { relay_lgetxattr(path, name, $0.baseAddress, $0.count) } }
        return count.map { Array(buffer.prefix(Int($0))) }
    }

    /// The corresponding C function is `rename`.
    static func rename(_ from: String, _ to: String) -> Result<Void, Errno> {
        retrying { Glibc.rename(from, to) }.map { _ in () }
    }

    /// The corresponding C function is `renameat2` with `RENAME_EXCHANGE`: swaps two names
    /// atomically. Fails with EINVAL on file systems that do not support it.
    static func exchange(_ a: String, _ b: String) -> Result<Void, Errno> {
        retrying { relay_renameat2(AT_FDCWD, a, AT_FDCWD, b, RELAY_RENAME_EXCHANGE) }.map { _ in () }
    }

    /// The corresponding C function is `renameat2` with `RENAME_NOREPLACE`: EEXIST if `to` exists.
    static func renameNoReplace(_ from: String, _ to: String) -> Result<Void, Errno> {
        retrying { relay_renameat2(AT_FDCWD, from, AT_FDCWD, to, RELAY_RENAME_NOREPLACE) }.map { _ in () }
    }

    /// The corresponding C call is `fcntl(F_OFD_SETLK)`, or `F_OFD_SETLKW` when `wait`.
    static func lockExclusive(_ fd: CInt, wait: Bool) -> Result<Void, Errno> {
        if wait { return retrying { relay_ofd_lock_exclusive(fd, 1) }.map { _ in () } }
        let result = relay_ofd_lock_exclusive(fd, 0)
        return result == 0 ? .success(()) : .failure(Errno(rawValue: errno))
    }

    /// The corresponding C function is `flock(LOCK_EX)`, with `LOCK_NB` unless `wait`: a
    /// lock on a folder, which OFD locks cannot take (they need a file opened for writing).
    static func flockExclusive(_ fd: CInt, wait: Bool) -> Result<Void, Errno> {
        let operation = wait ? LOCK_EX : LOCK_EX | LOCK_NB
        return retrying { flockCall(fd, operation) }.map { _ in () }
    }

    /// The corresponding C function is `flock(LOCK_UN)`.
    static func flockRelease(_ fd: CInt) {
        _ = flockCall(fd, LOCK_UN)
    }

    /// The corresponding C call is `fcntl(F_OFD_SETLK, F_UNLCK)`.
    static func unlock(_ fd: CInt) {
        _ = relay_ofd_unlock(fd)
    }

    /// The corresponding C call is `fcntl(F_OFD_GETLK)`: whether another holder has the lock.
    static func isLockedElsewhere(_ fd: CInt) -> Result<Bool, Errno> {
        retrying { relay_ofd_is_locked(fd) }.map { $0 == 1 }
    }

    /// The corresponding C functions are `opendir`/`readdir`/`closedir`. Names only, without
    /// "." and "..", in the order the file system gives them.
    /// The corresponding C function is `openat` with O_DIRECTORY | O_NOFOLLOW: the folder
    /// `name` inside the open folder `parent`, never through a symbolic link (ELOOP).
    static func openDirectory(in parent: CInt, _ name: String) -> Result<CInt, Errno> {
        retrying { Glibc.openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// The corresponding C function is `fstatat` with AT_SYMLINK_NOFOLLOW: the `lstat` of
    /// `name` inside the open folder `parent`, without walking a path from the root again.
    static func lstat(in parent: CInt, _ name: String) -> Result<Glibc.stat, Errno> {
        var info = Glibc.stat()
        return retrying { Glibc.fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) }.map { _ in info }
    }

    /// The names in the open folder `fd` (which stays open: the listing reads a duplicate).
    static func listDirectory(_ fd: CInt) -> Result<[String], Errno> {
        let copy: CInt
        switch retrying({ Glibc.fcntl(fd, F_DUPFD_CLOEXEC, 0) }) {
        case .success(let duplicate): copy = duplicate
        case .failure(let error): return .failure(error)
        }
        guard let dir = Glibc.fdopendir(copy) else {
            let error = Errno(rawValue: errno)
            Glibc.close(copy)
            return .failure(error)
        }
        defer { Glibc.closedir(dir) }
        return .success(names(dir))
    }

    private static func names(_ dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = Glibc.readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The names in the open folder `fd` with the kind the folder's entry records (`d_type`:
    /// `DT_DIR`, `DT_REG`, … or `DT_UNKNOWN` where the file system keeps none), so a walk need
    /// not `lstat` a folder or a link to learn what it is. The corresponding C function is
    /// `getdents64`, on `fd` itself — no duplicate and no `DIR` (`fdopendir` would take the
    /// descriptor, so it needs a copy: two system calls and a 32 KiB buffer per folder of a
    /// walk). It reads from `fd`'s offset: call it once, on a folder just opened; `fd` stays
    /// open.
    static func listDirectoryWithKinds(_ fd: CInt) -> Result<[(name: String, kind: UInt8)], Errno> {
        var entries: [(name: String, kind: UInt8)] = []
        let capacity = 32_768
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count: Int
            switch retrying({ relayGetdents64(fd, buffer, capacity) }) {
            case .success(let read): count = read
            case .failure(let error): return .failure(error)
            }
            if count == 0 { return .success(entries) }
            var offset = 0
            while offset < count {
                // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
                let record = buffer + offset
                let length = Int(record.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
                let kind = record.load(fromByteOffset: 18, as: UInt8.self)
                let name = record.advanced(by: 19).assumingMemoryBound(to: CChar.self)
                let isDots = name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
                if !isDots { entries.append((String(cString: name), kind)) }
                offset += length
            }
        }
    }

    static func listDirectory(_ path: String) -> Result<[String], Errno> {
        guard let dir = Glibc.opendir(path) else { return .failure(Errno(rawValue: errno)) }
        defer { Glibc.closedir(dir) }
        return .success(names(dir))
    }

    /// The corresponding C function is `kill(pid, 0)`: whether a process exists.
    static func processExists(_ pid: pid_t) -> Bool {
        Glibc.kill(pid, 0) == 0 || errno == EPERM
    }

    /// The corresponding C function is `getpid`.
    static var processID: pid_t { Glibc.getpid() }

    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`, in nanoseconds.
    static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Whether some open file description other than a probe's own refers to the file at
    /// `path` (a process between opening it and writing it): a write lease (`F_SETLEASE`,
    /// `F_WRLCK`) can only be taken on a file nobody else has open. The lease is released at
    /// once. Nil where leases are not available (another owner without CAP_LEASE, a file system
    /// without them): the caller falls back to waiting.
    static func isOpenElsewhere(_ path: String) -> Bool? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        let setLease: CInt = 1024, writeLease = CInt(F_WRLCK), unlock = CInt(F_UNLCK)  // F_SETLEASE is behind _GNU_SOURCE
        if Glibc.fcntl(fd, setLease, writeLease) == 0 {
            _ = Glibc.fcntl(fd, setLease, unlock)
            return false
        }
        return errno == EAGAIN || errno == EBUSY ? true : nil
    }

    /// The corresponding C function is `nanosleep`.
    static func sleep(nanoseconds: Int64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while Glibc.nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}

/// `flock(2)`: Glibc's function, which inside `Syscall` the `flock` struct of fcntl hides.
private func flockCall(_ fd: CInt, _ operation: CInt) -> CInt { flock(fd, operation) }

// MARK: Child processes (WorkspaceSync's `PeerProcess`, WorkspaceCore's `ChildProcess`)

/// How `Syscall.spawn` sets a child up, beside its defaults (three pipes, a group of its own).
package struct SpawnOptions: OptionSet, Sendable {
    package let rawValue: CInt
    package init(rawValue: CInt) { self.rawValue = rawValue }
    /// This process's standard input, output or error, not a pipe.
    package static let inheritInput = SpawnOptions(rawValue: RELAY_SPAWN_INHERIT_INPUT)
    package static let inheritOutput = SpawnOptions(rawValue: RELAY_SPAWN_INHERIT_OUTPUT)
    package static let inheritError = SpawnOptions(rawValue: RELAY_SPAWN_INHERIT_ERROR)
    /// In this process group: a terminal's Ctrl-C reaches the child too.
    package static let sameProcessGroup = SpawnOptions(rawValue: RELAY_SPAWN_SAME_GROUP)
}

extension Syscall {
    /// The corresponding C function is `relay_spawn` (CRelaySystem: `posix_spawnp` with pipes
    /// for standard input, output and error, its own process group, every other descriptor
    /// closed): the child's pid and our ends of its three pipes.
    /// With `options`, the child gets this process's own standard streams instead of pipes (the
    /// end is then -1), or stays in this process group (`relay_spawn_with`).
    /// `environment` (nil: this process's) and `directory` (nil: this one's) are the child's;
    /// `output`, when given, is the descriptor its standard output and error both go to.
    package static func spawn(_ command: [String], options: SpawnOptions = [], environment: [String: String]? = nil,
                              directory: String? = nil, output: CInt? = nil) -> Result<(pid: pid_t, ends: [CInt]), Errno> {
        precondition(!command.isEmpty, "a command to start")
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0.key + "=" + $0.value) } + [nil] }
        defer {
            for argument in argv { free(argument) }
            for variable in envp ?? [] { free(variable) }
        }
        var pid: pid_t = 0
        var ends: [CInt] = [-1, -1, -1]
        let result = envp.map { relay_spawn_with(command[0], argv, $0, directory, output ?? -1, &pid, &ends, options.rawValue) }
            ?? relay_spawn_with(command[0], argv, nil, directory, output ?? -1, &pid, &ends, options.rawValue)
        return result == 0 ? .success((pid, ends)) : .failure(Errno(rawValue: result))
    }

    /// The corresponding C call is `waitid(P_PID, pid, WEXITED | WNOWAIT)`: waits for the child
    /// to end, leaving it to be reaped.
    package static func waitForExit(_ pid: pid_t) -> Result<Void, Errno> {
        var info = siginfo_t()
        return retrying { Glibc.waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }.map { _ in () }
    }

    /// The corresponding C function is `waitpid`: reaps the child; its wait status.
    package static func reap(_ pid: pid_t) -> Result<Int32, Errno> {
        var code: Int32 = 0
        return retrying { Glibc.waitpid(pid, &code, 0) }.map { _ in code }
    }

    /// The corresponding C function is `kill`.
    package static func signal(_ pid: pid_t, _ signal: Int32) -> Result<Void, Errno> {
        retrying { Glibc.kill(pid, signal) }.map { _ in () }
    }

    /// The corresponding C function is `poll`, on one descriptor for input: whether it is
    /// readable (or at its end) within `milliseconds`. EINTR is returned, not retried: the
    /// caller's wait has a deadline.
    package static func pollInput(_ fd: CInt, milliseconds: Int32) -> Result<Bool, Errno> {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = Glibc.poll(&entry, 1, milliseconds)
        return ready < 0 ? .failure(Errno(rawValue: Glibc.errno)) : .success(ready > 0)
    }

    /// The corresponding C function is `read`, once, into `buffer`: how many bytes it gave (0
    /// at the end).
    package static func read(_ fd: CInt, into buffer: inout [UInt8]) -> Result<Int, Errno> {
        buffer.withUnsafeMutableBytes { raw in retrying { Glibc.read(fd, raw.baseAddress!, raw.count) } }
    }
}

/// glibc's `getdents64` (dirent.h, declared only under _GNU_SOURCE, which the Glibc module
/// does not set): reads a folder's entries as `struct linux_dirent64` records.
@_silgen_name("getdents64")
private func relayGetdents64(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ length: Int) -> Int
