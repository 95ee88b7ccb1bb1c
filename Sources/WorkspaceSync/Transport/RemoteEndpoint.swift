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
    public private(set) var replica: String
    public let location: String
    private let process: Process
    private let toPeer: FileHandle
    private let fromPeer: FileHandle
    private let errors: Pipe
    private let encoder = JSONEncoder(), decoder = JSONDecoder()

    /// Starts `command` (its first element is looked up in PATH) and says hello.
    public init(command: [String], location: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let input = Pipe(), output = Pipe()
        errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            throw EndpointError.transport("could not start \(command.first ?? "?"): \(error)")
        }
        toPeer = input.fileHandleForWriting
        fromPeer = output.fileHandleForReading
        self.location = location
        self.replica = ""
        var hello = SyncProtocol.Request(op: "hello")
        hello.version = SyncProtocol.version
        let response: SyncProtocol.Response
        do { response = try send(hello) } catch let error as EndpointError {
            throw EndpointError.transport("\(location): \(error); the peer said: \(peerErrors())")
        }
        guard let replica = response.replica, !replica.isEmpty else {
            throw EndpointError.transport("\(location): the peer did not say which replica it is")
        }
        self.replica = replica
    }

    /// `[user@]host:path` over the system ssh (or `RELAY_SSH`, e.g. "ssh -p 2222"), running
    /// `remoteRelay` (default "relay") on the other side.
    public static func ssh(_ spec: String, sshCommand: [String]? = nil, remoteRelay: String = "relay") throws -> RemoteEndpoint {
        guard let colon = spec.firstIndex(of: ":") else { throw EndpointError.transport("\(spec): expected [user@]host:path") }
        let host = String(spec[..<colon]), path = String(spec[spec.index(after: colon)...])
        guard !host.isEmpty, !path.isEmpty else { throw EndpointError.transport("\(spec): expected [user@]host:path") }
        let ssh = sshCommand ?? (ProcessInfo.processInfo.environment["RELAY_SSH"].map { $0.split(separator: " ").map(String.init) } ?? ["ssh"])
        // The remote command goes through the remote shell: quote the path.
        let quoted = "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
        return try RemoteEndpoint(command: ssh + [host, "\(remoteRelay) sync-serve --stdio \(quoted)"], location: spec)
    }

    deinit { close() }

    public func close() {
        guard process.isRunning else { return }
        _ = try? send(SyncProtocol.Request(op: "bye"))
        try? toPeer.close()
        process.waitUntilExit()
    }

    private func peerErrors() -> String {
        if process.isRunning { process.terminate() }
        let text = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "nothing" : text
    }

    @discardableResult
    private func send(_ request: SyncProtocol.Request) throws -> SyncProtocol.Response {
        try SyncProtocol.writeFrame(toPeer.fileDescriptor, try encoder.encode(request))
        guard let frame = try SyncProtocol.readFrame(fromPeer.fileDescriptor) else {
            throw EndpointError.transport("\(location): the peer closed the connection")
        }
        let response: SyncProtocol.Response
        do { response = try decoder.decode(SyncProtocol.Response.self, from: frame) } catch {
            throw EndpointError.transport("\(location): the peer sent a malformed message")
        }
        if !response.ok {
            let message = response.message ?? "no reason given"
            switch response.error {
            case "changed": throw EndpointError.changed(request.path ?? "?")
            case "refused": throw EndpointError.refused(message)
            default: throw EndpointError.transport("\(location): \(message)")
            }
        }
        return response
    }

    public func refresh() throws -> [String: SyncIndex.Entry] {
        var result: [String: SyncIndex.Entry] = [:]
        for entry in try send(SyncProtocol.Request(op: "refresh")).entries ?? [] { result[entry.path] = entry }
        return result
    }

    public func read(_ path: String, expected: String) throws -> [UInt8] {
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
        try send(request)
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

    public func setBase(peer: String, path: String, hash: String, vector: VersionVector, content: [UInt8]?) throws {
        var request = SyncProtocol.Request(op: "setBase")
        request.peer = peer
        request.path = path
        request.hash = hash
        request.vector = vector
        request.content = content.map { Data($0) }
        try send(request)
    }

    public func loadObject(_ hash: String) throws -> [UInt8]? {
        var request = SyncProtocol.Request(op: "loadObject")
        request.hash = hash
        return try send(request).content.map(Array.init)
    }

    public func stage(_ path: String, bytes: [UInt8], expected: String?, vector: VersionVector) throws {
        var request = SyncProtocol.Request(op: "stage")
        request.path = path
        request.content = Data(bytes)
        request.expected = expected
        request.vector = vector
        try send(request)
    }

    public func flush() throws -> [String: SyncIndex.Entry?] {
        let response = try send(SyncProtocol.Request(op: "flush"))
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
        try send(request)
    }
}

import WorkspaceCore
