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
            var writer = BinaryWriter(capacity: 32 + path.utf8.count + vectorText.utf8.count + (request.content?.count ?? 0) + 100)
            writer.integer(magic)
            writer.integer(op)
            writer.text(path, length: UInt32.self)
            writer.integer(UInt8(request.expected == nil ? 0 : 1))
            if let expected = request.expected { writer.text(expected, length: UInt8.self) }
            writer.text(vectorText, length: UInt32.self)
            writer.integer(UInt8(request.peer == nil ? 0 : 1))
            if let peer = request.peer { writer.text(peer, length: UInt16.self) }
            if let content = request.content {
                writer.integer(UInt32(content.count))
                writer.bytes.append(contentsOf: content)
            }
            return writer.bytes
        }

        /// The request in a body that begins with `magic`. `vectors` caches parsed vector texts
        /// (a sync's copies share a handful).
        static func decode(_ body: [UInt8], vectors: inout [String: VersionVector]) throws -> Request {
            try body.withUnsafeBufferPointer { buffer in
                var reader = BinaryReader(buffer, from: 1) { SyncError.transport("a compact write request's " + $0) }
                let op = try reader.integer(UInt8.self, "op")
                guard op == 1 || op == 2 else { throw SyncError.transport("a compact write request has op \(op)") }
                var request = Request(op: op == 1 ? "stage" : "stageRemoval")
                request.path = try reader.text(length: UInt32.self, "path")
                if try reader.flag("expected") { request.expected = try reader.text(length: UInt8.self, "expected") }
                let vectorText = try reader.text(length: UInt32.self, "vector")
                if let known = vectors[vectorText] { request.vector = known } else {
                    guard let vector = VersionVector(text: vectorText) else {
                        throw SyncError.transport("a compact write request's version vector '\(vectorText.prefix(80))' is malformed")
                    }
                    vectors[vectorText] = vector
                    request.vector = vector
                }
                if try reader.flag("peer") { request.peer = try reader.text(length: UInt16.self, "peer") }
                if op == 1 { request.content = Data(try reader.take(Int(try reader.integer(UInt32.self, "content length")), "content")) }
                guard reader.left == 0 else {
                    throw SyncError.transport("a compact write request has \(reader.left) bytes left over")
                }
                return request
            }
        }
    }
}
