import Testing
@testable import WorkspaceCore

@Suite("Content hashes as text")
struct ContentHashTests {
    /// Exactly 64 hex digits, in either case (kept lowercase); anything else is refused —
    /// other lengths, other letters, digits from other scripts, and text that is 64
    /// characters but not 64 bytes.
    @Test func onlySixtyFourHexDigitsParseAndTheyAreKeptLowercase() {
        let hash = ContentHash(of: "some bytes\n")
        #expect(ContentHash(hex: hash.hex) == hash)
        #expect(ContentHash(hex: hash.hex.uppercased())?.hex == hash.hex)
        for refused in [String(hash.hex.dropLast()), hash.hex + "0", String(hash.hex.dropLast()) + "g",
                        String(hash.hex.dropLast()) + "é", String(hash.hex.dropLast()) + "٣", String(repeating: "é", count: 64), ""] {
            #expect(ContentHash(hex: refused) == nil, "\(refused)")
        }
    }
}
