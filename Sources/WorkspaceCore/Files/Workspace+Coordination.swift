import Dispatch
import Glibc
import Logging

extension Workspace {
    /// The object store of this workspace.
    public var objects: ObjectStore { ObjectStore(folder: layout.objects, trash: layout.trash, durable: durable) }

    /// The lock-file key of a resolved path: the first 32 hex digits of the SHA-256 of its
    /// relative path. Temporary files carry the same key, so a leftover one leads to its lock.
    static func lockKey(_ relative: String) -> String { String(ContentHash(of: relative).hex.prefix(32)) }

    func lockFile(key: String) -> String { layout.locks + "/" + key }

    /// Whether `path` has a lock file: some writer of Relay has taken its lock, now or before.
    func hasLockFile(_ path: ResolvedPath) -> Bool {
        if case .failure(.noSuchFileOrDirectory) = Syscall.lstat(lockFile(key: Self.lockKey(path.relative))) { return false }
        return true
    }

    /// Starts reading into memory, in the background, what writing `paths` with new versions
    /// whose hashes are `contents` reads first: each path's lock file (its intent record) and
    /// the object store's entry for each version (`contains`, then the rename that stores it,
    /// look it up in a folder of thousands of names). A caller that knows what it will write —
    /// a sync, after its plan — calls this before writing. The reads go to the disk together
    /// instead of one per write: on a machine that had dropped them from its page cache, a
    /// sync's server waited ~250 µs for each of 120 lock files and ~185 µs for each of 61
    /// object lookups, one after another. Nothing is written, created or locked; a path only
    /// names a lock file by its hash, so any path is safe to look up.
    public func prefetchForWrites(paths: [String], contents: [ContentHash] = []) {
        guard !paths.isEmpty || !contents.isEmpty else { return }
        let files = paths.map { lockFile(key: Self.lockKey($0)) }
        let store = objects
        Self.prefetchQueue.async {
            for file in files {
                guard case .success(let fd) = Syscall.open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else { continue }
                Syscall.adviseWillNeed(fd)
                Syscall.close(fd)
            }
            for hash in contents { _ = Syscall.lstat(store.path(of: hash)) }
        }
    }

    /// One thread reads ahead for every workspace of the process (tests wait on it with `sync`).
    static let prefetchQueue = DispatchQueue(label: "relay.prefetch-locks", qos: .utility)

    /// Runs `body` holding the coordinated-write lock of `path`, after undoing whatever a
    /// holder that died (kill -9, power loss) left half done.
    func coordinated<T>(_ path: ResolvedPath, _ body: (CoordinatedLock) throws -> T) throws -> T {
        let key = Self.lockKey(path.relative)
        let lock = try CoordinatedLock.acquire(lockFile: lockFile(key: key), label: path.relative, timeout: lockTimeout)
        defer {
            lock.release()
            Trash.emptyLater(layout.trash)
        }
        recoverInterrupted(lock, path: path)
        return try body(lock)
    }

    func recoverInterrupted(_ lock: CoordinatedLock, path: ResolvedPath) {
        guard let intent = lock.pendingIntent() else { return }
        switch intent {
        case .temporary(let name):
            let leftover = path.parentAbsolute + "/" + name
            if case .success = Syscall.unlink(leftover) {
                logger.info("removed a temporary file left by an interrupted writer", metadata: ["relay.path": "\(path.relative)", "relay.temporary": "\(name)"])
            }
        case .append(let inode, let start, let length):
            guard let identity = try? FileSnapshot.identity(path.absolute, displayPath: path.relative),
                  identity.inode == inode, identity.size > start, identity.size < start + length,
                  case .success(let fd) = Syscall.open(path.absolute, O_WRONLY | O_NOFOLLOW)
            else { break }
            _ = Syscall.ftruncate(fd, start)
            if durable { _ = Syscall.fsync(fd) }
            Syscall.close(fd)
            logger.notice("cut back an append torn by an interrupted writer", metadata: ["relay.path": "\(path.relative)", "relay.offset": "\(start)"])
        }
        lock.clearIntent()
    }

    /// Creates the missing folders of `path` (each one a plain folder, inside the sandbox).
    ///
    /// `folders`: those a batch already checked are not looked at again, and those found or
    /// made here are noted there.
    func createParentFolders(of path: ResolvedPath, folders: ResolvedFolders? = nil) throws {
        let components = path.relative.split(separator: "/").dropLast()
        var prefix = ""
        for component in components {
            prefix += (prefix.isEmpty ? "" : "/") + component
            if let folders, folders.known.contains(prefix) { continue }
            let absolute = layout.absolute(prefix)
            // Usually the folder is there: one lstat instead of a failing mkdir and an lstat
            // (a sync's batch asks this for every file it stages).
            var info = Syscall.lstat(absolute)
            if case .failure(.noSuchFileOrDirectory) = info {
                switch Syscall.mkdir(absolute) {
                case .success, .failure(.fileExists): break
                case .failure(let errno): throw WorkspaceError.system(errno, "create folder", path: prefix)
                }
                info = Syscall.lstat(absolute)
            }
            guard FileKind(try info.orThrow("stat", path: prefix).st_mode) == .directory else {
                throw WorkspaceError(.notADirectory, "\(path.relative): '\(prefix)' is a file where a folder is expected", path: path.relative)
            }
            folders?.note(prefix)
        }
    }

    /// A new file next to `path`, holding `bytes`, flushed to disk when durable.
    struct Temporary {
        var absolute: String
        var name: String
        var identity: FileIdentity
        var hash: ContentHash
        var size: Int
        /// The file carries its own installed record (`InstalledRecord`, for `.batch`).
        var recordsItself = false
    }

    /// Who answers for a temporary file should its writer be killed before it is in place.
    enum TemporaryOwner {
        /// The path's lock: the temporary is named in its intent record, and the path's next
        /// writer removes it.
        case lock(CoordinatedLock)
        /// A write batch's own lock, by its key, for a path that has no lock file (`WriteBatch`):
        /// the temporary's name carries that key, and `reclaimTemporaries` (every sync's
        /// refresh) removes it once that lock is free. With no lock file to hold the installed
        /// record, the file gets it in its own attribute, before it is renamed into place.
        case batch(key: String)
    }

    /// Writes `bytes` to a new temporary file next to `path`. `hash`: of `bytes`, when the
    /// caller has it (a sync hashed what it read); computed here otherwise.
    ///
    /// When not durable (a write batch's, made durable by its `syncfs`), `startWriteback` starts
    /// the file's disk writes at once (`BackgroundWriteback`), so that the flush finds them on
    /// their way; a batch does so for its first files only, and leaves a large batch's rest to
    /// the flush, which writes them out together.
    func writeTemporary(for path: ResolvedPath, bytes: [UInt8], hash: ContentHash? = nil, permissions: mode_t?,
                        owner: TemporaryOwner, startWriteback: Bool = true) throws -> Temporary {
        let name: String
        switch owner {
        case .lock(let lock):
            name = WorkspaceLayout.temporaryPrefix + Self.lockKey(path.relative) + "-" + randomSuffix()
            try lock.recordIntent(.temporary(name: name), durable: false)
        case .batch(let key):
            name = WorkspaceLayout.temporaryPrefix + key + "-" + randomSuffix()
        }
        let absolute = path.parentAbsolute + "/" + name
        let fd = try Syscall.open(absolute, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644).orThrow("create temporary file", path: path.relative)
        do {
            try bytes.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("write", path: path.relative) }
            if let permissions { try Syscall.fchmod(fd, permissions).orThrow("chmod", path: path.relative) }
            if durable { try Syscall.fsync(fd).orThrow("fsync", path: path.relative) }
            let identity = FileIdentity(try Syscall.fstat(fd).orThrow("stat", path: path.relative))
            var recordsItself = false
            if case .batch = owner {
                // Changes the file's ctime, not the stamp (inode, size, mtime) it records.
                let record = InstalledRecord(stamp: FileStamp(identity), triggers: writesTrigger)
                if installedRecordsInFiles, case .success = Syscall.setAttribute(fd, InstalledRecord.attributeName, record.encoded) {
                    recordsItself = true
                }
            }
            // Not durable: a batch's `syncfs` makes it so, and its writes start meanwhile.
            if durable || !startWriteback { Syscall.close(fd) } else { BackgroundWriteback.startThenClose(fd) }
            return Temporary(absolute: absolute, name: name, identity: identity, hash: hash ?? ContentHash(of: bytes), size: bytes.count,
                             recordsItself: recordsItself)
        } catch {
            Syscall.close(fd)
            _ = Syscall.unlink(absolute)
            throw error
        }
    }

    /// What `install` moved out of the way.
    enum Displaced {
        /// The previous file, now at this path (the temporary's name), to be archived.
        case file(String)
        /// The previous content, read before a plain rename on a file system without
        /// `RENAME_EXCHANGE`.
        case snapshot(FileSnapshot)
    }

    /// Puts the temporary file in place of `path` atomically. `renameat2(RENAME_EXCHANGE)`
    /// swaps the two names in one step, so the displaced file is exactly what the target was
    /// at that instant — a person's save an instant earlier is not lost but handed back.
    ///
    /// - parameter sync: fsync the folder afterwards (when durable). An update passes false
    ///   so that it can check what it displaced, and swap it back, without a slow fsync in
    ///   between; it syncs once it is done.
    func install(_ temporary: Temporary, at path: ResolvedPath, sync: Bool = true) throws -> Displaced? {
        var displaced: Displaced?
        switch Syscall.renameNoReplace(temporary.absolute, path.absolute) {
        case .success:
            displaced = nil
        case .failure(.fileExists):
            switch Syscall.exchange(temporary.absolute, path.absolute) {
            case .success:
                displaced = .file(temporary.absolute)
            case .failure(.invalidArgument), .failure(.notSupported), .failure(.noFunction):
                displaced = try plainRename(temporary, at: path)
            case .failure(let errno):
                throw WorkspaceError.system(errno, "replace", path: path.relative)
            }
        case .failure(.invalidArgument), .failure(.notSupported), .failure(.noFunction):
            displaced = try plainRename(temporary, at: path)
        case .failure(let errno):
            _ = Syscall.unlink(temporary.absolute)
            throw WorkspaceError.system(errno, "replace", path: path.relative)
        }
        if durable && sync { try syncFolder(path.parentAbsolute) }
        return displaced
    }

    private func plainRename(_ temporary: Temporary, at path: ResolvedPath) throws -> Displaced? {
        let previous = try FileSnapshot.read(path.absolute, displayPath: path.relative)
        try Syscall.rename(temporary.absolute, path.absolute).orThrow("rename", path: path.relative)
        return previous.map { .snapshot($0) }
    }

    /// Reads what `install` displaced (nil when the file was new).
    func read(_ displaced: Displaced?, path: ResolvedPath) throws -> FileSnapshot? {
        switch displaced {
        case nil: return nil
        case .snapshot(let snapshot): return snapshot
        case .file(let absolute): return try FileSnapshot.read(absolute, displayPath: path.relative)
        }
    }

    /// A version a write displaced, as `archive` keeps and records it: read whole, or known by
    /// its stamp (`WriteBatch`: a file whose stamp a fresh index vouches for is not read).
    struct ReplacedVersion {
        var identity: FileIdentity
        var hash: ContentHash
        /// The content, when it was read (always, unless the displaced file is `.file`).
        var bytes: [UInt8]?
        var size: Int { identity.size }

        init(_ snapshot: FileSnapshot) {
            identity = snapshot.identity
            hash = snapshot.hash
            bytes = snapshot.bytes
        }

        init(identity: FileIdentity, hash: ContentHash) {
            self.identity = identity
            self.hash = hash
        }
    }

    /// Keeps a displaced version in the object store and records the replacement in the
    /// path's history; removes the displaced file. Clears the lock's intent record.
    func archive(_ displaced: Displaced?, snapshot: FileSnapshot?, installed: Temporary, path: ResolvedPath,
                 operation: String, lock: CoordinatedLock) throws {
        let record = try keep(displaced, replaced: snapshot.map(ReplacedVersion.init), installed: installed, path: path,
                              operation: operation, lock: lock)
        try appendHistory(record, key: Self.lockKey(path.relative))
    }

    /// `archive` of a version known by its hash and stamp, or read whole, but for the history
    /// line, which it returns (a write batch writes its lines together: `HistoryLog`).
    func keep(_ displaced: Displaced?, replaced: ReplacedVersion?, installed: Temporary, path: ResolvedPath,
              operation: String, lock: CoordinatedLock) throws -> VersionRecord {
        var stored = false
        if let replaced {
            if replaced.size <= maximumArchivedSize {
                switch displaced {
                case .file(let absolute):
                    try objects.adopt(absolute, hash: replaced.hash)
                    stored = true
                default:
                    // Not a file any more (a plain rename): its bytes were read before it went.
                    if let bytes = replaced.bytes {
                        try objects.store(bytes)
                        stored = true
                    }
                }
            } else if case .file(let absolute) = displaced {
                _ = Trash.discard(absolute, into: layout.trash)
            }
        }
        lock.clearIntent()
        lock.recordInstalled(installed.identity, triggers: writesTrigger)
        return VersionRecord(
            timeNanoseconds: Syscall.nowNanoseconds(), path: path.relative, operation: operation,
            replaced: replaced?.hash, replacedSize: replaced?.size, replacedStored: stored,
            installed: installed.hash, installedSize: installed.size)
    }
}

extension Workspace {
    /// Runs `body` holding the coordinated-write lock of `path`, so that Relay's writers of that
    /// path (agents, sync, other processes) wait for it. Do not write `path` through this
    /// workspace inside `body`: the lock is not re-entrant, and that write would wait for it.
    ///
    /// For example:
    /// ```swift
    /// try workspace.withLock("context.md") { try runEditor("context.md") }
    /// ```
    /// - throws: `.lockTimeout` when the lock is not free within `lockTimeout`, or what `body` throws.
    public func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let target = try resolve(path)
        return try coordinated(target) { _ in try body() }
    }
}

extension Workspace {
    /// How long a file must have been left alone before an update reads it. An editor's
    /// in-place save is a truncate and then a write; reading between the two would build on
    /// an empty or half-written file. File times move in kernel ticks (up to 4 ms), hence 20.
    static let quietPeriodNanoseconds: Int64 = 20_000_000
    /// The quiet period for a file that is empty.
    static let emptyQuietPeriodNanoseconds: Int64 = 500_000_000
    /// An update gives up waiting for quiet after this long and goes on (its check-and-swap
    /// still protects saves that replace the file).
    static let quietWaitLimitNanoseconds: Int64 = 5_000_000_000

    /// Waits until the file at `path` has not been modified for the quiet period, unless the
    /// file is exactly what Relay last put there (Relay never leaves a file half written).
    ///
    /// Then reads it, and checks the bytes it read are just as old: a save that began between
    /// the wait and the read (its truncate, say) sends it back to waiting.
    func readWhenQuiet(_ path: ResolvedPath, lock: CoordinatedLock) throws -> FileSnapshot? {
        let start = Syscall.nowNanoseconds()
        while true {
            guard let identity = try FileSnapshot.identity(path.absolute, displayPath: path.relative) else {
                return try FileSnapshot.read(path.absolute, displayPath: path.relative)
            }
            let wait = quietWait(identity, at: path.absolute, lock: lock)
            let waitedTooLong = Syscall.nowNanoseconds() - start >= Self.quietWaitLimitNanoseconds
            if wait > 0 && !waitedTooLong {
                Syscall.sleep(nanoseconds: min(wait, Self.quietPeriodNanoseconds))
                continue
            }
            let snapshot = try FileSnapshot.read(path.absolute, displayPath: path.relative)
            guard let read = snapshot?.identity, !waitedTooLong, quietWait(read, at: path.absolute, lock: lock) > 0 else { return snapshot }
        }
    }

    /// How much longer a file with this identity must be left alone (0: it is quiet now).
    private func quietWait(_ identity: FileIdentity, at absolute: String, lock: CoordinatedLock) -> Int64 {
        if isLastInstalled(identity, at: absolute, lock: lock) { return 0 }
        let age = Syscall.nowNanoseconds() - identity.modifiedNanoseconds
        // An empty file just written is most likely an in-place save between its truncate
        // and its write: give that writer much longer.
        let quiet = identity.size == 0 ? Self.emptyQuietPeriodNanoseconds : Self.quietPeriodNanoseconds
        return max(0, quiet - max(0, age))
    }
}

extension Workspace {
    /// Whether the file at `relative` (a resolved path) with this stamp is exactly what Relay
    /// last wrote there with `writesTrigger` off: an agent's output or a file sync brought,
    /// which must not start a relay (no loops). Reads the lock file without locking, or the
    /// file's own record (a new path a write batch made, which has no lock file).
    public func isOwnQuietWrite(_ relative: String, stamp: FileStamp) -> Bool {
        var inLockFile: InstalledRecord?
        if case .success(let fd) = Syscall.open(lockFile(key: Self.lockKey(relative)), O_RDONLY) {
            inLockFile = CoordinatedLock.installedRecord(fd: fd)
            Syscall.close(fd)
        }
        return Self.installedRecord(of: stamp, inLockFile: inLockFile, file: layout.absolute(relative)).map { !$0.triggers } ?? false
    }

    /// Whether the file at `absolute` with `identity` is what Relay last put there.
    func isLastInstalled(_ identity: FileIdentity, at absolute: String, lock: CoordinatedLock) -> Bool {
        Self.installedRecord(of: FileStamp(identity), inLockFile: lock.installedRecord(), file: absolute) != nil
    }

    /// The record saying Relay installed the file with `stamp`: its lock file's, or else the
    /// file's own (`InstalledRecord`, a new path a write batch made without a lock file); nil
    /// when neither is of that stamp.
    private static func installedRecord(of stamp: FileStamp, inLockFile: InstalledRecord?, file: String) -> InstalledRecord? {
        if let inLockFile, inLockFile.stamp == stamp { return inLockFile }
        guard let own = InstalledRecord.attribute(of: file), own.stamp == stamp else { return nil }
        return own
    }
}
