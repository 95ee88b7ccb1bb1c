import Foundation
import Glibc

/// A real sshd on 127.0.0.1 with its own host key, client key and config on a high port, for
/// the bench's ssh rows: relay, rsync and Unison over the same ssh, as a user would run them
/// between two machines (minus the network's latency). sshd daemonizes itself and is stopped
/// through its pid file.
struct LoopbackSSH {
    let folder: String
    let user: String
    /// The ssh command line with the port, key and options, for RELAY_SSH, `rsync -e` and
    /// Unison's `-sshargs` (without the leading `ssh`).
    let command: String
    let options: String

    /// Starts sshd, or says why the ssh rows are skipped and returns nil.
    static func start(in base: String) -> LoopbackSSH? {
        for tool in ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"] where !FileManager.default.isExecutableFile(atPath: tool) {
            print("  (ssh rows skipped: \(tool) is missing — Debian: openssh-server, openssh-client)")
            return nil
        }
        let folder = base + "/sshd"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard sh("ssh-keygen -q -t ed25519 -N '' -f '\(folder)/host_key' && ssh-keygen -q -t ed25519 -N '' -f '\(folder)/client_key'"
                 + " && cp '\(folder)/client_key.pub' '\(folder)/authorized_keys'") == 0 else { return nil }
        let port = Int.random(in: 42_000...48_000)
        let user = ProcessInfo.processInfo.environment["USER"] ?? "root"
        let config = """
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
            """
        guard (try? config.write(toFile: folder + "/sshd_config", atomically: true, encoding: .utf8)) != nil,
              sh("mkdir -p /run/sshd 2>/dev/null; /usr/sbin/sshd -f '\(folder)/sshd_config' -E '\(folder)/sshd.log'") == 0 else {
            print("  (ssh rows skipped: sshd did not start; see \(folder)/sshd.log)")
            return nil
        }
        let options = "-p \(port) -i \(folder)/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
        let ssh = LoopbackSSH(folder: folder, user: user, command: "ssh " + options, options: options)
        for _ in 0..<100 {
            if sh("\(ssh.command) \(user)@127.0.0.1 true 2>/dev/null") == 0 { return ssh }
            usleep(50_000)
        }
        print("  (ssh rows skipped: sshd did not answer; see \(folder)/sshd.log)")
        ssh.stop()
        return nil
    }

    func stop() {
        if let text = try? String(contentsOfFile: folder + "/sshd.pid", encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGTERM)
        }
    }
}
