import Glibc
import Synchronization

/// Many whole-file replacements (and object-store copies) made durable together: two flushes
/// of the file system per batch instead of an fsync of every file and of every folder.
///
/// Each file keeps the guarantees of `Workspace.update`: it is written to a temporary file
/// next to it under the path's coordinated-write lock (held from `stage` to the end of
/// `commit`), the temporary's bytes are on disk before the rename (`syncfs`), the file must
/// still be `expected` just before the swap and in what the swap displaced, an in-place save
/// that lands just after the swap is swapped back, the displaced version goes to the object
/// store and a history line is written, and a second flush makes the renames durable before
/// `commit` returns. A `kill -9` at any point leaves every file whole (old or new) and the
/// temporary named in its lock's intent record, which the path's next writer removes.
///
/// A path that is new here and has no lock file (no writer of Relay ever took its lock) gets
/// none: making one was a second new file per copied file, most of a first sync's cost beyond
/// rsync's. Its temporary is named after the batch's own lock instead, held while the batch
/// lives — a killed batch's temporaries are removed by `reclaimTemporaries` (every sync's
/// refresh) once that lock is free — and it carries its installed record in itself
/// (`InstalledRecord`), so the watcher still knows it for Relay's. `commit` renames it into
/// place with `RENAME_NOREPLACE`, which fails if anything is there by then; if a writer of Relay
/// began on the path meanwhile (its lock file is there now) or a file appeared, the path's lock
/// is taken then and the file goes the way of every other: checked, and left alone when it is
/// not what was expected. On a file system that keeps no extended attributes, every path takes
/// its lock, as before.
///
/// For example:
/// ```swift
/// let batch = WriteBatch(workspace, operation: "sync")
/// try batch.stage("notes/a.md", bytes: bytes, expected: nil)
/// try batch.storeObject(bytes)
/// for outcome in try batch.commit() where outcome.result == nil { print("changed:", outcome.path) }
/// ```
public final class WriteBatch {
    /// What became of one staged file.
    public struct Outcome: Sendable {
        public var path: String
        /// nil when the file was not what the caller expected (somebody changed it): nothing
        /// was written there.
        public var result: Workspace.WriteResult?
        /// The stamp of the installed file.
        public var stamp: FileStamp?
        /// For a staged removal: true when the file is gone (removed now, or already gone),
        /// false when it was not what the caller expected (left alone).
        public var removed = false
    }

    private struct Staged {
        /// Its place among the staged files (those made on the writer's thread come back apart).
        var order: Int
        var target: ResolvedPath
        /// nil for a new path staged without a lock file (its temporary is the batch's own).
        var lock: CoordinatedLock?
        var temporary: Workspace.Temporary
        var expected: ContentHash?
        /// The stamp the file had when it was `expected`, vouched for by the caller: a file
        /// that still has it is not read again to be checked.
        var knownStamp: FileStamp?
        var checked: Bool
    }

    private struct Removal {
        var target: ResolvedPath
        var lock: CoordinatedLock
        var expected: ContentHash
        var knownStamp: FileStamp?
    }

    private struct Installed {
        var staged: Staged
        var displaced: Workspace.Displaced?
        var previous: Workspace.ReplacedVersion?
    }

    /// The workspace with per-file fsyncs off: the batch flushes the file system instead.
    private let quick: Workspace
    private let durable: Bool
    private let operation: String
    private var staged: [Staged] = []
    private var removals: [Removal] = []
    private var stagedPaths: Set<String> = []
    /// The versions to store, kept until `commit` writes them (on a first sync, on another
    /// thread while the next batch is staged): whether the store has one already is looked up
    /// there too — two `lstat`s per version that were most of what storing cost the staging
    /// thread. At most a batch's bytes.
    private var storing: [(bytes: [UInt8], hash: ContentHash)] = []
    private var objectHashes: Set<ContentHash> = []
    /// What `commit` wrote of `storing`: loose temporaries when a batch stores at most
    /// `loosePerBatch` versions, else one pack (one new file per commit instead of one per
    /// version; `ObjectPack`).
    private var objects: [(temporary: String, hash: ContentHash)] = []
    private var pack: ObjectPack.Writer?
    /// The folders this batch's resolves found, looked at once per batch (`ResolvedFolders`).
    private let folders = ResolvedFolders()
    /// The batch's own lock, taken at its first new path and held while the batch lives: the
    /// temporaries of the new paths it stages without a lock file carry its key.
    private var own: (key: String, lock: CoordinatedLock)?
    /// False once the file system refused a file its own installed record (or the workspace
    /// says it keeps none): then every path takes its lock file.
    private let recordsInFiles: Flag
    /// Makes the temporaries of new paths on a thread of its own while the caller goes on.
    private let newFiles = NewFileWriter<Staged>()
    /// Waits until the new paths staged so far have their temporaries (made on the writer's
    /// thread): the event a test of those temporaries waits for.
    func waitForNewFiles() { newFiles.waitUntilIdle() }
    /// Submitted to `newFiles` and not collected yet; the paths it refused (left alone).
    private var pendingNew = 0
    private var refusedNew: [String] = []
    private var nextOrder = 0
    /// The locks of new paths taken at `commit` (a writer of Relay began on the path meanwhile).
    private var lateLocks: [CoordinatedLock] = []
    /// How many versions a batch stores as files of their own; one that stores more packs them
    /// all: a change set's batch (a hundred or so) stays loose, a first sync's thousands are
    /// packed.
    public static let loosePerBatch = 128
    /// How many files a batch starts writing to the disk as it stages them (`writeTemporary`'s
    /// `startWriteback`); its flush writes the rest together. Starting each file's writes was a
    /// system call and a trip to the disk's queue per file: on a first sync, ~10% of the work,
    /// on a thread that by then had no core to spare. A change set's batch stays under it.
    public static let writtenBackPerBatch = 128
    /// Bytes written to temporary files so far.
    public private(set) var stagedBytes = 0
    /// The versions `storeObject` was given since the last commit: each is in the store once
    /// the next commit succeeds.
    public var versionsToStore: Set<ContentHash> { objectHashes }
    /// Files, removals and objects staged so far.
    public var count: Int { staged.count + pendingNew + removals.count + storing.count }

    public init(_ workspace: Workspace, operation: String) {
        var quick = workspace
        quick.durable = false
        self.quick = quick
        self.durable = workspace.durable
        self.operation = operation
        self.recordsInFiles = Flag(workspace.installedRecordsInFiles)
    }

    deinit {
        abandon()
        if let own {
            _ = Syscall.unlink(own.lock.lockFile)
            own.lock.release()
        }
    }

    /// Writes `bytes` to a temporary file next to `path`, taking the path's lock; `commit`
    /// puts it in place if the file is then still `expected` (nil: no file), or in any case
    /// when `overwrite`.
    ///
    /// - parameter knownStamp: the stamp the file had when its content was `expected`, from a
    ///   scan that can vouch for it (an index refresh, whose stamp was not racy). A file that
    ///   still has exactly this stamp (inode, size, modification time) at `commit` is taken to
    ///   be `expected` without being read — the fast check of the refresh itself, and of Unison
    ///   and git — and its displaced version goes to the store unread. Any other file is read
    ///   and hashed.
    /// - throws: `WorkspaceError` for a refused path, a lock timeout, or an I/O failure, and
    ///   `.invalidInput` when `path` is already staged in this batch.
    /// - returns: the hash of `bytes` (for a caller that also stores them, `storeObject(_:hash:)`).
    @discardableResult
    public func stage(_ path: String, bytes: [UInt8], hash: ContentHash? = nil, expected: ContentHash?, knownStamp: FileStamp? = nil,
                      overwrite: Bool = false) throws -> ContentHash {
        let target = try claim(path)
        let order = nextOrder
        nextOrder += 1
        do {
            // Whether a lock file is there is looked at by `commit` (`installNew`), which takes
            // the lock then if one is: looking here too was an `lstat` per file on the thread
            // that stages.
            if !target.exists, expected == nil, recordsInFiles.value {
                return try stageNew(target, bytes: bytes, hash: hash ?? ContentHash(of: bytes), overwrite: overwrite, order: order)
            }
        } catch {
            stagedPaths.remove(target.relative)
            throw error
        }
        var made: ContentHash?
        try holding(target) { target, lock in
            // `resolve` just found every folder on the way when the file itself is there.
            if !target.exists { try quick.createParentFolders(of: target, folders: folders) }
            let permissions = target.exists ? try FileSnapshot.identity(target.absolute, displayPath: target.relative)?.permissions : nil
            let temporary = try quick.writeTemporary(for: target, bytes: bytes, hash: hash, permissions: permissions, owner: .lock(lock),
                                                     startWriteback: order < Self.writtenBackPerBatch)
            staged.append(Staged(order: order, target: target, lock: lock, temporary: temporary, expected: expected,
                                 knownStamp: expected == nil ? nil : knownStamp, checked: !overwrite))
            stagedBytes += bytes.count
            made = temporary.hash
        }
        return made!
    }

    /// A path new here with no lock file, staged under the batch's own lock (see the type's
    /// notes), its temporary made on the writer's thread (`NewFileWriter`); on a file system
    /// that refuses the file its own record, under the path's lock.
    private func stageNew(_ target: ResolvedPath, bytes: [UInt8], hash: ContentHash, overwrite: Bool, order: Int) throws -> ContentHash {
        let key = try ownKey()
        let (quick, recordsInFiles) = (self.quick, self.recordsInFiles)
        try newFiles.submit(path: target.relative) { folders in
            try quick.createParentFolders(of: target, folders: folders)
            let temporary = try quick.writeTemporary(for: target, bytes: bytes, hash: hash, permissions: nil, owner: .batch(key: key),
                                                     startWriteback: order < Self.writtenBackPerBatch)
            var lock: CoordinatedLock?
            if !temporary.recordsItself {
                recordsInFiles.value = false
                do { lock = try Self.takeLock(target, in: quick, naming: temporary) } catch {
                    _ = Syscall.unlink(temporary.absolute)
                    throw error
                }
            }
            return Staged(order: order, target: target, lock: lock, temporary: temporary, expected: nil, knownStamp: nil, checked: !overwrite)
        }
        pendingNew += 1
        stagedBytes += bytes.count
        return hash
    }

    /// The new files the writer made, put among the staged ones in the order they were
    /// staged; those it refused become outcomes of files left alone. Throws what it failed
    /// with (what it made is discarded).
    private func collectNewFiles() throws {
        guard pendingNew > 0 else { return }
        pendingNew = 0
        let (made, refused) = try newFiles.finish(cleanUp: { for item in $0 { drop(item) } })
        staged = (staged + made).sorted { $0.order < $1.order }
        refusedNew += refused
    }

    /// The key of the batch's own lock, taken the first time it is asked for: a lock file of a
    /// random name, labelled for a person who looks in `.relay/locks/`, removed when the batch
    /// ends. Its key has the length of a path's, so `reclaimTemporaries` finds it by the name of
    /// a temporary like any other.
    private func ownKey() throws -> String {
        if let own { return own.key }
        let key = String(ContentHash(of: "\(Syscall.nowNanoseconds()) \(UInt64.random(in: .min ... .max)) \(quick.root)").hex.prefix(32))
        let lock = try CoordinatedLock.acquire(lockFile: quick.lockFile(key: key), label: "(a write batch: \(operation), process \(getpid()))",
                                               timeout: quick.lockTimeout)
        own = (key, lock)
        return key
    }

    /// `path` resolved in the sandbox and claimed for this batch.
    private func claim(_ path: String) throws -> ResolvedPath {
        let target = try quick.resolve(path, folders: folders)
        guard stagedPaths.insert(target.relative).inserted else {
            throw WorkspaceError(.invalidInput, "\(target.relative): staged twice in one batch", path: target.relative)
        }
        return target
    }

    /// The lock of `target`, undoing what a killed holder left.
    private func takeLock(_ target: ResolvedPath) throws -> CoordinatedLock {
        try Self.takeLock(target, in: quick)
    }

    private static func takeLock(_ target: ResolvedPath, in quick: Workspace) throws -> CoordinatedLock {
        let lock = try CoordinatedLock.acquire(lockFile: quick.lockFile(key: Workspace.lockKey(target.relative)),
                                               label: target.relative, timeout: quick.lockTimeout)
        quick.recoverInterrupted(lock, path: target)
        return lock
    }

    /// The lock of a new path whose temporary was made under the batch's own lock, taken after
    /// all (the file system keeps no attributes, or a writer of Relay began on the path): the
    /// temporary is named in its intent record, as if the lock had been taken first.
    private static func takeLock(_ target: ResolvedPath, in quick: Workspace, naming temporary: Workspace.Temporary) throws -> CoordinatedLock {
        let lock = try takeLock(target, in: quick)
        do { try lock.recordIntent(.temporary(name: temporary.name), durable: false) } catch {
            lock.release()
            throw error
        }
        return lock
    }

    /// Takes the lock of `target` (claimed by `claim`) for the batch and runs `body`, which
    /// keeps the lock in what it stages; if `body` throws, the path is not staged and the lock
    /// goes.
    private func holding(_ target: ResolvedPath, _ body: (ResolvedPath, CoordinatedLock) throws -> Void) throws {
        var lock: CoordinatedLock?
        do {
            lock = try takeLock(target)
            try body(target, lock!)
        } catch {
            stagedPaths.remove(target.relative)
            lock?.release()
            throw error
        }
    }

    /// Deletes `path` when the batch commits, if it is then still `expected` — the check that
    /// a person's edit made meanwhile is never deleted, as `Workspace.remove(expected:)` —
    /// taking the path's lock now. Its content goes to the object store in the batch's first
    /// flush (a delete is a replacement by nothing); the unlinks are made durable by the
    /// second, with one history line per file.
    ///
    /// `knownStamp` is as for `stage`: a file that still has it is not read to be checked.
    ///
    /// - throws: `WorkspaceError` for a refused path, a lock timeout or an I/O failure, and
    ///   `.invalidInput` when `path` is already staged in this batch.
    public func stageRemoval(_ path: String, expected: ContentHash, knownStamp: FileStamp? = nil) throws {
        try holding(try claim(path)) { target, lock in
            // Usually the store has it already (a merge base, or the version sync installed).
            if !objectHashes.contains(expected), !quick.objects.contains(expected),
               let snapshot = try FileSnapshot.read(target.absolute, displayPath: target.relative),
               snapshot.hash == expected, snapshot.bytes.count <= quick.maximumArchivedSize {
                try storeObject(snapshot.bytes)
            }
            removals.append(Removal(target: target, lock: lock, expected: expected, knownStamp: knownStamp))
        }
    }

    /// Adds `bytes` to the object store when the batch commits (a merge base, for example).
    public func storeObject(_ bytes: [UInt8]) throws {
        try storeObject(bytes, hash: ContentHash(of: bytes))
    }

    /// `storeObject` of bytes whose hash the caller just computed from exactly these bytes.
    public func storeObject(_ bytes: [UInt8], hash: ContentHash) throws {
        guard objectHashes.insert(hash).inserted else { return }
        storing.append((bytes, hash))
        stagedBytes += bytes.count
    }

    /// Puts every staged file and object in place, durably, and releases the locks.
    public func commit() throws -> [Outcome] {
        try commit(whileFlushing: { $0 })
    }

    /// `commit()`, with `meanwhile` given the outcomes once every file is in place, while its
    /// last flush (the one that makes the renames durable) runs on another thread: a caller
    /// that records the outcomes — a sync's index rows, ~4 ms for 170 files — writes them during
    /// the ~4 ms that flush waits for the disk, and commits them after this returns. Returns
    /// what `meanwhile` returned, once both are done; throws if either failed, so nothing is
    /// recorded as durable that is not. Neither runs when nothing was staged.
    public func commit<T>(whileFlushing meanwhile: ([Outcome]) throws -> T) throws -> T {
        try collectNewFiles()
        // From here on a staged item is this function's: its temporary may hold a displaced
        // version, which must never be deleted as a leftover.
        let items = staged, removing = removals, refused = refusedNew
        staged = []
        removals = []
        refusedNew = []
        defer {
            for item in items { item.lock?.release() }
            for removal in removing { removal.lock.release() }
            for lock in lateLocks { lock.release() }
            lateLocks = []
            abandon()
        }
        let leftAlone = refused.map { Outcome(path: $0, result: nil, stamp: nil) }
        guard !items.isEmpty || !removing.isEmpty || !storing.isEmpty else { return try meanwhile(leftAlone) }
        var timings = SyncTimings("write-batch \(operation)")
        // 1. The versions to keep, written; 2. every temporary's bytes on the disk before any
        // of them is renamed into place; 3. the versions put in the store.
        try writeObjects(&timings)
        try flush()
        timings.mark("first-flush")
        try placeObjects(&timings)
        // 4. Each file checked and swapped in; 5. in-place saves into what was displaced
        // handed back; 6. removals; 7. displaced versions archived, history lines written.
        var (outcomes, installed) = try install(items)
        outcomes += leftAlone
        timings.mark("install \(items.count)")
        let handedBack = try handBackInPlaceSaves(installed, into: &outcomes)
        timings.mark("in-place saves: \(handedBack.count) handed back")
        var records: [VersionRecord] = []
        for removal in removing {
            outcomes.append(try remove(removal, &records))
        }
        timings.mark("remove \(removing.count)")
        try archive(installed, except: handedBack, into: &outcomes, records: &records)
        timings.mark("archive")
        // 8. The renames, folders, stored versions and history lines reach the disk before the
        // caller's records of them are committed (after this returns).
        let flushed = durable ? BackgroundWork { [quick] in try Self.flush(quick) } : nil
        let result = Result { try meanwhile(outcomes) }
        try flushed?.wait()
        timings.mark("second-flush and the caller's records")
        // What the batch no longer needs (displaced versions the store had, deleted files) is
        // unlinked in the background, after the flushes it would have slowed.
        Trash.emptyLater(quick.layout.trash)
        HistoryLog.compactLater(quick.layout.historyBatches)
        return try result.get()
    }

    /// The versions to store that the store lacks, written as loose temporaries or into one
    /// pack (on the committing thread).
    private func writeObjects(_ timings: inout SyncTimings) throws {
        guard !storing.isEmpty else { return }
        let store = quick.objects
        let wanted = storing.filter { !store.contains($0.hash) }
        storing = []
        if wanted.count > Self.loosePerBatch {
            pack = try store.packWriter()
            for object in wanted { try pack!.append(object.bytes, hash: object.hash) }
            try pack!.finish()
            timings.mark("pack written")
        } else {
            for object in wanted { objects.append((try store.writeTemporary(object.bytes), object.hash)) }
            timings.mark("loose versions written")
        }
    }

    /// The loose versions and the pack put in the store, once their bytes are on the disk.
    private func placeObjects(_ timings: inout SyncTimings) throws {
        let store = quick.objects
        for object in objects {
            try store.place(object.temporary, hash: object.hash)
        }
        if let pack {
            try store.place(pack)
            timings.mark("pack of \(pack.count)")
        }
        timings.mark("objects \(objects.count)")
        objects = []
        pack = nil
    }

    /// Each staged file checked against what the caller expected and swapped into place; a
    /// file that changed is left alone, a save that landed between the check and the swap is
    /// handed straight back. Returns the outcomes so far (those left alone) and what was
    /// installed.
    private func install(_ items: [Staged]) throws -> ([Outcome], [Installed]) {
        var outcomes: [Outcome] = []
        var installed: [Installed] = []
        for var item in items {
            let target = item.target
            if item.lock == nil {
                if try installNew(&item) {
                    installed.append(Installed(staged: item, displaced: nil, previous: nil))
                    continue
                }
            }
            let current = try presentVersion(target, expected: item.expected, knownStamp: item.knownStamp)
            if item.checked && current?.hash != item.expected {
                discard(item)
                outcomes.append(Outcome(path: target.relative, result: nil, stamp: nil))
                continue
            }
            let displaced = try quick.install(item.temporary, at: target, sync: false)
            let previous = try displacedVersion(displaced, checked: current, item)
            if item.checked && previous?.hash != item.expected {
                // A save landed between the check and the swap: hand it straight back.
                if case .file(let theirs) = displaced, case .success = Syscall.exchange(theirs, target.absolute) {
                    _ = Syscall.unlink(theirs)
                    item.lock?.clearIntent()
                    outcomes.append(Outcome(path: target.relative, result: nil, stamp: nil))
                    continue
                }
            }
            installed.append(Installed(staged: item, displaced: displaced, previous: previous))
        }
        return (outcomes, installed)
    }

    /// A new path staged without its lock, put in place if the path still has no lock file (no
    /// writer of Relay began on it since) and still no file (`RENAME_NOREPLACE`): then nothing
    /// was there to displace or to check. Otherwise the path's lock is taken now (waiting for
    /// that writer), the temporary named in its intent, and the item goes the way of any other.
    private func installNew(_ item: inout Staged) throws -> Bool {
        if !quick.hasLockFile(item.target), case .success = Syscall.renameNoReplace(item.temporary.absolute, item.target.absolute) {
            return true
        }
        let lock = try Self.takeLock(item.target, in: quick, naming: item.temporary)
        lateLocks.append(lock)
        item.lock = lock
        return false
    }

    /// An editor that had a displaced file open may still write into it (an in-place save:
    /// open, truncate, write): one wait for the whole batch, then any displaced file that moved
    /// is swapped back into place and ours dropped (`Workspace.handBackInPlaceSaves`, as an
    /// update does for its one file). Returns the indices of `installed` handed back.
    private func handBackInPlaceSaves(_ installed: [Installed], into outcomes: inout [Outcome]) throws -> Set<Int> {
        // Only a path whose lock was taken can have displaced a file.
        let displacedFiles = installed.indices.filter { index in
            guard case .file = installed[index].displaced, installed[index].previous != nil, installed[index].staged.lock != nil else { return false }
            return true
        }
        let handedBack = Set(try quick.handBackInPlaceSaves(displacedFiles.map { index in
            guard case .file(let path) = installed[index].displaced, let previous = installed[index].previous,
                  let lock = installed[index].staged.lock else { preconditionFailure("filtered above") }
            return Workspace.DisplacedVersion(displaced: path, target: installed[index].staged.target, before: previous.identity,
                                              lock: lock)
        }).map { displacedFiles[$0] })
        for index in handedBack.sorted() {
            outcomes.append(Outcome(path: installed[index].staged.target.relative, result: nil, stamp: nil))
        }
        return handedBack
    }

    /// The displaced versions archived (the store, the last-installed record) and the history
    /// lines of the whole batch written together; the installed files' outcomes.
    private func archive(_ installed: [Installed], except handedBack: Set<Int>, into outcomes: inout [Outcome],
                         records: inout [VersionRecord]) throws {
        for (index, item) in installed.enumerated() where !handedBack.contains(index) {
            let temporary = item.staged.temporary
            if let lock = item.staged.lock {
                let expectedMatched = !item.staged.checked || item.previous?.hash == item.staged.expected
                records.append(try quick.keep(item.displaced, replaced: item.previous, installed: temporary, path: item.staged.target,
                                              operation: expectedMatched ? operation : operation + "-interrupted", lock: lock))
            } else {
                // A new path: nothing displaced; the file holds its own installed record.
                records.append(VersionRecord(timeNanoseconds: Syscall.nowNanoseconds(), path: item.staged.target.relative, operation: operation,
                                             replaced: nil, replacedSize: nil, replacedStored: false,
                                             installed: temporary.hash, installedSize: temporary.size))
            }
            outcomes.append(Outcome(
                path: item.staged.target.relative,
                result: Workspace.WriteResult(path: item.staged.target.relative, hash: temporary.hash, size: temporary.size,
                                              replaced: item.previous?.hash, attempts: 1),
                stamp: FileStamp(temporary.identity)))
        }
        try HistoryLog.write(records, in: quick.layout.historyBatches)
    }

    /// What the file to be replaced holds now: known by its stamp when the caller vouched for
    /// it, it still has it and the store has that version (so the file, displaced unread, is
    /// never the only copy of it); read and hashed otherwise.
    private func presentVersion(_ target: ResolvedPath, expected: ContentHash?, knownStamp: FileStamp?) throws -> Workspace.ReplacedVersion? {
        if let known = knownStamp, let expected,
           let identity = try FileSnapshot.identity(target.absolute, displayPath: target.relative),
           FileKind(identity.mode) == .regular, FileStamp(identity) == known, quick.objects.contains(expected) {
            return Workspace.ReplacedVersion(identity: identity, hash: expected)
        }
        return try FileSnapshot.read(target.absolute, displayPath: target.relative).map(Workspace.ReplacedVersion.init)
    }

    /// What the swap displaced. When the checked version was known by its stamp and the
    /// displaced file is that very file, unchanged (same inode, size and modification time:
    /// a write into it in between would have moved them), it is that version, unread.
    private func displacedVersion(_ displaced: Workspace.Displaced?, checked: Workspace.ReplacedVersion?,
                                  _ item: Staged) throws -> Workspace.ReplacedVersion? {
        if let checked, checked.bytes == nil, case .file(let absolute) = displaced,
           let now = try FileSnapshot.identity(absolute, displayPath: item.target.relative),
           FileKind(now.mode) == .regular, FileStamp(now) == FileStamp(checked.identity), now.device == checked.identity.device {
            return Workspace.ReplacedVersion(identity: now, hash: checked.hash)
        }
        return try quick.read(displaced, path: item.target).map(Workspace.ReplacedVersion.init)
    }

    /// One staged removal: the check, the unlink, the history line (the store has the content
    /// since the first flush, unless it was too large to keep or was not what was expected).
    private func remove(_ removal: Removal, _ records: inout [VersionRecord]) throws -> Outcome {
        let target = removal.target
        guard let current = try presentVersion(target, expected: removal.expected, knownStamp: removal.knownStamp) else {
            return Outcome(path: target.relative, result: nil, stamp: nil, removed: true)
        }
        guard current.hash == removal.expected else {
            return Outcome(path: target.relative, result: nil, stamp: nil, removed: false)
        }
        let stored = quick.objects.contains(current.hash)
        try Trash.discard(target.absolute, into: quick.layout.trash).orThrow("delete", path: target.relative)
        let record = VersionRecord(
            timeNanoseconds: Syscall.nowNanoseconds(), path: target.relative, operation: operation + "-delete",
            replaced: current.hash, replacedSize: current.size, replacedStored: stored,
            installed: ContentHash(of: [UInt8]()), installedSize: 0)
        records.append(record)
        return Outcome(path: target.relative, result: nil, stamp: nil, removed: true)
    }

    /// Flushes the file systems of the workspace and of its object store (when durable).
    private func flush() throws {
        guard durable else { return }
        try Self.flush(quick)
    }

    private static func flush(_ quick: Workspace) throws {
        var devices = Set<UInt64>()
        for folder in [quick.root, quick.layout.objects] {
            guard case .success(let info) = Syscall.lstat(folder), devices.insert(UInt64(info.st_dev)).inserted else { continue }
            let fd = try Syscall.open(folder, O_RDONLY | O_DIRECTORY).orThrow("open folder", path: folder)
            defer { Syscall.close(fd) }
            try Syscall.syncfs(fd).orThrow("syncfs", path: folder)
        }
    }

    private func discard(_ item: Staged) {
        _ = Syscall.unlink(item.temporary.absolute)
        item.lock?.clearIntent()
    }

    /// A staged file dropped: its temporary removed, its lock released.
    private func drop(_ item: Staged) {
        if case .success = Syscall.lstat(item.temporary.absolute) { discard(item) }
        item.lock?.release()
    }

    /// Drops whatever is still staged (temporaries removed, locks released), once the writer's
    /// thread is done with what it was given.
    private func abandon() {
        if pendingNew > 0, let (made, _) = try? newFiles.finish(cleanUp: { for item in $0 { drop(item) } }) {
            for item in made { drop(item) }
        }
        pendingNew = 0
        refusedNew = []
        nextOrder = 0
        for item in staged { drop(item) }
        for removal in removals { removal.lock.release() }
        removals = []
        for object in objects { _ = Syscall.unlink(object.temporary) }
        if let pack { _ = Syscall.unlink(pack.temporary) }
        pack = nil
        storing = []
        staged = []
        stagedPaths = []
        objects = []
        objectHashes = []
        stagedBytes = 0
        folders.forget()
    }
}

/// A flag both the caller's thread and the writer's read and set.
private final class Flag: Sendable {
    private let state: Mutex<Bool>
    init(_ value: Bool) { state = Mutex(value) }
    var value: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
