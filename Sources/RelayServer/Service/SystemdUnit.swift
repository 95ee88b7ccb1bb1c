import Foundation

/// A systemd unit that runs a workspace's daemon (`relay serve`, or `relay watch` without
/// HTTP), its output going to journald, restarted when it fails, stopped with SIGTERM (the
/// daemon's graceful shutdown).
///
/// For example:
/// ```swift
/// let unit = SystemdUnit(executable: "/usr/local/bin/relay", workspace: "/home/ana/notes",
///                        http: try ListenAddress(parsing: "8000"), scope: .user)
/// try unit.text.write(toFile: unit.path(home: "/home/ana"), atomically: true, encoding: .utf8)
/// ```
public struct SystemdUnit: Sendable, Equatable {
    /// A unit of the person's own systemd (`systemctl --user`), or of the machine's.
    public enum Scope: Sendable, Equatable {
        case user
        /// A system unit runs the daemon as `user` (nil: as root).
        case system(user: String?)
    }

    public var executable: String
    public var workspace: String
    /// Where the HTTP API listens; nil runs `relay watch` without it.
    public var http: ListenAddress?
    public var scope: Scope

    public init(executable: String, workspace: String, http: ListenAddress?, scope: Scope) {
        self.executable = executable
        self.workspace = workspace
        self.http = http
        self.scope = scope
    }

    /// `relay-NAME-HASH.service`: the workspace folder's name (letters, digits, `-`, `_`) and 8
    /// hex digits of its path, so two workspaces called `notes` get two units.
    public var name: String {
        let folder = (workspace as NSString).lastPathComponent
        var slug = String(folder.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_" ? Character($0) : "-" })
        slug = String(slug.prefix(40)).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        var hash: UInt32 = 0x811c_9dc5  // FNV-1a of the path: a stable name, not a secret
        for byte in workspace.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return "relay-\(slug.isEmpty ? "workspace" : slug)-\(String(format: "%08x", hash)).service"
    }

    /// Where the unit goes: `$XDG_CONFIG_HOME/systemd/user/` (`~/.config/…`) for a user unit,
    /// `/etc/systemd/system/` for a system one.
    public func path(home: String, configHome: String? = nil) -> String {
        switch scope {
        case .user: return (configHome ?? home + "/.config") + "/systemd/user/" + name
        case .system: return "/etc/systemd/system/" + name
        }
    }

    /// The unit file.
    public var text: String {
        var arguments = [executable]
        if let http {
            arguments += ["serve", "-w", workspace, "--http", http.description]
        } else {
            arguments += ["watch", "-w", workspace]
        }
        var lines = [
            "# Written by `relay service install`; run it again to rewrite this file.",
            "[Unit]",
            "Description=Relay daemon for \(Self.escapeSpecifiers(workspace))" + (http.map { " (HTTP on \($0))" } ?? ""),
            "After=network-online.target",
            "Wants=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=" + arguments.map(Self.quote).joined(separator: " "),
            "WorkingDirectory=" + Self.escapeSpecifiers(workspace),
            "Environment=RELAY_LOG_LEVEL=info",
            // The daemon stops cleanly on SIGTERM: runs are journaled interrupted and resume at the next start.
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
            "Restart=on-failure",
            "RestartSec=5",
            "StandardOutput=journal",
            "StandardError=journal",
            "SyslogIdentifier=relay",
            "NoNewPrivileges=yes",
        ]
        if case .system(let user?) = scope { lines.append("User=" + user) }
        lines += ["", "[Install]", "WantedBy=" + (scope == .user ? "default.target" : "multi-user.target"), ""]
        return lines.joined(separator: "\n")
    }

    /// The commands that enable, inspect and follow the unit.
    public var instructions: [String] {
        let control = scope == .user ? "systemctl --user" : "systemctl"
        let journal = scope == .user ? "journalctl --user" : "journalctl"
        var lines = ["\(control) daemon-reload", "\(control) enable --now \(name)", "\(control) status \(name)", "\(journal) -u \(name) -f"]
        if scope == .user { lines.append("loginctl enable-linger \(NSUserName())   # keep it running while you are logged out") }
        return lines
    }

    /// One word of `ExecStart=`: quoted when it has a space, with `\`, `"`, `%` and `$` escaped
    /// (systemd.service(5), "Command lines"; systemd.unit(5), "Specifiers").
    static func quote(_ word: String) -> String {
        var escaped = word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        escaped = escapeSpecifiers(escaped).replacingOccurrences(of: "$", with: "$$")
        return escaped.contains(where: { $0 == " " || $0 == "\t" || $0 == "'" }) || escaped.isEmpty ? "\"\(escaped)\"" : escaped
    }

    static func escapeSpecifiers(_ text: String) -> String { text.replacingOccurrences(of: "%", with: "%%") }
}
