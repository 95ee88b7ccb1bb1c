import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

/// Protocol 6's message bodies: JSON, with file contents raw after it.
@Suite("Sync protocol messages carry file contents raw")
struct SyncCodecTests {
    /// Bytes JSON and base64 would both have to escape or expand: NUL, quotes, braces, invalid
    /// UTF-8, and a body of its own that begins with `{`.
    static let awkward: [UInt8] = Array("{\"ok\":true}".utf8) + [0, 0xFF, 0xFE, 10, 13, 0x22, 0x5C] + Array(repeating: 0x7B, count: 300)

    @Test func contentsSurviveTheRoundTripByteForByteAndTravelRaw() throws {
        let codec = SyncProtocol.Codec()
        var request = SyncProtocol.Request(op: "stage")
        request.path = "Research/notes.md"
        request.content = Data(Self.awkward)
        let body = try codec.encode(request)
        // The content is at the end, as is: not base64 inside the JSON.
        #expect(Array(body.suffix(Self.awkward.count)) == Self.awkward)
        #expect(body.count < 4 + 200 + Self.awkward.count, "\(body.count) bytes for \(Self.awkward.count) of content")
        let decoded = try codec.decode(SyncProtocol.Request.self, from: body)
        #expect(decoded.op == "stage" && decoded.path == "Research/notes.md")
        #expect(decoded.content.map(Array.init) == Self.awkward)
    }

    /// An empty file is a content of length 0: it has no bytes after the JSON, and still
    /// decodes (as an empty content, not a missing one).
    @Test func anEmptyFilesContentRoundTrips() throws {
        let codec = SyncProtocol.Codec()
        var request = SyncProtocol.Request(op: "stage")
        request.path = "notes/empty.md"
        request.content = Data()
        let decoded = try codec.decode(SyncProtocol.Request.self, from: try codec.encode(request))
        #expect(decoded.content == Data())
        var response = SyncProtocol.Response(ok: true)
        response.contents = [SyncProtocol.ReadResult(content: Data()), SyncProtocol.ReadResult(content: Data())]
        #expect(try codec.decode(SyncProtocol.Response.self, from: try codec.encode(response)).contents?.map(\.content) == [Data(), Data()])
    }

    @Test func manyContentsInOneAnswerComeBackInOrder() throws {
        let codec = SyncProtocol.Codec()
        var response = SyncProtocol.Response(ok: true)
        let files: [[UInt8]] = [Self.awkward, [], Array("second\n".utf8), Array(repeating: 0, count: 70_000)]
        response.contents = files.map { SyncProtocol.ReadResult(content: Data($0)) } + [SyncProtocol.ReadResult(error: "changed", message: "x")]
        let decoded = try codec.decode(SyncProtocol.Response.self, from: try codec.encode(response))
        #expect(decoded.contents?.prefix(4).map { $0.content.map(Array.init) } == files.map { Optional($0) })
        #expect(decoded.contents?.last?.error == "changed" && decoded.contents?.last?.content == nil)
    }

    @Test func aMessageWithoutContentsIsPlainJSONAsBefore() throws {
        let codec = SyncProtocol.Codec()
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        let body = try codec.encode(hello)
        #expect(body.first == UInt8(ascii: "{"))
        #expect(try JSONDecoder().decode(SyncProtocol.Request.self, from: Data(body)).version == SyncProtocol.version)
        // The commonest answer is written and read without a JSON encoder, and is still JSON.
        #expect(try codec.encode(SyncProtocol.Response(ok: true)) == Array(#"{"ok":true}"#.utf8))
        #expect(try codec.decode(SyncProtocol.Response.self, from: Array(#"{"ok":true}"#.utf8)) == SyncProtocol.Response(ok: true))
        var notPlain = SyncProtocol.Response(ok: true)
        notPlain.hash = "abc"
        #expect(try codec.decode(SyncProtocol.Response.self, from: try codec.encode(notPlain)).hash == "abc")
    }

    @Test func aContentReferenceOutsideTheMessageIsRefusedNotRead() throws {
        let codec = SyncProtocol.Codec()
        var request = SyncProtocol.Request(op: "stage")
        request.content = Data("0123456789".utf8)
        var body = try codec.encode(request)
        // Cut the contents short: the reference [0, 10] now points past the end.
        body.removeLast(5)
        #expect(throws: DecodingError.self) { try codec.decode(SyncProtocol.Request.self, from: body) }
        // A JSON length longer than the body.
        #expect(throws: SyncError.self) { try codec.decode(SyncProtocol.Request.self, from: [0, 0, 1, 0, UInt8(ascii: "{")]) }
        #expect(throws: SyncError.self) { try codec.decode(SyncProtocol.Request.self, from: [0, 0]) }
        // A negative offset or length.
        let forged = Array(#"{"op":"stage","content":[-1,4]}"#.utf8)
        let length = forged.count
        let message = [0, 0, UInt8(length >> 8), UInt8(length & 0xFF)] + forged + Array("abcd".utf8)
        #expect(throws: DecodingError.self) { try codec.decode(SyncProtocol.Request.self, from: message) }
    }

    /// Serves a fresh replica under `base` the frame bodies `bodies` between a hello and a bye
    /// (as `relay sync-serve` would), and returns every answer in order: hello's first, bye's last.
    func served(_ bodies: [[UInt8]], in base: String) throws -> [SyncProtocol.Response] {
        let replica = try ScratchWorkspace(in: base, name: "desktop")
        let toServer = Pipe(), fromServer = Pipe(), codec = SyncProtocol.Codec()
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        for body in [try codec.encode(hello)] + bodies + [try codec.encode(SyncProtocol.Request(op: "bye"))] {
            try SyncProtocol.writeFrame(toServer.fileHandleForWriting.fileDescriptor, body)
        }
        try SyncServer.serve(try LocalEndpoint(workspace: replica.workspace), input: toServer.fileHandleForReading.fileDescriptor,
                             output: fromServer.fileHandleForWriting.fileDescriptor)
        return try (0..<(bodies.count + 2)).map { _ in
            try #require(try codec.read(SyncProtocol.Response.self, from: fromServer.fileHandleForReading.fileDescriptor))
        }
    }

    /// A server answering a malformed message says so, and goes on serving.
    @Test func aServerAnswersAMalformedMessageWithAnErrorAndGoesOn() throws {
        let base = NSTemporaryDirectory() + "relay-codec-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let answers = try served([[0, 0, 0, 200, UInt8(ascii: "x")]], in: base)
        #expect(answers[0].ok)
        #expect(!answers[1].ok && answers[1].message?.contains("200 bytes") == true, "\(answers[1].message ?? "")")
        #expect(answers[2].ok)
    }

    /// `expectWrites` (protocol 8) is a hint: hostile paths in it are only hashed into lock-file
    /// names, and are answered like any; one without its `paths` gets an error naming the field.
    @Test func anExpectWritesHintIsAnsweredAndOneWithoutPathsNamesTheField() throws {
        let base = NSTemporaryDirectory() + "relay-codec-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let codec = SyncProtocol.Codec()
        var hint = SyncProtocol.Request(op: "expectWrites")
        hint.paths = ["notes/a.md", "../evil.md", "/etc/passwd", ".relay/replica-id"]
        hint.hashes = ["../../etc/passwd", String(repeating: "a", count: 64), ""]
        let answers = try served([try codec.encode(hint), try codec.encode(SyncProtocol.Request(op: "expectWrites"))], in: base)
        #expect(answers[0].ok && answers[1].ok && answers[3].ok)
        #expect(!answers[2].ok && answers[2].message?.contains("'paths'") == true, "\(answers[2].message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: base + "/evil.md"))
    }

    /// Index rows travel in their compact form and come back equal, whatever their paths hold
    /// (tabs, newlines, quotes, non-ASCII), tombstones and extreme numbers included.
    @Test func indexRowsRoundTripInTheirCompactForm() throws {
        var vector = VersionVector()
        vector.increment("laptop")
        vector.increment("desktop")
        let rows = [
            SyncIndex.Entry(path: "notes/tab\there/new\nline \"quoted\" café 日本.md", hash: String(repeating: "ab", count: 32),
                            stamp: FileStamp(inode: .max, size: Int(Int32.max) * 4, modifiedNanoseconds: -5),
                            vector: vector, deleted: false, scanned: .max, sequence: 7),
            SyncIndex.Entry(path: "gone.md", hash: "", stamp: FileStamp(inode: 0, size: 0, modifiedNanoseconds: 0),
                            vector: VersionVector(), deleted: true, scanned: 0, sequence: .max),
        ]
        let codec = SyncProtocol.Codec()
        var response = SyncProtocol.Response(ok: true)
        response.entries = rows
        let body = try codec.encode(response)
        // Raw after the JSON: the JSON holds a reference, not the rows.
        #expect(!String(decoding: body, as: UTF8.self).contains("\"path\""))
        let back = try codec.decode(SyncProtocol.Response.self, from: body)
        #expect(back.entries == rows)
        #expect(try SyncProtocol.EntryRows.decode(SyncProtocol.EntryRows.encode([])) == [])
    }

    /// Rows a peer garbled are refused with the row named, never read past their end.
    @Test func garbledIndexRowsAreRefusedNamingTheRow() throws {
        var vector = VersionVector()
        vector.increment("laptop")
        let row = SyncIndex.Entry(path: "a.md", hash: String(repeating: "0", count: 64), stamp: FileStamp(inode: 1, size: 2, modifiedNanoseconds: 3),
                                  vector: vector, deleted: false, scanned: 4, sequence: 5)
        let good = SyncProtocol.EntryRows.encode([row, row])
        let one = good.count / 2
        func reason(_ bytes: [UInt8]) -> String {
            do {
                _ = try SyncProtocol.EntryRows.decode(bytes)
                return "accepted"
            } catch { return "\(error)" }
        }
        // Cut anywhere inside the second row.
        for cut in [one + 1, one + 6, good.count - 1] {
            #expect(reason(Array(good.prefix(cut))).hasPrefix("index row 2 of the answer:"), "\(cut)")
        }
        // A path length far past the end.
        var long = good
        long[0] = 0xFF; long[1] = 0xFF; long[2] = 0xFF; long[3] = 0x7F
        #expect(reason(long).contains("row 1") && reason(long).contains("path runs past the end"))
        // A path that is not UTF-8.
        var invalid = good
        invalid[4] = 0xFF
        #expect(reason(invalid).contains("path is not UTF-8"))
        // A malformed vector, and a tombstone flag that is neither 0 nor 1.
        var badVector = good
        badVector[one - 1] = UInt8(ascii: ",")
        #expect(reason(badVector).contains("version vector"), "\(reason(badVector))")
        var badFlag = good
        let flag = one - 4 - vector.description.utf8.count - 1
        badFlag[flag] = 2
        #expect(reason(badFlag).contains("tombstone flag is 2"), "\(reason(badFlag))")
    }

    /// `stage` and `stageRemoval` travel in their binary form and come back equal, with or
    /// without `expected` and `peer`, awkward paths and contents included; a request with a
    /// field that form does not carry goes as JSON.
    @Test func writeRequestsRoundTripInTheirCompactForm() throws {
        var vector = VersionVector()
        vector.increment("laptop")
        let codec = SyncProtocol.Codec()
        var stage = SyncProtocol.Request(op: "stage")
        stage.path = "notes/tab\there \"q\" café.md"
        stage.content = Data(Self.awkward)
        stage.expected = String(repeating: "c", count: 64)
        stage.vector = vector
        stage.peer = "laptop-replica"
        var bare = SyncProtocol.Request(op: "stage")
        bare.path = "empty.md"
        bare.content = Data()
        bare.vector = VersionVector()
        var removal = SyncProtocol.Request(op: "stageRemoval")
        removal.path = "gone.md"
        removal.expected = String(repeating: "d", count: 64)
        removal.vector = vector
        for request in [stage, bare, removal] {
            let body = try codec.encode(request)
            #expect(body.first == SyncProtocol.CompactWrite.magic, "\(request.op) \(request.path ?? "")")
            let back = try codec.decode(SyncProtocol.Request.self, from: body)
            #expect(back.op == request.op && back.path == request.path && back.expected == request.expected
                    && back.vector == request.vector && back.peer == request.peer && back.content == request.content)
        }
        var overwriting = stage
        overwriting.overwrite = true
        let json = try codec.encode(overwriting)
        #expect(json.first != SyncProtocol.CompactWrite.magic)
        #expect(try codec.decode(SyncProtocol.Request.self, from: json).overwrite == true)
    }

    /// A garbled compact write request is refused with what is wrong, never read past its end.
    @Test func garbledCompactWriteRequestsAreRefusedSayingWhy() throws {
        var vector = VersionVector()
        vector.increment("laptop")
        var stage = SyncProtocol.Request(op: "stage")
        stage.path = "a.md"
        stage.content = Data("hello\n".utf8)
        stage.vector = vector
        let codec = SyncProtocol.Codec()
        let good = try codec.encode(stage)
        func reason(_ bytes: [UInt8]) -> String {
            do {
                _ = try codec.decode(SyncProtocol.Request.self, from: bytes)
                return "accepted"
            } catch { return "\(error)" }
        }
        for cut in 2..<good.count {
            #expect(reason(Array(good.prefix(cut))).contains("runs past the end"), "\(cut)")
        }
        var op = good
        op[1] = 9
        #expect(reason(op).contains("op 9"))
        var flag = good
        flag[2 + 4 + 4] = 2
        #expect(reason(flag).contains("expected flag is 2"))
        var path = good
        path[6] = 0xFF
        #expect(reason(path).contains("path is not UTF-8"))
        #expect(reason(good + [0]).contains("1 bytes left over"))
        var badVector = good
        badVector[2 + 4 + 4 + 1 + 4] = UInt8(ascii: ":")
        #expect(reason(badVector).contains("version vector"), "\(reason(badVector))")
    }
}
