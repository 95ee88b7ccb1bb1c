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

    /// Opens the workspace at `path`, first making it a new replica when it is not one yet and
    /// holds nothing: a missing folder (whose parent exists) or an empty one gets `.relay/` with
    /// a new replica id and no template files — a sync fills it from the replica it starts
    /// from (`relay sync -w A PEER`). Anything else is opened as `open(at:)` does, with its errors.
    ///
    /// For example:
    /// ```swift
    /// let (desktop, started) = try Workspace.openOrStartReplica(at: "/media/usb/notes")
    /// ```
    public static func openOrStartReplica(at path: String, logger: Logger = Workspace.silentLogger) throws -> (Workspace, started: Bool) {
        if case .failure(.noSuchFileOrDirectory) = Syscall.lstat(path) {
            let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
            let parent = trimmed.contains("/") ? parentFolder(of: trimmed) : "."
            guard case .success(let info) = Syscall.lstat(parent.isEmpty ? "/" : parent), FileKind(info.st_mode) == .directory else {
                throw WorkspaceError(.notAWorkspace, "\(path): no such folder, nor a folder to make it in", path: path)
            }
        } else {
            let root = try canonicalFolder(path)
            if WorkspaceLayout.isWorkspaceRoot(root) { return (Workspace(root: root, logger: logger), false) }
            guard try Syscall.listDirectory(root).orThrow("list", path: root).isEmpty else { return (try open(at: path, logger: logger), false) }
        }
        let (workspace, _) = try initialize(at: path, template: WorkspaceTemplate(files: []), logger: logger)
        logger.info("started a new replica", metadata: ["relay.root": "\(workspace.root)"])
        return (workspace, true)
    }

    /// Gives this workspace a new replica id (`relay init --new-replica`): a workspace copied
    /// with its `.relay/` (`cp -a`, rsync, a backup restored next to the original) must not
    /// share the original's, or syncs between them are refused. Returns the id it had (nil
    /// when there was none) and the new one.
    @discardableResult
    public func assignNewReplicaID() throws -> (previous: String?, replicaID: String) {
        let previous = try? replicaID()
        let id = Self.newReplicaID()
        let file = layout.replicaIDFile
        let temporary = Workspace.parentFolder(of: file) + "/" + WorkspaceLayout.temporaryPrefix + "replica-" + randomSuffix()
        try Syscall.createFile(temporary, bytes: Array((id + "\n").utf8), sync: true).orThrow("create", path: temporary)
        defer { _ = Syscall.unlink(temporary) }  // a no-op once renamed
        try Syscall.rename(temporary, file).orThrow("rename", path: file)
        try syncFolder(Workspace.parentFolder(of: file))
        logger.info("new replica id", metadata: ["relay.root": "\(root)", "relay.replica": "\(id)"])
        return (previous, id)
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
            let temporary = try writeTemporary(for: target, bytes: bytes, permissions: nil, owner: .lock(lock))
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
