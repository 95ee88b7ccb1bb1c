import CRelaySystem
import Foundation
import Glibc
import Synchronization
import SystemPackage

/// The command a `RemoteEndpoint` talks to (normally `ssh host relay sync-serve …`), started
/// with `posix_spawnp` (`relay_spawn` in CRelaySystem) and pipes for its standard input,
/// output and error.
///
/// Foundation's `Process` took ~1.2 ms to start it, and went through `/usr/bin/env` to find it
/// on PATH (one more program to load): ~2 ms before ssh could begin to connect, on the path
/// every sync over ssh waits on. The child gets what `Process` gave it: its own process group
/// (a Ctrl-C at the terminal stops `relay`; ssh then finds its input closed), default signal
/// handling, an empty signal mask, and no descriptor but its three pipes.
final class PeerProcess: @unchecked Sendable {
    let pid: pid_t
    /// Our ends of its standard input, output and error.
    let input: FileHandle
    let output: FileHandle
    private let errors: CInt

    /// Starts `command` (its first element looked up on PATH).
    /// - throws: the `Errno` of a failed start, e.g. `.noSuchFileOrDirectory` for a command
    ///   not found.
    init(_ command: [String]) throws {
        precondition(!command.isEmpty, "a command to start")
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        var ends: [CInt] = [-1, -1, -1]
        let result = relay_spawn(command[0], argv, &pid, &ends)
        guard result == 0 else { throw Errno(rawValue: result) }
        self.pid = pid
        input = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        output = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        errors = ends[2]
        // Reaped as soon as it ends, by a thread that waits for nothing else: no zombie is
        // left however the endpoint is let go (`relay watch` syncs again and again).
        let child = Child(pid: pid)
        self.child = child
        Thread.detachNewThread { child.reap() }
    }

    /// The child's exit, shared with the thread that waits for it.
    private final class Child: Sendable {
        let pid: pid_t
        let status = Mutex<Int32?>(nil)
        let exited = DispatchSemaphore(value: 0)
        init(pid: pid_t) { self.pid = pid }

        /// Waits for the end without reaping (`WNOWAIT`), then reaps under the lock `terminate`
        /// takes: a signal never goes to a pid already reaped (and perhaps reused).
        func reap() {
            _ = ProcessCall.waitForExit(pid)
            status.withLock { status in
                status = (try? ProcessCall.reap(pid).get()) ?? 0
            }
            exited.signal()
        }
    }
    private let child: Child

    deinit { ProcessCall.close(errors) }

    var isRunning: Bool { child.status.withLock { $0 == nil } }

    func waitUntilExit() {
        child.exited.wait()
        child.exited.signal()
    }

    func terminate() {
        child.status.withLock { if $0 == nil { _ = ProcessCall.signal(child.pid, SIGTERM) } }
    }

    /// What it wrote to its standard error, read until the end or for at most `patience`
    /// seconds (a child of its own may keep the pipe open), up to 64 KiB.
    func errorOutput(patience: Double = 2) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(patience * 1e9)
        while bytes.count < 65_536 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { break }
            let ready = ProcessCall.pollInput(errors, milliseconds: Int32((deadline - now) / 1_000_000) + 1)
            if case .failure(let error) = ready, error == .interrupted { continue }
            guard case .success(true) = ready, case .success(let got) = ProcessCall.read(errors, into: &buffer), got > 0 else { break }
            bytes += buffer[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The system calls of a peer process, in the shape of WorkspaceCore's `Syscall` (EINTR
/// retried, failures as a typed `Errno`), which has no process calls yet: they belong there
/// once it has (`relay_spawn`, in CRelaySystem, stays the one spawn primitive).
private enum ProcessCall {
    /// Runs `body` until it stops failing with EINTR; -1 becomes the current errno.
    private static func retrying<I: FixedWidthInteger>(_ body: () -> I) -> Result<I, Errno> {
        while true {
            let value = body()
            if value != -1 { return .success(value) }
            if Glibc.errno != EINTR { return .failure(Errno(rawValue: Glibc.errno)) }
        }
    }

    /// The corresponding C call is `waitid(P_PID, pid, WEXITED | WNOWAIT)`: waits for the child
    /// to end, leaving it to be reaped.
    static func waitForExit(_ pid: pid_t) -> Result<Void, Errno> {
        var info = siginfo_t()
        return retrying { Glibc.waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }.map { _ in () }
    }

    /// The corresponding C function is `waitpid`: reaps the child; its wait status.
    static func reap(_ pid: pid_t) -> Result<Int32, Errno> {
        var code: Int32 = 0
        return retrying { Glibc.waitpid(pid, &code, 0) }.map { _ in code }
    }

    /// The corresponding C function is `kill`.
    static func signal(_ pid: pid_t, _ signal: Int32) -> Result<Void, Errno> {
        retrying { Glibc.kill(pid, signal) }.map { _ in () }
    }

    /// The corresponding C function is `poll`, on one descriptor for input: whether it is
    /// readable (or at its end) within `milliseconds`. EINTR is returned, not retried: the
    /// caller's wait has a deadline.
    static func pollInput(_ fd: CInt, milliseconds: Int32) -> Result<Bool, Errno> {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = Glibc.poll(&entry, 1, milliseconds)
        return ready < 0 ? .failure(Errno(rawValue: Glibc.errno)) : .success(ready > 0)
    }

    /// The corresponding C function is `read`, once: how many bytes it gave (0 at the end).
    static func read(_ fd: CInt, into buffer: inout [UInt8]) -> Result<Int, Errno> {
        buffer.withUnsafeMutableBytes { raw in retrying { Glibc.read(fd, raw.baseAddress!, raw.count) } }
    }

    /// The corresponding C function is `close`. EINTR is not retried (Linux closes anyway).
    static func close(_ fd: CInt) {
        _ = Glibc.close(fd)
    }
}
