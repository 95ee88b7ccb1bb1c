import Foundation

/// Splits `text`'s bytes into pieces of `size` bytes — cutting lines and multi-byte characters
/// wherever they fall.
func byteChunks(_ text: String, size: Int) -> [[UInt8]] {
    let bytes = Array(text.utf8)
    return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
}
