// relay-watch-bench: the watcher's figures for `make bench`, each next to its peers on the same
// files in the same run: inotifywait (the tool the watcher is built on), the trigger's own shell
// command started alone (its start cost), and watchman where it is installed. Needs the release
// `relay` next to this binary and inotifywait (Debian: inotify-tools) on PATH.
//
// The trigger is a shell command that reports $RELAY_PATH into a FIFO this bench reads, so
// every figure ends when the command has run, as a user's trigger would.
//
//   latency    close of a file → its command reporting (settle window subtracted), beside the
//              raw event reaching inotifywait and `sh -c` started alone
//   burst      20,000 files created as fast as possible, a command each at concurrency 1 →
//              the last command; the budget is inotifywait's last event + 20,000 × sh alone
//   big tree   100,000 files in 5,000 folders: first start and restart to the first answer,
//              resident memory and idle wake-ups, beside inotifywait -m -r (and watchman)

import Foundation
import Glibc

let binFolder = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
let relay = binFolder + "/relay"
let base = FileManager.default.temporaryDirectory.path + "/relay-watch-bench-" + UUID().uuidString
let settleMilliseconds = 20
let samples = Int(ProcessInfo.processInfo.environment["RELAY_BENCH_SAMPLES"] ?? "") ?? 200
let burstSize = Int(ProcessInfo.processInfo.environment["RELAY_BENCH_BURST"] ?? "") ?? 20_000
defer { try? FileManager.default.removeItem(atPath: base) }

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func shell(_ command: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try! process.run()
    process.waitUntilExit()
}

func shellOutput(_ command: String) -> String {
    let process = Process(), pipe = Pipe()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try! process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Writes a file; returns the time just before close(), the moment IN_CLOSE_WRITE is made.
@discardableResult
func writeFile(_ path: String, _ text: String) -> Double {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0, "cannot create \(path)")
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    let closing = now()
    close(fd)
    return closing
}

func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

func statusField(_ pid: Int32, _ name: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "0") ?? 0
    }
    return 0
}

/// Context switches of each thread of `pid`, by thread id: how often it woke.
func wakeups(_ pid: Int32) -> [String: Int] {
    var result: [String: Int] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
        result[task] = statusField(pid, "task/\(task)", "voluntary_ctxt_switches") + statusField(pid, "task/\(task)", "nonvoluntary_ctxt_switches")
    }
    return result
}

func statusField(_ pid: Int32, _ sub: String, _ name: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/\(sub)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "0") ?? 0
    }
    return 0
}

/// Wake-ups per second while nothing happens (per thread: one that ends takes its count along).
func idleWakeupsPerSecond(_ pid: Int32, over seconds: Double = 3) -> Double {
    let before = wakeups(pid)
    usleep(UInt32(seconds * 1e6))
    let after = wakeups(pid)
    return Double(after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }) / seconds
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// A FIFO that trigger commands write one line into (`printf '%s\n' … > fifo`: a write under
/// PIPE_BUF is atomic); a thread reads it and keeps when each line arrived.
final class Reports: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var seen: [String: Double] = [:]
    private var lines = 0

    init(_ path: String) {
        self.path = path
        precondition(mkfifo(path, 0o600) == 0, "mkfifo \(path)")
        // Read and write: the FIFO never reports end-of-file between commands.
        let fd = open(path, O_RDWR)
        precondition(fd >= 0)
        Thread { [self] in
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(fd, &chunk, chunk.count)
                if count <= 0 { return }
                let time = now()
                buffer += chunk[0..<count]
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[0..<newline], as: UTF8.self)
                    buffer.removeSubrange(0...newline)
                    lock.withLock { if seen[line] == nil { seen[line] = time }; lines += 1 }
                }
            }
        }.start()
    }

    var command: String { "printf '%s\\n' \"$RELAY_PATH\" > '\(path)'" }

    func time(of line: String, timeout: Double = 60) -> Double? {
        let deadline = now() + timeout
        while now() < deadline {
            if let time = lock.withLock({ seen[line] }) { return time }
            usleep(50)
        }
        return nil
    }

    var counts: (lines: Int, distinct: Int) { lock.withLock { (lines, seen.count) } }

    /// Waits until `count` distinct lines arrived (or the timeout); returns the last one's time.
    func waitForDistinct(_ count: Int, timeout: Double) -> Double? {
        let deadline = now() + timeout
        while now() < deadline {
            let (done, last) = lock.withLock { (seen.count >= count, seen.values.max()) }
            if done { return last }
            usleep(1000)
        }
        return nil
    }
}

/// A `relay watch` whose trigger runs a command on every file under bench/.
final class Daemon {
    let root: String
    let process = Process()

    init(root: String, command: String?) {
        self.root = root
        if let command {
            shell("'\(relay)' init '\(root)' >/dev/null")
            let escaped = command.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            let config = """
                {"version": 1,
                 "triggers": [{"pattern": "bench/**", "command": "\(escaped)", "concurrency": 1}],
                 "watch": {"settleMilliseconds": \(settleMilliseconds), "settleLimitSeconds": 30}}
                """
            writeFile(root + "/relay.json", config)
        }
        process.executableURL = URL(fileURLWithPath: relay)
        process.arguments = ["watch", "-w", root]
        process.standardError = FileHandle.nullDevice
        try! process.run()
        waitForCookie(timeout: 600)
    }

    /// Writes a cookie and returns when the daemon has handled it (and all before it).
    @discardableResult
    func waitForCookie(timeout: Double = 600) -> Double {
        let cookie = root + "/.relay-cookie-" + UUID().uuidString
        writeFile(cookie, "c")
        let deadline = now() + timeout
        while exists(cookie) {
            precondition(now() < deadline, "the daemon did not answer a cookie in time")
            usleep(50)
        }
        return now()
    }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// inotifywait -m -r, its output read line by line on a thread.
final class Peer: @unchecked Sendable {
    let process = Process()
    let pipe = Pipe()
    private let lock = NSLock()
    private var seen: [String: Double] = [:]

    init(root: String) {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["inotifywait", "-m", "-r", "-q", "-e", "close_write", "-e", "moved_to", "--format", "%w%f", root]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try! process.run()
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                let time = now()
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lock.withLock { seen[line] = time }
                }
            }
        }.start()
        // Wait until its watches are up: a probe file shows in its output.
        let probe = root + "/probe-\(UUID().uuidString)"
        while true {
            writeFile(probe, "p")
            usleep(20_000)
            if lock.withLock({ seen[probe] }) != nil { break }
        }
        unlink(probe)
    }

    func time(of path: String, timeout: Double = 60) -> Double {
        let deadline = now() + timeout
        while true {
            if let time = lock.withLock({ seen[path] }) { return time }
            precondition(now() < deadline, "inotifywait never reported \(path)")
            usleep(50)
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// The trigger's command started alone, as the daemon starts it (Foundation's Process, sh -c):
/// start → its line in the FIFO.
func shAlone(_ reports: Reports, _ count: Int) -> [Double] {
    (0..<count).map { i in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", reports.command]
        process.environment = ["RELAY_PATH": "alone-\(i)-\(UUID().uuidString)"]
        let started = now()
        try! process.run()
        let line = process.environment!["RELAY_PATH"]!
        let reported = reports.time(of: line)!
        process.waitUntilExit()
        return reported - started
    }
}

func row(_ label: String, _ values: String...) {
    var line = "  " + label.padding(toLength: 46, withPad: " ", startingAt: 0)
    for value in values { line += value.padding(toLength: 16, withPad: " ", startingAt: 0) }
    print(line)
}
func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
func s(_ seconds: Double) -> String { String(format: "%.2f s", seconds) }

try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
let reports = Reports(base + "/reports.fifo")
print("relay-watch-bench: \(samples) latency samples, a \(burstSize)-file burst, settle window \(settleMilliseconds) ms, in \(base)")
print("  (figures from one run; on a shared machine they move with its load)")

// The command's own start cost.
// RELAY_BENCH_PARTS=latency,burst,big chooses (default: all).
let parts = Set((ProcessInfo.processInfo.environment["RELAY_BENCH_PARTS"] ?? "latency,burst,big").split(separator: ",").map(String.init))
let alone = shAlone(reports, samples)
let shMedian = percentile(alone, 0.5)

// Latency.
if parts.contains("latency") {
    let daemon = Daemon(root: base + "/latency-relay", command: reports.command)
    try FileManager.default.createDirectory(atPath: daemon.root + "/bench", withIntermediateDirectories: true)
    daemon.waitForCookie()
    var relayLatencies: [Double] = []
    for i in 0..<samples {
        let closed = writeFile(daemon.root + "/bench/drop-\(i).txt", "drop \(i)\n")
        guard let reported = reports.time(of: "bench/drop-\(i).txt") else { fatalError("the command never ran for drop \(i)") }
        relayLatencies.append(reported - closed - Double(settleMilliseconds) / 1000)
    }
    daemon.stop()

    let peerRoot = base + "/latency-peer"
    try FileManager.default.createDirectory(atPath: peerRoot + "/bench", withIntermediateDirectories: true)
    let peer = Peer(root: peerRoot)
    var peerLatencies: [Double] = []
    for i in 0..<samples {
        let path = peerRoot + "/bench/drop-\(i).txt"
        let closed = writeFile(path, "drop \(i)\n")
        peerLatencies.append(peer.time(of: path) - closed)
    }
    peer.stop()
    row("one file: close → command ran", "relay watch", "sh -c alone", "relay − sh", "inotifywait")
    for (label, p) in [("  median (settle window subtracted)", 0.5), ("  p99 (settle window subtracted)", 0.99)] {
        let r = percentile(relayLatencies, p), a = percentile(alone, p), q = percentile(peerLatencies, p)
        row(label, ms(r), ms(a), ms(r - a), ms(q))
    }
}

// Burst.
if parts.contains("burst") {
    let daemon = Daemon(root: base + "/burst-relay", command: reports.command)
    try FileManager.default.createDirectory(atPath: daemon.root + "/bench", withIntermediateDirectories: true)
    daemon.waitForCookie()
    let before = reports.counts
    let start = now()
    for i in 0..<burstSize { writeFile(daemon.root + "/bench/f\(i).txt", "file \(i)\n") }
    let written = now()
    let last = reports.waitForDistinct(before.distinct + burstSize, timeout: 1200)
    let after = reports.counts
    daemon.stop()

    let peerRoot = base + "/burst-peer"
    try FileManager.default.createDirectory(atPath: peerRoot + "/bench", withIntermediateDirectories: true)
    let peer = Peer(root: peerRoot)
    let peerStart = now()
    for i in 0..<burstSize { writeFile(peerRoot + "/bench/f\(i).txt", "file \(i)\n") }
    let peerDone = peer.time(of: peerRoot + "/bench/f\(burstSize - 1).txt") - peerStart
    peer.stop()
    let ran = after.distinct - before.distinct, doubled = (after.lines - before.lines) - ran
    let budget = peerDone + Double(burstSize) * shMedian
    print("")
    row("\(burstSize)-file burst, a command each, concurrency 1", "relay watch", "budget", "ratio")
    row("  writing the files took", s(written - start))
    if let last {
        let took = last - start
        row("  → last command ran", s(took), s(budget), String(format: "%.2f× (goal ≤ 1.5×)", took / budget))
        row("  daemon's own work per trigger", ms((took - peerDone) / Double(burstSize) - shMedian), "sh alone " + ms(shMedian))
    } else {
        row("  → not finished in 1,200 s", "\(ran) ran", s(budget))
    }
    row("  missed, doubled", "\(burstSize - ran), \(doubled)")
    row("  inotifywait: last event", s(peerDone))
}

// 100,000 files in 5,000 folders: start, restart, memory, idle wake-ups.
if parts.contains("big") {
    let root = base + "/big"
    shell("'\(relay)' init '\(root)' >/dev/null")
    writeFile(root + "/relay.json", """
        {"version": 1, "triggers": [{"pattern": "bench/**", "command": "\(reports.command.replacingOccurrences(of: "\"", with: "\\\""))"}]}
        """)
    for d in 0..<5_000 {
        let folder = root + "/bench/d\(d / 100)/d\(d)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for f in 0..<20 { writeFile(folder + "/f\(f).txt", "folder \(d) file \(f)\n") }
    }
    var start = now()
    let first = Daemon(root: root, command: nil)
    let firstStart = now() - start
    // The start's walk answers the first cookie before the daemon gives back what starting
    // needed (the walk's heap, the binary's start-up pages); a second one is answered by its
    // loop: memory is read there, the start's peak beside it.
    first.waitForCookie()
    let firstKiB = statusField(first.process.processIdentifier, "VmRSS")
    let firstAnonKiB = statusField(first.process.processIdentifier, "RssAnon")
    let firstPeakKiB = statusField(first.process.processIdentifier, "VmHWM")
    first.stop()
    start = now()
    let second = Daemon(root: root, command: nil)
    let restart = now() - start
    second.waitForCookie()
    let secondKiB = statusField(second.process.processIdentifier, "VmRSS")
    let secondAnonKiB = statusField(second.process.processIdentifier, "RssAnon")
    let secondPeakKiB = statusField(second.process.processIdentifier, "VmHWM")
    let relayIdle = idleWakeupsPerSecond(second.process.processIdentifier)
    second.stop()

    start = now()
    let peer = Peer(root: root)
    let peerStart = now() - start
    let peerKiB = statusField(peer.process.processIdentifier, "VmRSS")
    let peerIdle = idleWakeupsPerSecond(peer.process.processIdentifier)
    peer.stop()

    var watchman: (start: Double, kib: Int, idle: Double)?
    if !shellOutput("command -v watchman").isEmpty {
        let state = base + "/watchman-state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let flags = "--sockname='\(state)/sock' --statefile='\(state)/state' --logfile='\(state)/log' --pidfile='\(state)/pid'"
        start = now()
        // `watch` returns once the crawl is queued; `clock` with sync waits until it is done.
        shell("watchman \(flags) watch '\(root)' >/dev/null 2>&1 && watchman \(flags) clock '\(root)' >/dev/null 2>&1")
        let took = now() - start
        if let pid = Int32(shellOutput("cat '\(state)/pid'")) {
            watchman = (took, statusField(pid, "VmRSS"), idleWakeupsPerSecond(pid))
        }
        shell("watchman \(flags) shutdown-server >/dev/null 2>&1")
    }

    print("")
    row("100,000 files in 5,000 folders", "relay watch", "inotifywait", "ratio (goal ≤ 2×)")
    row("  first start → answering (index built)", s(firstStart), s(peerStart), String(format: "%.1f×", firstStart / peerStart))
    row("  restart → answering (index reused)", s(restart), s(peerStart), String(format: "%.1f×", restart / peerStart))
    row("  resident memory after first start", "\(firstKiB / 1024) MiB", "\(peerKiB / 1024) MiB", "peak \(firstPeakKiB / 1024) MiB")
    row("  resident memory after restart", "\(secondKiB / 1024) MiB", "", "peak \(secondPeakKiB / 1024) MiB (goal ≤ 30)")
    row("  of it anonymous (rest: the binary's pages)", "\(firstAnonKiB / 1024) / \(secondAnonKiB / 1024) MiB")
    row("  idle wake-ups per second", String(format: "%.1f", relayIdle), String(format: "%.1f", peerIdle))
    if let watchman {
        row("  watchman: watch + crawl, memory, idle", s(watchman.start), "\(watchman.kib / 1024) MiB", String(format: "%.1f wake-ups/s", watchman.idle))
    } else {
        row("  watchman", "not installed (Debian: watchman)")
    }
}
