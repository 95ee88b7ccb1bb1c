import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits for something a test expects to happen on disk — a file to appear or go, a line in a
/// daemon's log, a run's journal to end, a queue to empty — by asking the kernel (inotify) to
/// say when anything under some folders changes, and looking again each time it does. Nothing
/// is looked at on a timer, so no load makes a test pass or fail: the condition is checked
/// once at the start (after the watches are in place, so nothing falls between) and after
/// each batch of the kernel's events.
///
/// The timeout is a guard against a hang — the test fails, saying what it waited for — never a
/// measure: no assertion depends on how long anything took.
///
/// For example:
/// ```swift
/// let summary = try FileEvents.wait(under: [scratch.base], "the summary") {
///     scratch.contents("Research/llamas/summary.md")
/// }
/// ```
public enum FileEvents {
    /// Blocks until `condition` gives a value, and returns it.
    ///
    /// - parameter folders: watched with everything under them, folders made later included.
    /// - parameter process: when it exits before the condition holds, the wait ends at once
    ///   with an error (its exit is an event too); a condition about its exit may hold then.
    /// - parameter what: what the test waits for, and any detail (a log's tail) for the failure.
    /// - throws: ``FileEventsError`` when the guard's time runs out or `process` exits first.
    @discardableResult
    public static func wait<Value>(under folders: [String], endingWith process: Process? = nil,
                                   guardSeconds: Double = 120, _ what: @autoclosure () -> String,
                                   until condition: () throws -> Value?) throws -> Value {
        let watch = try Watch(folders)
        let exit = process.map(ExitSignal.init)
        defer { exit?.detach() }
        let guardEnd = ContinuousClock.now + .milliseconds(Int(guardSeconds * 1000))
        while true {
            if let value = try condition() { return value }
            if let exit, exit.hasFired {
                throw FileEventsError("process \(exit.process.processIdentifier) exited (status \(exit.process.terminationStatus)) before \(what())")
            }
            let left = guardEnd - ContinuousClock.now
            guard left > .zero else { throw FileEventsError("not within \(Int(guardSeconds)) s (the guard against a hang): \(what())") }
            watch.waitForEvents(orSignal: exit?.readEnd, upTo: left)
        }
    }

    /// Blocks until `process` has exited (its exit is the event); the guard as in ``wait``.
    public static func waitForExit(of process: Process, guardSeconds: Double = 120, _ what: @autoclosure () -> String = "") throws {
        try wait(under: [], endingWith: process, guardSeconds: guardSeconds, "the exit of process \(process.processIdentifier) \(what())") {
            process.isRunning ? nil : ()
        }
        process.waitUntilExit()
    }
}

extension FileEvents {
    /// Blocks until process `pid` has exited — any process, not only the test's child: a pidfd
    /// (Linux 5.3) becomes readable when it ends, zombie or reaped. Returns false only when the
    /// guard's time ran out first.
    ///
    /// glibc's `pidfd_open` is not in Swift's Glibc module: it is looked up by name, as a C
    /// function of the C library the test already links.
    public static func waitForExit(ofPID pid: pid_t, guardSeconds: Double = 120) throws -> Bool {
        typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
        guard let symbol = dlsym(nil, "pidfd_open") else { throw FileEventsError("this C library has no pidfd_open") }
        let descriptor = unsafeBitCast(symbol, to: PidfdOpen.self)(pid, 0)
        guard descriptor >= 0 else {
            if errno == ESRCH { return true }  // gone (and reaped) already
            throw FileEventsError("pidfd_open(\(pid)): errno \(errno)")
        }
        defer { close(descriptor) }
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&polled, 1, Int32(guardSeconds * 1000))
            if ready >= 0 || errno != EINTR { return ready > 0 }
        }
    }
}

public struct FileEventsError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One inotify instance watching folders recursively.
private final class Watch {
    private let descriptor: Int32
    private let roots: [String]
    private var folders: [Int32: String] = [:]
    // Not IN_CLOSE_WRITE: a condition that opens a file read-write to read it (SQLite does)
    // would wake its own wait on closing it, and look again at once, for ever.
    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF)

    init(_ roots: [String]) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { throw FileEventsError("inotify_init1: errno \(errno)") }
        self.roots = roots
        for root in roots { add(root) }
    }

    deinit { close(descriptor) }

    /// Watches `folder` and every folder under it (symbolic links are not followed).
    private func add(_ folder: String) {
        let wd = inotify_add_watch(descriptor, folder, Self.mask | UInt32(IN_ONLYDIR))
        guard wd >= 0 else { return }  // gone already, or not a folder: nothing to see there
        folders[wd] = folder
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var info = stat()
            if lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { add(folder + "/" + name) }
        }
    }

    /// Returns when the kernel reports changes (all of them read), `signal` is readable, or the
    /// guard's time is up; folders made meanwhile are watched from now on.
    func waitForEvents(orSignal signal: Int32?, upTo left: Duration) {
        var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if let signal { polled.append(pollfd(fd: signal, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = Int32(min(Double(Int32.max), max(1, (left / .milliseconds(1)).rounded(.up))))
        guard poll(&polled, nfds_t(polled.count), milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset < count {
                let (wd, mask, length, name) = buffer.withUnsafeBytes { bytes -> (Int32, UInt32, Int, String) in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let raw = bytes[start..<(start + Int(event.len))].prefix { $0 != 0 }
                    return (event.wd, event.mask, Int(event.len), String(decoding: raw, as: UTF8.self))
                }
                offset += MemoryLayout<inotify_event>.size + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost, folders made meanwhile among them: watch everything again.
                    for root in roots { add(root) }
                }
                if mask & UInt32(IN_ISDIR) != 0, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, let parent = folders[wd] {
                    add(parent + "/" + name)
                }
            }
        }
    }
}

/// A pipe made readable when a process exits (Foundation's termination handler writes to it).
private final class ExitSignal: @unchecked Sendable {
    let process: Process
    private var ends: [Int32] = [-1, -1]
    private let fired = LockedBox(false)
    var readEnd: Int32 { ends[0] }
    var hasFired: Bool { fired.value || !process.isRunning }

    init(_ process: Process) {
        self.process = process
        if pipe(&ends) == 0 { for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) } }
        let writeEnd = ends[1]
        // The handler holds this object, so the pipe is open whenever it writes.
        process.terminationHandler = { [self] _ in
            fired.mutate { $0 = true }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
        if !process.isRunning { fired.mutate { $0 = true } }
    }

    func detach() { process.terminationHandler = nil }

    deinit {
        close(ends[0])
        close(ends[1])
    }
}
