import WorkspaceCore

// Planning a sync, and the checks that stop one before it changes anything: which paths to
// look at (those written since the last clean sync, or all), the peer's paths through this
// side's sandbox, files against folders, mass deletions, replicas that are one another.
extension Reconciler {
    /// Decides which paths this sync looks at, and readies both sides for them: the peer's new
    /// paths checked against this side's sandbox (`summary.refused`), files against folders
    /// left alone (`summary.clashes`), a mass deletion refused, and the endpoints told what
    /// will be read and written. Returns the paths, sorted.
    func plan(_ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary, _ timings: inout SyncTimings) throws -> [String] {
        // The paths to look at: after a clean sync of these two replicas (the mark both
        // recorded), only those written on either side since; every path otherwise.
        let candidates = try changedSinceLastCleanSync(a, b)
        // Without one, every path is looked at: a peer's index left in its copy is read now.
        if candidates == nil {
            try a.entries.complete()
            try b.entries.complete()
        }
        // The peer's paths are untrusted: check each against our sandbox before anything else.
        // Paths our own index holds came from our own walk or passed this check before (and
        // every write checks its path again).
        // Clashes first: a path under a folder that is a file here is not hostile, only early.
        let (clashing, deleteFirst) = Self.clashes(a.entries, b.entries, among: candidates)
        try refusePeerPaths(a, &b, among: candidates, clashing: clashing, deleteFirst: deleteFirst, &summary)
        for path in clashing.sorted() {
            summary.clashes.append(path)
            logger.warning("a file on one side where the other has a folder: left alone; rename one of them", metadata: ["relay.path": "\(path)"])
        }
        self.deleteFirst = deleteFirst
        timings.mark("clashes-and-checks")
        let paths = (candidates ?? Set(a.entries.all.keys).union(b.entries.all.keys)).subtracting(clashing)
            .filter { a.entries[$0] != nil || b.entries[$0] != nil }.sorted()
        summary.examined = paths.count
        // Every path may end up with an entry on both sides.
        if candidates == nil {
            a.entries.reserveCapacity(paths.count)
            b.entries.reserveCapacity(paths.count)
        }
        timings.mark("union-and-sort")
        try guardMassDeletion(a, b, among: candidates)
        announce(paths, a, b)
        timings.mark("prefetch")
        return paths
    }

    /// Checks the paths the peer has and this side lacks against this side's sandbox
    /// (`ReplicaEndpoint.check`): a refused one is dropped from `b` and reported.
    private func refusePeerPaths(_ a: Side, _ b: inout Side, among candidates: Set<String>?, clashing: Set<String>,
                                 deleteFirst: Set<String>, _ summary: inout SyncSummary) throws {
        // Only the new paths are sorted (for a stable report order): sorting every path
        // of a 100,000-file index took ~7% of a sync.
        let newPaths = candidates.map { $0.filter { b.entries[$0] != nil } } ?? Array(b.entries.all.keys)
        for path in newPaths.filter({ a.entries[$0] == nil && !clashing.contains($0) }).sorted() {
            // Under a file this side deletes first: checked when it is written, after that.
            if deleteFirst.contains(where: { path.hasPrefix($0 + "/") }) { continue }
            do { try local.check(path) } catch let error as SyncError {
                summary.refused.append(path)
                b.entries.removeValue(forKey: path)
                logger.warning("refused a path from the peer", metadata: ["relay.path": "\(path)", "relay.reason": "\(error)"])
            }
        }
    }

    /// The paths of `paths` whose version on the side of `source` the sync will read: live
    /// there, different from the other side's, and not older than it.
    private static func reads(_ paths: [String], from source: EntryMap, other: EntryMap) -> [(path: String, expected: String, size: Int)] {
        paths.compactMap { path in
            guard let this = source[path], !this.deleted else { return nil }
            if let that = other[path] {
                if !that.deleted && that.hash == this.hash { return nil }
                if this.vector.compare(to: that.vector) == .before { return nil }
            }
            return (path, this.hash, this.stamp.size)
        }
    }

    /// Tells the endpoints what the sync will read and write, so that they read ahead meanwhile.
    private func announce(_ paths: [String], _ a: Side, _ b: Side) {
        // What the sync will read from each side, in order: whatever a side has live that the
        // other lacks, unless the other's version is the newer one. The peer over the protocol
        // fetches those many to a round trip; a folder reads them ahead on a thread.
        peer.prefetch(Self.reads(paths, from: b.entries, other: a.entries))
        local.prefetch(Self.reads(paths, from: a.entries, other: b.entries))
        if !options.dryRun {
            // What each side will write (a copy or a deletion from the newer side; both sides
            // where both changed): the endpoints read those paths' lock files meanwhile.
            var writesHere: [String] = [], writesThere: [String] = []
            var contentsHere: [String] = [], contentsThere: [String] = []
            for path in paths {
                let mine = a.entries[path], theirs = b.entries[path]
                let mineLive = mine.map { !$0.deleted } ?? false, theirsLive = theirs.map { !$0.deleted } ?? false
                if mineLive == theirsLive && (!mineLive || mine?.hash == theirs?.hash) { continue }
                switch (mine?.vector ?? VersionVector()).compare(to: theirs?.vector ?? VersionVector()) {
                case .after:
                    writesThere.append(path)
                    if mineLive, let hash = mine?.hash { contentsThere.append(hash) }
                case .before:
                    writesHere.append(path)
                    if theirsLive, let hash = theirs?.hash { contentsHere.append(hash) }
                case .equal, .concurrent:
                    writesHere.append(path)
                    writesThere.append(path)
                }
            }
            peer.expectWrites(writesThere, contents: contentsThere)
            local.expectWrites(writesHere, contents: contentsHere)
        }
    }

    /// The paths written on either side since the last clean sync of these two replicas, or nil
    /// (look at every path) when there is none both sides recorded alike (`SyncMark`): a first
    /// sync, a sync that ended with something left over, an index restored from a backup or
    /// replaced, or `Options.examineAll`.
    private func changedSinceLastCleanSync(_ a: Side, _ b: Side) throws -> Set<String>? {
        markStillHolds = false
        guard !options.examineAll, let here = a.endpoint.refreshedSequence, let there = b.endpoint.refreshedSequence,
              let mine = try a.endpoint.syncMark(peer: b.replica), let theirs = try b.endpoint.syncMark(peer: a.replica),
              mine.id == theirs.id, mine.mine == theirs.theirs, mine.theirs == theirs.mine,
              // A counter below the mark's has gone back (an index restored): not to be trusted.
              here >= mine.mine, there >= mine.theirs else { return nil }
        // Neither index written since: the mark already says what a new one would.
        markStillHolds = here == mine.mine && there == mine.theirs
        return Set(try a.entries.paths(writtenAfter: mine.mine)).union(try b.entries.paths(writtenAfter: mine.theirs))
    }

    /// After a sync that left nothing over (nothing skipped, refused or clashing; not a dry
    /// run), both sides record the same new mark with the sequences their refresh read: the
    /// next sync between them looks only at what is written after those.
    func markIfClean(_ a: Side, _ b: Side, _ summary: SyncSummary) throws {
        guard !options.dryRun, summary.skipped.isEmpty, summary.refused.isEmpty, summary.clashes.isEmpty,
              let here = a.endpoint.refreshedSequence, let there = b.endpoint.refreshedSequence else { return }
        // Nothing was written on either side since that mark (so nothing was to do): it stands.
        if markStillHolds { return }
        let id = SyncIndex.newMarkID()
        try b.endpoint.setSyncMark(SyncMark(id: id, mine: there, theirs: here), peer: a.replica)
        try a.endpoint.setSyncMark(SyncMark(id: id, mine: here, theirs: there), peer: b.replica)
    }

    func checkDistinctReplicas() throws {
        guard local.replica != peer.replica else {
            throw SyncError(.stopped, "\(peer.location) has the same replica id as this workspace (\(local.replica)); was it copied with .relay/? Run `relay init --new-replica` there: it takes a replica id of its own and keeps its history")
        }
    }

    /// Where one side has a live file at a path the other side uses as a folder. Only paths
    /// live on one side and not the other can be involved (a path live on both has the same
    /// folders above it on both), so this looks at what differs, not at every path. Returns the
    /// paths to leave alone (the file and the other side's files under it) and the files whose
    /// deletion, seen by the other side first, must be made before the folder fills — those
    /// are not a clash.
    ///
    /// `among`: only these paths can be involved (those written since the last clean sync: a
    /// path live on one side only that neither side wrote since would have been copied then,
    /// or that sync would not have been clean); nil: any.
    static func clashes(_ a: EntryMap, _ b: EntryMap, among candidates: Set<String>? = nil) -> (Set<String>, Set<String>) {
        var clashing = Set<String>(), deleteFirst = Set<String>()
        // Folders already found not to be a live file on the side looked at: new files share
        // their folders, and a look-up in a peer's copy is a query.
        var notFiles: [Set<String>] = [[], []]
        func look(at path: String, _ entry: SyncIndex.Entry, mine: EntryMap, theirs: EntryMap, side: Int) {
            guard !entry.deleted, mine[path]?.deleted ?? true else { return }
            var folder = Substring(path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                if notFiles[side].contains(String(folder)) { continue }
                guard let file = mine[String(folder)], !file.deleted else {
                    notFiles[side].insert(String(folder))
                    continue
                }
                let name = String(folder)
                if let gone = theirs[name], gone.deleted, gone.vector.compare(to: file.vector) == .after {
                    deleteFirst.insert(name)
                } else {
                    clashing.insert(name)
                    clashing.insert(path)
                }
            }
        }
        for (side, (mine, theirs)) in [(a, b), (b, a)].enumerated() {
            if let candidates {
                for path in candidates { if let entry = theirs[path] { look(at: path, entry, mine: mine, theirs: theirs, side: side) } }
            } else {
                for (path, entry) in theirs.all { look(at: path, entry, mine: mine, theirs: theirs, side: side) }
            }
        }
        return (clashing, deleteFirst)
    }

    /// `among`: the paths written since the last clean sync, when there is one — only those
    /// can be deletions still to make (two rows neither side wrote since agree).
    private func guardMassDeletion(_ a: Side, _ b: Side, among candidates: Set<String>?) throws {
        guard !options.force else { return }
        for (from, on) in [(a, b), (b, a)] {
            let source = from.entries, target = on.entries
            let targetLive = target.liveCount
            var sourceLive = 0, deletions = 0
            func count(_ s: SyncIndex.Entry) {
                if let t = target[s.path], !t.deleted, s.vector.dominates(t.vector) { deletions += 1 }
            }
            if let candidates {
                sourceLive = source.liveCount
                for path in candidates { if let s = source[path], s.deleted { count(s) } }
            } else {
                // Read in place (`values[index]`): this runs over every path.
                let all = source.all
                for index in all.values.indices {
                    guard all.values[index].deleted else { sourceLive += 1; continue }
                    count(all.values[index])
                }
            }
            let emptied = sourceLive == 0 && targetLive > 0 && deletions > 0
            if emptied || (deletions >= 5 && Double(deletions) > options.massDeletionShare * Double(targetLive)) {
                throw SyncError(.stopped, "refusing to delete \(deletions) of \(targetLive) files on \(on.endpoint.location) because they were deleted on \(from.endpoint.location)\(emptied ? " (it is empty)" : ""); check that side, then run again with --force if that is what you want")
            }
        }
    }
}
