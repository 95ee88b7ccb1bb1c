import Foundation
import Glibc
import Synchronization

/// A command run to its end through the system-call layer (`Syscall.spawn`: posix_spawnp, every
/// other descriptor closed): the converters of dropped files, `relay fs update`'s filter, the
/// command `relay fs lock` runs under its lock. `package` access: for RelayEngine and the
/// executable, not public API. (A peer over ssh, which runs as long as a sync, is WorkspaceSync's
/// `PeerProcess`.)
///
/// For example:
/// ```swift
/// let result = try ChildProcess.run(["sed", "s/a/b/"], input: Array("abc\n".utf8))
/// // result.status == 0, result.output == Array("bbc\n".utf8)
/// ```
package enum ChildProcess {
    /// How a command ended, and what it wrote.
    package struct Finished: Sendable {
        /// Its exit status, or 128 + the signal that ended it (as a shell reports it).
        package var status: Int32
        /// Whether a signal ended it.
        package var signalled: Bool
        package var output: [UInt8]
        package var errors: [UInt8]
        /// Whether `timeout` passed and the command's process group was killed.
        package var timedOut: Bool
    }

    /// Runs `command` (looked up on PATH unless it holds a slash) with `input` on its standard
    /// input, reading its output and errors whole while it runs (so a large output cannot fill
    /// a pipe and stall it), in a process group of its own. Past `timeout` the whole group is
    /// killed (SIGKILL: a child that handles SIGTERM may ignore it; a grandchild would keep the
    /// pipes open).
    /// - throws: `WorkspaceError` naming the command when it cannot be started (not found,
    ///   not executable).
    package static func run(_ command: [String], input: [UInt8] = [], timeout: Duration? = nil) throws -> Finished {
        let (pid, ends) = try spawn(command, options: [])
        let feeding: BackgroundWork<Void>? = input.isEmpty ? nil : BackgroundWork {
            // A command may end without reading its input: EPIPE then (relay ignores SIGPIPE).
            _ = input.withUnsafeBytes { Syscall.writeAll(ends[0], $0) }
            Syscall.close(ends[0])
        }
        if input.isEmpty { Syscall.close(ends[0]) }
        let state = State()
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout.milliseconds))) {
                // Under the lock the reaper takes: never a signal to a pid already reaped (and reused).
                state.reaped.withLock { reaped in
                    guard !reaped else { return }
                    state.timedOut.withLock { $0 = true }
                    _ = Syscall.signal(-pid, SIGKILL)
                    _ = Syscall.signal(pid, SIGKILL)
                }
            }
        }
        let errors = BackgroundWork { (try? Syscall.readAll(ends[2]).get()) ?? [] }
        let output = (try? Syscall.readAll(ends[1]).get()) ?? []
        let errorBytes = (try? errors.wait()) ?? []
        _ = try? feeding?.wait()
        Syscall.close(ends[1])
        Syscall.close(ends[2])
        let status = waitAndReap(pid, state: state)
        return Finished(status: status.code, signalled: status.signalled, output: output, errors: errorBytes,
                        timedOut: state.timedOut.withLock { $0 })
    }

    /// Runs `command` with this process's standard input, output and error, in this process
    /// group (a terminal's Ctrl-C reaches it as it reaches us), and waits for its end: its exit
    /// status, or 128 + the signal that ended it.
    /// - throws: `WorkspaceError` naming the command when it cannot be started.
    package static func runAttached(_ command: [String]) throws -> Int32 {
        let (pid, _) = try spawn(command, options: [.inheritInput, .inheritOutput, .inheritError, .sameProcessGroup])
        return waitAndReap(pid, state: State()).code
    }

    /// Runs `command` with `environment` (the whole of it) in `directory`, its standard input
    /// empty and its output and errors appended to the file `log` (made if missing) after
    /// `header`, and waits for its end: its exit status, or 128 + the signal that ended it. A
    /// trigger's command: what it prints stays in the log as it prints it.
    /// - throws: `WorkspaceError` naming the log when it cannot be opened or written, or the
    ///   command when it cannot be started.
    ///
    /// With `whileStarting`, the work it does overlaps the command's start: it runs once the
    /// process exists, and its answer is written to the command's standard input — a newline
    /// when true, nothing when false — before that is closed. A command that begins with
    /// `read` waits for it and learns whether to go on (a trigger's settled copy is made while
    /// `sh` loads).
    package static func run(_ command: [String], environment: [String: String], directory: String,
                            appendingOutputTo log: String, header: [UInt8], whileStarting: (() -> Bool)? = nil) throws -> Int32 {
        let started = try start(command, environment: environment, directory: directory, appendingOutputTo: log, header: header)
        started.answer(whileStarting?() ?? false)
        return started.wait()
    }

    /// A command `start` began: it waits for `answer` on its standard input, then `wait` gives
    /// its end. Each is called once, `answer` first; they may be called on different threads.
    package final class Started: Sendable {
        let pid: pid_t
        let input: CInt
        let log: CInt

        init(pid: pid_t, input: CInt, log: CInt) {
            self.pid = pid
            self.input = input
            self.log = log
        }

        /// Writes a newline to the command's standard input when `proceed`, nothing when not,
        /// and closes it.
        package func answer(_ proceed: Bool) {
            if proceed {
                // EPIPE when the command ended without reading (relay ignores SIGPIPE).
                _ = [UInt8(ascii: "\n")].withUnsafeBytes { Syscall.writeAll(input, $0) }
            }
            Syscall.close(input)
        }

        /// Waits for the command's end: its exit status, or 128 + the signal that ended it.
        package func wait() -> Int32 {
            defer { Syscall.close(log) }
            return waitAndReap(pid, state: State()).code
        }
    }

    /// `run(_:environment:directory:appendingOutputTo:header:whileStarting:)` in two steps:
    /// starts the command and returns at once, so the caller's thread — one already running —
    /// starts it, and another may do the rest (`Started.answer`, `Started.wait`).
    /// - throws: as `run` does; nothing is left open then.
    package static func start(_ command: [String], environment: [String: String], directory: String,
                              appendingOutputTo log: String, header: [UInt8]) throws -> Started {
        let fd = try Syscall.open(log, O_WRONLY | O_APPEND | O_CREAT).orThrow("open", path: log)
        do {
            try header.withUnsafeBytes { Syscall.writeAll(fd, $0) }.orThrow("write", path: log)
            let (pid, ends) = try spawn(command, options: [], environment: environment, directory: directory, output: fd)
            return Started(pid: pid, input: ends[0], log: fd)
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    private static func spawn(_ command: [String], options: SpawnOptions, environment: [String: String]? = nil,
                              directory: String? = nil, output: CInt? = nil) throws -> (pid_t, [CInt]) {
        guard let name = command.first, !name.isEmpty else {
            throw WorkspaceError(.invalidInput, "no command to run")
        }
        switch Syscall.spawn(command, options: options, environment: environment, directory: directory, output: output) {
        case .success(let started): return started
        case .failure(let errno):
            let reason = errno == .noSuchFileOrDirectory ? "not found (is it installed and on PATH?)" : "\(errno)"
            throw WorkspaceError(errno == .noSuchFileOrDirectory ? .notFound : .io, "could not start \(name): \(reason)", path: name, underlying: errno)
        }
    }

    /// Whether the child was reaped (a timer's kill must not reach a reused pid), and whether the
    /// timer killed it.
    private final class State: Sendable {
        let reaped = Mutex(false)
        let timedOut = Mutex(false)
    }

    /// Waits for the end without reaping, then reaps under the lock a timer's kill takes.
    private static func waitAndReap(_ pid: pid_t, state: State) -> (code: Int32, signalled: Bool) {
        _ = Syscall.waitForExit(pid)
        let raw: Int32 = state.reaped.withLock { reaped in
            reaped = true
            return (try? Syscall.reap(pid).get()) ?? 0
        }
        let signal = raw & 0x7F
        return signal == 0 ? ((raw >> 8) & 0xFF, false) : (128 + signal, true)
    }
}
