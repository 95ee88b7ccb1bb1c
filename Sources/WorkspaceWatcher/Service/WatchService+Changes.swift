import Foundation
import Logging
import WorkspaceCore

/// Settled changes and moves become index rows and triggers, a batch per transaction.
extension WatchService {
    /// A batch from the settler: the renames and removals in the order they happened, then the
    /// settled paths.
    func handle(_ batch: Settler.Batch) throws {
        var removals: [Settler.Move] = []
        for move in batch.moves {
            switch move {
            case .removed, .movedOut:
                removals.append(move)
            case .renamed(let from, let to, let folder):
                try record([], removed: removals)
                removals = []
                try rename(from: from, to: to, folder: folder)
            }
        }
        try record([], removed: removals)
        try process(batch.settled, triggering: true, untouched: batch.untouched)
    }

    /// A rename inside the workspace keeps the content's identity: its index rows move and it
    /// fires nothing, except rules that match the new path and not the old. A file the index
    /// never had (its content was still settling, or it was written under a temporary name and
    /// renamed into place) goes back to the settler as a change at `to`, closed now: it settles
    /// like a file moved in, after what was written before it.
    func rename(from: String, to: String, folder: Bool) throws {
        guard let store else { return }
        let configuration = self.configuration
        let workspace = self.workspace
        let (fresh, known) = try store.rename(from: from, to: to, folder: folder, rules: { path in
            configuration.rules(matching: path).map(\.name)
        }, hash: { path in (try? workspace.fingerprint(ofFileAt: path))??.hash.hex })
        guard known else {
            if !folder && settler.receive(.file(path: to, closed: true)) { wakeup.signal() }
            return
        }
        logger.info("renamed", metadata: ["relay.from": "\(from)", "relay.to": "\(to)", "relay.folder": "\(folder)"])
        queued(fresh)
        settledAgain([from, to])
        if to == WorkspaceLayout.configurationFileName { reloadConfiguration() }
        options.changesRecorded?([from, to])
    }

    /// Removals, recorded in one transaction. The rows of what moved out are remembered for a
    /// moment (`Departures`): a file that turns up again elsewhere in the workspace with the
    /// same inode and stamp was moved, not dropped.
    func record(_ changes: [WatchStore.Change], removed: [Settler.Move]) throws {
        guard let store, !changes.isEmpty || !removed.isEmpty else { return }
        var files: [String] = [], folders: [String] = []
        var movedFiles: [String] = [], movedFolders: [String] = []
        for move in removed {
            switch move {
            case .removed(let path, let folder):
                if folder { folders.append(path) } else { files.append(path) }
            case .movedOut(let path, let folder):
                if folder { folders.append(path); movedFolders.append(path) } else { files.append(path); movedFiles.append(path) }
            case .renamed: break
            }
        }
        if !movedFiles.isEmpty || !movedFolders.isEmpty {
            departures.remember(try store.rows(files: movedFiles, folders: movedFolders),
                                until: Settler.now() + Departures.window(settle: configuration.settle))
        }
        queued(try store.record(changes, removed: files, removedFolders: folders))
        settledAgain(files + folders)
        if !files.isEmpty || !folders.isEmpty { options.changesRecorded?(files + folders) }
    }

    /// Turns settled paths into index updates and triggers: hashed first, then committed in
    /// one transaction per `batchLimit` paths.
    /// `untouched`: paths whose events could not have changed their bytes (see `Settler.Batch`).
    func process(_ paths: [String], triggering: Bool, untouched: Set<String> = []) throws {
        guard let store, !paths.isEmpty else { return }
        var start = 0
        while start < paths.count {
            let end = min(start + options.batchLimit, paths.count)
            try processBatch(paths[start..<end], store: store, triggering: triggering, untouched: untouched)
            start = end
        }
    }

    func processBatch(_ paths: ArraySlice<String>, store: WatchStore, triggering: Bool, untouched: Set<String> = []) throws {
        var changes: [WatchStore.Change] = []
        var removed: [String] = []
        var cookies: [String] = []
        var configurationChanged = false
        var files: [String] = []
        for path in paths where !IgnoreRules.isIgnored(path) {
            if IgnoreRules.isCookie(path) { cookies.append(path); continue }
            if path == WorkspaceLayout.configurationFileName { configurationChanged = true }
            files.append(path)
        }
        let prints = fingerprints(of: files)
        for (index, path) in files.enumerated() {
            let (stamp, hash): (FileStamp, ContentHash)
            switch prints[index] {
            case .success(let print?): (stamp, hash) = print
            case .success(nil):
                removed.append(path)
                continue
            case .failure(let error): throw error
            }
            let previous = try store.file(path)
            let record = WatchStore.FileRecord(stamp: stamp, hash: hash.hex)
            if previous == record { continue }
            if previous == nil, let moved = departures.claim(stamp: stamp, hash: hash.hex) {
                // Moved here from `moved` through a folder not watched yet: the same content
                // under a new path, which only rules new to the path fire for.
                let before = Set(configuration.rules(matching: moved).map(\.name))
                let rules = triggering ? configuration.rules(matching: path).map(\.name).filter { !before.contains($0) } : []
                logger.info("renamed", metadata: ["relay.from": "\(moved)", "relay.to": "\(path)", "relay.paired": "by inode"])
                changes.append(WatchStore.Change(path: path, record: record, rules: rules, movedFrom: moved))
                continue
            }
            // A baseline row not hashed yet holds what it held when its file kept its stamp — or
            // when only its times moved (same inode and size) and no event of this settling could
            // have written it: a `touch` or a `chmod` right after a first start is no new content.
            let previousHash = previous.map { row in
                guard !row.hashKnown else { return row.hash }
                let kept = row.stamp == stamp
                    || (untouched.contains(path) && row.stamp.inode == stamp.inode && row.stamp.size == stamp.size)
                return kept ? hash.hex : row.hash
            }
            var rules: [String] = []
            if triggering && previousHash != hash.hex && !workspace.isOwnQuietWrite(path, stamp: stamp) {
                rules = configuration.rules(matching: path).map(\.name)
            }
            changes.append(WatchStore.Change(path: path, record: record, rules: rules, previousHash: previousHash))
        }
        recordedChanges += changes.count
        if let limit = options.dieInBatchOf, recordedChanges >= limit, changes.count > 1 {
            store.dieInsideTheNextTransaction = true
        }
        if options.dieStartingABatch == .beforeCommit { store.dieBeforeCommittingAStart = true }
        let fresh = try store.record(changes, removed: removed, startNow: startableNow())
        queued(fresh)
        // Started in the batch's commit: spawned now, before anything else this batch does.
        let started = fresh.filter { $0.state == .running }
        if !started.isEmpty && options.dieStartingABatch == .afterCommit { kill(getpid(), SIGKILL) }
        for trigger in started {
            if let rule = configuration.rules.first(where: { $0.name == trigger.rule }) { start(trigger, rule: rule) }
        }
        settledAgain(changes.map(\.path) + removed)
        let contentChanged = changes.filter { $0.record.hash != $0.previousHash }.map(\.path)
        if !contentChanged.isEmpty || !removed.isEmpty { options.changesRecorded?(contentChanged + removed) }
        if configurationChanged { reloadConfiguration() }
        // Everything written before a cookie has now been handled: say so by removing it.
        for cookie in cookies { _ = Syscall.unlink(workspace.root + "/" + cookie) }
    }

    /// Which of a batch's new trigger rows may be marked `running` in the batch's own commit
    /// (asked by `WatchStore.record` only when no older row is pending): a rule with a free
    /// place (counting those this batch takes) that can run here. The dispatch's check that
    /// the settled content is still there holds by construction: the row's content is what
    /// this batch just read and is recording. Nil while stopping.
    func startableNow() -> ((WatchStore.Trigger) -> WatchStore.Start?)? {
        guard !stopping else { return nil }
        let rules = configuration.rules, running = self.running, launcher = self.launcher
        var taken: [String: Int] = [:]
        return { trigger in
            guard let rule = rules.first(where: { $0.name == trigger.rule }),
                  running[rule.name, default: 0] + taken[rule.name, default: 0] < rule.concurrency else { return nil }
            switch rule.action {
            case .command:
                taken[rule.name, default: 0] += 1
                return WatchStore.Start(id: trigger.id, run: nil)
            case .relay:
                guard let launcher else { return nil }
                taken[rule.name, default: 0] += 1
                return WatchStore.Start(id: trigger.id, run: launcher.runID(forTrigger: trigger.id))
            }
        }
    }

    /// Triggers waiting because their file was changing are looked at again once it is recorded.
    func settledAgain(_ paths: [String]) {
        if !paths.isEmpty { reviewWaitingTriggers() }
    }

    /// Triggers that wait (their file changing, or moved away a moment ago) are looked at again
    /// at the next dispatch.
    func reviewWaitingTriggers() {
        guard !deferred.isEmpty else { return }
        deferred.removeAll()
        queueMayHaveWork = true
    }

    /// The stamps and hashes of a batch's files, read on every core (a first start hashes every
    /// file of the tree); in the order given.
    nonisolated func fingerprints(of paths: [String]) -> [Result<(FileStamp, ContentHash)?, Error>] {
        let workspace = self.workspace
        guard paths.count > 8 else { return paths.map { path in Result { try workspace.fingerprint(ofFileAt: path) } } }
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<Result<(FileStamp, ContentHash)?, Error>>.allocate(capacity: paths.count)
        defer { results.deallocate() }
        let lanes = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            // Each lane writes only its own slots.
            for index in stride(from: lane, to: paths.count, by: lanes) {
                (results.baseAddress! + index).initialize(to: Result { try workspace.fingerprint(ofFileAt: paths[index]) })
            }
        }
        let collected = Array(results)
        _ = results.baseAddress.map { $0.deinitialize(count: paths.count) }
        return collected
    }

    func queued(_ fresh: [WatchStore.Trigger]) {
        for trigger in fresh {
            logger.info("trigger queued", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(trigger.rule)"])
        }
        if !fresh.isEmpty { queueMayHaveWork = true }
    }
}
