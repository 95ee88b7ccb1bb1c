/// The MCP revisions the server speaks, newest first. `initialize` answers with the client's
/// revision when it is one of these, and with the newest otherwise (the client then decides
/// whether it can go on) — MCP's version negotiation.
struct ProtocolVersion: Sendable, Comparable, CustomStringConvertible {
    let name: String

    static let v2024_11_05 = ProtocolVersion(name: "2024-11-05")
    static let v2025_03_26 = ProtocolVersion(name: "2025-03-26")
    static let v2025_06_18 = ProtocolVersion(name: "2025-06-18")
    static let v2025_11_25 = ProtocolVersion(name: "2025-11-25")
    static let supported: [ProtocolVersion] = [.v2025_11_25, .v2025_06_18, .v2025_03_26, .v2024_11_05]
    static let latest = supported[0]

    /// The revision to use with a client that asked for `requested`.
    static func negotiate(_ requested: String?) -> ProtocolVersion {
        supported.first { $0.name == requested } ?? latest
    }

    // Revisions are dates in ISO form: text order is time order.
    static func < (a: ProtocolVersion, b: ProtocolVersion) -> Bool { a.name < b.name }
    var description: String { name }
}
