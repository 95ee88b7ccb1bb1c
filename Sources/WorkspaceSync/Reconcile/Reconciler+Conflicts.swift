import Foundation
import WorkspaceCore

// The decision for one path: vectors equal (join them), one side newer (copy or delete), both
// changed (delete against edit keeps the edit; one side behind catches up; otherwise a merge
// by kind, the version that lost kept in a conflict copy).
extension Reconciler {
    func reconcile(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        let aLive = ea.map { !$0.deleted } ?? false, bLive = eb.map { !$0.deleted } ?? false
        let va = ea?.vector ?? VersionVector(), vb = eb?.vector ?? VersionVector()

        if aLive == bLive && (!aLive || ea?.hash == eb?.hash) {
            // Same content (or gone on both): only the vectors may need joining.
            let joined = va.merged(with: vb)
            if va != vb && !options.dryRun {
                try record(path, on: &a, like: ea ?? eb!, vector: joined)
                try record(path, on: &b, like: eb ?? ea!, vector: joined)
            }
            if aLive, let hash = ea?.hash, !options.dryRun, try va != vb || a.endpoint.base(peer: b.replica, path: path) != hash {
                try setBases(path, hash: hash, vector: joined, a, b, content: nil)
            }
            return
        }
        switch va.compare(to: vb) {
        case .after: try propagate(path, from: &a, to: &b, &summary)
        case .before: try propagate(path, from: &b, to: &a, &summary)
        case .equal, .concurrent: try resolve(path, &a, &b, &summary)
        }
    }

    /// The newer side wins outright: its content (or its deletion) goes to the other side.
    private func propagate(_ path: String, from source: inout Side, to target: inout Side, _ summary: inout SyncSummary) throws {
        let entry = source.entries[path]!
        let expected = target.entries[path].flatMap { $0.deleted ? nil : $0.hash }
        if entry.deleted {
            guard let expected else {
                if !options.dryRun { try record(path, on: &target, like: entry, vector: entry.vector) }
                return
            }
            summary.deleted += 1
            summary.actions.append("delete (\(target.name)): \(path)")
            if options.dryRun { return }
            // Removed with the batch's copies: one flush for all, the file checked just before.
            try target.endpoint.stageRemoval(path, expected: expected, vector: entry.vector)
            target.pending.append(PendingCopy(path: path, hash: "", vector: entry.vector, bytes: 0, removal: true))
            return
        }
        let bytes = try steps.time("read") { try source.endpoint.read(path, expected: entry.hash) }
        summary.copied += 1
        summary.bytes += bytes.count
        summary.actions.append("copy → \(target.name): \(path)")
        if options.dryRun { return }
        // `read` checked that `bytes` hash to `entry.hash`.
        try steps.time("stage") { try target.endpoint.stage(path, bytes: bytes, hash: entry.hash, expected: expected, vector: entry.vector, basePeer: source.replica) }
        target.pending.append(PendingCopy(path: path, hash: entry.hash, vector: entry.vector, bytes: bytes.count))
        target.pendingBytes += bytes.count
    }

    /// Both sides changed the path since they last agreed.
    private func resolve(_ path: String, _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let ea = a.entries[path], eb = b.entries[path]
        var vector = (ea?.vector ?? VersionVector()).merged(with: eb?.vector ?? VersionVector())
        vector.increment(a.replica)
        let aLive = ea.map { !$0.deleted } ?? false
        let bLive = eb.map { !$0.deleted } ?? false
        if !aLive || !bLive {
            // Delete against edit keeps the edit.
            let live = aLive ? ea! : eb!
            let bytes = try (aLive ? a : b).endpoint.read(path, expected: live.hash)
            summary.copied += 1
            summary.bytes += bytes.count
            summary.actions.append("keep edit over delete → \(aLive ? b.name : a.name): \(path)")
            if options.dryRun { return }
            if aLive {
                b.entries[path] = try b.endpoint.install(path, bytes: bytes, expected: nil, overwrite: false, vector: vector)
                try record(path, on: &a, like: live, vector: vector)
            } else {
                a.entries[path] = try a.endpoint.install(path, bytes: bytes, expected: nil, overwrite: false, vector: vector)
                try record(path, on: &b, like: live, vector: vector)
            }
            try setBases(path, hash: live.hash, vector: vector, a, b, content: bytes)
            return
        }

        let kind = options.mergeRules.kind(of: path)
        let base: [UInt8]?
        switch try commonVersion(path, a, b, ea!, eb!) {
        case .behind(let sideA):
            // One side still has a version the other had and moved past: it only catches up.
            if sideA { try catchUp(path, from: &b, to: &a, vector: vector, &summary) } else { try catchUp(path, from: &a, to: &b, vector: vector, &summary) }
            return
        case .base(let content): base = content
        }
        let ours = try a.endpoint.read(path, expected: ea!.hash)
        let theirs = try b.endpoint.read(path, expected: eb!.hash)
        // The winner of whatever cannot be merged: the larger hash, the same from either side.
        let winner: ThreeWayMerge.Side = ea!.hash > eb!.hash ? .ours : .theirs
        // Past the size cap, versions of a kind that merges are kept as a binary's would be.
        let tooLarge = kind != .binary && max(ours.count, theirs.count, base?.count ?? 0) > options.maximumMergeBytes
        let (merged, conflicted, beyondLimit) = tooLarge ? (winner == .ours ? ours : theirs, true, true)
            : ContentMerge.merge(path: path, base: base, ours: ours, oursReplica: a.replica,
                                 theirs: theirs, theirsReplica: b.replica, winner: winner, kind: kind)
        summary.merged += 1
        summary.bytes += merged.count
        if beyondLimit { summary.tooLargeToMerge.append(path) }
        summary.actions.append("merge (\(kind.rawValue))\(beyondLimit ? ", too large to merge line by line" : "")\(conflicted ? ", conflict copy" : ""): \(path)")
        if conflicted { summary.conflicts += 1 }
        if options.dryRun { return }

        if conflicted {
            // The losing version is made safe in its copy before the merge replaces it, so a sync
            // killed between the two leaves an extra copy, never a lost version.
            let (loser, loserReplica) = winner == .ours ? (theirs, b.replica) : (ours, a.replica)
            try keepConflictCopy(of: path, loser, from: loserReplica, winner: winner == .ours ? a.replica : b.replica, &a, &b, &summary)
        }
        a.entries[path] = try a.endpoint.install(path, bytes: merged, expected: ea!.hash, overwrite: false, vector: vector)
        b.entries[path] = try b.endpoint.install(path, bytes: merged, expected: eb!.hash, overwrite: false, vector: vector)
        try setBases(path, hash: ContentHash(of: merged).hex, vector: vector, a, b, content: merged)
    }

    /// `target` has not changed `path` since a version `source` had and moved past (found by
    /// content: the replicas never agreed on it, as two `relay init` on a first sync): the
    /// source's bytes are copied, both sides get `vector`, and it is their merge base.
    private func catchUp(_ path: String, from source: inout Side, to target: inout Side, vector: VersionVector,
                         _ summary: inout SyncSummary) throws {
        let entry = source.entries[path]!, old = target.entries[path]!
        let bytes = try source.endpoint.read(path, expected: entry.hash)
        summary.copied += 1
        summary.bytes += bytes.count
        summary.actions.append("copy → \(target.name) (unchanged there since a version both had): \(path)")
        if options.dryRun { return }
        target.entries[path] = try target.endpoint.install(path, bytes: bytes, expected: old.hash, overwrite: false, vector: vector)
        try record(path, on: &source, like: entry, vector: vector)
        try setBases(path, hash: entry.hash, vector: vector, source, target, content: bytes)
    }

    /// Puts the version of `path` that lost into a conflict copy on both sides — unless a copy
    /// of `path` with these very bytes is already there (an earlier, interrupted attempt at this
    /// merge made it), which sync then carries like any file. A new copy gets a name neither side
    /// has ever used.
    private func keepConflictCopy(of path: String, _ loser: [UInt8], from loserReplica: String, winner: String,
                                  _ a: inout Side, _ b: inout Side, _ summary: inout SyncSummary) throws {
        let hash = ContentHash(of: loser).hex
        // Every path of both sides is looked through: a peer's index left in its copy is read.
        try a.entries.complete()
        try b.entries.complete()
        let existing = (Array(a.entries.all.values) + Array(b.entries.all.values)).first {
            !$0.deleted && $0.hash == hash && ConflictNames.original(of: $0.path) == path
        }
        if let existing {
            logger.notice("conflict: the losing version is already in a conflict copy", metadata: ["relay.path": "\(path)", "relay.copy": "\(existing.path)"])
            return
        }
        var date = Date()
        var copy = ConflictNames.relayCopy(of: path, replica: loserReplica, date: date)
        let pending = Set((a.pending + b.pending + a.committing + b.committing).map(\.path))
        while a.entries[copy] != nil || b.entries[copy] != nil || pending.contains(copy) {
            date += 1
            copy = ConflictNames.relayCopy(of: path, replica: loserReplica, date: date)
        }
        var copyVector = VersionVector()
        copyVector.increment(a.replica)
        a.entries[copy] = try a.endpoint.install(copy, bytes: loser, expected: nil, overwrite: false, vector: copyVector)
        b.entries[copy] = try b.endpoint.install(copy, bytes: loser, expected: nil, overwrite: false, vector: copyVector)
        try setBases(copy, hash: hash, vector: copyVector, a, b, content: loser)
        try a.endpoint.recordConflict(path: path, copy: copy, kept: winner, copied: loserReplica)
        try b.endpoint.recordConflict(path: path, copy: copy, kept: winner, copied: loserReplica)
        logger.notice("conflict: kept one version, the other is in a conflict copy", metadata: ["relay.path": "\(path)", "relay.copy": "\(copy)"])
    }

    // MARK: Recording

    private func record(_ path: String, on side: inout Side, like entry: SyncIndex.Entry, vector: VersionVector) throws {
        var updated = entry
        updated.path = path
        updated.vector = vector
        try side.endpoint.record(updated)
        side.entries[path] = updated
    }

    /// Both sides now agree on `hash`: it is the base of their next merge of `path`.
    private func setBases(_ path: String, hash: String, vector: VersionVector, _ a: Side, _ b: Side, content: [UInt8]?) throws {
        try a.endpoint.setBase(peer: b.replica, path: path, hash: hash, vector: vector, content: content)
        try b.endpoint.setBase(peer: a.replica, path: path, hash: hash, vector: vector, content: content)
    }
}
