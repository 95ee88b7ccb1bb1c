/// The one hand-back of in-place saves, for an update (one file) and a write batch (many).
///
/// After Relay swaps its new file into place (`renameat2(RENAME_EXCHANGE)`), the version it
/// displaced sits under the temporary's name. An editor that opened the file before the swap
/// still holds that version open, and its in-place save (open, truncate, write) lands there,
/// not in the file now at the path. Such a save is never lost: it is swapped straight back
/// into place, and the caller starts again from it (an update) or leaves the path for the next
/// sync (a batch).
extension Workspace {
    /// A version just displaced by a swap, with the stamp it had when it was checked.
    struct DisplacedVersion {
        /// Where the displaced version is now (the temporary's name).
        var displaced: String
        /// The path it was swapped out of.
        var target: ResolvedPath
        /// Its identity when the caller last checked it (before the swap).
        var before: FileIdentity
        /// The path's lock, held by the caller: its intent names the temporary.
        var lock: CoordinatedLock
    }

    /// Waits for what may still write into the displaced versions, then swaps back every one
    /// that was written into (its size or modification time moved). Returns the indices of
    /// `versions` handed back: at their paths the displaced version is in place again, ours is
    /// gone, and the lock's intent is cleared.
    ///
    /// The wait, once for all of them: while some process still has one open (a write lease
    /// cannot be taken), up to a second; where that cannot be known (no leases on that file
    /// system or for that owner), one quiet period — except for a version Relay itself
    /// installed last, which nobody but an editor that opened it could write into, and that
    /// editor shows up in the lease or in the stamp.
    func handBackInPlaceSaves(_ versions: [DisplacedVersion]) throws -> Set<Int> {
        guard !versions.isEmpty else { return [] }
        let deadline = Syscall.nowNanoseconds() + 1_000_000_000
        var open = versions.map { Syscall.isOpenElsewhere($0.displaced) }
        while open.contains(true), Syscall.nowNanoseconds() < deadline {
            Syscall.sleep(nanoseconds: 2_000_000)
            for index in open.indices where open[index] == true { open[index] = Syscall.isOpenElsewhere(versions[index].displaced) }
        }
        let unknowable = versions.indices.contains { open[$0] == nil && !isLastInstalled(versions[$0].before, at: versions[$0].displaced, lock: versions[$0].lock) }
        if unknowable { Syscall.sleep(nanoseconds: Self.quietPeriodNanoseconds) }

        var handedBack = Set<Int>()
        for (index, version) in versions.enumerated() {
            guard let now = try FileSnapshot.identity(version.displaced, displayPath: version.target.relative),
                  now.size != version.before.size || now.modifiedNanoseconds != version.before.modifiedNanoseconds,
                  case .success = Syscall.exchange(version.displaced, version.target.absolute) else { continue }
            logger.info("an in-place save landed just after a swap; swapped back", metadata: ["relay.path": "\(version.target.relative)"])
            _ = Syscall.unlink(version.displaced)
            version.lock.clearIntent()
            handedBack.insert(index)
        }
        return handedBack
    }
}
