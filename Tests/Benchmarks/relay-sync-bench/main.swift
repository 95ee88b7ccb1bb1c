// relay-sync-bench: `relay sync` next to rsync (one-way) and Unison (two-way, warm archive) on the
// same trees in the same run. 10,000 files (~60 MB, nested folders, Markdown/JSON/binary), a
// change set of 100 modified + 50 new + 20 deleted, and a no-change sync; medians of 7 rounds
// (RELAY_SYNC_BENCH_ROUNDS=N for another number: over ssh the tools differ by a few percent, and
// the machine's noise is more than that in any one round). Over ssh the three tools take turns
// at going first, and each round's relay/Unison ratio is printed too. The disk is flushed before
// each timed command (`timed`).
// Needs the release `relay` next to this binary, rsync and unison on PATH (Debian packages).
// RELAY_SYNC_BENCH_FILES=100000 runs the same at 100,000 files (~600 MB a tree; opt-in: the
// trees take minutes to make); RELAY_SYNC_BENCH_KEEP=1 keeps the trees and prints where they
// are, for `perf record` of one `relay sync` of them.
// The first sync of a whole tree is timed RELAY_SYNC_BENCH_FIRST_ROUNDS times (default 3), each
// time on new trees (a source never synced, so relay hashes it from scratch, and an empty
// target), the tools taking turns at going first, the disk flushed before each; medians.
// RELAY_SYNC_BENCH_ONLY=first runs only those rounds (`make bench-first-sync FILES=100000 ROUNDS=1`
// for the first sync alone at 100,000 files).

import Foundation
import Glibc

// Absolute: the ssh rows run it at the other end of ssh, from the home folder.
let binFolder = URL(fileURLWithPath: (CommandLine.arguments[0] as NSString).deletingLastPathComponent,
                    relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/")).standardizedFileURL.path
let relay = binFolder + "/relay"
let base = FileManager.default.temporaryDirectory.path + "/relay-sync-bench-" + UUID().uuidString
let environment = ProcessInfo.processInfo.environment
let fileCount = Int(environment["RELAY_SYNC_BENCH_FILES"] ?? environment["RELAY_BENCH_SYNC_FILES"] ?? "") ?? 10_000
let rounds = max(1, Int(environment["RELAY_SYNC_BENCH_ROUNDS"] ?? "") ?? 7)
let keep = environment["RELAY_SYNC_BENCH_KEEP"] == "1"
let firstRounds = max(1, Int(environment["RELAY_SYNC_BENCH_FIRST_ROUNDS"] ?? "") ?? 3)
let onlyFirst = environment["RELAY_SYNC_BENCH_ONLY"] == "first"
defer { if keep { print("trees kept in \(base)") } else { try? FileManager.default.removeItem(atPath: base) } }
/// The largest resident set of any process a timed command ran (`relay`'s, the peer's too).
nonisolated(unsafe) var peakKilobytes: [String: Int] = [:]

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Runs `command` with /bin/sh, standard output to /dev/null, and waits with waitpid:
/// Foundation's Process notices a child's exit only on its run loop's next turn (up to ~50 ms
/// late), which blurs sub-second timings.
@discardableResult
func sh(_ command: String, environment: [String: String] = [:], peak: String? = nil) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
    let argv: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (word: String) in strdup(word) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = variables.map { (word: String) in strdup(word) } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp) == 0 else { fatalError("cannot run /bin/sh") }
    var status: Int32 = 0
    var usage = rusage()
    // wait4's usage covers the child and every descendant it waited for (the peer's relay).
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    if let peak { peakKilobytes[peak] = max(peakKilobytes[peak] ?? 0, usage.ru_maxrss) }
    let exitStatus = (status >> 8) & 0xff
    if exitStatus != 0 { FileHandle.standardError.write(Data("failed (\(exitStatus)): \(command)\n".utf8)) }
    return exitStatus
}

/// Times `command`, after flushing what is still unwritten to the disk: the change sets this
/// bench just wrote and the previous command's copies. Relay makes its writes durable with one
/// `syncfs` of the file system, which writes out every dirty page on it, its own or not; rsync
/// and Unison do not flush at all. Without this, whichever Relay run came first after the
/// change sets paid for writing out all seven trees' changes (and a Relay run after rsync's,
/// for rsync's copies) — a cost of the harness, not of the tool timed. On a busy machine that
/// cost is real for Relay; see docs/modules/WorkspaceSync.md.
func timed(_ command: String, environment: [String: String] = [:], peak: String? = nil) -> Double {
    sync()
    let start = now()
    sh(command, environment: environment, peak: peak)
    return now() - start
}

func bytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var words = (0..<(count + 7) / 8).map { _ in generator.next() as UInt64 }
    return Data(bytes: &words, count: count)
}
func text(_ count: Int, seed: Int) -> Data {
    let words = ["llama", "alpaca", "relay", "agent", "context", "journal", "research", "notes", "sync", "merge"]
    var result = ""
    // utf8.count is O(1) where count walks the string; the text is ASCII, so they are equal.
    while result.utf8.count < count { result += words[(result.utf8.count + seed) % words.count] + ((result.utf8.count % 9 == 0) ? "\n" : " ") }
    return Data(result.utf8)
}

func path(_ i: Int) -> String {
    let ext = ["md", "md", "md", "json", "bin"][i % 5]
    return "d\(i % 50)/e\(i % 7)/file\(i).\(ext)"
}

func content(_ i: Int, version: Int) -> Data {
    let size = 2_000 + (i * 7919 + version * 31) % 8_000
    switch i % 5 {
    case 3: return Data("{\"id\": \(i), \"version\": \(version), \"notes\": \"".utf8) + text(size, seed: i + version) + Data("\"}".utf8)
    case 4: return bytes(size)
    default: return text(size, seed: i + version)
    }
}

func populate(_ root: String) throws {
    for i in 0..<fileCount {
        let file = root + "/" + path(i)
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try content(i, version: 0).write(to: URL(fileURLWithPath: file))
    }
}

/// The same change set on a source tree: 100 modified, 50 new, 20 deleted.
func change(_ root: String, round: Int) throws {
    for k in 0..<100 {
        let i = (round * 997 + k * 37) % fileCount
        try content(i, version: round + 1).write(to: URL(fileURLWithPath: root + "/" + path(i)))
    }
    for k in 0..<50 {
        let file = root + "/new/r\(round)/n\(k).md"
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text(3_000, seed: k).write(to: URL(fileURLWithPath: file))
    }
    for k in 0..<20 { unlink(root + "/" + path((round * 499 + k * 53 + 11) % fileCount)) }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// One round of first syncs on new trees in `base/first-N`: relay between two `relay init`
/// replicas (the source holding the tree), relay into a missing folder (`relay sync` starts a
/// replica there), rsync into a missing folder and Unison into an empty one. The tools take
/// turns at going first; each is timed after a flush of the disk (`timed`).
func firstSyncRound(_ round: Int) throws -> [String: Double] {
    let folder = base + "/first-\(round)"
    sh("'\(relay)' init '\(folder)/ra' && '\(relay)' init '\(folder)/rb' && '\(relay)' init '\(folder)/na'")
    for root in ["ra", "na", "sa", "ua"] { try populate(folder + "/" + root) }
    try FileManager.default.createDirectory(atPath: folder + "/ub", withIntermediateDirectories: true)
    let commands: [(key: String, command: String, environment: [String: String])] = [
        ("relay", "'\(relay)' sync -w '\(folder)/ra' '\(folder)/rb'", [:]),
        ("relay-new", "'\(relay)' sync -w '\(folder)/na' '\(folder)/nb'", [:]),
        ("rsync", "rsync -a --delete '\(folder)/sa/' '\(folder)/sb/'", [:]),
        ("unison", "unison '\(folder)/ua' '\(folder)/ub' -batch -auto -silent -confirmbigdel=false -perms 0",
         ["UNISON": folder + "/unison-archive"]),
    ]
    var times: [String: Double] = [:]
    for index in 0..<commands.count {
        let (key, command, variables) = commands[(index + round) % commands.count]
        times[key] = timed(command, environment: variables, peak: key.hasPrefix("relay") ? "first sync" : nil)
    }
    if !keep { try? FileManager.default.removeItem(atPath: folder) }
    return times
}

/// The first-sync rounds and their medians, as ratios within the same run.
func firstSyncs() throws {
    var times: [String: [Double]] = [:]
    for round in 0..<firstRounds {
        for (key, value) in try firstSyncRound(round) { times[key, default: []].append(value) }
    }
    let rsync = median(times["rsync"]!), unison = median(times["unison"]!)
    print("  first sync of the whole tree (median of \(firstRounds) rounds, each on new trees):")
    for (label, key) in [("rsync -a --delete (one-way)", "rsync"), ("unison -batch -auto (two-way)", "unison"),
                         ("relay sync, two relay init replicas", "relay"), ("relay sync into a missing folder", "relay-new")] {
        row(label, median(times[key]!), against: rsync, unison)
    }
    for key in ["relay", "relay-new"] {
        let ratios = zip(times[key]!, times["unison"]!).map { $0 / $1 }
        print("  \(key == "relay" ? "relay" : "relay into a missing folder")/Unison round by round: " + ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")
              + "; /rsync: " + zip(times[key]!, times["rsync"]!).map { String(format: "%.2f", $0 / $1) }.joined(separator: " "))
    }
}

try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
print("relay-sync-bench: \(fileCount) files, change set 100 modified + 50 new + 20 deleted, median of \(rounds) rounds")
try firstSyncs()
if onlyFirst {
    print("  relay's peak resident set, first sync: \((peakKilobytes["first sync"] ?? 0) / 1024) MB")
    exit(0)
}

// Relay, local path and the protocol through a pipe (ssh's place taken by sh, no network).
sh("'\(relay)' init '\(base)/ra' && '\(relay)' init '\(base)/rb' && '\(relay)' init '\(base)/pa' && '\(relay)' init '\(base)/pb'")
for root in ["ra", "pa"] { try populate(base + "/" + root) }
let fakeSSH = base + "/fake-ssh"
try "#!/bin/sh\nshift\nexec sh -c \"$1\"\n".write(toFile: fakeSSH, atomically: true, encoding: .utf8)
chmod(fakeSSH, 0o755)
let pipeEnvironment = ["RELAY_SSH": fakeSSH]
var start = now()
sh("'\(relay)' sync -w '\(base)/ra' '\(base)/rb'", peak: "first sync")
let relayInitial = now() - start
sh("'\(relay)' sync -w '\(base)/pa' --remote-relay '\(relay)' 'box:\(base)/pb'", environment: pipeEnvironment, peak: "first sync")

// rsync one way, Unison two ways with its archive in a folder of its own.
try populate(base + "/sa")
start = now()
sh("rsync -a --delete '\(base)/sa/' '\(base)/sb/'")
let rsyncInitial = now() - start
try populate(base + "/ua")
try FileManager.default.createDirectory(atPath: base + "/ub", withIntermediateDirectories: true)
let unisonEnvironment = ["UNISON": base + "/unison-archive"]
let unison = "unison '\(base)/ua' '\(base)/ub' -batch -auto -silent -confirmbigdel=false -perms 0"
start = now()
sh(unison, environment: unisonEnvironment)
let unisonInitial = now() - start

// The same three over a real ssh to a real sshd on loopback (its own keys and port): relay
// through `relay sync-serve` at the other end, rsync with `-e ssh`, Unison with a server
// started over ssh. No network latency, but the ssh processes, encryption and framing that
// a user's sync between two machines pays. Skipped, saying why, where sshd is missing.
let ssh = LoopbackSSH.start(in: base)
var sshEnvironment: [String: String] = [:]
var sshCommands: [String: String] = [:]
if let ssh {
    sshEnvironment = ["RELAY_SSH": ssh.command, "UNISON": base + "/unison-archive-ssh"]
    sh("'\(relay)' init '\(base)/xa' && '\(relay)' init '\(base)/xb'")
    for root in ["xa", "ya", "za"] { try populate(base + "/" + root) }
    try FileManager.default.createDirectory(atPath: base + "/zb", withIntermediateDirectories: true)
    sshCommands = [
        "relay-ssh": "'\(relay)' sync -w '\(base)/xa' --remote-relay '\(relay)' '\(ssh.user)@127.0.0.1:\(base)/xb'",
        "rsync-ssh": "rsync -a --delete -e '\(ssh.command)' '\(base)/ya/' '\(ssh.user)@127.0.0.1:\(base)/yb/'",
        "unison-ssh": "unison '\(base)/za' 'ssh://\(ssh.user)@127.0.0.1/\(base)/zb' -sshargs '\(ssh.options)' -servercmd \"$(command -v unison)\""
            + " -batch -auto -silent -confirmbigdel=false -perms 0",
    ]
    for key in ["relay-ssh", "rsync-ssh", "unison-ssh"] { sh(sshCommands[key]!, environment: sshEnvironment) }
}

var results: [String: [Double]] = [:]
for round in 0..<rounds {
    for root in ["ra", "pa", "sa", "ua"] + (ssh == nil ? [] : ["xa", "ya", "za"]) { try change(base + "/" + root, round: round) }
    results["relay", default: []].append(timed("'\(relay)' sync -w '\(base)/ra' '\(base)/rb'", peak: "change set"))
    results["relay-pipe", default: []].append(timed("'\(relay)' sync -w '\(base)/pa' --remote-relay '\(relay)' 'box:\(base)/pb'", environment: pipeEnvironment, peak: "change set"))
    results["rsync", default: []].append(timed("rsync -a --delete '\(base)/sa/' '\(base)/sb/'"))
    results["unison", default: []].append(timed(unison, environment: unisonEnvironment))
    results["relay-none", default: []].append(timed("'\(relay)' sync -w '\(base)/ra' '\(base)/rb'", peak: "no change"))
    results["relay-pipe-none", default: []].append(timed("'\(relay)' sync -w '\(base)/pa' --remote-relay '\(relay)' 'box:\(base)/pb'", environment: pipeEnvironment, peak: "no change"))
    results["rsync-none", default: []].append(timed("rsync -a --delete '\(base)/sa/' '\(base)/sb/'"))
    results["unison-none", default: []].append(timed(unison, environment: unisonEnvironment))
    if ssh != nil {
        // Each tool goes first in turn: the first after the change set is written may meet a
        // busier disk.
        let tools = ["relay-ssh", "rsync-ssh", "unison-ssh"]
        let order = Array(tools[(round % 3)...] + tools[..<(round % 3)])
        for key in order {
            results[key, default: []].append(timed(sshCommands[key]!, environment: sshEnvironment))
        }
        for key in order {
            results[key + "-none", default: []].append(timed(sshCommands[key]!, environment: sshEnvironment))
        }
    }
}

func row(_ label: String, _ value: Double, against rsync: Double, _ unison: Double) {
    print("  " + label.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%7.2f s   %5.2f× rsync   %5.2f× unison", value, value / rsync, value / unison))
}
print("  first sync of the whole tree, once, setting up the rounds below (not flushed before): relay \(String(format: "%.2f", relayInitial)) s, rsync \(String(format: "%.2f", rsyncInitial)) s, unison \(String(format: "%.2f", unisonInitial)) s")
print("  change set:")
for (label, key) in [("rsync -a --delete (one-way)", "rsync"), ("unison -batch -auto (two-way)", "unison"),
                     ("relay sync, local folder (two-way)", "relay"), ("relay sync, protocol over a pipe", "relay-pipe")] {
    row(label, median(results[key]!), against: median(results["rsync"]!), median(results["unison"]!))
}
print("  no change:")
for (label, key) in [("rsync", "rsync-none"), ("unison", "unison-none"), ("relay sync, local folder", "relay-none"), ("relay sync, protocol over a pipe", "relay-pipe-none")] {
    row(label, median(results[key]!), against: median(results["rsync-none"]!), median(results["unison-none"]!))
}
if ssh != nil {
    print("  over ssh to sshd on loopback, change set:")
    for (label, key) in [("rsync -a --delete -e ssh (one-way)", "rsync-ssh"), ("unison ssh:// (two-way)", "unison-ssh"), ("relay sync user@host:path (two-way)", "relay-ssh")] {
        row(label, median(results[key]!), against: median(results["rsync-ssh"]!), median(results["unison-ssh"]!))
    }
    print("  over ssh to sshd on loopback, no change:")
    for (label, key) in [("rsync -e ssh", "rsync-ssh-none"), ("unison ssh://", "unison-ssh-none"), ("relay sync user@host:path", "relay-ssh-none")] {
        row(label, median(results[key]!), against: median(results["rsync-ssh-none"]!), median(results["unison-ssh-none"]!))
    }
    // Round by round: relay and Unison ran one after the other on the same change set.
    for (label, suffix) in [("change set", ""), ("no change", "-none")] {
        let ratios = zip(results["relay-ssh" + suffix]!, results["unison-ssh" + suffix]!).map { $0 / $1 }
        print("  over ssh, relay/Unison round by round, \(label): " + ratios.map { String(format: "%.2f", $0) }.joined(separator: " ")
              + String(format: " (median %.2f, under 1 in %d of %d)", median(ratios), ratios.filter { $0 < 1 }.count, ratios.count))
    }
}
ssh?.stop()
print("  relay's peak resident set (either process): " + ["first sync", "change set", "no change"].map { "\($0) \((peakKilobytes[$0] ?? 0) / 1024) MB" }.joined(separator: ", "))
