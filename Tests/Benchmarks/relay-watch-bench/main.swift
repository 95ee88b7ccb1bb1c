// relay-watch-bench: the watcher's figures for `make bench`, each next to inotifywait on the
// same files in the same run. Needs the release `relay` next to this binary and inotifywait
// (Debian: inotify-tools) on PATH.
//
//   latency    close of a file → its trigger recorded (settle window subtracted), vs the raw
//              event reaching inotifywait's output
//   burst      20,000 files created as fast as possible → the last one recorded
//   memory     resident memory watching 100,000 files in 5,000 folders, vs inotifywait -m -r

import Foundation
import Glibc

let binFolder = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
let relay = binFolder + "/relay"
let base = FileManager.default.temporaryDirectory.path + "/relay-watch-bench-" + UUID().uuidString
let settleMilliseconds = 20
let samples = Int(ProcessInfo.processInfo.environment["RELAY_BENCH_SAMPLES"] ?? "") ?? 200
defer { try? FileManager.default.removeItem(atPath: base) }

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func shell(_ command: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try! process.run()
    process.waitUntilExit()
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

func residentKiB(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// A `relay watch` on a fresh workspace whose triggers match `bench/**`.
final class Daemon {
    let root: String
    let process = Process()

    init(root: String, initialise: Bool = true) {
        self.root = root
        if initialise {
            shell("'\(relay)' init '\(root)' >/dev/null")
            let config = """
                {"version": 1, "relays": {"bench": {}},
                 "triggers": [{"pattern": "bench/**", "relay": "bench"}],
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
    func waitForCookie(timeout: Double = 300) -> Double {
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
    private var ready = false

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
    }

    func time(of path: String, timeout: Double = 30) -> Double {
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

func row(_ label: String, _ relayValue: String, _ peerValue: String, _ ratio: String) {
    print("  " + label.padding(toLength: 42, withPad: " ", startingAt: 0)
          + relayValue.padding(toLength: 16, withPad: " ", startingAt: 0)
          + peerValue.padding(toLength: 16, withPad: " ", startingAt: 0) + ratio)
}

try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
print("relay-watch-bench: \(samples) latency samples, settle window \(settleMilliseconds) ms, in \(base)")
print("  " + "".padding(toLength: 42, withPad: " ", startingAt: 0) + "relay watch     inotifywait     ratio")

// Latency.
do {
    let daemon = Daemon(root: base + "/latency-relay")
    try FileManager.default.createDirectory(atPath: daemon.root + "/bench", withIntermediateDirectories: true)
    daemon.waitForCookie()
    var relayLatencies: [Double] = []
    for i in 0..<samples {
        let closed = writeFile(daemon.root + "/bench/drop-\(i).txt", "drop \(i)\n")
        let handled = daemon.waitForCookie()
        relayLatencies.append(handled - closed - Double(settleMilliseconds) / 1000)
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
    for (label, p) in [("latency, median (settle subtracted)", 0.5), ("latency, p99 (settle subtracted)", 0.99)] {
        let r = percentile(relayLatencies, p), q = percentile(peerLatencies, p)
        row(label, String(format: "%.2f ms", r * 1000), String(format: "%.2f ms", q * 1000), String(format: "%.1f×", r / q))
    }
}

// Burst.
do {
    let daemon = Daemon(root: base + "/burst-relay")
    try FileManager.default.createDirectory(atPath: daemon.root + "/bench", withIntermediateDirectories: true)
    daemon.waitForCookie()
    let start = now()
    for i in 0..<20_000 { writeFile(daemon.root + "/bench/f\(i).txt", "file \(i)\n") }
    let written = now()
    let done = daemon.waitForCookie()
    daemon.stop()

    let peerRoot = base + "/burst-peer"
    try FileManager.default.createDirectory(atPath: peerRoot + "/bench", withIntermediateDirectories: true)
    let peer = Peer(root: peerRoot)
    let peerStart = now()
    for i in 0..<20_000 { writeFile(peerRoot + "/bench/f\(i).txt", "file \(i)\n") }
    let peerDone = peer.time(of: peerRoot + "/bench/f19999.txt")
    peer.stop()
    row("20,000-file burst: writing took", String(format: "%.2f s", written - start), "", "")
    row("20,000-file burst → last one handled", String(format: "%.2f s", done - start), String(format: "%.2f s", peerDone - peerStart),
        String(format: "%.1f×", (done - start) / (peerDone - peerStart)))
}

// Memory and start-up with 100,000 files in 5,000 folders.
do {
    let root = base + "/big"
    shell("'\(relay)' init '\(root)' >/dev/null")
    for d in 0..<5_000 {
        let folder = root + "/bench/d\(d / 100)/d\(d)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for f in 0..<20 { writeFile(folder + "/f\(f).txt", "folder \(d) file \(f)\n") }
    }
    var start = now()
    let first = Daemon(root: root, initialise: false)
    let firstStart = now() - start
    let relayKiB = residentKiB(first.process.processIdentifier)
    first.stop()
    start = now()
    let second = Daemon(root: root, initialise: false)
    let restart = now() - start
    second.stop()

    start = now()
    let peer = Peer(root: root)
    let peerStart = now() - start
    let peerKiB = residentKiB(peer.process.processIdentifier)
    peer.stop()
    row("100,000 files: first start (index built)", String(format: "%.2f s", firstStart), String(format: "%.2f s", peerStart),
        String(format: "%.1f×", firstStart / peerStart))
    row("100,000 files: restart (index reused)", String(format: "%.2f s", restart), "", String(format: "%.1f×", restart / peerStart))
    row("100,000 files: resident memory", "\(relayKiB / 1024) MiB", "\(peerKiB / 1024) MiB",
        String(format: "%.1f×", Double(relayKiB) / Double(max(peerKiB, 1))))
}
