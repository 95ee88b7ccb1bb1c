import Foundation
import Glibc

extension Workspace {
    func historyFile(key: String) -> String { layout.history + "/" + key + ".jsonl" }

    /// Appends one record to the path's history; the caller holds the path's lock.
    func appendHistory(_ record: VersionRecord, key: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line = Array(try encoder.encode(record))
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

    /// Every replacement the engine made of `path`, oldest first.
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
        guard let snapshot = try FileSnapshot.read(file, displayPath: file) else { return [] }
        let decoder = JSONDecoder()
        var records: [VersionRecord] = []
        for line in snapshot.bytes.split(separator: 10) where !line.isEmpty {
            // A line cut short by a crash is skipped, not fatal: the objects are still stored.
            if let record = try? decoder.decode(VersionRecord.self, from: Data(line)) { records.append(record) }
        }
        return records
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
            throw WorkspaceError(.versionNotFound, "\(path): no stored version starts with '\(version)'; `relay fs history \(path)` lists them", path: path)
        }
        guard candidates.count == 1 else {
            throw WorkspaceError(.invalidInput, "\(path): '\(version)' matches \(candidates.count) versions; give more digits", path: path)
        }
        return try write(path, bytes: try objects.load(hash), operation: "restore")
    }
}
