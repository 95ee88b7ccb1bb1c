import Foundation
import Testing
@testable import WorkspaceSync

/// The peer's command, started without Foundation's `Process` (`PeerProcess`).
@Suite("The peer's process")
struct PeerProcessTests {
    // As `relay` does (main.swift): a peer gone away is an EPIPE to handle, not a death.
    init() { signal(SIGPIPE, SIG_IGN) }

    /// It gets its three pipes and nothing else of ours, its error output is read back, and it
    /// is reaped when it ends (no zombie is left behind).
    @Test func aPeerCommandGetsOnlyItsPipesAndIsReapedWhenItEnds() throws {
        // A descriptor of ours without O_CLOEXEC: the child must not see it.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let process = try PeerProcess(["sh", "-c", "ls /proc/self/fd | tr '\\n' ' ' >&2; read line; echo \"got $line\"; exit 3"])
        try process.input.write(contentsOf: Data("hello\n".utf8))
        let answer = process.output.availableData
        #expect(String(decoding: answer, as: UTF8.self) == "got hello\n")
        process.waitUntilExit()
        #expect(!process.isRunning)
        let descriptors = Set(process.errorOutput().split(separator: " ").map(String.init))
        // 0, 1, 2 and the one `ls` opens to list them.
        #expect(descriptors.count == 4 && descriptors.isSuperset(of: ["0", "1", "2"]), "\(descriptors)")
        #expect(!descriptors.contains(String(leaked)))
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(process.pid)"), "a zombie was left")
    }

    @Test func aCommandThatDoesNotExistIsAClearError() {
        #expect {
            _ = try RemoteEndpoint(command: ["relay-no-such-ssh-\(UInt32.random(in: 0...UInt32.max))", "host", "relay"], location: "host:notes")
        } throws: { error in
            "\(error)".hasSuffix(": No such file or directory") && "\(error)".contains("could not start relay-no-such-ssh")
        }
    }

    @Test func aPeerThatEndsAtOnceIsReportedWithWhatItSaid() {
        #expect {
            _ = try RemoteEndpoint(command: ["sh", "-c", "echo 'bash: relay: command not found' >&2; exit 127"], location: "host:notes")
        } throws: { error in
            "\(error)".contains("host:notes") && "\(error)".contains("relay: command not found")
        }
    }
}
