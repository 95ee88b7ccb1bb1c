import Foundation
import RelayTestKit
import Testing

/// The `relay` binary as a person or a script uses it: exit statuses (0 ok, 1 failed, 2 bad
/// usage or configuration), clear messages, and help with examples.
@Suite("The relay command line")
struct CommandLineTests {
    @Test func writeReadAppendAndListRoundTrip() throws {
        let s = try ScratchWorkspace.relayInit()
        #expect(try s.relay(["fs", "write", "-w", s.root, "Research/llamas/summary.md"], input: "# Llamas\n").status == 0)
        #expect(try s.relay(["fs", "read", "-w", s.root, "Research/llamas/summary.md"]).text == "# Llamas\n")
        #expect(try s.relay(["fs", "append", "-w", s.root, "Journal/user/2026-11-22.md"], input: "- one").status == 0)
        #expect(try s.relay(["fs", "append", "-w", s.root, "Journal/user/2026-11-22.md"], input: "- two\n").status == 0)
        #expect(s.contents("Journal/user/2026-11-22.md") == "- one\n- two\n")
        let listing = try s.relay(["fs", "ls", "-w", s.root, "-r", "Research"]).text
        #expect(listing.contains("Research/llamas/summary.md") && !listing.contains(".relay"))
    }

    @Test func binaryContentPassesThroughUnchanged() throws {
        let s = try ScratchWorkspace.relayInit()
        let bytes = Data((0...255).map { UInt8($0) } + [0xC3, 0x28, 0x00])
        #expect(try run(Binaries.relay, ["fs", "write", "-w", s.root, "blob.bin"], input: bytes).status == 0)
        #expect(try s.relay(["fs", "read", "-w", s.root, "blob.bin"]).standardOutput == bytes)
    }

    @Test func theWorkspaceIsFoundFromASubfolderAndFromTheEnvironment() throws {
        let s = try ScratchWorkspace.relayInit()
        let fromSubfolder = try run(Binaries.relay, ["fs", "read", "context.md"], in: s.path("Journal/user"))
        #expect(fromSubfolder.status == 0 && fromSubfolder.text == s.contents("context.md"))
        let fromEnvironment = try run(Binaries.relay, ["status"], environment: ["RELAY_WORKSPACE": s.root], in: "/")
        #expect(fromEnvironment.status == 0 && fromEnvironment.text.contains(s.root))
    }

    /// A sync index that is not a database (a disk error, a bad restore): exit 1 with one line
    /// that names the file, and the peer is left as it was.
    @Test func aCorruptSyncIndexExitsWith1NamingTheFileAndTheOtherSideIsUntouched() throws {
        let a = try ScratchWorkspace.relayInit(), b = try ScratchWorkspace.relayInit()
        #expect(try run(Binaries.relay, ["sync", "-w", a.root, b.root]).status == 0)
        try a.write("notes.md", "new on A\n")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: a.path(".relay/sync.sqlite" + suffix)) }
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: a.path(".relay/sync.sqlite")))
        let before = try FileManager.default.subpathsOfDirectory(atPath: b.root).sorted()
        let result = try run(Binaries.relay, ["sync", "-w", a.root, b.root])
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("relay: error: ") && result.standardError.contains(a.path(".relay/sync.sqlite")), "\(result.standardError)")
        #expect(result.standardError.contains("not a database"), "\(result.standardError)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: b.root).sorted() == before)
        #expect(b.contents("notes.md") == nil)
    }

    @Test func aMissingWorkspaceExitsWith2AndSaysWhatToDo() throws {
        let s = try ScratchWorkspace.relayInit()
        let missing = try s.relay(["status", "-w", s.base + "/nowhere"])
        #expect(missing.status == 2 && missing.standardError.contains("no such folder"))
        let notInitialised = try s.relay(["status", "-w", s.base])
        #expect(notInitialised.status == 2 && notInitialised.standardError.contains("relay init"))
    }

    @Test func aFileWhereAFolderIsExpectedExitsWith2() throws {
        let s = try ScratchWorkspace.relayInit()
        let fileAsWorkspace = try s.relay(["status", "-w", s.path("context.md")])
        #expect(fileAsWorkspace.status == 2 && fileAsWorkspace.standardError.contains("is a file, not a folder"))
        let fileAsFolder = try s.relay(["fs", "write", "-w", s.root, "context.md/inner.md"], input: "x")
        #expect(fileAsFolder.status == 2 && fileAsFolder.standardError.contains("'context.md' is a file where a folder is expected"))
    }

    @Test func refusedPathsExitWith2NameTheRuleAndChangeNothing() throws {
        let s = try ScratchWorkspace.relayInit()
        let before = try FileManager.default.contentsOfDirectory(atPath: s.base).sorted()
        for (path, rule) in [("../evil.md", "'..' would leave"), ("/etc/passwd", "absolute paths"), (".relay/replica-id", ".relay/ holds")] {
            let result = try s.relay(["fs", "write", "-w", s.root, path], input: "evil")
            #expect(result.status == 2 && result.standardError.contains(rule), "\(path): \(result.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.base).sorted() == before)
        #expect(try String(contentsOfFile: s.path(".relay/replica-id"), encoding: .utf8).count == 17)
    }

    @Test func badUsageExitsWith2() throws {
        let s = try ScratchWorkspace.relayInit()
        #expect(try s.relay(["fs", "frobnicate"]).status == 2)
        #expect(try s.relay(["fs", "update", "-w", s.root, "x.md"]).status == 2)
        #expect(try s.relay(["fs", "write", "-w", s.root, "--lock-timeout", "-1", "x.md"]).status == 2)
    }

    @Test func aFailingUpdateFilterExits1AndChangesNothing() throws {
        let s = try ScratchWorkspace.relayInit()
        try "keep\n".write(toFile: s.path("k.md"), atomically: false, encoding: .utf8)
        let result = try s.relay(["fs", "update", "-w", s.root, "k.md", "--", "sh", "-c", "echo oops >&2; exit 3"])
        #expect(result.status == 1 && result.standardError.contains("the file was not changed") && result.standardError.contains("oops"), "\(result.status) \(result.standardError)")
        #expect(s.contents("k.md") == "keep\n")
    }

    @Test func aLockHeldByAnotherProcessTimesOutNamingTheFile() throws {
        let s = try ScratchWorkspace.relayInit()
        let original = s.contents("context.md")
        let holder = try holdLock(s, "context.md")
        defer { killHard(holder) }
        let clock = ContinuousClock()
        let started = clock.now
        let blocked = try s.relay(["fs", "write", "-w", s.root, "--lock-timeout", "0.5", "context.md"], input: "new")
        let waited = clock.now - started
        #expect(blocked.status == 1)
        #expect(blocked.standardError.contains("context.md: another writer has held the lock for more than 0.5 s"))
        // It waited out its timeout (a lower bound no load can break), and gave up while the
        // holder still held the lock: not by a clock, by the order of events.
        #expect(waited >= .milliseconds(500))
        #expect(holder.isRunning, "the writer waited for the holder to let go")
        #expect(s.contents("context.md") == original)
    }

    @Test func aLockIsReleasedByTheKernelWhenItsHolderIsKilled() throws {
        let s = try ScratchWorkspace.relayInit()
        let holder = try holdLock(s, "context.md")
        killHard(holder)
        let write = try s.relay(["fs", "write", "-w", s.root, "--lock-timeout", "5", "context.md"], input: "after\n")
        #expect(write.status == 0 && s.contents("context.md") == "after\n")
    }

    @Test func historyAndRestoreBringBackAReplacedVersion() throws {
        let s = try ScratchWorkspace.relayInit()
        _ = try s.relay(["fs", "write", "-w", s.root, "notes.md"], input: "first\n")
        _ = try s.relay(["fs", "write", "-w", s.root, "notes.md"], input: "second\n")
        let history = try s.relay(["fs", "history", "-w", s.root, "notes.md", "--json"])
        let records = history.text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let replaced = try #require(records.last?["replaced"] as? String)
        let restore = try s.relay(["fs", "restore", "-w", s.root, "notes.md", String(replaced.prefix(10))])
        #expect(restore.status == 0 && s.contents("notes.md") == "first\n")
        let unknown = try s.relay(["fs", "restore", "-w", s.root, "notes.md", "ffffff"])
        #expect(unknown.status == 1 && unknown.standardError.contains("no stored version starts with 'ffffff'"))
    }

    @Test func initTwiceKeepsEverythingAndSaysSo() throws {
        let s = try ScratchWorkspace.relayInit()
        try "mine\n".write(toFile: s.path("context.md"), atomically: false, encoding: .utf8)
        let again = try run(Binaries.relay, ["init", s.root])
        #expect(again.status == 0 && again.text.contains("context.md (already there, kept)"))
        #expect(s.contents("context.md") == "mine\n")
    }

    @Test func statusJSONReportsReplicaAndCounts() throws {
        let s = try ScratchWorkspace.relayInit()
        let status = try s.relay(["status", "-w", s.root, "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: status.standardOutput) as? [String: Any])
        let object = try #require(root["workspace"] as? [String: Any])
        #expect((object["replicaID"] as? String)?.count == 16)
        #expect((object["files"] as? Int ?? 0) >= 8)
        let watcher = try #require(root["watcher"] as? [String: Any])
        #expect(watcher["running"] as? Bool == false)
    }
}

/// Help output is part of the interface: pinned here, with an example in every command.
@Suite("relay --help")
struct HelpTests {
    static let commands: [[String]] = [
        [], ["init"], ["status"], ["watch"], ["sync"], ["conflicts"], ["fs"], ["fs", "write"], ["fs", "append"], ["fs", "read"], ["fs", "ls"],
        ["fs", "update"], ["fs", "lock"], ["fs", "history"], ["fs", "restore"], ["doctor"],
        ["ask"], ["agents"], ["runs"], ["resume"], ["replay"], ["serve"], ["service"], ["service", "install"], ["mcp"], ["gc"],
    ]

    @Test(arguments: commands)
    func everyCommandHasHelpWithAnExample(command: [String]) throws {
        let help = try run(Binaries.relay, command + ["--help"])
        #expect(help.status == 0)
        #expect(help.text.contains("Examples:"), "\(command) --help has no examples")
        #expect(help.text.contains("USAGE: relay"))
    }

    /// Every command's whole `--help`, word for word, against `Tests/Help/NAME.txt` — found by
    /// walking the SUBCOMMANDS lists, so a new command without a pinned help fails too. After a
    /// deliberate change: `RELAY_UPDATE_HELP=1 swift test --filter HelpTests`, then read the diff.
    @Test func everyCommandsWholeHelpIsPinned() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Help"
        let updating = ProcessInfo.processInfo.environment["RELAY_UPDATE_HELP"] == "1"
        var pending: [[String]] = [[]], seen: [String] = []
        while let command = pending.popLast() {
            let help = try run(Binaries.relay, command + ["--help"], environment: ["COLUMNS": "80"])
            #expect(help.status == 0, "\(command) --help")
            let name = (["relay"] + command).joined(separator: "-")
            seen.append(name)
            let file = folder + "/" + name + ".txt"
            if updating {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try help.text.write(toFile: file, atomically: true, encoding: .utf8)
            } else {
                let pinned = try? String(contentsOfFile: file, encoding: .utf8)
                #expect(pinned != nil, "no pinned help for `\((["relay"] + command).joined(separator: " "))` in Tests/Help/\(name).txt")
                if let pinned { #expect(help.text == pinned, "`\((["relay"] + command).joined(separator: " ")) --help` differs from Tests/Help/\(name).txt") }
            }
            // The subcommands: the first word of each two-space-indented line under SUBCOMMANDS.
            if let section = help.text.range(of: "SUBCOMMANDS:\n") {
                for line in help.text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
                    guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first,
                          !line.contains("See 'relay help") else { continue }
                    if word != "help" { pending.append(command + [String(word)]) }
                }
            }
        }
        // Nothing pinned for a command that is gone.
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".txt") }
        #expect(Set(files.map { String($0.dropLast(4)) }) == Set(seen), "pinned help files without a command, or commands without one")
        #expect(seen.count >= 24)
    }

    @Test func rootHelpListsTheCommands() throws {
        let help = try run(Binaries.relay, ["--help"]).text
        #expect(help.contains("OVERVIEW: Run agents on a folder of plain files, and keep the folder safe."))
        for line in ["  init ", "  status ", "  fs "] { #expect(help.contains(line)) }
    }

    @Test func serveHelpIsPinned() throws {
        let help = try run(Binaries.relay, ["serve", "--help"]).text
        #expect(help.contains("OVERVIEW: Run the daemon with the HTTP API (relay watch --http)."))
        #expect(help.contains("USAGE: relay serve [--workspace <dir>] [--lock-timeout <seconds>] [--http <[addr:]port>] [--max-body-bytes <bytes>] [--max-upload-bytes <bytes>] [--new-token]"), "\(help)")
        #expect(try run(Binaries.relay, ["watch", "--help"]).text.contains("--http <[addr:]port>"))
    }

    @Test func fsWriteHelpIsPinned() throws {
        let help = try run(Binaries.relay, ["fs", "write", "--help"]).text
        #expect(help.contains("OVERVIEW: Replace a file with standard input, atomically."))
        #expect(help.contains("USAGE: relay fs write [--workspace <dir>] [--lock-timeout <seconds>] <path> [--no-durable] [--json]"))
        #expect(help.contains("-w, --workspace <dir>"))
        #expect(help.contains("--no-durable"))
    }
}

/// Starts `relay fs lock PATH -- COMMAND` and returns once it holds the lock: the command runs
/// only while the lock is held, and the mark it leaves first is the event. `relay status` then
/// shows the lock.
func holdLock(_ s: ScratchWorkspace, _ path: String) throws -> Process {
    let mark = s.base + "/locked-" + UUID().uuidString
    let holder = try spawn(Binaries.relay, ["fs", "lock", "-w", s.root, path, "--", "/bin/sh", "-c", "touch '\(mark)'; exec sleep 30"])
    try FileEvents.wait(under: [s.base], endingWith: holder, "relay fs lock to hold \(path)") {
        FileManager.default.fileExists(atPath: mark) ? () : nil
    }
    #expect(try s.relay(["status", "-w", s.root]).text.contains("Locks      \(path)"))
    return holder
}
