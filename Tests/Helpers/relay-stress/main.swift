// relay-stress: a test tool, not shipped. It drives WorkspaceCore's primitives in loops so the
// integration tests can kill -9 a writer at any instant and hammer the lock from many processes.
//
//   relay-stress rewrite WS PATH [--no-durable]    rewrite PATH with self-checking versions, forever
//   relay-stress verify FILE                       exit 0 and print N if FILE is whole version N
//   relay-stress append WS PATH COUNT TAG          COUNT coordinated appends of "TAG i <padding>"
//   relay-stress append-forever WS PATH TAG        the same without end
//   relay-stress increment WS PATH COUNT           COUNT read-modify-write increments of a counter
//   relay-stress update-append WS PATH COUNT TAG   COUNT updates that each add a line "TAG i"
//   relay-stress write WS PATH TEXT                one atomic write, as the engine (an agent) writes
//   relay-stress hostile-peer                      a sync peer on stdin/stdout that offers paths
//                                                  outside the workspace (a test double)

import Crypto
import Foundation
import WorkspaceCore
import WorkspaceSync

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("relay-stress: " + message + "\n").utf8))
    exit(1)
}

/// Version `n`: a header naming the version, the payload length and its SHA-256, then the
/// payload. Lengths vary from tens of bytes to ~200 KiB so kills land mid-write often.
func version(_ n: Int) -> [UInt8] {
    let length = 40 + (n &* 7919) % 200_000
    var payload = [UInt8](repeating: 0, count: length)
    var state = UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15 | 1
    for i in 0..<length {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        payload[i] = UInt8(97 + state % 26)
    }
    let sum = SHA256.hash(data: payload).map { String(format: "%02x", $0) }.joined()
    return Array("relay-stress v=\(n) n=\(length) sum=\(sum)\n".utf8) + payload
}

func verify(_ bytes: [UInt8]) -> Int? {
    guard let newline = bytes.firstIndex(of: 10) else { return nil }
    let header = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
    guard header.count == 4, header[0] == "relay-stress",
          let n = Int(header[1].dropFirst(2)), let length = Int(header[2].dropFirst(2)) else { return nil }
    let payload = bytes[(newline + 1)...]
    let sum = SHA256.hash(data: Array(payload)).map { String(format: "%02x", $0) }.joined()
    guard payload.count == length, "sum=\(sum)" == header[3], version(n) == bytes else { return nil }
    return n
}

func openWorkspace(_ path: String, durable: Bool = true) -> Workspace {
    do {
        var workspace = try Workspace.open(at: path)
        workspace.durable = durable
        workspace.lockTimeout = .seconds(120)
        return workspace
    } catch { fail("\(error)") }
}

/// A line of 30 to ~3,000 bytes, long enough that an unlocked writer would interleave.
func appendLine(_ tag: String, _ i: Int) -> String {
    "\(tag) \(i) " + String(repeating: Character(UnicodeScalar(UInt8(97 + i % 26))), count: 20 + (i &* 131) % 3000)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: see the comment at the top of main.swift") }
do {
    switch (mode, arguments.count) {
    case ("rewrite", 3), ("rewrite", 4):
        let workspace = openWorkspace(arguments[1], durable: !arguments.contains("--no-durable"))
        var n = Int.random(in: 0..<1_000_000_000)
        while true {
            try workspace.write(arguments[2], bytes: version(n))
            n += 1
        }
    case ("write", 4):
        try openWorkspace(arguments[1]).write(arguments[2], string: arguments[3])
    case ("hostile-peer", 1):
        // Offers files at hostile paths next to one honest file, and accepts whatever it is sent.
        let content = Array("evil\n".utf8), honest = Array("honest\n".utf8)
        let paths = ["../evil.md", "/tmp/relay-hostile-absolute.md", ".relay/replica-id", "Research/../../evil2.md", "ok/../../../evil3.md", "ok.md"]
        func entry(_ path: String) -> SyncIndex.Entry {
            var vector = VersionVector()
            vector.increment("hostile0000000000")
            return SyncIndex.Entry(path: path, hash: ContentHash(of: path == "ok.md" ? honest : content).hex,
                                   stamp: FileStamp(inode: 1, size: 5, modifiedNanoseconds: 1), vector: vector, deleted: false, scanned: 1)
        }
        let codec = SyncProtocol.Codec()
        while let request = try codec.read(SyncProtocol.Request.self, from: 0) {
            var response = SyncProtocol.Response(ok: true)
            switch request.op {
            case "hello": response.replica = "hostile0000000000"; response.version = SyncProtocol.version
            case "refresh": response.entries = paths.map(entry)
            case "read": response.content = Data(request.path == "ok.md" ? honest : content)
            case "readMany": response.contents = (request.reads ?? []).map { SyncProtocol.ReadResult(content: Data($0.path == "ok.md" ? honest : content)) }
            case "install", "remove": response.entry = entry(request.path ?? "x")
            default: break
            }
            try codec.write(response, to: 1)
            if request.op == "bye" { break }
        }
    case ("verify", 2):
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: arguments[1])))
        guard let n = verify(bytes) else { fail("\(arguments[1]): not a whole version (\(bytes.count) bytes)") }
        print(n)
    case ("append", 5):
        let workspace = openWorkspace(arguments[1])
        for i in 0..<(Int(arguments[3]) ?? 0) { try workspace.append(arguments[2], line: appendLine(arguments[4], i)) }
    case ("append-forever", 4):
        let workspace = openWorkspace(arguments[1])
        var i = 0
        while true { try workspace.append(arguments[2], line: appendLine(arguments[3], i)); i += 1 }
    case ("increment", 4):
        let workspace = openWorkspace(arguments[1])
        for _ in 0..<(Int(arguments[3]) ?? 0) {
            try workspace.update(arguments[2]) { old in
                let text = String(decoding: old ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                return Array("\((Int(text) ?? 0) + 1)\n".utf8)
            }
        }
    case ("update-append", 5):
        let workspace = openWorkspace(arguments[1])
        for i in 0..<(Int(arguments[3]) ?? 0) {
            try workspace.update(arguments[2]) { old in (old ?? []) + Array("\(arguments[4]) \(i)\n".utf8) }
        }
    default:
        fail("unknown mode or wrong arguments: \(arguments.joined(separator: " "))")
    }
} catch {
    fail("\(error)")
}
