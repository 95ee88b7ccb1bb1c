import Foundation

extension SyncProtocol {
    /// Writes the binary forms of protocol 8 (`EntryRows`, `CompactWrite`): integers
    /// little-endian, texts as their UTF-8 after a length.
    struct BinaryWriter {
        var bytes: [UInt8] = []

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func integer<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        /// `text`'s UTF-8 after its length as a `Length` (the caller has checked it fits).
        mutating func text<Length: FixedWidthInteger>(_ text: some StringProtocol, length: Length.Type) {
            integer(Length(text.utf8.count))
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// Reads what `BinaryWriter` wrote, checking every length against what is left and every
    /// text's UTF-8; `failure` turns a reason ("path runs past the end") into the caller's
    /// error, which names the message or row.
    struct BinaryReader {
        let buffer: UnsafeBufferPointer<UInt8>
        private(set) var offset: Int
        var failure: (String) -> Error

        init(_ buffer: UnsafeBufferPointer<UInt8>, from offset: Int = 0, failure: @escaping (String) -> Error) {
            self.buffer = buffer
            self.offset = offset
            self.failure = failure
        }

        var left: Int { buffer.count - offset }

        mutating func take(_ count: Int, _ what: String) throws -> UnsafeBufferPointer<UInt8> {
            guard count >= 0, count <= left else { throw failure("\(what) runs past the end") }
            defer { offset += count }
            return UnsafeBufferPointer(rebasing: buffer[offset..<(offset + count)])
        }

        mutating func integer<T: FixedWidthInteger>(_ type: T.Type, _ what: String) throws -> T {
            let raw = try take(MemoryLayout<T>.size, what)
            var value = T.zero
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(raw)) }
            return T(littleEndian: value)
        }

        /// A text after its length as a `Length`.
        mutating func text<Length: FixedWidthInteger>(length: Length.Type, _ what: String) throws -> String {
            let count = Int(try integer(Length.self, "\(what) length"))
            guard let text = String(validating: try take(count, what), as: UTF8.self) else { throw failure("\(what) is not UTF-8") }
            return text
        }

        /// A byte that must be 0 or 1.
        mutating func flag(_ what: String) throws -> Bool {
            let value = try integer(UInt8.self, what)
            guard value <= 1 else { throw failure("\(what) flag is \(value)") }
            return value == 1
        }
    }
}
