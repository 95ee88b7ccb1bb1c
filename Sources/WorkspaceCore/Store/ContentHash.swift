import Crypto

/// A SHA-256 content hash, shown as 64 lowercase hex digits. It names versions in the object
/// store, keys lock files, and tells whether a file is still what a writer read.
public struct ContentHash: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let hex: String
    private static let digits = Array("0123456789abcdef".utf8)

    public init<Bytes: Sequence>(of bytes: Bytes) where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(data: Array(bytes))
        self.init(digest: Array(hasher.finalize()))
    }

    /// From the 32 bytes of a finished SHA-256.
    init(digest: [UInt8]) {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(Self.digits[Int(byte >> 4)])
            text.append(Self.digits[Int(byte & 0x0f)])
        }
        self.hex = String(decoding: text, as: UTF8.self)
    }

    public init(of string: String) { self.init(of: Array(string.utf8)) }

    /// Accepts exactly 64 hex digits (any case); nil otherwise.
    public init?(hex: String) {
        // On the UTF-8 bytes: a sync parses two hashes per file it copies, and counting and
        // testing Characters was ~2.4 µs a hash (a twentieth of a first sync's copy loop).
        let bytes = hex.utf8
        guard bytes.count == 64 else { return nil }
        var lowercase = true
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): lowercase = false
            default: return nil
            }
        }
        self.hex = lowercase ? hex : hex.lowercased()
    }

    public var description: String { hex }
    /// The first 12 hex digits, as `relay fs history` shows a version.
    public var short: String { String(hex.prefix(12)) }

    public static func < (lhs: ContentHash, rhs: ContentHash) -> Bool { lhs.hex < rhs.hex }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let hash = ContentHash(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a SHA-256 hex digest: \(text)"))
        }
        self = hash
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
