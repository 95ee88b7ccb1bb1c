import Foundation
import Glibc
import Logging

extension Workspace {
    /// What `initialize` did.
    public struct InitReport: Sendable {
        public var root: String
        public var replicaID: String
        /// Template files written, relative paths.
        public var created: [String]
        /// Template files that were already there and were left exactly as they were.
        public var kept: [String]
        /// Whether the folder was a workspace already.
        public var wasWorkspace: Bool
    }

    /// Makes `path` a workspace (creating the folder if needed): the `.relay/` state folder with
    /// a new replica id, and every template file that is not already there. Nothing that exists
    /// is overwritten, so running it again, or on a folder of notes, is safe.
    ///
    /// For example:
    /// ```swift
    /// let (workspace, report) = try Workspace.initialize(at: "/home/ada/notes")
    /// print(report.created)   // ["AgentConfiguration.json", "Chats/README.md", ...]
    /// ```
    public static func initialize(
        at path: String, template: WorkspaceTemplate = .embedded, logger: Logger = Workspace.silentLogger
    ) throws -> (Workspace, InitReport) {
        try createFolders(path)
        let root = try canonicalFolder(path)
        let wasWorkspace = WorkspaceLayout.isWorkspaceRoot(root)
        var workspace = Workspace(root: root, logger: logger)
        let layout = workspace.layout
        for folder in [layout.state, layout.locks, layout.objects, layout.history] {
            switch Syscall.mkdir(folder) {
            case .success, .failure(.fileExists): break
            case .failure(let errno): throw WorkspaceError.system(errno, "create folder", path: folder)
            }
        }
        let info = try Syscall.lstat(layout.state).orThrow("stat", path: layout.state)
        guard FileKind(info.st_mode) == .directory else {
            throw WorkspaceError(.notADirectory, "\(layout.state) is a file; a workspace needs .relay/ to be a folder", path: layout.state)
        }
        workspace.durable = true
        _ = try workspace.createInternalFileIfAbsent(layout.formatFile, bytes: Array((WorkspaceLayout.formatVersion + "\n").utf8))
        _ = try workspace.createInternalFileIfAbsent(layout.replicaIDFile, bytes: Array((Self.newReplicaID() + "\n").utf8))

        var created: [String] = [], kept: [String] = []
        for file in template.files {
            if try workspace.createIfAbsent(file.path, bytes: file.bytes) { created.append(file.path) } else { kept.append(file.path) }
        }
        let report = InitReport(root: root, replicaID: try workspace.replicaID(), created: created, kept: kept, wasWorkspace: wasWorkspace)
        logger.info("workspace initialised", metadata: ["relay.root": "\(root)", "relay.created": "\(created.count)"])
        return (workspace, report)
    }

    /// This replica's id, made by `relay init`.
    public func replicaID() throws -> String {
        guard let snapshot = try FileSnapshot.read(layout.replicaIDFile, displayPath: layout.replicaIDFile) else {
            throw WorkspaceError(.notFound, "\(layout.replicaIDFile) is missing; run `relay init \(root)` to make a new replica id", path: layout.replicaIDFile)
        }
        return String(decoding: snapshot.bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes `bytes` at `path` only if nothing is there (atomic, coordinated); false if it existed.
    @discardableResult
    public func createIfAbsent(_ path: String, bytes: [UInt8]) throws -> Bool {
        let target = try resolve(path)
        if target.exists { return false }
        return try coordinated(target) { lock in
            try createParentFolders(of: target)
            let temporary = try writeTemporary(for: target, bytes: bytes, permissions: nil, lock: lock)
            defer { lock.clearIntent() }
            switch Syscall.renameNoReplace(temporary.absolute, target.absolute) {
            case .success:
                if durable { try syncFolder(target.parentAbsolute) }
                lock.recordInstalled(temporary.identity, triggers: writesTrigger)
                return true
            case .failure(.fileExists):
                _ = Syscall.unlink(temporary.absolute)
                return false
            case .failure(let errno):
                _ = Syscall.unlink(temporary.absolute)
                throw WorkspaceError.system(errno, "create", path: target.relative)
            }
        }
    }

    /// Creates an engine file under `.relay/` once (the id must never change after).
    private func createInternalFileIfAbsent(_ absolute: String, bytes: [UInt8]) throws -> Bool {
        let temporary = Workspace.parentFolder(of: absolute) + "/" + WorkspaceLayout.temporaryPrefix + "init-" + randomSuffix()
        try Syscall.createFile(temporary, bytes: bytes, sync: true).orThrow("create", path: temporary)
        defer { _ = Syscall.unlink(temporary) }  // a no-op once renamed
        switch Syscall.renameNoReplace(temporary, absolute) {
        case .success: try syncFolder(Workspace.parentFolder(of: absolute)); return true
        case .failure(.fileExists): return false
        case .failure(let errno): throw WorkspaceError.system(errno, "create", path: absolute)
        }
    }

    private static func createFolders(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            switch Syscall.mkdir(prefix) {
            case .success, .failure(.fileExists): continue
            case .failure(.notDirectory):
                throw WorkspaceError(.notADirectory, "\(path): '\(prefix)' is a file where a folder is expected", path: path)
            case .failure(let errno): throw WorkspaceError.system(errno, "create folder", path: prefix)
            }
        }
    }

    static func newReplicaID() -> String {
        String(format16: UInt64.random(in: 0...UInt64.max))
    }
}

extension String {
    init(format16 value: UInt64) {
        let digits = String(value, radix: 16)
        self = String(repeating: "0", count: 16 - digits.count) + digits
    }
}
