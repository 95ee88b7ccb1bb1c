import Foundation
import WorkspaceCore

// Reading the peer's files: those the sync announced (`prefetch`) come many to a round trip
// (`readMany`), any other one by itself; every one checked against the hash the index gave.
extension RemoteEndpoint {
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
            throw SyncError.transport("\(location): the peer answered \(answers.count) of \(wanted.count) reads")
        }
        for (file, answer) in zip(wanted, answers) {
            if let content = answer.content {
                fetched[file.path] = .success(Array(content))
            } else if answer.error == "refused" {
                fetched[file.path] = .failure(.refused(answer.message ?? "refused path '\(file.path)'", path: file.path))
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
                // Nothing from the wire is taken on trust: the bytes must be what the index said.
                guard ContentHash(of: bytes).hex == expected else { throw SyncError.changed(path) }
                return bytes
            }
        }
        var request = SyncProtocol.Request(op: "read")
        request.path = path
        request.expected = expected
        let bytes = Array(try send(request).content ?? Data())
        // Nothing from the wire is taken on trust: the bytes must be what the index said.
        guard ContentHash(of: bytes).hex == expected else { throw SyncError.changed(path) }
        return bytes
    }
}
