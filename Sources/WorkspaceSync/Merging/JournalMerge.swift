/// Journals (`Journal/**`) grow by appending. When both sides only appended to the common
/// base, the result is the base followed by both sides' new entries — nothing is a conflict.
/// The two blocks go in a fixed order (by the replica that wrote each), so every replica
/// computes the same bytes. When a side did more than append, this returns nil and the caller
/// falls back to the three-way merge.
public enum JournalMerge {
    public static func merge(base: String, ours: String, oursReplica: String, theirs: String, theirsReplica: String) -> String? {
        let baseBytes = Array(base.utf8)
        let ourBytes = Array(ours.utf8), theirBytes = Array(theirs.utf8)
        guard ourBytes.starts(with: baseBytes), theirBytes.starts(with: baseBytes) else { return nil }
        var ourEntries = String(decoding: ourBytes[baseBytes.count...], as: UTF8.self)
        var theirEntries = String(decoding: theirBytes[baseBytes.count...], as: UTF8.self)
        if ourEntries == theirEntries { return ours }
        if ourEntries.isEmpty { return theirs }
        if theirEntries.isEmpty { return ours }
        // Entries are whole lines: end each block with a newline so they never run together.
        var head = base
        if !head.isEmpty && !head.hasSuffix("\n") { head += "\n" }
        if !ourEntries.hasSuffix("\n") { ourEntries += "\n" }
        if !theirEntries.hasSuffix("\n") { theirEntries += "\n" }
        let blocks = [(oursReplica, ourEntries), (theirsReplica, theirEntries)].sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        return head + blocks.map(\.1).joined()
    }
}
