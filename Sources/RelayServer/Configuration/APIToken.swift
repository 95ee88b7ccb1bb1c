import Foundation
import WorkspaceCore

/// The bearer token of the HTTP API: `RELAY_API_TOKEN`, else the one kept in
/// `.relay/api-token` (mode 0600), else — when asked — a new one written there.
///
/// The token is never logged; ``matches(_:)`` compares in constant time.
public struct APIToken: Sendable, CustomStringConvertible {
    let value: [UInt8]

    public init(_ text: String) { value = Array(text.utf8) }

    /// The token's text, for printing once when it was generated; never for logs.
    public var secret: String { String(decoding: value, as: UTF8.self) }

    /// Redacted, so a token that reaches a log by mistake shows nothing.
    public var description: String { "APIToken(redacted)" }

    /// Compares with a presented token in time that depends on the lengths only.
    public func matches(_ presented: some Collection<UInt8>) -> Bool {
        var difference = UInt8(truncatingIfNeeded: value.count ^ presented.count)
        var index = 0
        for byte in presented {
            difference |= byte ^ (index < value.count ? value[index] : 0)
            index += 1
        }
        return difference == 0 && !value.isEmpty
    }

    /// How the token was found.
    public enum Origin: Sendable, Equatable { case environment, file, generated }

    /// Finds the token: the environment first, then `file`; with `generate`, writes a new
    /// random one to `file` (created with mode 0600, never replacing one that is there).
    /// - returns: nil when there is none and `generate` is false.
    /// - throws: ``APIError`` `.configuration` when the file cannot be read or written.
    public static func resolve(environment: [String: String], file: String, generate: Bool) throws -> (token: APIToken, origin: Origin)? {
        if let text = environment["RELAY_API_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            return (APIToken(text), .environment)
        }
        let stored: [UInt8]?
        do { stored = try StateFile.read(file) } catch let error as WorkspaceError {
            throw APIError(.configuration, "cannot read the API token in \(file): \(error.underlying.map { "\($0)" } ?? error.message)")
        }
        if let stored {
            let text = String(decoding: stored, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { return (APIToken(text), .file) }
        }
        guard generate else { return nil }
        var generator = SystemRandomNumberGenerator()  // getrandom(2) on Linux
        let text = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        // Created with its mode, so the token is never readable by others, not even briefly.
        do {
            try StateFile.create(file, with: Array((text + "\n").utf8), mode: 0o600, durable: true)
        } catch let error as WorkspaceError {
            let reason = error.underlying.map { "\($0)" } ?? error.message
            throw APIError(.configuration, "cannot create \(file) for the API token: \(reason)")
        }
        return (APIToken(text), .generated)
    }
}
