import Foundation
import Glibc

/// A replica reached through a command that runs `relay sync-serve --stdio PATH` at its other
/// end — normally `ssh [user@]host relay sync-serve --stdio PATH`.
///
/// For example:
/// ```swift
/// let peer = try RemoteEndpoint.ssh("ada@desktop:notes")
/// let summary = try Reconciler(local: try LocalEndpoint(workspace: laptop), peer: peer).run()
/// ```
public final class RemoteEndpoint: ReplicaEndpoint {
    /// The peer's replica id, from its answer to hello (read now if it was not read yet).
    public var replica: String {
        if !greeted { try? connect() }
        return peerReplica
    }
    private var peerReplica = ""
    /// Whether the peer made its folder a new replica for this sync (`ssh(startReplica:)`),
    /// from its answer to hello.
    public private(set) var startedReplica = false
    /// Whether the answer to hello was read.
    private var greeted = false
    public let location: String
    /// The command at the other end; nil for a connection made by the caller.
    private let process: PeerProcess?
    private let toPeer: FileHandle
    private let fromPeer: FileHandle
    private var open = true
    private let codec = SyncProtocol.Codec()

    /// Where this client keeps its copy of the peer's index (the local replica's index), so a
    /// refresh brings only the rows written since the last sync; nil: the whole index each time.
    /// `Reconciler` sets it to the local replica's index when it is not set.
    public var cache: SyncIndex?
    public private(set) var indexTransfer: IndexTransfer?
    /// Requests this client sent and then waited for (a round trip each over a real link).
    public private(set) var roundTrips = 0
    /// The epoch and sequence of the last refresh, which the ack continues from.
    private var refreshed: (epoch: String, sequence: Int64)?

    /// Requests sent whose answers are not read yet (only their op and path are kept), and
    /// the failures found among those answers. At most `maximumInFlight` wait, so the
    /// server's small answers never fill the pipe while it waits for us to read.
    private var inFlight: [(op: String, path: String?)] = []
    private var deferredFailures: [(path: String, error: EndpointError)] = []
    static let maximumInFlight = 128

    /// Starts `command` (its first element is looked up in PATH) and says hello. With
    /// `waitForHello` false the answer is read by `connect()` (or the first use of `replica`):
    /// the caller works while the peer starts — a sync refreshes its own index meanwhile, and
    /// the server begins its refresh at hello.
    public init(command: [String], location: String, waitForHello: Bool = true) throws {
        let process: PeerProcess
        do { process = try PeerProcess(command) } catch let error as POSIXError {
            throw EndpointError.transport("could not start \(command.first ?? "?"): \(String(cString: strerror(error.code.rawValue)))")
        }
        self.process = process
        toPeer = process.input
        fromPeer = process.output
        self.location = location
        try sayHello()
        if waitForHello { try connect() }
    }

    /// A connection the caller made (to a `SyncServer` on a socket or a pair of pipes): the
    /// protocol from `hello` on.
    public init(writingTo toPeer: FileHandle, readingFrom fromPeer: FileHandle, location: String) throws {
        process = nil
        self.toPeer = toPeer
        self.fromPeer = fromPeer
        self.location = location
        try sayHello()
        try connect()
    }

    /// Sends hello; `connect` reads the answer.
    private func sayHello() throws {
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        roundTrips += 1
        do { try codec.write(hello, to: toPeer.fileDescriptor) } catch let error as EndpointError {
            throw EndpointError.transport("\(location): \(error); the peer said: \(peerErrors())")
        }
    }

    /// Reads the answer to hello: the peer's replica id, or why it would not sync (another
    /// protocol version, a folder that is not a workspace, no relay there).
    public func connect() throws {
        guard !greeted else { return }
        greeted = true
        let response: SyncProtocol.Response
        do { response = try receive(op: "hello", path: nil) } catch let error as EndpointError {
            throw EndpointError.transport("\(location): \(error); the peer said: \(peerErrors())")
        }
        guard let replica = response.replica, !replica.isEmpty else {
            throw EndpointError.transport("\(location): the peer did not say which replica it is")
        }
        peerReplica = replica
        startedReplica = response.started ?? false
    }

    /// `[user@]host:path` over the system ssh (or `RELAY_SSH`, e.g. "ssh -p 2222"), running
    /// `remoteRelay` (default "relay") on the other side. With `startReplica`, a missing or
    /// empty folder there is made a new replica first (`sync-serve --start`).
    public static func ssh(_ spec: String, sshCommand: [String]? = nil, remoteRelay: String = "relay", waitForHello: Bool = true,
                           startReplica: Bool = false) throws -> RemoteEndpoint {
        guard let colon = spec.firstIndex(of: ":") else { throw EndpointError.transport("\(spec): expected [user@]host:path") }
        let host = String(spec[..<colon]), path = String(spec[spec.index(after: colon)...])
        guard !host.isEmpty, !path.isEmpty else { throw EndpointError.transport("\(spec): expected [user@]host:path") }
        let ssh = sshCommand ?? (ProcessInfo.processInfo.environment["RELAY_SSH"].map { $0.split(separator: " ").map(String.init) } ?? ["ssh"])
        // The remote command goes through the remote shell: quote the path.
        let quoted = "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return try RemoteEndpoint(command: ssh + [host, "\(remoteRelay) sync-serve --stdio \(startReplica ? "--start " : "")\(quoted)"], location: spec, waitForHello: waitForHello)
    }

    deinit { close(waitForExit: true) }

    /// Says bye and lets go of the peer. A bye the peer answered means it has committed
    /// everything; its process then only has to end, and is not waited for unless `waitForExit`.
    public func close(waitForExit: Bool = false) {
        guard open else { return }
        open = false
        if let process, !process.isRunning { return }
        let committed = (try? send(SyncProtocol.Request(op: "bye"))) != nil
        try? toPeer.close()
        if waitForExit || !committed { process?.waitUntilExit() }
    }

    private func peerErrors() -> String {
        guard let process else { return "nothing" }
        process.terminate()
        let text = process.errorOutput().trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "nothing" : text
    }

    /// Whether a request that writes to the peer's index or tree was sent since the last
    /// refresh (anything but reads, lookups and hints): without one, `finish` needs no ack.
    private var wroteSinceRefresh = false
    private static let readOnly: Set<String> = ["hello", "refresh", "read", "readMany", "base", "mergeBases", "held", "loadObject", "expectWrites", "ack", "bye"]

    /// Counts a request about to go (sent or posted): since the last flush, by operation, and
    /// whether it writes.
    private func count(_ request: SyncProtocol.Request) {
        if !Self.readOnly.contains(request.op) { wroteSinceRefresh = true }
        sentSinceFlush += 1
        sent[request.op, default: 0] += 1
    }

    @discardableResult
    private func send(_ request: SyncProtocol.Request) throws -> SyncProtocol.Response {
        count(request)
        try connect()
        // A flush begun and not collected is answered first (its results were not wanted).
        _ = try collectBegunFlush()
        roundTrips += 1
        try drain()
        try codec.write(request, to: toPeer.fileDescriptor)
        return try receive(op: request.op, path: request.path)
    }

    /// Sends a request whose answer only says whether it worked, without waiting for it: a
    /// round trip per path saved. Its failure comes back from `takeDeferredFailures`, or
    /// (a broken connection, a server error) from the next request that waits.
    private func post(_ request: SyncProtocol.Request) throws {
        count(request)
        try connect()
        _ = try collectBegunFlush()
        try codec.write(request, to: toPeer.fileDescriptor)
        inFlight.append((request.op, request.path))
        // Half the answers are read, not all: the server keeps working on the other half
        // meanwhile, and this side goes on reading files and sending (reading every answer
        // left the server idle while this side made the next requests).
        if inFlight.count >= Self.maximumInFlight { try drain(downTo: Self.maximumInFlight / 2) }
    }

    /// Reads the answers of the requests in flight until at most `limit` are left.
    private func drain(downTo limit: Int = 0) throws {
        while inFlight.count > limit {
            let (op, path) = inFlight.removeFirst()
            do { _ = try receive(op: op, path: path) } catch let error as EndpointError {
                switch error {
                case .changed, .refused: deferredFailures.append((path ?? "?", error))
                case .transport: inFlight = []; throw error
                }
            }
        }
    }

    public func takeDeferredFailures() throws -> [(path: String, error: EndpointError)] {
        try drain()
        defer { deferredFailures = [] }
        return deferredFailures
    }

    private func receive(op: String, path: String?) throws -> SyncProtocol.Response {
        guard let frame = try SyncProtocol.readFrame(fromPeer.fileDescriptor) else {
            throw EndpointError.transport("\(location): the peer closed the connection")
        }
        let response: SyncProtocol.Response
        do { response = try codec.decode(SyncProtocol.Response.self, from: frame) } catch let error as SyncProtocol.EntryRows.Malformed {
            throw EndpointError.transport("\(location): the peer sent a malformed message: \(error)")
        } catch {
            throw EndpointError.transport("\(location): the peer sent a malformed message")
        }
        if !response.ok {
            let message = response.message ?? "no reason given"
            switch response.error {
            case "changed": throw EndpointError.changed(path ?? "?")
            case "refused": throw EndpointError.refused(message)
            default: throw EndpointError.transport("\(location): \(message)")
            }
        }
        return response
    }

    /// The peer's index: its changes since the copy kept in `cache` applied to that copy, or
    /// the whole index when there is no copy or anything about it is doubtful (another epoch,
    /// a sequence that went backwards, a result whose digest is not the peer's).
    public func refresh() throws -> [String: SyncIndex.Entry] {
        var map = try refreshMap()
        try map.complete()
        return map.all
    }

    /// `refresh()`, with the copy's unchanged rows left in the copy: the changes are applied to
    /// it, its digest (kept with it) checked against the peer's, and the rest read only when
    /// the sync asks for them.
    public func refreshMap() throws -> EntryMap {
        if refreshRequested == nil { try requestRefresh() }
        let state = refreshRequested ?? nil
        refreshRequested = nil
        var timings = SyncTimings("remote refresh")
        var response = try receive(op: "refresh", path: nil)
        timings.mark("answer \(response.entries?.count ?? 0) rows")
        let mark = response.mark
        var changes = response.entries ?? []
        var map: EntryMap?
        if response.whole == false {
            if let cache, let state, response.epoch == state.epoch, let sequence = response.sequence, sequence >= state.sequence,
               let epoch = response.epoch {
                // The changes go into the copy, whose digest follows them; if the result is not
                // the peer's index, the copy is dropped and the index read whole below.
                try cache.updatePeer(replica, epoch: epoch, sequence: sequence, entries: changes, whole: false)
                if let summary = try cache.peerSummary(replica),
                   response.digest == SyncIndex.digestText(sum: summary.digestSum, count: UInt64(summary.count)) {
                    try cache.commitWrites()
                    timings.mark("copy updated")
                    var changed: [String: SyncIndex.Entry] = [:]
                    for entry in changes { changed[entry.path] = entry }
                    map = EntryMap(changes: changed, restIn: cache, peer: replica, live: Int(summary.live))
                } else {
                    try cache.forgetPeer(replica)
                    try cache.commitWrites()
                }
            }
            if map == nil {
                // The copy does not add up to the peer's index: read it whole.
                response = try send(SyncProtocol.Request(op: "refresh"))
                changes = response.entries ?? []
            }
        }
        let whole = map == nil
        if whole {
            var all: [String: SyncIndex.Entry] = [:]
            for entry in changes { all[entry.path] = entry }
            map = EntryMap(all)
            if let cache, let epoch = response.epoch, let sequence = response.sequence {
                try cache.updatePeer(replica, epoch: epoch, sequence: sequence, entries: changes, whole: true)
                try cache.commitWrites()
            }
        }
        indexTransfer = IndexTransfer(rows: changes.count, whole: whole)
        refreshedSequence = response.sequence
        // A copy in doubt may mean an index restored from a backup: look at every path.
        peerMark = whole ? nil : mark
        refreshed = nil
        if cache != nil, let epoch = response.epoch, let sequence = response.sequence { refreshed = (epoch, sequence) }
        return map!
    }

    public var remote: RemoteEndpoint? { self }

    public private(set) var refreshedSequence: Int64?
    /// The server's mark of its last clean sync with this client's replica, as `refresh` said.
    private var peerMark: SyncMark?

    public func syncMark(peer: String) throws -> SyncMark? {
        peer == cache?.replica ? peerMark : nil
    }

    /// Sent without waiting: a mark that did not land only makes the next sync look at every path.
    public func setSyncMark(_ mark: SyncMark, peer: String) throws {
        var request = SyncProtocol.Request(op: "setSyncMark")
        request.peer = peer
        request.mark = mark
        try post(request)
    }

    /// The state of the copy a refresh asked from (nil inside: no copy), until `refresh` reads
    /// the answer.
    private var refreshRequested: (epoch: String, sequence: Int64)??

    /// Sends the `refresh` request now, so the peer walks its tree while this side does;
    /// `refresh()` reads the answer.
    public func requestRefresh() throws {
        try connect()
        var request = SyncProtocol.Request(op: "refresh")
        // Which client this is: the server answers with its mark of their last clean sync.
        request.peer = cache?.replica
        let state = try cache?.peerState(replica)
        if let state {
            request.epoch = state.epoch
            request.since = state.sequence
        }
        try drain()
        try codec.write(request, to: toPeer.fileDescriptor)
        refreshRequested = .some(state)
        wroteSinceRefresh = false
    }

    /// The ack: the rows the peer's index got since the refresh (the ones this sync wrote
    /// there, and any other writer's) go into the copy, which is then current to the peer's
    /// sequence now.
    public func finish() throws {
        guard let cache, let refreshed else { return }
        // Nothing written there since the refresh: the copy is as current as this sync can make
        // it, and the next refresh asks for whatever another writer added since.
        guard wroteSinceRefresh else { return }
        var timings = SyncTimings("remote ack")
        var request = SyncProtocol.Request(op: "ack")
        request.since = refreshed.sequence
        let response = try send(request)
        timings.mark("answered, \(response.entries?.count ?? 0) rows")
        defer { timings.mark("copy updated") }
        guard response.epoch == refreshed.epoch, let sequence = response.sequence, sequence >= refreshed.sequence else {
            // Not the index we refreshed from: the next sync reads it whole.
            try cache.forgetPeer(replica)
            try cache.commitWrites()
            return
        }
        let entries = response.entries ?? []
        try cache.updatePeer(replica, epoch: refreshed.epoch, sequence: sequence, entries: entries, whole: false)
        try cache.commitWrites()
        indexTransfer?.ackRows = entries.count
        self.refreshed = (refreshed.epoch, sequence)
    }

    /// The files the sync said it will read (`prefetch`), where each is in that list, how far
    /// `readMany` has fetched, and what it fetched that was not read yet (at most one batch,
    /// ≤ 64 files or 16 MiB, plus any the sync skipped from the batch before).
    private var toRead: [(path: String, expected: String, size: Int)] = []
    private var toReadPosition: [String: Int] = [:]
    private var fetchedUpTo = 0
    private var fetched: [String: Result<[UInt8], EndpointError>] = [:]

    public func prefetch(_ wanted: [(path: String, expected: String, size: Int)]) {
        toRead = wanted
        toReadPosition = Dictionary(wanted.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
        fetchedUpTo = 0
        fetched = [:]
    }

    /// Fetches the next batch of the announced files, starting at `position`, in one round trip.
    private func fetch(from position: Int) throws {
        var wanted: [SyncProtocol.Wanted] = []
        var bytes = 0
        var next = position
        while next < toRead.count, wanted.count < SyncProtocol.readManyFiles,
              wanted.isEmpty || bytes + toRead[next].size <= SyncProtocol.readManyBytes {
            wanted.append(SyncProtocol.Wanted(path: toRead[next].path, expected: toRead[next].expected))
            bytes += toRead[next].size
            next += 1
        }
        fetchedUpTo = next
        // What the sync passed over in the batch before is not coming back.
        fetched = fetched.filter { (toReadPosition[$0.key] ?? 0) >= position }
        var request = SyncProtocol.Request(op: "readMany")
        request.reads = wanted
        let answers = try send(request).contents ?? []
        guard answers.count == wanted.count else {
            throw EndpointError.transport("\(location): the peer answered \(answers.count) of \(wanted.count) reads")
        }
        for (file, answer) in zip(wanted, answers) {
            if let content = answer.content {
                fetched[file.path] = .success(Array(content))
            } else if answer.error == "refused" {
                fetched[file.path] = .failure(.refused(answer.message ?? "refused path '\(file.path)'"))
            } else {
                fetched[file.path] = .failure(.changed(file.path))
            }
        }
    }

    public func read(_ path: String, expected: String) throws -> [UInt8] {
        if let position = toReadPosition[path], toRead[position].expected == expected {
            if fetched[path] == nil && position >= fetchedUpTo { try fetch(from: position) }
            if let result = fetched.removeValue(forKey: path) {
                let bytes = try result.get()
                // Trust nothing from the wire: the bytes must be what the index said.
                guard ContentHash(of: bytes).hex == expected else { throw EndpointError.changed(path) }
                return bytes
            }
        }
        var request = SyncProtocol.Request(op: "read")
        request.path = path
        request.expected = expected
        let bytes = Array(try send(request).content ?? Data())
        // Trust nothing from the wire: the bytes must be what the index said.
        guard ContentHash(of: bytes).hex == expected else { throw EndpointError.changed(path) }
        return bytes
    }

    public func install(_ path: String, bytes: [UInt8], expected: String?, overwrite: Bool, vector: VersionVector) throws -> SyncIndex.Entry {
        var request = SyncProtocol.Request(op: "install")
        request.path = path
        request.content = Data(bytes)
        request.expected = expected
        request.overwrite = overwrite
        request.vector = vector
        guard let entry = try send(request).entry else { throw EndpointError.transport("\(location): no entry in the answer to install") }
        return entry
    }

    public func remove(_ path: String, expected: String, vector: VersionVector) throws -> SyncIndex.Entry {
        var request = SyncProtocol.Request(op: "remove")
        request.path = path
        request.expected = expected
        request.vector = vector
        guard let entry = try send(request).entry else { throw EndpointError.transport("\(location): no entry in the answer to remove") }
        return entry
    }

    public func record(_ entry: SyncIndex.Entry) throws {
        var request = SyncProtocol.Request(op: "record")
        request.entry = entry
        request.path = entry.path
        try post(request)
    }

    public func base(peer: String, path: String) throws -> String? {
        var request = SyncProtocol.Request(op: "base")
        request.peer = peer
        request.path = path
        return try send(request).hash
    }

    public func mergeBases(path: String) throws -> [MergeBase] {
        var request = SyncProtocol.Request(op: "mergeBases")
        request.path = path
        return try send(request).bases ?? []
    }

    public func heldVersions(path: String) throws -> [HeldVersion] {
        var request = SyncProtocol.Request(op: "held")
        request.path = path
        return try send(request).held ?? []
    }

    public func setBase(peer: String, path: String, hash: String, vector: VersionVector, content: [UInt8]?) throws {
        var request = SyncProtocol.Request(op: "setBase")
        request.peer = peer
        request.path = path
        request.hash = hash
        request.vector = vector
        request.content = content.map { Data($0) }
        try post(request)
    }

    public func loadObject(_ hash: String) throws -> [UInt8]? {
        var request = SyncProtocol.Request(op: "loadObject")
        request.hash = hash
        return try send(request).content.map(Array.init)
    }

    public func stage(_ path: String, bytes: [UInt8], expected: String?, vector: VersionVector, basePeer: String?) throws {
        var request = SyncProtocol.Request(op: "stage")
        request.path = path
        request.content = Data(bytes)
        request.expected = expected
        request.vector = vector
        request.peer = basePeer
        try post(request)
    }

    /// Posted, not waited for: the server starts reading the paths' lock files while the
    /// stages are on their way. A peer that fails it only loses the head start.
    public func expectWrites(_ paths: [String], contents: [String]) {
        guard !paths.isEmpty || !contents.isEmpty else { return }
        var request = SyncProtocol.Request(op: "expectWrites")
        request.paths = paths
        request.hashes = contents
        try? post(request)
    }

    public func stageRemoval(_ path: String, expected: String, vector: VersionVector) throws {
        var request = SyncProtocol.Request(op: "stageRemoval")
        request.path = path
        request.expected = expected
        request.vector = vector
        try post(request)
    }

    /// Whether a `flush` request was sent (`beginFlush`) and its answer not read yet.
    private var flushBegun = false
    /// Requests sent since the last flush: with none, there is nothing for a flush to install
    /// or commit, and `flush` makes no round trip (a sync's flush of the merge-base rows, when
    /// the peer recorded its own with its copies).
    private var sentSinceFlush = 0
    /// Requests sent, by operation (a begun flush too).
    private(set) var sent: [String: Int] = [:]

    public func beginFlush() throws {
        // Nothing sent since the last flush: nothing to install or commit, no round trip (a sync
        // that changes nothing; the server flushes at bye whatever its refresh kept).
        guard !flushBegun, sentSinceFlush > 0 || !inFlight.isEmpty else { return }
        try connect()
        try codec.write(SyncProtocol.Request(op: "flush"), to: toPeer.fileDescriptor)
        sent["flush", default: 0] += 1
        flushBegun = true
        sentSinceFlush = 0
    }

    /// The answer to a begun flush: after those of the requests posted before it.
    private func collectBegunFlush() throws -> SyncProtocol.Response? {
        guard flushBegun else { return nil }
        flushBegun = false
        roundTrips += 1
        try drain()
        return try receive(op: "flush", path: nil)
    }

    public func flush() throws -> [String: SyncIndex.Entry?] {
        if !flushBegun && sentSinceFlush == 0 && inFlight.isEmpty { return [:] }
        let response = try collectBegunFlush() ?? send(SyncProtocol.Request(op: "flush"))
        sentSinceFlush = 0
        var results: [String: SyncIndex.Entry?] = [:]
        for path in response.changed ?? [] { results[path] = .some(nil) }
        for entry in response.entries ?? [] { results[entry.path] = entry }
        return results
    }

    public func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        var request = SyncProtocol.Request(op: "recordConflict")
        request.path = path
        request.copy = copy
        request.kept = kept
        request.copied = copied
        try post(request)
    }
}

import WorkspaceCore
