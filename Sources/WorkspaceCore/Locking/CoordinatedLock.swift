import Glibc
import Synchronization

/// The coordinated-write lock, Relay's counterpart of NSFileCoordinator on Linux: an exclusive
/// open-file-description lock (`fcntl(F_OFD_SETLK)`) on a lock file under `.relay/locks/`, one
/// per workspace path.
///
/// OFD locks belong to the open file, not the process: two threads of one process that each
/// open the lock file exclude each other, like two processes do, and the kernel drops the lock
/// when the holder dies, `kill -9` included. There is no stale-lock cleanup to get wrong.
///
/// The lock file also carries a small intent record (which temporary file or append is in
/// flight) so that the next holder can undo what a killed holder left half done.
final class CoordinatedLock {
    /// Where the records sit in a lock file: the label (the path, for people) first, then the
    /// intent record, then the last-installed record. A lock file made by this version is
    /// `compact` — 1,152 bytes, one block of the file system; one made by an earlier version is
    /// larger and keeps its `legacy` places (4,096 and 4,608: two blocks, 80 MB of lock files
    /// at 10,000 paths). Which one a file has is read from its size when it is opened.
    struct Layout: Equatable {
        let intent: Int
        var installed: Int { intent + CoordinatedLock.intentLength }

        static let compact = Layout(intent: 512)
        static let legacy = Layout(intent: 4096)
        /// The largest a compact lock file gets: the end of its last-installed record.
        static let compactSize = 512 + CoordinatedLock.intentLength + CoordinatedLock.installedLength

        /// The layout of a lock file of `size` bytes.
        static func of(size: Int) -> Layout { size > compactSize ? .legacy : .compact }
    }

    static let intentLength = 512
    static let installedLength = 128

    let fd: CInt
    let lockFile: String
    let label: String
    let layout: Layout
    private var held = true

    private init(fd: CInt, lockFile: String, label: String, layout: Layout) {
        self.fd = fd
        self.lockFile = lockFile
        self.label = label
        self.layout = layout
    }

    deinit { release() }

    /// Takes the lock, waiting up to `timeout`.
    ///
    /// - parameter label: the workspace path the lock guards, for messages and `relay status`.
    /// - throws: `WorkspaceError.Code.lockTimeout` naming `label` when the wait runs out.
    static func acquire(lockFile: String, label: String, timeout: Duration) throws -> CoordinatedLock {
        let (fd, layout) = try openLockFile(lockFile, label: label)
        let deadline = Syscall.nowNanoseconds() + timeout.nanoseconds
        var pause: Int64 = 50_000  // 50 µs, doubling to 5 ms: short holds are the common case
        while true {
            switch Syscall.lockExclusive(fd, wait: false) {
            case .success:
                return CoordinatedLock(fd: fd, lockFile: lockFile, label: label, layout: layout)
            case .failure(.resourceTemporarilyUnavailable), .failure(.permissionDenied):
                RefusalCount.add(lockFile)
                let now = Syscall.nowNanoseconds()
                if now >= deadline {
                    Syscall.close(fd)
                    throw WorkspaceError(
                        .lockTimeout,
                        "\(label): another writer has held the lock for more than \(timeout.secondsText); gave up (lock file \(lockFile))",
                        path: label)
                }
                // Jitter keeps many waiters from waking in step.
                let jittered = pause / 2 + Int64.random(in: 0...pause)
                Syscall.sleep(nanoseconds: min(jittered, deadline - now))
                pause = min(pause * 2, 5_000_000)
            case .failure(let errno):
                Syscall.close(fd)
                throw WorkspaceError(.io, "\(label): could not lock \(lockFile): \(errno)", path: label, underlying: errno)
            }
        }
    }

    /// Takes the lock only if it is free now; nil when somebody holds it.
    static func tryAcquire(lockFile: String, label: String) throws -> CoordinatedLock? {
        let (fd, layout) = try openLockFile(lockFile, label: label)
        switch Syscall.lockExclusive(fd, wait: false) {
        case .success: return CoordinatedLock(fd: fd, lockFile: lockFile, label: label, layout: layout)
        case .failure(.resourceTemporarilyUnavailable), .failure(.permissionDenied):
            Syscall.close(fd)
            return nil
        case .failure(let errno):
            Syscall.close(fd)
            throw WorkspaceError(.io, "\(label): could not lock \(lockFile): \(errno)", path: label, underlying: errno)
        }
    }

    /// Whether some open file description holds the lock on `lockFile` right now.
    static func isHeld(lockFile: String) -> Bool {
        guard case .success(let fd) = Syscall.open(lockFile, O_RDWR) else { return false }
        defer { Syscall.close(fd) }
        if case .success(let locked) = Syscall.isLockedElsewhere(fd) { return locked }
        return false
    }

    private static func openLockFile(_ lockFile: String, label: String) throws -> (CInt, Layout) {
        // Usually the lock file is there (made by an earlier write, or ahead by a batch's
        // prefetch thread): opened without O_CREAT, which would take the locks folder's lock
        // exclusively and wait on that thread while it creates the next ones.
        var result = Syscall.open(lockFile, O_RDWR)
        if case .failure(.noSuchFileOrDirectory) = result { result = Syscall.open(lockFile, O_RDWR | O_CREAT, mode: 0o644) }
        if case .failure(.noSuchFileOrDirectory) = result {
            _ = Syscall.mkdir(Workspace.parentFolder(of: lockFile))
            result = Syscall.open(lockFile, O_RDWR | O_CREAT, mode: 0o644)
        }
        let fd = try result.orThrow("open lock file", path: lockFile)
        // The label helps a person who looks in .relay/locks/; written once, never locked for,
        // cut (at a character) to the room before the intent record.
        guard case .success(let info) = Syscall.fstat(fd) else { return (fd, .compact) }
        if info.st_size == 0 {
            var text = Substring(label)
            while text.utf8.count > Layout.compact.intent - 1 { text = text.dropLast() }
            _ = Syscall.pwriteAll(fd, Array((text + "\n").utf8), offset: 0)
        }
        return (fd, Layout.of(size: Int(info.st_size)))
    }

    func release() {
        guard held else { return }
        held = false
        Syscall.unlock(fd)
        Syscall.close(fd)
    }

    // MARK: Intent record

    /// What a holder was doing, recorded before it starts and cleared when it is done.
    enum Intent: Equatable {
        /// A temporary file that may be left behind: delete it.
        case temporary(name: String)
        /// An append to the file with this inode, from `start`, of `length` bytes: a file whose
        /// size ended strictly inside that range was torn by a crash and is cut back to `start`.
        case append(inode: UInt64, start: Int, length: Int)

        var encoded: String {
            switch self {
            case .temporary(let name): return "T \(name)\n"
            case .append(let inode, let start, let length): return "A \(inode) \(start) \(length)\n"
            }
        }

        init?(encoded: String) {
            let fields = encoded.split(separator: " ").map(String.init)
            switch fields.first {
            case "T" where fields.count == 2: self = .temporary(name: fields[1])
            case "A" where fields.count == 4:
                guard let inode = UInt64(fields[1]), let start = Int(fields[2]), let length = Int(fields[3]) else { return nil }
                self = .append(inode: inode, start: start, length: length)
            default: return nil
            }
        }
    }

    func recordIntent(_ intent: Intent, durable: Bool) throws {
        var bytes = Array(intent.encoded.utf8)
        precondition(bytes.count < Self.intentLength, "intent record too long")
        bytes += [UInt8](repeating: 0, count: Self.intentLength - bytes.count)
        try Syscall.pwriteAll(fd, bytes, offset: layout.intent).orThrow("write lock intent", path: lockFile)
        if durable { try Syscall.fsync(fd).orThrow("fsync", path: lockFile) }
    }

    // MARK: Last installed version

    /// Remembers the file Relay just put in place (inode, size, mtime) and whether it should
    /// start triggers. Relay's own writes are never half done, so an update need not wait for
    /// them to settle, and the watcher can tell them from a person's.
    func recordInstalled(_ identity: FileIdentity, triggers: Bool) {
        var bytes = InstalledRecord(stamp: FileStamp(identity), triggers: triggers).encoded
        bytes += [UInt8](repeating: 0, count: max(0, Self.installedLength - bytes.count))
        _ = Syscall.pwriteAll(fd, bytes, offset: layout.installed)
    }

    /// This lock file's last-installed record (`Workspace.isLastInstalled` also asks the
    /// file's own).
    func installedRecord() -> InstalledRecord? {
        Self.installedRecord(fd: fd, layout: layout)
    }

    /// The last-installed record of a lock file, read without taking the lock.
    static func installedRecord(fd: CInt) -> InstalledRecord? {
        guard case .success(let info) = Syscall.fstat(fd) else { return nil }
        return installedRecord(fd: fd, layout: Layout.of(size: Int(info.st_size)))
    }

    private static func installedRecord(fd: CInt, layout: Layout) -> InstalledRecord? {
        guard case .success(let bytes) = Syscall.pread(fd, count: installedLength, offset: layout.installed) else { return nil }
        return InstalledRecord(decoding: bytes)
    }

    func clearIntent() {
        _ = Syscall.pwriteAll(fd, [UInt8](repeating: 0, count: Self.intentLength), offset: layout.intent)
    }

    /// The record a previous holder left, if it died before clearing it.
    func pendingIntent() -> Intent? {
        guard case .success(let bytes) = Syscall.pread(fd, count: Self.intentLength, offset: layout.intent) else { return nil }
        let text = String(decoding: bytes.prefix { $0 != 0 && $0 != 10 }, as: UTF8.self)
        return text.isEmpty ? nil : Intent(encoded: text)
    }
}

/// What Relay last put at a path: the file's stamp, and whether it should start triggers. Kept in
/// the path's lock file, or — for a file a write batch made at a path that had no lock file
/// (`WriteBatch`: a new path takes none) — in the file itself, as the extended attribute
/// `user.relay.installed`. The stamp holds the inode, so a copy of the file that carried the
/// attribute along (`cp -a`, an editor that keeps attributes when it saves) is not taken for it.
struct InstalledRecord: Equatable {
    var stamp: FileStamp
    var triggers: Bool

    static let attributeName = "user.relay.installed"

    /// `I inode size mtime T|Q` and a newline.
    var encoded: [UInt8] {
        Array("I \(stamp.inode) \(stamp.size) \(stamp.modifiedNanoseconds) \(triggers ? "T" : "Q")\n".utf8)
    }

    init(stamp: FileStamp, triggers: Bool) {
        self.stamp = stamp
        self.triggers = triggers
    }

    /// The record in `bytes` (up to a NUL or newline), nil when there is none.
    init?(decoding bytes: [UInt8]) {
        let fields = String(decoding: bytes.prefix { $0 != 0 && $0 != 10 }, as: UTF8.self).split(separator: " ")
        guard fields.count == 5, fields[0] == "I", let inode = UInt64(fields[1]), let size = Int(fields[2]),
              let modified = Int64(fields[3]), fields[4] == "T" || fields[4] == "Q" else { return nil }
        self.init(stamp: FileStamp(inode: inode, size: size, modifiedNanoseconds: modified), triggers: fields[4] == "T")
    }

    /// The record the file at `absolute` carries itself, if any.
    static func attribute(of absolute: String) -> InstalledRecord? {
        guard case .success(let bytes) = Syscall.attribute(absolute, attributeName) else { return nil }
        return InstalledRecord(decoding: bytes)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
    }

    var secondsText: String {
        let seconds = Double(nanoseconds) / 1e9
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
