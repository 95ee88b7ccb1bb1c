import Foundation
import WorkspaceCore

/// The sync wire protocol, version 9: length-prefixed frames (4 bytes, big-endian, then that
/// many bytes) over the stdin/stdout of `relay sync-serve --stdio`, usually at the end of an ssh
/// connection, as rsync, Unison and git do. A frame's body is a JSON message; a message that
/// carries file contents has them raw after its JSON (see `Codec`). The client sends requests,
/// the server answers each in order (a client may send several before reading their answers);
/// the first exchange is `hello`, which names the protocol version.
///
/// A sync is: `hello` → `refresh` with the peer's index epoch and the last sequence of it the
/// client saw, and the client's replica id (the answer: the rows written since, the current
/// sequence, a digest of the whole index to check the client's copy against, and the server's
/// mark of its last clean sync with that client; or every row, `whole`, when the epoch differs
/// or the sequence went backwards) → `readMany` / `read` the contents needed → `expectWrites`
/// (the paths about to be written, whose lock files the server reads ahead) → `stage`,
/// `stageRemoval`, `flush` … (a `stage` names the client's replica: the server records the
/// installed copy as its merge base with the client in the same flush) → `ack` with the
/// sequence of the refresh (the answer: the rows written since, mostly by this sync, so the
/// next one starts from there) → `setSyncMark` after a clean sync → `bye`.
public enum SyncProtocol {
    /// 9: `held` (the versions a path has held, for a merge base found by content), and a
    /// server started with `--start` makes a missing or empty folder a new replica;
    /// 8: `expectWrites` (the paths about to be staged or removed, so the server reads their
    /// lock files ahead); index rows in answers travel in a compact binary form (`EntryRows`),
    /// and so do `stage` and `stageRemoval` (`CompactWrite`);
    /// 7: a `stage` carries the `peer` whose merge base the copy becomes, recorded by the
    /// server's flush (no `setBase` request per copy pushed);
    /// 6: file contents travel raw after the message's JSON instead of in base64 (`Codec`);
    /// 5: marks of clean syncs (`refresh` answers with the server's, `setSyncMark`), so a sync
    /// looks only at paths written since; 4: `readMany` (the contents of many files in one
    /// round trip); 3: index changes since a sequence, `ack`, `stageRemoval` (2 sent the whole
    /// index).
    public static let version = 9
    /// The most a `readMany` asks for at once: files, and bytes by the index's sizes.
    public static let readManyFiles = 64
    public static let readManyBytes = 16 * 1024 * 1024
    /// The largest frame either side accepts (a file's content travels in one frame).
    public static let maximumFrame = 512 * 1024 * 1024

    public struct Request: Codable {
        public var op: String
        public var path: String?
        public var expected: String?
        public var content: Data?
        public var overwrite: Bool?
        public var vector: VersionVector?
        public var entry: SyncIndex.Entry?
        public var peer: String?
        public var hash: String?
        public var copy: String?
        public var kept: String?
        public var copied: String?
        public var version: Int?
        /// `refresh`: the epoch of the copy the client has of this index, if any.
        public var epoch: String?
        /// `refresh`, `ack`: the last sequence of this index the client has seen.
        public var since: Int64?
        /// `readMany`: the files wanted, each with the hash the client's copy of the index has.
        public var reads: [Wanted]?
        /// `setSyncMark`: the mark to record for the client (`peer`).
        public var mark: SyncMark?
        /// `expectWrites`: the paths the client will stage or remove next, and the hashes of
        /// the versions it will stage (checked as hashes; anything else is passed over).
        public var paths: [String]?
        public var hashes: [String]?

        public init(op: String) { self.op = op }
    }

    public struct Wanted: Codable, Sendable, Equatable {
        public var path: String
        public var expected: String
        public init(path: String, expected: String) {
            self.path = path
            self.expected = expected
        }
    }

    public struct ReadResult: Codable, Sendable, Equatable {
        public var content: Data?
        /// "changed" or "refused" when there is no content; `message` says more.
        public var error: String?
        public var message: String?
        public init(content: Data? = nil, error: String? = nil, message: String? = nil) {
            self.content = content
            self.error = error
            self.message = message
        }
    }

    public struct Response: Codable, Equatable {
        public var ok: Bool
        /// "changed", "refused" or "failed" when not ok.
        public var error: String?
        public var message: String?
        public var replica: String?
        public var location: String?
        /// `hello`: true when the server made its folder a new replica for this sync.
        public var started: Bool?
        public var version: Int?
        /// Index rows (`refresh`, `flush`, `ack`), which travel in a compact form (`EntryRows`).
        public var entries: [SyncIndex.Entry]? {
            get { rows?.entries }
            set { rows = newValue.map(EntryRows.init) }
        }
        var rows: EntryRows?
        public var entry: SyncIndex.Entry?
        public var content: Data?
        public var hash: String?
        /// Staged paths a `flush` left alone because they had changed.
        public var changed: [String]?
        /// The answer to `mergeBases`.
        public var bases: [MergeBase]?
        /// The answer to `held`.
        public var held: [HeldVersion]?
        /// The answer to `readMany`, in the order asked: each file's content, or why not.
        public var contents: [ReadResult]?
        /// `refresh`, `ack`: this index's epoch and the sequence `entries` bring a copy up to.
        public var epoch: String?
        public var sequence: Int64?
        /// `refresh`: true when `entries` is the whole index, false when only the rows written
        /// after the client's `since`.
        public var whole: Bool?
        /// `refresh`: `SyncIndex.digest` of the whole index.
        public var digest: String?
        /// `refresh` with the client's replica id (`peer`): the server's mark of its last clean
        /// sync with that client.
        public var mark: SyncMark?

        public init(ok: Bool) { self.ok = ok }

        /// Whether this is `{"ok":true}` and nothing more (the answer to most requests).
        var isPlainOK: Bool { self == Response(ok: true) }
    }

    /// Turns messages into frame bodies and back. A body that begins with `{` is a JSON message
    /// and nothing else (every message of protocols up to 5 was, so an old peer's hello still
    /// gets its version error). A message with file contents (`Data` fields) is instead: 4
    /// bytes, big-endian, the length of its JSON; the JSON, where each `Data` value is
    /// `[offset, length]` into what follows; then the contents, raw. (With base64, a first
    /// sync's server took 340 ms of CPU to decode its 21,763 requests; raw, 262–283 ms; and the
    /// wire carried a third more bytes.)
    ///
    /// One codec serves one connection at a time (its encoder is not shared between threads).
    ///
    /// For example:
    /// ```swift
    /// let codec = SyncProtocol.Codec()
    /// try codec.write(request, to: fd)
    /// let response = try codec.read(SyncProtocol.Response.self, from: fd)
    /// ```
    public final class Codec {
        /// The contents of the message being encoded or decoded, reached from the `Data`
        /// strategies through `userInfo`.
        final class Attachments: @unchecked Sendable {
            var bytes: [UInt8] = []
            /// Whether the message has a content at all (an empty file's has no bytes).
            var used = false
            var body: UnsafeRawBufferPointer?
        }

        static let attachmentsKey = CodingUserInfoKey(rawValue: "relay.attachments")!
        /// The body of the most common answer, `{"ok":true}`, written and read without JSON.
        static let plainOK = Array(#"{"ok":true}"#.utf8)
        private let encoder = JSONEncoder(), decoder = JSONDecoder()
        /// Vector texts of compact write requests already parsed.
        private var vectors: [String: VersionVector] = [:]

        public init() {
            encoder.dataEncodingStrategy = .custom { data, encoder in
                guard let attachments = encoder.userInfo[Codec.attachmentsKey] as? Attachments else {
                    throw EncodingError.invalidValue(data, .init(codingPath: encoder.codingPath, debugDescription: "no attachments"))
                }
                var container = encoder.unkeyedContainer()
                try container.encode(attachments.bytes.count)
                try container.encode(data.count)
                attachments.bytes.append(contentsOf: data)
                attachments.used = true
            }
            decoder.dataDecodingStrategy = .custom { decoder in
                var container = try decoder.unkeyedContainer()
                let offset = try container.decode(Int.self), length = try container.decode(Int.self)
                guard let attachments = decoder.userInfo[Codec.attachmentsKey] as? Attachments, let body = attachments.body,
                      offset >= 0, length >= 0, offset <= body.count - length else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "content [\(offset), \(length)] is outside the message")
                }
                return Data(body[offset..<(offset + length)])
            }
        }

        /// The frame body of `message`.
        public func encode<T: Encodable>(_ message: T) throws -> [UInt8] {
            if let response = message as? Response, response.isPlainOK { return Self.plainOK }
            if let request = message as? Request, let compact = CompactWrite.encode(request) { return compact }
            let attachments = Attachments()
            encoder.userInfo[Self.attachmentsKey] = attachments
            defer { encoder.userInfo[Self.attachmentsKey] = nil }
            let json = try encoder.encode(message)
            guard attachments.used else { return Array(json) }
            let length = json.count
            var body = [UInt8]()
            body.reserveCapacity(4 + length + attachments.bytes.count)
            body += lengthPrefix(length)
            body += json
            body += attachments.bytes
            return body
        }

        /// The message in a frame body.
        public func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
            if T.self == Response.self, body == Self.plainOK { return Response(ok: true) as! T }
            if T.self == Request.self, body.first == CompactWrite.magic {
                return try CompactWrite.decode(body, vectors: &vectors) as! T
            }
            let attachments = Attachments()
            decoder.userInfo[Self.attachmentsKey] = attachments
            defer { decoder.userInfo[Self.attachmentsKey] = nil }
            if body.first == UInt8(ascii: "{") || body.isEmpty {
                // No contents follow: only empty ones can be named.
                attachments.body = UnsafeRawBufferPointer(start: nil, count: 0)
                return try decoder.decode(type, from: Data(body))
            }
            guard body.count >= 4 else { throw SyncError.transport("a message of \(body.count) bytes is too short") }
            let length = prefixedLength(body.prefix(4))
            guard length <= body.count - 4 else {
                throw SyncError.transport("a message says its JSON is \(length) bytes long, but only \(body.count - 4) follow")
            }
            return try body.withUnsafeBytes { raw in
                attachments.body = UnsafeRawBufferPointer(rebasing: raw[(4 + length)...])
                defer { attachments.body = nil }
                return try decoder.decode(type, from: Data(raw[4..<(4 + length)]))
            }
        }

        /// Writes `message` as one frame.
        public func write<T: Encodable>(_ message: T, to fd: Int32) throws {
            try writeFrame(fd, try encode(message))
        }

        /// Reads one message; nil at a clean end of input.
        public func read<T: Decodable>(_ type: T.Type, from fd: Int32) throws -> T? {
            guard let body = try readFrame(fd) else { return nil }
            return try decode(type, from: body)
        }
    }

    /// The 4 big-endian bytes that give a length: a frame's, or a message's JSON's.
    static func lengthPrefix(_ length: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
         UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
    }

    /// The length in 4 big-endian bytes (`lengthPrefix`).
    static func prefixedLength<C: Collection>(_ bytes: C) -> Int where C.Element == UInt8 {
        bytes.reduce(0) { ($0 << 8) | Int($1) }
    }

    /// Reads one frame; nil at a clean end of input.
    public static func readFrame(_ fd: Int32) throws -> [UInt8]? {
        guard let header = try readExactly(fd, 4) else { return nil }
        let length = prefixedLength(header)
        guard length <= maximumFrame else { throw SyncError.transport("the peer sent a frame of \(length) bytes (the limit is \(maximumFrame)); is it a Relay peer?") }
        guard let body = try readExactly(fd, length) else { throw SyncError.transport("the peer closed the connection in the middle of a message") }
        return body
    }

    public static func writeFrame(_ fd: Int32, _ payload: [UInt8]) throws {
        let length = payload.count
        var bytes = lengthPrefix(length)
        bytes.append(contentsOf: payload)
        if case .failure(let errno) = bytes.withUnsafeBytes({ Syscall.writeAll(fd, $0) }) {
            throw SyncError.transport("the connection to the peer broke (\(errno))", cause: errno)
        }
    }

    private static func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8]? {
        switch Syscall.read(fd, count: count) {
        case .failure(let errno): throw SyncError.transport("reading from the peer failed (\(errno))", cause: errno)
        case .success(let bytes) where bytes.isEmpty && count > 0: return nil
        case .success(let bytes) where bytes.count < count:
            throw SyncError.transport("the peer closed the connection in the middle of a message")
        case .success(let bytes): return bytes
        }
    }
}
