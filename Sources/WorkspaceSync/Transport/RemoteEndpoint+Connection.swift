import Foundation
import WorkspaceCore

// The connection to the peer: hello, requests sent and waited for or posted without waiting
// (their failures collected later), answers read in order and turned into errors, and the
// flush a sync begins on the peer while it flushes its own side.
extension RemoteEndpoint {
    /// Sends hello; `connect` reads the answer.
    func sayHello() throws {
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        roundTrips += 1
        do { try codec.write(hello, to: toPeer.fileDescriptor) } catch let error as SyncError {
            throw SyncError.transport("\(location): \(error); the peer said: \(peerErrors())", cause: error)
        }
    }

    /// Reads the answer to hello: the peer's replica id, or why it would not sync (another
    /// protocol version, a folder that is not a workspace, no relay there).
    public func connect() throws {
        guard !greeted else { return }
        greeted = true
        let response: SyncProtocol.Response
        do { response = try receive(op: "hello", path: nil) } catch let error as SyncError {
            throw SyncError.transport("\(location): \(error); the peer said: \(peerErrors())", cause: error)
        }
        guard let replica = response.replica, !replica.isEmpty else {
            throw SyncError.transport("\(location): the peer did not say which replica it is")
        }
        peerReplica = replica
        startedReplica = response.started ?? false
    }

    private func peerErrors() -> String {
        guard let process else { return "nothing" }
        process.terminate()
        let text = process.errorOutput().trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "nothing" : text
    }

    private static let readOnly: Set<String> = ["hello", "refresh", "read", "readMany", "base", "mergeBases", "held", "loadObject", "expectWrites", "ack", "bye"]

    /// Counts a request about to go (sent or posted): since the last flush, by operation, and
    /// whether it writes.
    private func count(_ request: SyncProtocol.Request) {
        if !Self.readOnly.contains(request.op) { wroteSinceRefresh = true }
        sentSinceFlush += 1
        sent[request.op, default: 0] += 1
    }

    @discardableResult
    func send(_ request: SyncProtocol.Request) throws -> SyncProtocol.Response {
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
    func post(_ request: SyncProtocol.Request) throws {
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
    func drain(downTo limit: Int = 0) throws {
        while inFlight.count > limit {
            let (op, path) = inFlight.removeFirst()
            do { _ = try receive(op: op, path: path) } catch let error as SyncError {
                switch error.code {
                case .changed, .refused: deferredFailures.append((path ?? "?", error))
                case .transport, .stopped, .corruptIndex, .badPeer, .database: inFlight = []; throw error
                }
            }
        }
    }

    public func takeDeferredFailures() throws -> [(path: String, error: SyncError)] {
        try drain()
        defer { deferredFailures = [] }
        return deferredFailures
    }

    func receive(op: String, path: String?) throws -> SyncProtocol.Response {
        guard let frame = try SyncProtocol.readFrame(fromPeer.fileDescriptor) else {
            throw SyncError.transport("\(location): the peer closed the connection")
        }
        let response: SyncProtocol.Response
        do { response = try codec.decode(SyncProtocol.Response.self, from: frame) } catch let error as SyncProtocol.EntryRows.Malformed {
            throw SyncError.transport("\(location): the peer sent a malformed message: \(error)", cause: error)
        } catch {
            throw SyncError.transport("\(location): the peer sent a malformed message", cause: error)
        }
        if !response.ok {
            let message = response.message ?? "no reason given"
            switch response.error {
            case "changed": throw SyncError.changed(path ?? "?")
            case "refused": throw SyncError.refused(message, path: path)
            default: throw SyncError.transport("\(location): \(message)")
            }
        }
        return response
    }

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
}
