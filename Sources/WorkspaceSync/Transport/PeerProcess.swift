import Foundation
import Synchronization
import SystemPackage
import WorkspaceCore

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
        let (pid, ends) = try Syscall.spawn(command).get()
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
            _ = Syscall.waitForExit(pid)
            status.withLock { status in
                status = (try? Syscall.reap(pid).get()) ?? 0
            }
            exited.signal()
        }
    }
    private let child: Child

    deinit { Syscall.close(errors) }

    var isRunning: Bool { child.status.withLock { $0 == nil } }

    func waitUntilExit() {
        child.exited.wait()
        child.exited.signal()
    }

    func terminate() {
        child.status.withLock { if $0 == nil { _ = Syscall.signal(child.pid, SIGTERM) } }
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
            let ready = Syscall.pollInput(errors, milliseconds: Int32((deadline - now) / 1_000_000) + 1)
            if case .failure(let error) = ready, error == .interrupted { continue }
            guard case .success(true) = ready, case .success(let got) = Syscall.read(errors, into: &buffer), got > 0 else { break }
            bytes += buffer[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
