import Foundation
import SystemPackage
import WorkspaceCore

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

    var peerReplica = ""
    /// Whether the peer made its folder a new replica for this sync (`ssh(startReplica:)`),
    /// from its answer to hello.
    public internal(set) var startedReplica = false
    /// Whether the answer to hello was read.
    var greeted = false
    public let location: String
    /// The command at the other end; nil for a connection made by the caller.
    let process: PeerProcess?
    let toPeer: FileHandle
    let fromPeer: FileHandle
    var open = true
    let codec = SyncProtocol.Codec()

    /// Where this client keeps its copy of the peer's index (the local replica's index), so a
    /// refresh brings only the rows written since the last sync; nil: the whole index each time.
    /// `Reconciler` sets it to the local replica's index when it is not set.
    public var cache: SyncIndex?
    public internal(set) var indexTransfer: IndexTransfer?
    /// Requests this client sent and then waited for (a round trip each over a real link).
    public internal(set) var roundTrips = 0
    /// The epoch and sequence of the last refresh, which the ack continues from.
    var refreshed: (epoch: String, sequence: Int64)?
    /// Requests sent whose answers are not read yet (only their op and path are kept), and
    /// the failures found among those answers. At most `maximumInFlight` wait, so the
    /// server's small answers never fill the pipe while it waits for us to read.
    var inFlight: [(op: String, path: String?)] = []
    var deferredFailures: [(path: String, error: SyncError)] = []
    static let maximumInFlight = 128

    /// Starts `command` (its first element is looked up in PATH) and says hello. With
    /// `waitForHello` false the answer is read by `connect()` (or the first use of `replica`):
    /// the caller works while the peer starts — a sync refreshes its own index meanwhile, and
    /// the server begins its refresh at hello.
    public init(command: [String], location: String, waitForHello: Bool = true) throws {
        let process: PeerProcess
        do { process = try PeerProcess(command) } catch let error as Errno {
            throw SyncError.transport("could not start \(command.first ?? "?"): \(error)", cause: error)
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

    /// Whether a request that writes to the peer's index or tree was sent since the last
    /// refresh (anything but reads, lookups and hints): without one, `finish` needs no ack.
    var wroteSinceRefresh = false

    public internal(set) var refreshedSequence: Int64?

    /// The server's mark of its last clean sync with this client's replica, as `refresh` said.
    var peerMark: SyncMark?

    /// The state of the copy a refresh asked from (nil inside: no copy), until `refresh` reads
    /// the answer.
    var refreshRequested: (epoch: String, sequence: Int64)??

    /// The files the sync said it will read (`prefetch`), where each is in that list, how far
    /// `readMany` has fetched, and what it fetched that was not read yet (at most one batch,
    /// ≤ 64 files or 16 MiB, plus any the sync skipped from the batch before).
    var toRead: [(path: String, expected: String, size: Int)] = []
    var toReadPosition: [String: Int] = [:]
    var fetchedUpTo = 0
    var fetched: [String: Result<[UInt8], SyncError>] = [:]

    /// Whether a `flush` request was sent (`beginFlush`) and its answer not read yet.
    var flushBegun = false

    /// Requests sent since the last flush: with none, there is nothing for a flush to install
    /// or commit, and `flush` makes no round trip (a sync's flush of the merge-base rows, when
    /// the peer recorded its own with its copies).
    var sentSinceFlush = 0

    /// Requests sent, by operation (a begun flush too).
    var sent: [String: Int] = [:]

    /// `[user@]host:path` over the system ssh (or `RELAY_SSH`, e.g. "ssh -p 2222"), running
    /// `remoteRelay` (default "relay") on the other side. With `startReplica`, a missing or
    /// empty folder there is made a new replica first (`sync-serve --start`).
    public static func ssh(_ spec: String, sshCommand: [String]? = nil, remoteRelay: String = "relay", waitForHello: Bool = true,
                           startReplica: Bool = false) throws -> RemoteEndpoint {
        guard let colon = spec.firstIndex(of: ":") else { throw SyncError.transport("\(spec): expected [user@]host:path") }
        let host = String(spec[..<colon]), path = String(spec[spec.index(after: colon)...])
        guard !host.isEmpty, !path.isEmpty else { throw SyncError.transport("\(spec): expected [user@]host:path") }
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

    public var remote: RemoteEndpoint? { self }

    public func install(_ path: String, bytes: [UInt8], expected: String?, overwrite: Bool, vector: VersionVector) throws -> SyncIndex.Entry {
        var request = SyncProtocol.Request(op: "install")
        request.path = path
        request.content = Data(bytes)
        request.expected = expected
        request.overwrite = overwrite
        request.vector = vector
        guard let entry = try send(request).entry else { throw SyncError.transport("\(location): no entry in the answer to install") }
        return entry
    }

    public func remove(_ path: String, expected: String, vector: VersionVector) throws -> SyncIndex.Entry {
        var request = SyncProtocol.Request(op: "remove")
        request.path = path
        request.expected = expected
        request.vector = vector
        guard let entry = try send(request).entry else { throw SyncError.transport("\(location): no entry in the answer to remove") }
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

    public func stage(_ path: String, bytes: [UInt8], hash: String?, expected: String?, vector: VersionVector, basePeer: String?) throws {
        // The server hashes what it receives: `hash` does not travel.
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

    public func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        var request = SyncProtocol.Request(op: "recordConflict")
        request.path = path
        request.copy = copy
        request.kept = kept
        request.copied = copied
        try post(request)
    }
}
