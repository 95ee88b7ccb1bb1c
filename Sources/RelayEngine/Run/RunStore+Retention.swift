import Foundation
import WorkspaceCore

extension RunStore {
    /// What `prune` found and did (or, in a dry run, would do).
    public struct RunPruning: Sendable, Codable, Equatable {
        public var runs = 0
        /// Runs the policy keeps.
        public var kept = 0
        /// Runs the policy would let go that stay because they are not finished: running,
        /// interrupted, cancelled or failed (resumable).
        public var unfinished = 0
        /// Finished runs the policy would let go that stay because the watcher's trigger queue
        /// names them in a row not yet done (see `prune`).
        public var awaited = 0
        public var pruned: [String] = []
        public var bytesFreed = 0
        public var dryRun = false
    }

    /// Applies `rule` to the runs: the newest `keepLast`, and those started within
    /// `keepWithinDays`, stay; of the rest, every run that finished (done or skipped) goes with
    /// its journal and event log. A run that is running or can be resumed is never pruned.
    /// (Which drops were handled is the watcher's trigger queue's to say, not the runs': a
    /// pruned run's drop stays handled.) Nor is a run in `awaited` pruned, finished or not:
    /// the queue names it in a row that is not done — a kill came after the run finished and
    /// before its row said so — and the next start looks for it by that name; pruned, it
    /// would be made again and its model calls repeated.
    public func prune(_ rule: RetentionPolicy.Rule, now: Date = Date(), dryRun: Bool, keeping awaited: Set<String> = []) throws -> RunPruning {
        let ids = ids()
        var report = RunPruning(runs: ids.count, dryRun: dryRun)
        let times = ids.map { Self.startTime(ofID: $0) ?? Int64(now.timeIntervalSince1970 * 1e9) }
        let kept = rule.kept(times, now: Int64(now.timeIntervalSince1970 * 1e9))
        report.kept = kept.count
        let finished = finishedRuns()
        for (index, id) in ids.enumerated() where !kept.contains(index) {
            let state = finished[id]?.state ?? (try? summary(id).state) ?? .interrupted
            guard state == .done || state == .skipped else {
                report.unfinished += 1
                continue
            }
            guard !awaited.contains(id) else {
                report.awaited += 1
                continue
            }
            report.pruned.append(id)
            report.bytesFreed += finished[id]?.bytes ?? Self.diskUsage(directory(id))
            if !dryRun {
                // The manifest first: without it the folder is no run (`ids` skips it), so a
                // crash halfway leaves no half run behind, only bytes the next gc removes.
                try? FileManager.default.removeItem(atPath: directory(id) + "/run.json")
                try? FileManager.default.removeItem(atPath: directory(id))
            }
        }
        if !dryRun { removeLeftovers() }
        return report
    }

    /// Folders of runs whose manifest is gone (a gc interrupted while removing them). A folder
    /// younger than a minute may be a run being created (its folder comes before its manifest).
    private func removeLeftovers() {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where Self.startTime(ofID: name) != nil {
            guard !manager.fileExists(atPath: directory(name) + "/run.json"),
                  let modified = (try? manager.attributesOfItem(atPath: directory(name)))?[.modificationDate] as? Date,
                  modified.timeIntervalSinceNow < -60 else { continue }
            try? manager.removeItem(atPath: directory(name))
        }
    }

    /// The versions of files that runs not finished yet refer to (the dropped file they were
    /// started for, what their tools replaced and wrote): retention keeps them, so a resumed
    /// run finds what it expects.
    public func versionsUnfinishedRunsNeed() throws -> Set<ContentHash> {
        var hashes = Set<ContentHash>()
        let finished = finishedRuns()
        for id in ids() where finished[id] == nil {
            guard let summary = try? summary(id), summary.state != .done, summary.state != .skipped else { continue }
            if let trigger = try? manifest(id).triggerHash, let hash = ContentHash(hex: trigger) { hashes.insert(hash) }
            for record in (try? records(id)) ?? [] {
                for hex in [record.before, record.after].compactMap({ $0 }) { if let hash = ContentHash(hex: hex) { hashes.insert(hash) } }
            }
        }
        return hashes
    }

    /// When run `id` started, from its id ("20261122-154012-ab12", UTC), in nanoseconds.
    static func startTime(ofID id: String) -> Int64? {
        Timestamp.date(fromCompactUTC: String(id.prefix(15))).map { Int64($0.timeIntervalSince1970) * 1_000_000_000 }
    }

    /// The bytes a file or folder takes on disk (allocated blocks), links not followed.
    static func diskUsage(_ path: String) -> Int { Workspace.diskUsage(path) }
}

extension RunStore {
    /// The index of finished runs, `.relay/runs/finished.json` (id → state and bytes on disk): a
    /// run that is done or skipped stays so, so `relay status` reads a run's journal and sizes
    /// its folder once, not at every call. Runs not finished are read each time (their state
    /// changes); ids no longer in the store are dropped at the next write.
    var finishedIndex: String { folder + "/finished.json" }

    struct FinishedRun: Codable {
        var state: RunSummary.State
        var bytes: Int
    }

    /// The index as it is on disk (empty when there is none or it cannot be read).
    func finishedRuns() -> [String: FinishedRun] {
        FileManager.default.contents(atPath: finishedIndex).flatMap { try? JSONDecoder().decode([String: FinishedRun].self, from: $0) } ?? [:]
    }

    /// How many runs are in each state, and the bytes the runs take (`relay status`), from the
    /// index where it can.
    public func overview() -> (counts: [RunSummary.State: Int], bytes: Int) {
        let ids = ids()
        var known = finishedRuns()
        var counts: [RunSummary.State: Int] = [:]
        var bytes = Self.diskUsage(finishedIndex)
        var learned = false
        for id in ids {
            if let run = known[id] {
                counts[run.state, default: 0] += 1
                bytes += run.bytes
                continue
            }
            guard let state = try? summary(id).state else { continue }
            counts[state, default: 0] += 1
            let size = Self.diskUsage(directory(id))
            bytes += size
            if state == .done || state == .skipped {
                known[id] = FinishedRun(state: state, bytes: size)
                learned = true
            }
        }
        if learned || known.count > ids.count {
            let present = Set(ids)
            known = known.filter { present.contains($0.key) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            if let encoded = try? encoder.encode(known) { try? StateFile.replace(finishedIndex, with: Array(encoded), durable: false) }
        }
        return (counts, bytes)
    }
}
