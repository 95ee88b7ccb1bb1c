// The serving side of the sync protocol: one loop that reads a request, asks the local
// replica, and writes the answer, until bye.

import Foundation
import WorkspaceCore

/// `relay sync-serve --stdio`: answers a client's requests about the local replica until the
/// client says `bye` or closes the connection.
public enum SyncServer {
    public static func serve(_ endpoint: LocalEndpoint, input: Int32 = 0, output: Int32 = 1) throws {
        try SyncError.wrappingDatabase { try serveWrapped(endpoint, input: input, output: output) }
    }

    private static func serveWrapped(_ endpoint: LocalEndpoint, input: Int32, output: Int32) throws {
        let codec = SyncProtocol.Codec()
        // Whatever the client left unflushed (it went away) is committed, not lost.
        defer { _ = try? endpoint.flush() }
        // Every sync asks for a refresh after hello: it begins now, while hello is read and
        // answered and the client walks its own tree, instead of when the request arrives.
        // Hello only reads the replica's id; anything else waits for this refresh first.
        var early: BackgroundWork<SyncIndex.Snapshot>? = BackgroundWork { try endpoint.refreshSnapshot() }
        defer { _ = try? early?.wait() }
        var tally = SyncTimings.Tally("server")
        defer { tally.report() }
        // The requests that come one to a sync (not the per-path ones), on the wall clock.
        var timings = SyncTimings("server")
        timings.mark("serving")
        var perPath = 0
        while let frame = try tally.time("wait for a request", { try SyncProtocol.readFrame(input) }) {
            var response = SyncProtocol.Response(ok: true)
            var op = "?"
            // The snapshot of the refresh begun at the start, kept until its answer is written
            // and then freed on another thread.
            var answered: SyncIndex.Snapshot?
            do {
                let request = try tally.time("decode", { try codec.decode(SyncProtocol.Request.self, from: frame) })
                op = request.op
                if op == "flush" && perPath > 0 { timings.mark("got flush after \(perPath) per-path requests") }
                if request.op == "bye" {
                    // The answer to bye means everything is committed: the client need not
                    // wait for this process to end (freeing an index of 100,000 rows, closing).
                    // A flush that fails is answered as any failed request is.
                    _ = try? early?.wait()
                    early = nil
                    _ = try endpoint.flush()
                    try codec.write(response, to: output)
                    // The client has its answer and does not wait for this process: the index's
                    // log is checkpointed now, not inside the next sync's commit, and truncated,
                    // so that the next process to open the index has no log to read first.
                    try? endpoint.index.checkpointAndTruncate()
                    return
                }
                // The refresh begun at the start is finished before anything but hello touches
                // the endpoint; the client's refresh request takes its snapshot.
                let begun = request.op == "hello" ? nil : early
                if request.op != "hello" { early = nil }
                let snapshot = begun.map { begun in Result { try begun.wait() } }
                answered = try? snapshot?.get()
                try tally.time(request.op) {
                    if request.op == "refresh", let snapshot {
                        try answerRefresh(request, endpoint, snapshot: try snapshot.get(), &response)
                    } else {
                        try handle(request, endpoint, &response)
                    }
                }
            } catch let error as SyncError {
                response = SyncProtocol.Response(ok: false)
                switch error.code {
                case .changed: response.error = "changed"
                case .refused: response.error = "refused"
                case .transport, .stopped, .corruptIndex, .badPeer, .database: response.error = "failed"
                }
                response.message = error.description
            } catch {
                response = SyncProtocol.Response(ok: false)
                response.error = "failed"
                response.message = "\(error)"
            }
            try tally.time("answer \(op)", { try codec.write(response, to: output) })
            if let snapshot = answered.take() { ReleaseLater.release(snapshot) }
            if SyncTimings.enabled {
                if !["stage", "stageRemoval", "read", "record", "setBase"].contains(op) {
                    timings.mark("answered \(op)")
                    perPath = 0
                } else {
                    perPath += 1
                    if perPath == 1 { timings.mark("answered the first \(op)") }
                }
            }
        }
    }

    /// The answer to `refresh`: the rows written after the client's `since` when it has a copy
    /// of this epoch, else every row; the sequence, the digest, and the mark for the client.
    private static func answerRefresh(_ request: SyncProtocol.Request, _ endpoint: LocalEndpoint, snapshot: SyncIndex.Snapshot,
                                      _ response: inout SyncProtocol.Response) throws {
        response.epoch = endpoint.index.epoch
        response.sequence = snapshot.sequence
        response.digest = snapshot.digest
        if let since = request.since, request.epoch == endpoint.index.epoch, since <= snapshot.sequence {
            let entries = snapshot.entries
            response.entries = entries.values.indices.filter { entries.values[$0].sequence > since }.map { entries.values[$0] }
            response.whole = false
        } else {
            response.entries = Array(snapshot.entries.values)
            response.whole = true
        }
        if let peer = request.peer { response.mark = try endpoint.syncMark(peer: peer) }
    }

    private static func handle(_ request: SyncProtocol.Request, _ endpoint: LocalEndpoint, _ response: inout SyncProtocol.Response) throws {
        func need<T>(_ value: T?, _ name: String) throws -> T {
            guard let value else { throw SyncError.transport("request '\(request.op)' lacks '\(name)'") }
            return value
        }
        switch request.op {
        case "hello":
            guard request.version == SyncProtocol.version else {
                throw SyncError.transport("this relay speaks sync protocol \(SyncProtocol.version), the client \(request.version.map(String.init) ?? "?"); use the same Relay version on both machines")
            }
            response.replica = endpoint.replica
            response.location = endpoint.location
            if endpoint.startedReplica { response.started = true }
            response.version = SyncProtocol.version
        case "refresh":
            try answerRefresh(request, endpoint, snapshot: try endpoint.refreshSnapshot(), &response)
        case "setSyncMark":
            try endpoint.setSyncMark(try need(request.mark, "mark"), peer: try need(request.peer, "peer"))
        case "ack":
            // What this connection wrote is committed before it is reported.
            try endpoint.index.commitWrites()
            let (entries, sequence) = try endpoint.index.changes(since: try need(request.since, "since"))
            response.epoch = endpoint.index.epoch
            response.sequence = sequence
            response.entries = entries
            response.whole = false
        case "read":
            response.content = Data(try endpoint.read(try need(request.path, "path"), expected: try need(request.expected, "expected")))
        case "readMany":
            response.contents = try need(request.reads, "reads").prefix(SyncProtocol.readManyFiles).map { wanted in
                do { return SyncProtocol.ReadResult(content: Data(try endpoint.read(wanted.path, expected: wanted.expected))) } catch let error as SyncError {
                    switch error.code {
                    case .changed: return SyncProtocol.ReadResult(error: "changed", message: error.description)
                    case .refused: return SyncProtocol.ReadResult(error: "refused", message: error.description)
                    case .transport, .stopped, .corruptIndex, .badPeer, .database: throw error
                    }
                }
            }
        case "install":
            response.entry = try endpoint.install(try need(request.path, "path"), bytes: Array(try need(request.content, "content")),
                                                  expected: request.expected, overwrite: request.overwrite ?? false,
                                                  vector: try need(request.vector, "vector"))
        case "stage":
            try endpoint.stage(try need(request.path, "path"), bytes: Array(try need(request.content, "content")),
                               expected: request.expected, vector: try need(request.vector, "vector"), basePeer: request.peer)
        case "flush":
            let results = try endpoint.flush()
            response.entries = results.values.compactMap { $0 }
            response.changed = results.filter { $0.value == nil }.map(\.key)
        case "expectWrites":
            endpoint.expectWrites(try need(request.paths, "paths"), contents: request.hashes ?? [])
        case "stageRemoval":
            try endpoint.stageRemoval(try need(request.path, "path"), expected: try need(request.expected, "expected"),
                                      vector: try need(request.vector, "vector"))
        case "remove":
            response.entry = try endpoint.remove(try need(request.path, "path"), expected: try need(request.expected, "expected"),
                                                 vector: try need(request.vector, "vector"))
        case "record":
            try endpoint.record(try need(request.entry, "entry"))
        case "base":
            response.hash = try endpoint.base(peer: try need(request.peer, "peer"), path: try need(request.path, "path"))
        case "setBase":
            try endpoint.setBase(peer: try need(request.peer, "peer"), path: try need(request.path, "path"),
                                 hash: try need(request.hash, "hash"), vector: try need(request.vector, "vector"),
                                 content: request.content.map(Array.init))
        case "mergeBases":
            response.bases = try endpoint.mergeBases(path: try need(request.path, "path"))
        case "held":
            response.held = try endpoint.heldVersions(path: try need(request.path, "path"))
        case "loadObject":
            response.content = try endpoint.loadObject(try need(request.hash, "hash")).map { Data($0) }
        case "recordConflict":
            try endpoint.recordConflict(path: try need(request.path, "path"), copy: try need(request.copy, "copy"),
                                        kept: try need(request.kept, "kept"), copied: try need(request.copied, "copied"))
        default:
            throw SyncError.transport("unknown request '\(request.op)'")
        }
    }
}
