import Foundation
import Glibc

extension Workspace {
    func historyFile(key: String) -> String { layout.history + "/" + key + ".jsonl" }

    /// Appends one record to the path's history; the caller holds the path's lock.
    func appendHistory(_ record: VersionRecord, key: String) throws {
        var line = Array(try HistoryLog.encoder().encode(record))
        line.append(10)
        let file = historyFile(key: key)
        var result = Syscall.open(file, O_WRONLY | O_APPEND | O_CREAT, mode: 0o644)
        if case .failure(.noSuchFileOrDirectory) = result {
            _ = Syscall.mkdir(layout.history)
            result = Syscall.open(file, O_WRONLY | O_APPEND | O_CREAT, mode: 0o644)
        }
        let fd = try result.orThrow("open history", path: file)
        defer { Syscall.close(fd) }
        try line.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("write history", path: file) }
    }

    /// Every replacement the engine made of `path`, oldest first: the lines of its own history
    /// file (single writes) and of the batch files (`HistoryLog`) that name it.
    ///
    /// For example:
    /// ```swift
    /// for record in try workspace.history("context.md") where record.replacedStored {
    ///     print(record.replaced!.short, record.operation)
    /// }
    /// ```
    public func history(_ path: String) throws -> [VersionRecord] {
        let resolved = try resolve(path)
        let file = historyFile(key: Self.lockKey(resolved.relative))
        let decoder = JSONDecoder()
        var records: [VersionRecord] = []
        if let snapshot = try FileSnapshot.read(file, displayPath: file) {
            for line in snapshot.bytes.split(separator: 10) where !line.isEmpty {
                // A line cut short by a crash is skipped, not fatal: the objects are still stored.
                if let record = try? decoder.decode(VersionRecord.self, from: Data(line)) { records.append(record) }
            }
        }
        let batched = try HistoryLog.records(of: resolved.relative, in: layout.historyBatches)
        guard !batched.isEmpty else { return records }
        // Both are in time order each; merged, stably (a single write and a batch of the same
        // nanosecond keep their files' order).
        return (records + batched).enumerated()
            .sorted { ($0.element.timeNanoseconds, $0.offset) < ($1.element.timeNanoseconds, $1.offset) }
            .map(\.element)
    }

    /// Puts a stored version back at `path` (an atomic write, so the current content is itself
    /// kept as a version). `version` is a hash or a unique prefix of at least 6 hex digits of
    /// one of the path's displaced versions.
    ///
    /// - throws: `.versionNotFound` when no stored version of this path matches, `.invalidInput`
    ///   when the prefix is too short or matches several.
    @discardableResult
    public func restore(_ path: String, version: String) throws -> WriteResult {
        let prefix = version.lowercased()
        guard prefix.count >= 6, prefix.allSatisfy(\.isHexDigit) else {
            throw WorkspaceError(.invalidInput, "version '\(version)': give at least 6 hex digits of a version from `relay fs history \(path)`")
        }
        let records = try history(path)
        let candidates = Set(records.flatMap { record -> [ContentHash] in
            var hashes = [record.installed]
            if let replaced = record.replaced, record.replacedStored { hashes.append(replaced) }
            return hashes
        }.filter { $0.hex.hasPrefix(prefix) && objects.contains($0) })
        guard let hash = candidates.first else {
            let named = Set(records.compactMap(\.replaced) + records.map(\.installed)).filter { $0.hex.hasPrefix(prefix) }
            if let pruned = try prunedVersions().intersection(named).first {
                throw WorkspaceError(.versionNotFound, "\(path): version \(pruned.short) was pruned by the retention policy (relay.json \"retention\", `relay gc`); `relay fs history \(path)` lists the versions still kept", path: path)
            }
            throw WorkspaceError(.versionNotFound, "\(path): no stored version starts with '\(version)'; `relay fs history \(path)` lists them", path: path)
        }
        guard candidates.count == 1 else {
            throw WorkspaceError(.invalidInput, "\(path): '\(version)' matches \(candidates.count) versions; give more digits", path: path)
        }
        return try write(path, bytes: try objects.load(hash), operation: "restore")
    }
}
