// relay-bench: `make bench`. Prints what Relay's primitives cost next to the plain system
// calls a program would otherwise make, measured in the same run on the same disk, as ratios.
// Nothing here is asserted; the figures go in closing notes and docs/modules/WorkspaceCore.md.

import Foundation
import Glibc
import WorkspaceCore

let fileSize = 4096
let count = Int(ProcessInfo.processInfo.environment["RELAY_BENCH_FILES"] ?? "") ?? 1000
let payload = [UInt8]((0..<fileSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
let base = (ProcessInfo.processInfo.environment["RELAY_BENCH_DIR"] ?? FileManager.default.temporaryDirectory.path)
    + "/relay-bench-" + UUID().uuidString
try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: base) }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func check(_ result: Int32, _ what: String) {
    if result < 0 { fatalError("\(what): errno \(errno)") }
}

/// The baseline: open, write, (fsync), close. Not atomic: a reader or a crash can see half.
func plainWrite(_ path: String, durable: Bool) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    check(fd, "open")
    payload.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
    if durable { check(fsync(fd), "fsync") }
    close(fd)
}

/// The textbook atomic write: temp, write, fsync, rename, fsync the folder.
func plainAtomicWrite(_ folder: String, _ name: String, durable: Bool) {
    let temporary = folder + "/." + name + ".tmp"
    plainWrite(temporary, durable: durable)
    check(rename(temporary, folder + "/" + name), "rename")
    if durable {
        let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        check(fsync(dir), "fsync dir")
        close(dir)
    }
}

func workspace(_ name: String, durable: Bool) throws -> Workspace {
    var (workspace, _) = try Workspace.initialize(at: base + "/" + name, template: WorkspaceTemplate(files: []))
    workspace.durable = durable
    return workspace
}

func row(_ label: String, _ time: Double, operations: Int, baseline: Double?) {
    let perSecond = Double(operations) / time
    let ratio = baseline.map { String(format: "%6.2f×", time / $0) } ?? "   1.00×"
    let padded = label.padding(toLength: 56, withPad: " ", startingAt: 0)
    print("  " + padded + String(format: " %9.0f/s  %8.1f µs  ", perSecond, time / Double(operations) * 1e6) + ratio)
}

print("relay-bench: \(count) files of \(fileSize) bytes in \(base)")
print("  (time ratio against the first line of each group: lower is better)\n")

for durable in [true, false] {
    print(durable ? "Durable writes (fsync)" : "Writes without fsync")
    let plainFolder = base + "/plain-\(durable)"
    try FileManager.default.createDirectory(atPath: plainFolder, withIntermediateDirectories: true)
    let plain = seconds { for i in 0..<count { plainWrite(plainFolder + "/f\(i)", durable: durable) } }
    row("plain write\(durable ? "+fsync" : "") (not atomic)", plain, operations: count, baseline: nil)
    let atomicFolder = base + "/atomic-\(durable)"
    try FileManager.default.createDirectory(atPath: atomicFolder, withIntermediateDirectories: true)
    let atomic = seconds { for i in 0..<count { plainAtomicWrite(atomicFolder, "f\(i)", durable: durable) } }
    row("plain temp+rename\(durable ? "+fsync file and folder" : "")", atomic, operations: count, baseline: plain)
    let ws = try workspace("relay-\(durable)", durable: durable)
    let create = try seconds { for i in 0..<count { try ws.write("f\(i)", bytes: payload) } }
    row("relay write, new files (lock, exchange)", create, operations: count, baseline: plain)
    let replace = try seconds { for i in 0..<count { try ws.write("f\(i)", bytes: payload.reversed()) } }
    row("relay write, replacing (+ keep old version)", replace, operations: count, baseline: plain)
    let update = try seconds { for i in 0..<count { try ws.update("f\(i)") { old in (old ?? []).reversed() } } }
    row("relay update (read, check, swap, keep old)", update, operations: count, baseline: plain)
    print("")
}

print("Appends of one 100-byte line")
let line = [UInt8](repeating: 97, count: 99) + [10]
let appendFile = base + "/plain-append.log"
let appendFD = open(appendFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
let plainAppend = seconds {
    for _ in 0..<count { line.withUnsafeBytes { _ = write(appendFD, $0.baseAddress, $0.count) }; fsync(appendFD) }
}
close(appendFD)
row("plain O_APPEND write+fsync (fd kept open)", plainAppend, operations: count, baseline: nil)
let appendWorkspace = try workspace("append", durable: true)
let relayAppend = try seconds { for _ in 0..<count { try appendWorkspace.append("log.md", bytes: line) } }
row("relay append (lock, torn-tail record, fsync)", relayAppend, operations: count, baseline: plainAppend)
print("")

print("Lock acquire + release")
let lockCount = count * 20
let lockFile = base + "/plain.lock"
let lockFD = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
let plainFlock = seconds { for _ in 0..<lockCount { flock(lockFD, LOCK_EX); flock(lockFD, LOCK_UN) } }
close(lockFD)
row("flock on an open fd", plainFlock, operations: lockCount, baseline: nil)
let openFlock = seconds {
    for _ in 0..<lockCount {
        let fd = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        flock(fd, LOCK_EX); flock(fd, LOCK_UN); close(fd)
    }
}
row("open + flock + close", openFlock, operations: lockCount, baseline: plainFlock)
let lockWorkspace = try workspace("locks", durable: true)
let relayLock = try seconds { for _ in 0..<lockCount { try lockWorkspace.withLock("context.md") {} } }
row("relay withLock (resolve path, OFD lock, recovery check)", relayLock, operations: lockCount, baseline: plainFlock)
