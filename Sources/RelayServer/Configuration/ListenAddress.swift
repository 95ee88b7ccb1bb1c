/// Where the HTTP API listens: `[ADDR:]PORT` as `--http` takes it.
///
/// For example:
/// ```swift
/// let address = try ListenAddress(parsing: "8000")          // 127.0.0.1:8000
/// let open = try ListenAddress(parsing: "0.0.0.0:8000")     // needs a token
/// ```
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `PORT`, `ADDR:PORT` or `[IPv6]:PORT`; a bare port listens on 127.0.0.1.
    /// - throws: ``APIError`` `.configuration` naming what was wrong.
    public init(parsing text: String) throws {
        var host = "127.0.0.1"
        var portText = text
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host.isEmpty { host = "127.0.0.1" }
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw APIError(.configuration, "--http \(text): expected [ADDR:]PORT with PORT a number from 0 to 65535, e.g. 8000 or 127.0.0.1:8000")
        }
        self.init(host: host, port: port)
    }

    /// True for addresses only this machine reaches (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
