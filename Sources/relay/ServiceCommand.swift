import ArgumentParser
import Foundation
import RelayServer
import WorkspaceCore

struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Set the daemon up as a systemd service.",
        discussion: """
            Examples:
              relay service install --user
              systemctl --user enable --now relay-notes-1a2b3c4d.service
            """,
        subcommands: [ServiceInstallCommand.self]
    )
}

struct ServiceInstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Write a systemd unit that runs this workspace's daemon.",
        discussion: """
            Writes a unit that runs `relay serve` for the workspace (or `relay watch` with \
            --no-http): started at boot or login, restarted when it fails, stopped with SIGTERM \
            (runs it interrupts resume at its next start), its log in journald. With --user the \
            unit goes to ~/.config/systemd/user/ (your own systemd, no root); without, to \
            /etc/systemd/system/, running as the user who installs it. It prints the commands \
            that enable it and show its log; it does not start anything itself. An address \
            beyond loopback needs the API token in .relay/api-token (--new-token makes one).

            Examples:
              relay service install --user
              relay service install --user --http 0.0.0.0:8000 --new-token
              relay service install --user --no-http          # watch only, no HTTP
              relay service install --print    # show the unit, write nothing
              systemctl --user enable --now relay-notes-1a2b3c4d.service
            """
    )

    @OptionGroup var options: WorkspaceOptions

    @Flag(name: .long, help: "Install for your own systemd (systemctl --user) instead of the machine's.")
    var user = false

    @Option(name: .long, help: ArgumentHelp("Where the daemon's HTTP API listens, [ADDR:]PORT.", valueName: "[addr:]port"))
    var http: String = "127.0.0.1:8000"

    @Flag(name: .long, help: "Run `relay watch` without the HTTP API.")
    var noHTTP = false

    @Flag(name: .long, help: "Generate an API token into .relay/api-token (mode 0600) if there is none, and print it once.")
    var newToken = false

    @Flag(name: .long, help: "Replace a unit of the same name that is already there.")
    var force = false

    @Flag(name: .long, help: "Print the unit instead of writing it.")
    var print = false

    @Option(name: .long, help: ArgumentHelp("Write the unit into this folder instead of systemd's.", valueName: "dir"))
    var output: String?

    func validate() throws {
        guard !noHTTP else { return }
        do { _ = try ListenAddress(parsing: http) } catch let error as APIError { throw ValidationError(error.message) }
    }

    func run() async throws {
        let workspace = try options.open()
        var address: ListenAddress?
        if !noHTTP {
            let parsed = try ListenAddress(parsing: http)
            let file = workspace.layout.state + "/api-token"
            let found = try? APIToken.resolve(environment: [:], file: file, generate: newToken)
            if let found, found.origin == .generated {
                Terminal.standardError("relay: a new API token, saved in \(file) (mode 0600); shown only this once:\n\(found.token.secret)\n")
            }
            if !parsed.isLoopback && found == nil {
                throw CommandFailure(message: "the unit would listen on \(parsed) without a token: add --new-token (a token in .relay/api-token, which the daemon reads), or listen on 127.0.0.1", status: 2)
            }
            address = parsed
        }
        let executable = (try? StateFile.linkTarget("/proc/self/exe")) ?? CommandLine.arguments[0]
        let scope: SystemdUnit.Scope = user ? .user : .system(user: getuid() == 0 ? nil : NSUserName())
        let unit = SystemdUnit(executable: executable, workspace: workspace.root, http: address, scope: scope)
        if print {
            Terminal.standardOutput(Array(unit.text.utf8))
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let path = output.map { ($0 as NSString).appendingPathComponent(unit.name) }
            ?? unit.path(home: environment["HOME"] ?? NSHomeDirectory(), configHome: environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 })
        if StateFile.exists(path), !force {
            throw CommandFailure(message: "\(path) is already there; --force replaces it")
        }
        do {
            try StateFile.makeFolders((path as NSString).deletingLastPathComponent)
            try StateFile.replace(path, with: Array(unit.text.utf8), durable: true)
        } catch let error as WorkspaceError {
            throw CommandFailure(message: "cannot write \(path): \(error.message)" + (user ? "" : " (a system unit needs root; --user installs one for you alone)"))
        }
        Swift.print("wrote \(path)")
        Swift.print("enable and start it, then follow its log:")
        for line in unit.instructions { Swift.print("  " + line) }
    }
}
