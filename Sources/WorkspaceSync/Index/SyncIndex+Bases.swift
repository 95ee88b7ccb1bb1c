import Foundation
import RelaySQLite

// Merge bases (per peer and path, the last version both had) and the conflicts sync recorded.
/// A version both sides of a sync had of a path: its content hash and version vector.
public struct MergeBase: Sendable, Hashable, Codable {
    public var hash: String
    public var vector: VersionVector
    public init(hash: String, vector: VersionVector) {
        self.hash = hash
        self.vector = vector
    }
}

extension SyncIndex {
    /// Every merge base recorded with `peer`, path → hash.
    public func bases(peer: String) throws -> [String: String] {
        let rows = try statement("SELECT path, hash FROM bases WHERE peer = ?1").rows([.text(peer)], { ($0.text(0), $0.text(1)) })
        var result = [String: String](minimumCapacity: rows.count)
        for (path, hash) in rows { result[path] = hash }
        return result
    }

    /// Every merge base of `path` recorded with any peer whose version vector is known: the
    /// candidates for the latest version two replicas have in common.
    public func mergeBases(path: String) throws -> [MergeBase] {
        try statement("SELECT hash, vector FROM bases WHERE path = ?1 AND vector != ''").rows([.text(path)]) { row in
            VersionVector(text: row.text(1)).map { MergeBase(hash: row.text(0), vector: $0) }
        }.compactMap { $0 }
    }

    public func base(peer: String, path: String) throws -> String? {
        try statement("SELECT hash FROM bases WHERE peer = ?1 AND path = ?2").rows([.text(peer), .text(path)]) { $0.text(0) }.first
    }

    public func setBase(peer: String, path: String, hash: String, vector: VersionVector) throws {
        try willWrite()
        try statement("""
            INSERT INTO bases (peer, path, hash, vector) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(peer, path) DO UPDATE SET hash = excluded.hash, vector = excluded.vector
            """).run([.text(peer), .text(path), .text(hash), .text(vector.description)])
    }

    public func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        try willWrite()
        try database.prepare("INSERT INTO conflicts (path, copy, time, kept, copied) VALUES (?1, ?2, ?3, ?4, ?5)")
            .run([.text(path), .text(copy), .integer(Int64(Date().timeIntervalSince1970)), .text(kept), .text(copied)])
    }

    /// Conflicts whose copy is still in the workspace (deleting the copy resolves one).
    public func openConflicts() throws -> [(path: String, copy: String, time: Date)] {
        try SyncError.wrappingDatabase {
            try database.prepare("SELECT path, copy, time FROM conflicts ORDER BY id").rows([]) { row in
                (row.text(0), row.text(1), Date(timeIntervalSince1970: Double(row.integer(2))))
            }.filter { workspace.stamp(ofFileAt: $0.1) != nil }
        }
    }
}

extension SyncIndex {
    /// The versions retention must never prune for sync's sake (`relay gc`): every merge base
    /// recorded with any peer (the base of the next three-way merge), both sides of a conflict
    /// whose copy is still in the workspace, and the last content the index saw of every live
    /// file.
    public func versionsToKeep() throws -> Set<String> {
        var hashes = Set(try statement("SELECT DISTINCT hash FROM bases").rows([]) { $0.text(0) })
        hashes.formUnion(try statement("SELECT hash FROM files WHERE deleted = 0").rows([]) { $0.text(0) })
        let open = Set(try openConflicts().map(\.copy))
        for (copy, kept, copied) in try database.prepare("SELECT copy, kept, copied FROM conflicts").rows([], { ($0.text(0), $0.text(1), $0.text(2)) })
        where open.contains(copy) {
            hashes.insert(kept)
            hashes.insert(copied)
        }
        hashes.remove("")
        return hashes
    }
}
