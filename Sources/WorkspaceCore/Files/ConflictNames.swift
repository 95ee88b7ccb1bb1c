import Foundation

/// Names of conflict copies: Relay's own, `notes.conflict-20261122-140301-ab12cd34ef56ab78.md`
/// (extension kept last, so the file still opens in the right program), and Syncthing's,
/// `notes.sync-conflict-20261122-140301-ABCDEF1.md`, which Relay merges back into `notes.md`.
public enum ConflictNames {
    /// The conflict copy of `path` holding the version `replica` wrote, made at `date` (UTC).
    public static func relayCopy(of path: String, replica: String, date: Date) -> String {
        let stamp = Timestamp.compactUTC(date)
        let (folder, stem, ext) = split(original(of: path) ?? path)
        return folder + stem + ".conflict-\(stamp)-\(replica)" + ext
    }

    /// The path a conflict copy (Relay's or Syncthing's) belongs to, or nil for an ordinary path.
    public static func original(of path: String) -> String? {
        let (folder, stem, ext) = split(path)
        for marker in [".conflict-", ".sync-conflict-"] {
            guard let range = stem.range(of: marker, options: .backwards) else { continue }
            let tail = stem[range.upperBound...].split(separator: "-")
            guard tail.count == 3, tail[0].count == 8, tail[0].allSatisfy(\.isNumber),
                  tail[1].count == 6, tail[1].allSatisfy(\.isNumber), !tail[2].isEmpty,
                  tail[2].allSatisfy({ $0.isLetter || $0.isNumber }) else { continue }
            return folder + String(stem[..<range.lowerBound]) + ext
        }
        return nil
    }

    /// Whether `path` is a Syncthing conflict copy.
    public static func isSyncthingCopy(_ path: String) -> Bool {
        original(of: path) != nil && path.contains(".sync-conflict-")
    }

    /// ("dir/", "stem", ".ext"); a leading dot is part of the stem, not an extension.
    private static func split(_ path: String) -> (String, String, String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (folder, name, "") }
        return (folder, String(name[..<dot]), String(name[dot...]))
    }
}
