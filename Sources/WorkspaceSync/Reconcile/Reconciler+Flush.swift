import WorkspaceCore

// Batching: the copies staged on each side are installed, recorded and made durable a batch
// at a time (two folders: a full batch commits on another thread while the next is staged);
// what an endpoint could not do for a path (changed meanwhile, refused) is reported here.
extension Reconciler {
    /// Installs the staged copies on both sides, records them and their merge bases, and
    /// commits both indexes. `inBackground` (two folders): each side's full batch starts
    /// committing on another thread instead, and the results of its previous one are applied.
    func flush(_ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary, inBackground: Bool = false) throws {
        if options.dryRun { return }
        if inBackground && a.endpoint.flushesInBackground && b.endpoint.flushesInBackground {
            try flushInBackground(&a, &b, &summary)
            return
        }
        // What committed in the background comes back with this flush's results.
        for targetIsA in [true, false] {
            if targetIsA { a.pending = a.committing + a.pending; a.committing = [] } else { b.pending = b.committing + b.pending; b.committing = [] }
        }
        var timings = SyncTimings("reconciler flush")
        // Both sides install at once: a peer over the protocol gets its flush request first and
        // works on it in its own process; a second folder flushes on a thread of its own.
        let peer = b.endpoint
        try peer.beginFlush()
        let peerFlush = peer.remote == nil ? BackgroundWork { try peer.flush() } : nil
        let hereFlush = Result { try a.endpoint.flush() }
        // Both are finished before either's failure goes up.
        let peerFlushed = Result { try peerFlush?.wait() ?? peer.flush() }
        for targetIsA in [true, false] {
            let pending = targetIsA ? a.pending : b.pending
            let results = try targetIsA ? hereFlush.get() : peerFlushed.get()
            timings.mark("\(targetIsA ? "here" : "peer") endpoint flush \(pending.count)")
            if targetIsA { a.pending = []; a.pendingBytes = 0 } else { b.pending = []; b.pendingBytes = 0 }
            try apply(results, of: pending, targetIsA: targetIsA, &a, &b, &summary)
            timings.mark("\(targetIsA ? "here" : "peer") results and bases")
        }
        // The base rows just written.
        _ = try a.endpoint.flush()
        _ = try b.endpoint.flush()
        _ = try reportDeferredFailures(a.endpoint, &summary)
        _ = try reportDeferredFailures(b.endpoint, &summary)
        timings.mark("bases committed")
    }

    /// The results of a side's flushed copies: each path's new entry, or the path skipped
    /// (changed meanwhile); the source side records each copy as the pair's merge base.
    private func apply(_ results: [String: SyncIndex.Entry?], of pending: [PendingCopy], targetIsA: Bool,
                       _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        // The endpoints, not copies of the sides: a copy of a side alive while its entries are
        // written makes that write copy the whole map (at 100,000 files, 1.3 s of a first sync
        // was those copies, one per batch).
        let (targetEndpoint, sourceEndpoint) = targetIsA ? (a.endpoint, b.endpoint) : (b.endpoint, a.endpoint)
        let failed = try reportDeferredFailures(targetEndpoint, &summary)
        for copy in pending where !failed.contains(copy.path) {
            guard let result = results[copy.path], let entry = result else {
                summary.skipped.append(copy.path)
                logger.notice("changed during sync; left for the next one", metadata: ["relay.path": "\(copy.path)"])
                continue
            }
            if targetIsA { a.entries[copy.path] = entry } else { b.entries[copy.path] = entry }
            if copy.removal { continue }
            // The copy is now the pair's merge base: the target recorded it in its flush
            // (`stage(basePeer:)`, which stored the content too); the source, which stored
            // it at refresh, records it here.
            try sourceEndpoint.setBase(peer: targetEndpoint.replica, path: copy.path, hash: copy.hash, vector: copy.vector, content: nil)
        }
    }

    /// `flush(inBackground: true)`: a side with copies staged hands them to a batch that
    /// commits on another thread, and gets back the results of the one it handed over before
    /// (committed by now, rows and all). A side with nothing staged or committing commits its
    /// index writes (the merge bases just recorded) as `flush` would, at once: it has no batch
    /// to wait for.
    private func flushInBackground(_ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        var timings = SyncTimings("reconciler flush in background")
        for targetIsA in [true, false] {
            // No copy of a side is kept while `apply` writes its entries (see there).
            guard !(targetIsA ? a.pending : b.pending).isEmpty else { continue }
            let (targetEndpoint, sourceEndpoint) = targetIsA ? (a.endpoint, b.endpoint) : (b.endpoint, a.endpoint)
            let sourceIdle = targetIsA ? b.pending.isEmpty && b.committing.isEmpty : a.pending.isEmpty && a.committing.isEmpty
            // The source's refresh finished storing its merge bases (its flush waits for them):
            // `setBase` then finds them in the store instead of reading the files again.
            if sourceIdle { _ = try sourceEndpoint.flush() }
            let results = try targetEndpoint.flushInBackground()
            let done = targetIsA ? a.committing : b.committing
            if targetIsA {
                a.committing = a.pending; a.pending = []; a.pendingBytes = 0
            } else {
                b.committing = b.pending; b.pending = []; b.pendingBytes = 0
            }
            try apply(results, of: done, targetIsA: targetIsA, &a, &b, &summary)
            timings.mark("\(targetIsA ? "here" : "peer"): \(done.count) applied, \((targetIsA ? a : b).committing.count) committing")
        }
        for side in [a, b] where side.pending.isEmpty && side.committing.isEmpty {
            _ = try side.endpoint.flush()
            _ = try reportDeferredFailures(side.endpoint, &summary)
        }
        timings.mark("bases committed")
    }

    /// Requests an endpoint sent without waiting that failed: the paths skipped or refused,
    /// as if the request had failed at once.
    private func reportDeferredFailures(_ endpoint: ReplicaEndpoint, _ summary: inout SyncSummary) throws -> Set<String> {
        var paths = Set<String>()
        for (path, error) in try endpoint.takeDeferredFailures() {
            paths.insert(path)
            try handle(error, path: path, &summary)
        }
        return paths
    }

    func handle(_ error: SyncError, path: String, _ summary: inout SyncSummary) throws {
        switch error.code {
        case .changed:
            summary.skipped.append(path)
            logger.notice("changed during sync; left for the next one", metadata: ["relay.path": "\(path)"])
        case .refused:
            summary.refused.append(path)
        case .transport, .stopped, .corruptIndex, .badPeer, .database:
            throw error
        }
    }
}

extension Reconciler.Side {
    func isFull(_ options: Reconciler.Options) -> Bool {
        pending.count >= options.batchFiles || pendingBytes >= options.batchBytes
    }
}
