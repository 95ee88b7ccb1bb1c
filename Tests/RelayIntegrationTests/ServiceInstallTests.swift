import Foundation
import RelayTestKit
import Testing

/// `relay service install`: the unit it writes, checked line by line and by systemd's own
/// `systemd-analyze verify` where Debian's `systemd` package is installed.
@Suite struct ServiceInstallTests {
    static let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test func aUserUnitRunsRelayServeOnTheWorkspaceAndLogsToTheJournal() throws {
        let s = try ScratchWorkspace.relayInit()
        let folder = s.base + "/units"
        let result = try s.relay(["service", "install", "-w", s.root, "--user", "--output", folder, "--http", "8123"])
        #expect(result.status == 0, "\(result.standardError)")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first)
        #expect(name.hasPrefix("relay-") && name.hasSuffix(".service"))
        let unit = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
        let lines = Set(unit.split(separator: "\n").map(String.init))
        #expect(lines.contains { $0.hasPrefix("ExecStart=/") && $0.hasSuffix(" serve -w \(s.root) --http 127.0.0.1:8123") }, "\(unit)")
        for line in ["Type=simple", "KillSignal=SIGTERM", "Restart=on-failure", "StandardOutput=journal", "StandardError=journal",
                     "WorkingDirectory=\(s.root)", "WantedBy=default.target"] {
            #expect(lines.contains(line), "\(line) in \(unit)")
        }
        #expect(!lines.contains { $0.hasPrefix("User=") }, "a user unit runs as its user")
        #expect(result.text.contains("systemctl --user enable --now \(name)") && result.text.contains("journalctl --user -u \(name)"))
        // Written once; a second install wants --force.
        #expect(try s.relay(["service", "install", "-w", s.root, "--user", "--output", folder, "--http", "8123"]).status == 1)
        #expect(try s.relay(["service", "install", "-w", s.root, "--user", "--output", folder, "--no-http", "--force"]).status == 0)
        #expect(try String(contentsOfFile: folder + "/" + name, encoding: .utf8).contains(" watch -w \(s.root)\n"))
    }

    @Test(.enabled(if: analyze != nil, "needs systemd-analyze (Debian's systemd package)"))
    func theUnitPassesSystemdAnalyzeVerifyEvenForAPathWithSpacesAndPercent() throws {
        let s = try ScratchWorkspace.relayInit(name: "my notes 100%")
        let printed = try s.relay(["service", "install", "-w", s.root, "--print"])
        #expect(printed.status == 0, "\(printed.standardError)")
        #expect(printed.text.contains("\"\(s.root.replacingOccurrences(of: "%", with: "%%"))\""), "quoted, % escaped: \(printed.text)")
        let file = s.base + "/relay-check.service"
        try printed.standardOutput.write(to: URL(fileURLWithPath: file))
        let verify = try run(try #require(Self.analyze), ["verify", file])
        #expect(verify.status == 0, "\(verify.text)\(verify.standardError)")
    }

    @Test func aNonLoopbackAddressWithoutATokenIsRefusedAndWritesNothing() throws {
        let s = try ScratchWorkspace.relayInit()
        let folder = s.base + "/units"
        let refused = try s.relay(["service", "install", "-w", s.root, "--user", "--output", folder, "--http", "0.0.0.0:8000"])
        #expect(refused.status == 2 && refused.standardError.contains("--new-token"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder))
        let withToken = try s.relay(["service", "install", "-w", s.root, "--user", "--output", folder, "--http", "0.0.0.0:8000", "--new-token"])
        #expect(withToken.status == 0, "\(withToken.standardError)")
        #expect(FileManager.default.fileExists(atPath: s.path(".relay/api-token")))
    }
}
