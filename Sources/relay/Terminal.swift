import Glibc

/// Writing to the terminal: raw bytes to stdout, messages to stderr, colour only on a TTY
/// (and never when NO_COLOR is set).
enum Terminal {
    static func standardOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(1, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }

    static func standardError(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in _ = write(2, raw.baseAddress, raw.count) }
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
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n == 0 { return result }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandFailure(message: "could not read standard input (errno \(errno))")
            }
            result.append(contentsOf: buffer[0..<n])
        }
    }
}
