import Glibc

extension Workspace {
    /// A summary of the workspace for `relay status`.
    public struct Status: Sendable, Codable {
        public var root: String
        public var replicaID: String
        public var formatVersion: String
        public var files: Int
        public var folders: Int
        public var bytes: Int
        /// Workspace paths whose coordinated-write lock somebody holds right now.
        public var lockedPaths: [String]
        /// Versions kept in the object store, and their total size.
        public var storedVersions: Int
        public var storedBytes: Int
        /// Temporary files of writers that died, removed by this call.
        public var reclaimedTemporaries: [String]
        /// Temporary files of writers still at work, left alone.
        public var activeTemporaries: [String]
    }

    /// Walks the workspace, counts it, and reclaims the temporary files of writers that died
    /// (a temporary whose path lock is free has no writer left).
    public func status() throws -> Status {
        let reclaim = try reclaimTemporaries()
        var files = 0, folders = 0, bytes = 0
        for entry in try list(".", recursive: true) {
            switch entry.kind {
            case .folder: folders += 1
            default: files += 1; bytes += entry.size
            }
        }
        var locked: [String] = []
        for key in (try? Syscall.listDirectory(layout.locks).get()) ?? [] where !key.hasPrefix("@") {
            let file = lockFile(key: key)
            if CoordinatedLock.isHeld(lockFile: file) {
                let label = (try? FileSnapshot.read(file, displayPath: file))?.map {
                    String(decoding: $0.bytes.prefix { $0 != 10 && $0 != 0 }, as: UTF8.self)
                } ?? key
                locked.append(label ?? key)
            }
        }
        var storedVersions = 0, storedBytes = 0
        for name in (try? Syscall.listDirectory(layout.objects).get()) ?? [] where !WorkspaceLayout.isTemporaryName(name) {
            if case .success(let info) = Syscall.lstat(layout.objects + "/" + name), FileKind(info.st_mode) == .regular {
                storedVersions += 1
                storedBytes += Int(info.st_size)
            }
        }
        // Versions a large sync stored together, a pack per batch (`ObjectPack`).
        for pack in ObjectPack.all(packs: objects.packs) {
            storedVersions += pack.locations.count
            storedBytes += pack.locations.values.reduce(0) { $0 + $1.length }
        }
        let format = (try? FileSnapshot.read(layout.formatFile, displayPath: layout.formatFile))??.bytes
        return Status(
            root: root, replicaID: (try? replicaID()) ?? "(missing)",
            formatVersion: format.map { String(decoding: $0, as: UTF8.self).trimmingWhitespace } ?? "(missing)",
            files: files, folders: folders, bytes: bytes, lockedPaths: locked.sorted(),
            storedVersions: storedVersions, storedBytes: storedBytes,
            reclaimedTemporaries: reclaim.reclaimed, activeTemporaries: reclaim.active)
    }

    /// Finds Relay's temporary files anywhere in the workspace and removes those whose writer
    /// is gone. A temporary file's name carries its path's lock key; if that lock can be taken
    /// now, nobody is writing it. Object-store leftovers older than ten minutes go too.
    public func reclaimTemporaries() throws -> (reclaimed: [String], active: [String]) {
        var reclaimed: [String] = [], active: [String] = []
        var folders = [""]
        while let folder = folders.popLast() {
            let absolute = layout.absolute(folder)
            guard case .success(let names) = Syscall.listDirectory(absolute) else { continue }
            for name in names {
                if folder.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
                let relative = folder.isEmpty ? name : folder + "/" + name
                if WorkspaceLayout.isTemporaryName(name) {
                    let key = String(name.dropFirst(WorkspaceLayout.temporaryPrefix.count).prefix(32))
                    if let lock = try CoordinatedLock.tryAcquire(lockFile: lockFile(key: key), label: relative) {
                        if case .success = Syscall.unlink(absolute + "/" + name) { reclaimed.append(relative) }
                        if lock.pendingIntent() == .temporary(name: name) { lock.clearIntent() }
                        lock.release()
                    } else {
                        active.append(relative)
                    }
                    continue
                }
                if case .success(let info) = Syscall.lstat(absolute + "/" + name), FileKind(info.st_mode) == .directory {
                    folders.append(relative)
                }
            }
        }
        let tenMinutesAgo = Syscall.nowNanoseconds() - 600 * 1_000_000_000
        for name in (try? Syscall.listDirectory(layout.objects).get()) ?? [] where WorkspaceLayout.isTemporaryName(name) {
            let file = layout.objects + "/" + name
            if case .success(let info) = Syscall.lstat(file), FileIdentity(info).modifiedNanoseconds < tenMinutesAgo {
                _ = Syscall.unlink(file)
                reclaimed.append(".relay/objects/" + name)
            }
        }
        if !reclaimed.isEmpty {
            logger.info("reclaimed temporary files of interrupted writers", metadata: ["relay.count": "\(reclaimed.count)"])
        }
        return (reclaimed.sorted(), active.sorted())
    }
}

extension String {
    /// The string without leading and trailing white space.
    public var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
