import Glibc

/// A lock that marks one long-running process per workspace (e.g. `relay watch`): held for the
/// life of the process, dropped by the kernel when it exits or is killed. The holder's pid is
/// written next to it for `relay status`.
public final class DaemonLock: @unchecked Sendable {
    private let lock: CoordinatedLock
    private let pidFile: String

    private init(lock: CoordinatedLock, pidFile: String) {
        self.lock = lock
        self.pidFile = pidFile
    }

    /// Takes the lock named `name`, or returns nil with the pid of the holder when another
    /// process has it.
    public static func acquire(_ name: String, in workspace: Workspace) throws -> (lock: DaemonLock?, holder: Int32?) {
        let lockFile = workspace.layout.locks + "/@" + name
        let pidFile = workspace.layout.state + "/" + name + ".pid"
        guard let lock = try CoordinatedLock.tryAcquire(lockFile: lockFile, label: "@" + name) else {
            return (nil, holder(pidFile))
        }
        let text = "\(Syscall.processID)\n"
        if case .success(let fd) = Syscall.open(pidFile, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644) {
            _ = Array(text.utf8).withUnsafeBytes { Syscall.writeAll(fd, $0) }
            Syscall.close(fd)
        }
        return (DaemonLock(lock: lock, pidFile: pidFile), nil)
    }

    /// The pid of the process holding `name`, or nil when none does.
    public static func runningHolder(_ name: String, in workspace: Workspace) -> Int32? {
        guard CoordinatedLock.isHeld(lockFile: workspace.layout.locks + "/@" + name) else { return nil }
        return holder(workspace.layout.state + "/" + name + ".pid") ?? -1
    }

    private static func holder(_ pidFile: String) -> Int32? {
        guard case .success(let fd) = Syscall.open(pidFile, O_RDONLY), case .success(let bytes) = Syscall.readAll(fd) else { return nil }
        defer { Syscall.close(fd) }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingWhitespace)
    }

    public func release() {
        _ = Syscall.unlink(pidFile)
        lock.release()
    }
}
