extension Workspace {
    /// Read-modify-write under the coordinated lock that also survives a person's editor,
    /// which takes no lock.
    ///
    /// It reads only a file that has been left alone for 20 ms (unless Relay wrote it last),
    /// so it never builds on an editor's half-done in-place save; and when `transform` refuses
    /// bytes that have changed since they were read, it runs again on the file as it is now.
    ///
    /// `transform` gets the current bytes (nil when the file does not exist) and returns the
    /// new bytes. Just before replacing, the file is checked to still be what was read
    /// (inode, size, times and SHA-256); if it is not, `transform` runs again on the new
    /// content. The replacement itself is an exchange of names, so a save that lands in the
    /// instant between the check and the swap comes back out of it: it is swapped straight
    /// back into place and `transform` runs once more on it. `transform` may therefore run several times and
    /// must not have side effects.
    ///
    /// For example:
    /// ```swift
    /// try workspace.update("counter.txt") { old in
    ///     let n = Int(String(decoding: old ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    ///     return Array("\(n + 1)\n".utf8)
    /// }
    /// ```
    /// - throws: whatever `transform` throws (nothing is changed then), or `WorkspaceError`
    ///   `.tooManyConcurrentChanges` after `maximumAttempts` rounds of interference.
    @discardableResult
    public func update(
        _ path: String, operation: String = "update", maximumAttempts: Int = 25,
        _ transform: ([UInt8]?) throws -> [UInt8]
    ) throws -> WriteResult {
        let target = try resolve(path)
        return try coordinated(target) { lock in
            try createParentFolders(of: target)
            // `input` is what the next round transforms; `expected` is what must be at the
            // path when we swap. They differ only after a save was handed back by the swap:
            // then the path holds our own previous attempt.
            var input = try readWhenQuiet(target, lock: lock)
            var expected: Expected? = input.map(Expected.init)
            var ours: Set<ContentHash> = []
            for attempt in 1...max(1, maximumAttempts) {
                let newBytes: [UInt8]
                do {
                    newBytes = try transform(input?.bytes)
                } catch {
                    // A refusal made on bytes that have changed since (an editor saving while
                    // we read) is not final: transform again on what the file holds now.
                    let now = try readWhenQuiet(target, lock: lock)
                    guard !Expected.matches(now, expected), attempt < maximumAttempts else { throw error }
                    logger.debug("file changed under a refused update; transforming again", metadata: ["relay.path": "\(target.relative)"])
                    input = now
                    expected = now.map(Expected.init)
                    continue
                }
                let permissions = input?.identity.permissions
                let temporary = try writeTemporary(for: target, bytes: newBytes, permissions: permissions, owner: .lock(lock))

                let current = try FileSnapshot.read(target.absolute, displayPath: target.relative)
                guard Expected.matches(current, expected) else {
                    _ = Syscall.unlink(temporary.absolute)
                    lock.clearIntent()
                    logger.debug("file changed while updating; transforming again", metadata: ["relay.path": "\(target.relative)"])
                    // An in-place save is a truncate and a write: give it a moment to finish,
                    // a little longer each round, so a busy editor does not starve us.
                    Syscall.sleep(nanoseconds: Int64(min(attempt, 20)) * Int64.random(in: 500_000...1_500_000))
                    input = try readWhenQuiet(target, lock: lock)
                    expected = input.map(Expected.init)
                    continue
                }
                let displaced = try install(temporary, at: target, sync: false)
                let previous = try read(displaced, path: target)
                if Expected.matches(previous, expected), case .file(let displacedPath) = displaced, let previous,
                   try !handBackInPlaceSaves([DisplacedVersion(displaced: displacedPath, target: target, before: previous.identity, lock: lock)]).isEmpty {
                    // An editor that had the file open wrote into it just after the swap (an
                    // in-place save: open, truncate, write): its version is back in place.
                    // Start again from it.
                    input = try readWhenQuiet(target, lock: lock)
                    expected = input.map(Expected.init)
                    continue
                }
                if Expected.matches(previous, expected) {
                    if durable { try syncFolder(target.parentAbsolute) }
                    let kept = previous.flatMap { ours.contains($0.hash) ? nil : $0 }
                    try archive(kept == nil ? discard(displaced) : displaced, snapshot: kept, installed: temporary,
                                path: target, operation: operation, lock: lock)
                    return WriteResult(path: target.relative, hash: temporary.hash, size: temporary.size,
                                       replaced: previous?.hash, attempts: attempt)
                }
                // Somebody saved between the check and the swap. Swap their version straight
                // back, so that nobody reads or builds on ours (made from what they replaced),
                // then transform again on theirs.
                logger.info("a save landed during an update; transforming again on it", metadata: ["relay.path": "\(target.relative)"])
                if case .file(let theirs) = displaced, case .success = Syscall.exchange(theirs, target.absolute) {
                    let back = try FileSnapshot.read(theirs, displayPath: target.relative)
                    if back?.hash != temporary.hash, let back {
                        // A second save in that instant: it is kept in the store, and the
                        // next round starts from whatever the file holds now.
                        logger.warning("two saves raced an update; the earlier is in the file, the later kept in the store",
                                       metadata: ["relay.path": "\(target.relative)", "relay.kept": "\(back.hash.short)"])
                        try archive(.file(theirs), snapshot: back, installed: temporary, path: target,
                                    operation: operation + "-raced", lock: lock)
                        input = try readWhenQuiet(target, lock: lock)
                        expected = input.map(Expected.init)
                    } else {
                        _ = Syscall.unlink(theirs)
                        lock.clearIntent()
                        input = previous
                        expected = previous.map(Expected.init)
                    }
                    continue
                }
                // No exchange possible: their version goes to the store and ours stays until
                // the next round replaces it with one built on theirs.
                if durable { try syncFolder(target.parentAbsolute) }
                try archive(displaced, snapshot: previous, installed: temporary, path: target, operation: operation + "-interrupted", lock: lock)
                ours.insert(temporary.hash)
                input = previous
                expected = Expected(identity: temporary.identity, hash: temporary.hash)
            }
            throw WorkspaceError(
                .tooManyConcurrentChanges,
                "\(target.relative): changed by someone else \(maximumAttempts) times while updating; gave up without writing",
                path: target.relative)
        }
    }

    /// Removes a displaced file that needs no archiving (our own earlier attempt).
    private func discard(_ displaced: Displaced?) -> Displaced? {
        if case .file(let absolute) = displaced { _ = Syscall.unlink(absolute) }
        return nil
    }
}

/// What an update expects to find at its path: a file with this identity and hash.
private struct Expected {
    var identity: FileIdentity
    var hash: ContentHash

    init(identity: FileIdentity, hash: ContentHash) {
        self.identity = identity
        self.hash = hash
    }

    init(_ snapshot: FileSnapshot) { self.init(identity: snapshot.identity, hash: snapshot.hash) }

    /// Same file, same bytes. The change time is left out: a rename (ours) moves it.
    static func matches(_ snapshot: FileSnapshot?, _ expected: Expected?) -> Bool {
        switch (snapshot, expected) {
        case (nil, nil): return true
        case (let snapshot?, let expected?):
            let a = snapshot.identity, b = expected.identity
            return a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modifiedNanoseconds == b.modifiedNanoseconds && snapshot.hash == expected.hash
        default: return false
        }
    }
}
