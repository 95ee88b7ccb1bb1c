import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
import WorkspaceSync

/// `relay sync` between processes: the framed protocol over a real ssh to a real sshd on
/// loopback, and against a hostile peer.
@Suite("relay sync over ssh and against a hostile peer", .serialized)
struct SyncTransportTests {
    /// A stand-in for ssh that runs the remote command locally: `fake-ssh HOST COMMAND`.
    static func fakeSSH(in folder: String, running command: String? = nil) throws -> String {
        let script = folder + "/fake-ssh"
        let body = command.map { "exec \($0)" } ?? "shift\nexec sh -c \"$1\""
        try "#!/bin/sh\n\(body)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        return script
    }

    @Test func twoReplicasConvergeThroughSyncServe() throws {
        let here = try ScratchWorkspace.relayInit(), there = try ScratchWorkspace.relayInit()
        try "laptop\n".write(toFile: here.path("Research/laptop.md"), atomically: false, encoding: .utf8)
        try "desktop\n".write(toFile: there.path("Research/desktop.md"), atomically: false, encoding: .utf8)
        let ssh = try Self.fakeSSH(in: here.base)
        let first = try run(Binaries.relay, ["sync", "-w", here.root, "--remote-relay", Binaries.relay, "desktop:\(there.root)"],
                            environment: ["RELAY_SSH": ssh])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.text.contains("2 copied"))
        #expect(there.contents("Research/laptop.md") == "laptop\n" && here.contents("Research/desktop.md") == "desktop\n")
        // Concurrent edits of context.md merge through the protocol too.
        let context = here.contents("context.md")!
        try (context + "- from the laptop\n").write(toFile: here.path("context.md"), atomically: false, encoding: .utf8)
        try ("- from the desktop\n" + context).write(toFile: there.path("context.md"), atomically: false, encoding: .utf8)
        let second = try run(Binaries.relay, ["sync", "-w", here.root, "--json", "--remote-relay", Binaries.relay, "desktop:\(there.root)"],
                             environment: ["RELAY_SSH": ssh])
        let summary = try JSONDecoder().decode(SyncSummary.self, from: second.standardOutput)
        #expect(summary.merged == 1 && summary.conflicts == 0)
        #expect(here.contents("context.md") == there.contents("context.md"))
        #expect(here.contents("context.md")?.contains("- from the laptop\n") == true && here.contents("context.md")?.hasPrefix("- from the desktop\n") == true)
        #expect(summary.peerIndex?.whole == false, "the second sync asks only for the rows changed since the first")
        // Nothing changed: a handful of index rows travel, not the index.
        let third = try run(Binaries.relay, ["sync", "-w", here.root, "--json", "--remote-relay", Binaries.relay, "desktop:\(there.root)"],
                            environment: ["RELAY_SSH": ssh])
        let quiet = try JSONDecoder().decode(SyncSummary.self, from: third.standardOutput)
        #expect(quiet.transferred == 0 && quiet.peerIndex?.whole == false && (quiet.peerIndex?.rows ?? 99) <= 3, "\(String(describing: quiet.peerIndex))")
    }

    @Test func aHostilePeersPathsAreRefusedAndReportedAndNothingLandsOutside() throws {
        let here = try ScratchWorkspace.relayInit()
        let ssh = try Self.fakeSSH(in: here.base, running: "'\(Binaries.stress)' hostile-peer")
        let result = try run(Binaries.relay, ["sync", "-w", here.root, "--json", "mallory:/anything"], environment: ["RELAY_SSH": ssh])
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try JSONDecoder().decode(SyncSummary.self, from: result.standardOutput)
        #expect(Set(summary.refused) == ["../evil.md", "/tmp/relay-hostile-absolute.md", ".relay/replica-id", "Research/../../evil2.md", "ok/../../../evil3.md"])
        #expect(here.contents("ok.md") == "honest\n", "the honest file still syncs")
        for outside in [here.base + "/evil.md", "/tmp/relay-hostile-absolute.md", here.base + "/evil2.md", here.base + "/evil3.md"] {
            #expect(!FileManager.default.fileExists(atPath: outside), "\(outside) was written")
        }
        #expect(try String(contentsOfFile: here.path(".relay/replica-id"), encoding: .utf8) != "evil\n")
    }

    @Test func aPeerThatIsNotRelayGivesAClearError() throws {
        let here = try ScratchWorkspace.relayInit()
        let ssh = try Self.fakeSSH(in: here.base, running: "echo 'bash: relay: command not found' >&2; exit 127")
        let result = try run(Binaries.relay, ["sync", "-w", here.root, "box:notes"], environment: ["RELAY_SSH": ssh])
        #expect(result.status == 1)
        #expect(result.standardError.contains("box:notes") && result.standardError.contains("relay: command not found"), "\(result.standardError)")
    }

    /// `relay sync-serve --stdio DIR`, the form a client starts over ssh, runs without the
    /// argument parser; its errors read and exit as they did through it, and any other form
    /// still goes through the parser (usage errors, help). That it serves is shown by every
    /// sync through it here (`twoReplicasConvergeThroughSyncServe`, the real sshd below).
    @Test func syncServeAsSshStartsItFailsClearlyOnAFolderThatIsNotAWorkspace() throws {
        let here = try ScratchWorkspace.relayInit()
        let plain = here.base + "/plain"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let served = try run(Binaries.relay, ["sync-serve", "--stdio", plain])
        #expect(served.status == 2)
        #expect(served.standardError.contains("\(plain) is not a Relay workspace"), "\(served.standardError)")
        let missing = try run(Binaries.relay, ["sync-serve", "--stdio", here.base + "/missing"])
        #expect(missing.status == 2 && missing.standardError.contains("no such folder"), "\(missing.standardError)")
        let noFlag = try run(Binaries.relay, ["sync-serve", plain])
        #expect(noFlag.status == 2 && noFlag.standardError.contains("only --stdio is supported"), "\(noFlag.standardError)")
        let help = try run(Binaries.relay, ["sync-serve", "--stdio", "--help"])
        let helpText = String(decoding: help.standardOutput, as: UTF8.self)
        #expect(help.status == 0 && helpText.contains("relay sync-serve --stdio"), "\(helpText)")
    }

    static let sshd: String? = ["/usr/sbin/sshd"].first { FileManager.default.isExecutableFile(atPath: $0) && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen") }

    @Test(.enabled(if: sshd != nil, "needs sshd and ssh-keygen (Debian: openssh-server, openssh-client)"))
    func syncOverARealSSHToARealSshdOnLoopback() throws {
        let here = try ScratchWorkspace.relayInit(), there = try ScratchWorkspace.relayInit()
        let folder = here.base + "/sshd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(try run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", folder + "/host_key"]).status == 0)
        #expect(try run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", folder + "/client_key"]).status == 0)
        try FileManager.default.copyItem(atPath: folder + "/client_key.pub", toPath: folder + "/authorized_keys")
        let port = Int.random(in: 42_000...48_000)
        let user = ProcessInfo.processInfo.environment["USER"] ?? "root"
        try """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(folder)/host_key
            AuthorizedKeysFile \(folder)/authorized_keys
            PidFile \(folder)/sshd.pid
            PermitRootLogin yes
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            """.write(toFile: folder + "/sshd_config", atomically: true, encoding: .utf8)
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        // sshd daemonizes itself (a long-lived child Process confuses Foundation's child
        // monitoring on Linux); it is stopped through its pid file.
        let started = try run("/usr/sbin/sshd", ["-f", folder + "/sshd_config", "-E", folder + "/sshd.log"])
        try #require(started.status == 0, "sshd did not start: \(started.standardError)")
        defer {
            if let pid = (try? String(contentsOfFile: folder + "/sshd.pid", encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(pid, SIGTERM)
            }
        }
        let ssh = "ssh -p \(port) -i \(folder)/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
        // sshd writes its pid file once its listening socket is bound: the event that it accepts.
        try FileEvents.wait(under: [folder], guardSeconds: 30, "sshd's pid file: \((try? String(contentsOfFile: folder + "/sshd.log", encoding: .utf8)) ?? "")") {
            (try? String(contentsOfFile: folder + "/sshd.pid", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        try #require(try run("/bin/sh", ["-c", "\(ssh) \(user)@127.0.0.1 true"]).status == 0, "sshd does not accept: \((try? String(contentsOfFile: folder + "/sshd.log", encoding: .utf8)) ?? "")")

        try "over ssh\n".write(toFile: here.path("Research/ssh.md"), atomically: false, encoding: .utf8)
        try "back\n".write(toFile: there.path("Research/back.md"), atomically: false, encoding: .utf8)
        let result = try run(Binaries.relay, ["sync", "-w", here.root, "--remote-relay", Binaries.relay, "\(user)@127.0.0.1:\(there.root)"],
                             environment: ["RELAY_SSH": ssh])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(there.contents("Research/ssh.md") == "over ssh\n" && here.contents("Research/back.md") == "back\n")
        let again = try run(Binaries.relay, ["sync", "-w", here.root, "--json", "--remote-relay", Binaries.relay, "\(user)@127.0.0.1:\(there.root)"],
                            environment: ["RELAY_SSH": ssh])
        #expect(try JSONDecoder().decode(SyncSummary.self, from: again.standardOutput).transferred == 0)
    }
}
