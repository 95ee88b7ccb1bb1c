import WorkspaceCore

/// Index rows of files that moved away unpaired, kept for a few seconds by inode.
///
/// inotify pairs a rename only when both folders are watched. A file moved into a folder made
/// a moment before (`mkdir new && mv a.txt new/`), or a folder moved into one, reaches the
/// watcher as a move out of the old folder and, once the new folder is watched and listed, a
/// new file. A rename keeps the inode, size and mtime, so a new file whose stamp is a departed
/// row's (and whose bytes hash to the row's hash, when it has one) is that file, moved: it keeps
/// its identity and fires nothing. Until a departed row is claimed or expires, a pending trigger
/// of its old path waits instead of standing aside.
struct Departures {
    private var byInode: [UInt64: (path: String, record: WatchStore.FileRecord, until: Int64)] = [:]
    private var paths: [String: UInt64] = [:]

    /// How long a departed row waits to be claimed: the new folder is watched and listed at
    /// once, and its files settle one settle window later.
    static func window(settle: Duration) -> Int64 {
        max(2_000_000_000, 4 * settle.nanosecondsValue)
    }

    var isEmpty: Bool { byInode.isEmpty }

    /// When the first remembered row expires (nil: none).
    var nextExpiry: Int64? { byInode.values.lazy.map(\.until).min() }

    mutating func remember(_ rows: [(path: String, record: WatchStore.FileRecord)], until: Int64) {
        for row in rows {
            byInode[row.record.stamp.inode] = (row.path, row.record, until)
            paths[row.path] = row.record.stamp.inode
        }
    }

    /// Whether `path` moved away a moment ago and may still turn up elsewhere.
    func contains(_ path: String) -> Bool { paths[path] != nil }

    /// The old path of the departed file with this stamp and content, which is forgotten.
    mutating func claim(stamp: FileStamp, hash: String) -> String? {
        guard let row = byInode[stamp.inode], row.record.stamp == stamp,
              !row.record.hashKnown || row.record.hash == hash else { return nil }
        byInode.removeValue(forKey: stamp.inode)
        paths.removeValue(forKey: row.path)
        return row.path
    }

    /// Forgets rows whose time is up; returns whether any were.
    mutating func expire(at now: Int64) -> Bool {
        let expired = byInode.filter { $0.value.until <= now }
        for (inode, row) in expired {
            byInode.removeValue(forKey: inode)
            paths.removeValue(forKey: row.path)
        }
        return !expired.isEmpty
    }
}
