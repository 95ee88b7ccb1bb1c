import Glibc
import WorkspaceCore

/// Writing to the terminal: raw bytes to stdout, messages to stderr, colour only on a TTY
/// (and never when NO_COLOR is set).
enum Terminal {
    /// Writes `bytes` whole (WorkspaceCore's `Syscall.writeAll`, which retries EINTR and short
    /// writes); a closed pipe (EPIPE: a pager quit) ends the output quietly.
    static func standardOutput(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Syscall.writeAll(1, $0) }
    }

    static func standardError(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Syscall.writeAll(2, $0) }
    }

    static func error(_ message: String) {
        standardError(paint("relay: error: ", .red) + message + "\n")
    }

    static var colourful: Bool { isatty(1) == 1 && getenv("NO_COLOR") == nil }

    enum Colour: String { case red = "31", green = "32", yellow = "33", dim = "2", bold = "1" }

    static func paint(_ text: String, _ colour: Colour, stream: Int32 = 2) -> String {
        guard isatty(stream) == 1 && getenv("NO_COLOR") == nil else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }

    /// Reads all of standard input.
    static func readStandardInput() throws -> [UInt8] {
        switch Syscall.readAll(0) {
        case .success(let bytes): return bytes
        case .failure(let errno): throw CommandFailure(message: "could not read standard input: \(errno)")
        }
    }
}
