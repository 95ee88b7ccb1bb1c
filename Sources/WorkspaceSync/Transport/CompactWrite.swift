import Foundation

extension SyncProtocol {
    /// `stage` and `stageRemoval`, the requests a sync sends one per path it writes, in a
    /// binary form (protocol 8) instead of JSON: encoding and decoding one through the JSON
    /// coders took ~35 µs on each side, most of the server's CPU per staged copy after the
    /// write itself.
    ///
    /// A body that begins with `magic` (a first byte no other form has: JSON begins with `{`,
    /// and a message with contents with the first byte of a length under 512 MB), then, integers
    /// little-endian: the op (1 `stage`, 2 `stageRemoval`); the path's length (4 bytes) and
    /// UTF-8; whether `expected` is there (1 byte) and, if so, its length (1 byte) and text; the
    /// vector's length (4 bytes) and text (`VersionVector.description`); whether `peer` is
    /// there (1 byte) and, if so, its length (2 bytes) and text; for `stage`, the content's
    /// length (4 bytes) and bytes. Reading checks each length against what is left, each
    /// text's UTF-8 and the vector's form, and that nothing is left over.
    enum CompactWrite {
        static let magic: UInt8 = 0xB5

        /// The binary form of `request`, or nil when it is not a `stage` or `stageRemoval`
        /// made only of the fields this form carries.
        static func encode(_ request: Request) -> [UInt8]? {
            let op: UInt8
            switch request.op {
            case "stage": op = 1
            case "stageRemoval": op = 2
            default: return nil
            }
            guard let path = request.path, let vector = request.vector, (op == 1) == (request.content != nil),
                  request.overwrite == nil, request.entry == nil, request.hash == nil, request.copy == nil,
                  request.kept == nil, request.copied == nil, request.version == nil, request.epoch == nil,
                  request.since == nil, request.reads == nil, request.mark == nil, request.paths == nil,
                  request.hashes == nil,
                  request.expected.map({ $0.utf8.count <= 255 }) ?? true,
                  request.peer.map({ $0.utf8.count <= 0xFFFF }) ?? true else { return nil }
            let vectorText = vector.description
            var bytes: [UInt8] = []
            bytes.reserveCapacity(32 + path.utf8.count + vectorText.utf8.count + (request.content?.count ?? 0) + 100)
            func integer<T: FixedWidthInteger>(_ value: T) {
                withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
            }
            bytes.append(magic)
            bytes.append(op)
            integer(UInt32(path.utf8.count))
            bytes.append(contentsOf: path.utf8)
            if let expected = request.expected {
                bytes.append(1)
                integer(UInt8(expected.utf8.count))
                bytes.append(contentsOf: expected.utf8)
            } else {
                bytes.append(0)
            }
            integer(UInt32(vectorText.utf8.count))
            bytes.append(contentsOf: vectorText.utf8)
            if let peer = request.peer {
                bytes.append(1)
                integer(UInt16(peer.utf8.count))
                bytes.append(contentsOf: peer.utf8)
            } else {
                bytes.append(0)
            }
            if let content = request.content {
                integer(UInt32(content.count))
                bytes.append(contentsOf: content)
            }
            return bytes
        }

        /// The request in a body that begins with `magic`. `vectors` caches parsed vector texts
        /// (a sync's copies share a handful).
        static func decode(_ body: [UInt8], vectors: inout [String: VersionVector]) throws -> Request {
            try body.withUnsafeBufferPointer { buffer in
                var offset = 1
                func take(_ count: Int, _ what: String) throws -> UnsafeBufferPointer<UInt8> {
                    guard count >= 0, count <= buffer.count - offset else {
                        throw EndpointError.transport("a compact write request's \(what) runs past its end")
                    }
                    defer { offset += count }
                    return UnsafeBufferPointer(rebasing: buffer[offset..<(offset + count)])
                }
                func integer<T: FixedWidthInteger>(_ type: T.Type, _ what: String) throws -> T {
                    let raw = try take(MemoryLayout<T>.size, what)
                    var value = T.zero
                    withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(raw)) }
                    return T(littleEndian: value)
                }
                func text(_ count: Int, _ what: String) throws -> String {
                    guard let text = String(validating: try take(count, what), as: UTF8.self) else {
                        throw EndpointError.transport("a compact write request's \(what) is not UTF-8")
                    }
                    return text
                }
                func flag(_ what: String) throws -> Bool {
                    let value = try integer(UInt8.self, what)
                    guard value <= 1 else { throw EndpointError.transport("a compact write request's \(what) flag is \(value)") }
                    return value == 1
                }
                let op = try integer(UInt8.self, "op")
                guard op == 1 || op == 2 else { throw EndpointError.transport("a compact write request has op \(op)") }
                var request = Request(op: op == 1 ? "stage" : "stageRemoval")
                request.path = try text(Int(try integer(UInt32.self, "path length")), "path")
                if try flag("expected") { request.expected = try text(Int(try integer(UInt8.self, "expected length")), "expected") }
                let vectorText = try text(Int(try integer(UInt32.self, "vector length")), "vector")
                if let known = vectors[vectorText] { request.vector = known } else {
                    guard let vector = VersionVector(text: vectorText) else {
                        throw EndpointError.transport("a compact write request's version vector '\(vectorText.prefix(80))' is malformed")
                    }
                    vectors[vectorText] = vector
                    request.vector = vector
                }
                if try flag("peer") { request.peer = try text(Int(try integer(UInt16.self, "peer length")), "peer") }
                if op == 1 { request.content = Data(try take(Int(try integer(UInt32.self, "content length")), "content")) }
                guard offset == buffer.count else {
                    throw EndpointError.transport("a compact write request has \(buffer.count - offset) bytes left over")
                }
                return request
            }
        }
    }
}
