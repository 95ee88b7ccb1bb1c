import CRelaySystem
import Foundation
import Glibc
import Synchronization

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
    /// - throws: the `errno` of a failed start, e.g. ENOENT for a command not found.
    init(_ command: [String]) throws {
        precondition(!command.isEmpty, "a command to start")
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        var ends: [CInt] = [-1, -1, -1]
        let result = relay_spawn(command[0], argv, &pid, &ends)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
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
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            status.withLock { status in
                var code: Int32 = 0
                while waitpid(pid, &code, 0) < 0 && errno == EINTR {}
                status = code
            }
            exited.signal()
        }
    }
    private let child: Child

    deinit { Glibc.close(errors) }

    var isRunning: Bool { child.status.withLock { $0 == nil } }

    func waitUntilExit() {
        child.exited.wait()
        child.exited.signal()
    }

    func terminate() {
        child.status.withLock { if $0 == nil { _ = kill(child.pid, SIGTERM) } }
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
            var entry = pollfd(fd: errors, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let got = buffer.withUnsafeMutableBytes { read(errors, $0.baseAddress!, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            bytes += buffer[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
