import Foundation
import Glibc

extension Workspace {
    /// What `pruneVersions` found and did (or, in a dry run, would do).
    public struct VersionPruning: Sendable, Codable, Equatable {
        public struct Pruned: Sendable, Codable, Equatable {
            public var path: String
            public var version: String
            /// The bytes it took on disk.
            public var bytes: Int
        }
        /// Paths with a history, and the distinct versions their histories say were kept.
        public var paths = 0
        public var versions = 0
        /// Versions the policy keeps.
        public var kept = 0
        /// Versions the policy would let go that are kept because something needs them: a
        /// file's current content, a sync merge base, an open conflict, an unfinished run.
        public var protected = 0
        /// Versions the policy lets go that sit in a pack of many (written by a first sync);
        /// a pack is not rewritten for them.
        public var packed = 0
        public var pruned: [Pruned] = []
        public var bytesFreed = 0
        public var dryRun = false
    }

    /// Applies `rule` to the versions of every file that Relay replaced and kept: of each
    /// file's versions, those the rule keeps stay, the rest leave the store. Their history
    /// lines stay, so `relay fs history` still lists them (marked pruned) and `relay fs
    /// restore` of one says the policy pruned it.
    ///
    /// Never pruned, whatever the rule: `protecting` (the caller's: sync merge bases, open
    /// conflicts, what unfinished runs refer to), the current content of every file of the
    /// workspace, and the version each history last installed.
    ///
    /// A writer that displaces a version equal to one being pruned (`ObjectStore.store` finds
    /// it present and stores nothing) is caught: the pruned objects are first renamed aside,
    /// the history is read again, and any version a new line says was kept is put back before
    /// the rest are unlinked.
    ///
    /// For example:
    /// ```swift
    /// let report = try workspace.pruneVersions(RetentionPolicy.load(from: workspace).versions, protecting: [], dryRun: true)
    /// print(report.pruned.count, report.bytesFreed)
    /// ```
    public func pruneVersions(_ rule: RetentionPolicy.Rule, protecting: Set<ContentHash>, now: Int64? = nil, dryRun: Bool) throws -> VersionPruning {
        let started = Syscall.nowNanoseconds()
        let now = now ?? started
        let lock = try gcLock()
        defer { Syscall.close(lock) }
        let records = try allHistory()
        var report = VersionPruning(dryRun: dryRun)

        var byPath: [String: [VersionRecord]] = [:]
        for record in records { byPath[record.path, default: []].append(record) }
        report.paths = byPath.count
        var keep = protecting
        var candidates: [ContentHash: (path: String, size: Int)] = [:]
        var policyKeeps = Set<ContentHash>()
        for (path, records) in byPath {
            if let last = records.max(by: { $0.timeNanoseconds < $1.timeNanoseconds }) { keep.insert(last.installed) }
            // A version replaced several times counts once, at its latest replacement.
            var newest: [ContentHash: (time: Int64, size: Int)] = [:]
            for record in records where record.replacedStored {
                guard let replaced = record.replaced else { continue }
                if (newest[replaced]?.time ?? .min) < record.timeNanoseconds { newest[replaced] = (record.timeNanoseconds, record.replacedSize ?? 0) }
            }
            let versions = Array(newest)
            let kept = rule.kept(versions.map(\.value.time), now: now)
            for (index, version) in versions.enumerated() {
                if kept.contains(index) { policyKeeps.insert(version.key) } else { candidates[version.key] = (path, version.value.size) }
            }
        }
        // The current content of files: of the paths with a history, and of any file whose
        // size is a candidate's (content is shared by hash across paths).
        let sizes = Set(candidates.values.map(\.size))
        var looked = Set<String>()
        for path in byPath.keys {
            looked.insert(path)
            if let hash = try? readHashed(path).hash { keep.insert(hash) }
        }
        if !candidates.isEmpty {
            for entry in (try? list(".", recursive: true)) ?? [] where entry.kind == .file && sizes.contains(entry.size) && !looked.contains(entry.path) {
                if let hash = try? readHashed(entry.path).hash { keep.insert(hash) }
            }
        }
        let allVersions = policyKeeps.union(candidates.keys)
        report.versions = allVersions.count
        report.kept = policyKeeps.count
        let store = objects
        var going: [(hash: ContentHash, path: String, bytes: Int)] = []
        for (hash, candidate) in candidates.sorted(by: { $0.key < $1.key }) where !policyKeeps.contains(hash) {
            if keep.contains(hash) { report.protected += 1; continue }
            switch Syscall.lstat(store.path(of: hash)) {
            case .success(let info):
                going.append((hash, candidate.path, Int(info.st_blocks) * 512))
            case .failure:
                if store.contains(hash) { report.packed += 1 }  // else already gone (pruned before)
            }
        }
        report.pruned = going.map { VersionPruning.Pruned(path: $0.path, version: $0.hash.hex, bytes: $0.bytes) }
        report.bytesFreed = going.reduce(0) { $0 + $1.bytes }
        guard !dryRun, !going.isEmpty else { return report }

        try recordPruned(going.map(\.hash))
        let aside = { (hash: ContentHash) in store.folder + "/" + WorkspaceLayout.temporaryPrefix + "pruned-" + hash.hex }
        var moved: [ContentHash] = []
        for version in going where (try? Syscall.rename(store.path(of: version.hash), aside(version.hash)).get()) != nil {
            moved.append(version.hash)
        }
        // Lines written since this gc began that say a pruned version was kept: it goes back.
        let goingSet = Set(moved)
        var back = Set<ContentHash>()
        for record in try allHistory() where record.timeNanoseconds >= started && record.replacedStored {
            if let replaced = record.replaced, goingSet.contains(replaced) { back.insert(replaced) }
        }
        for hash in moved {
            if back.contains(hash) {
                _ = Syscall.renameNoReplace(aside(hash), store.path(of: hash))
            } else {
                _ = Syscall.unlink(aside(hash))
            }
        }
        if !back.isEmpty {
            report.pruned.removeAll { back.contains(ContentHash(hex: $0.version)!) }
            report.bytesFreed = report.pruned.reduce(0) { $0 + $1.bytes }
        }
        if durable { try syncFolder(store.folder) }
        logger.info("pruned versions", metadata: ["relay.gc.versions": "\(report.pruned.count)", "relay.gc.bytes": "\(report.bytesFreed)"])
        return report
    }

    /// Every history line of the workspace: the per-path files and the batch files.
    func allHistory() throws -> [VersionRecord] {
        let decoder = JSONDecoder()
        var seen = Set<HistoryLog.Line>()
        var records: [VersionRecord] = []
        func collect(_ file: String) throws {
            guard let snapshot = try FileSnapshot.read(file, displayPath: file) else { return }
            for line in snapshot.bytes.split(separator: 10) where !line.isEmpty && seen.insert(HistoryLog.Line(line)).inserted {
                // A line cut short by a crash is skipped, as `history` skips it.
                if let record = try? decoder.decode(VersionRecord.self, from: Data(line)) { records.append(record) }
            }
        }
        if case .success(let names) = Syscall.listDirectory(layout.history) {
            for name in names where name.hasSuffix(".jsonl") { try collect(layout.history + "/" + name) }
        }
        for name in HistoryLog.files(in: layout.historyBatches) { try collect(layout.historyBatches + "/" + name) }
        return records
    }

    /// One gc at a time per workspace: an exclusive lock on `.relay/gc.lock`, waited for.
    private func gcLock() throws -> CInt {
        let file = layout.state + "/gc.lock"
        let fd = try Syscall.open(file, O_RDWR | O_CREAT, mode: 0o644).orThrow("open", path: file)
        if case .failure(let errno) = Syscall.flockExclusive(fd, wait: true) {
            Syscall.close(fd)
            throw WorkspaceError.system(errno, "lock", path: file)
        }
        return fd
    }
}
