// Merge dispatch: two versions of a path both sides changed, merged by its kind (a chat
// transcript, a journal, text line by line), or the winner's bytes with the loser for a
// conflict copy.

/// The merge of two versions of a file by its kind.
///
/// For example:
/// ```swift
/// let (bytes, conflicted, _) = ContentMerge.merge(path: "notes.md", base: base, ours: mine, oursReplica: "a",
///                                               theirs: yours, theirsReplica: "b", winner: .ours)
/// ```
enum ContentMerge {
    /// The most lines either side may have inserted or deleted (since the base) for a text merge
    /// (the diff's time grows with N·D); past it, the two versions are kept as a binary's are.
    static let maximumEdits = 20_000

    /// The merged bytes, whether part of one side went to a conflict copy instead, and whether
    /// that was because the edits were past `maximumEdits`.
    static func merge(path: String, base: [UInt8]?, ours: [UInt8], oursReplica: String, theirs: [UInt8], theirsReplica: String,
                      winner: ThreeWayMerge.Side, kind: MergeKind? = nil) -> ([UInt8], Bool, Bool) {
        let winnerBytes = winner == .ours ? ours : theirs
        let kind = kind ?? MergeKind.of(path)
        if kind == .transcript, let merged = TranscriptMerge.merge(base: base, ours: ours, theirs: theirs, winner: winner) {
            return (merged.bytes, merged.conflicts > 0, false)
        }
        if kind == .json {
            guard let merged = JSONMerge.merge(base: base, ours: ours, theirs: theirs) else { return (winnerBytes, true, false) }
            return (merged, false, false)
        }
        guard kind != .binary, kind != .transcript,
              let ourText = String(validating: ours, as: UTF8.self), let theirText = String(validating: theirs, as: UTF8.self) else {
            return (winnerBytes, true, false)
        }
        var baseText = base.flatMap { String(validating: $0, as: UTF8.self) } ?? ""
        if kind == .journal && base == nil {
            // Started on both sides independently (the same day's file): what they share at the
            // start, in whole lines, is the base both appended to.
            baseText = commonLinePrefix(ourText, theirText)
        }
        if kind == .journal,
           let merged = JournalMerge.merge(base: baseText, ours: ourText, oursReplica: oursReplica, theirs: theirText, theirsReplica: theirsReplica) {
            return (Array(merged.utf8), false, false)
        }
        guard let result = ThreeWayMerge.merge(base: baseText, ours: ourText, theirs: theirText, winner: winner,
                                               maximumEdits: maximumEdits) else { return (winnerBytes, true, true) }
        if result.conflicts > 0, kind == .journal,
           let union = JournalMerge.merge(base: commonLinePrefix(ourText, theirText), ours: ourText, oursReplica: oursReplica,
                                          theirs: theirText, theirsReplica: theirsReplica) {
            // A journal whose sides, measured from the base, overlap — a line one side took out
            // (a delete that lost to an edit, a correction) next to the other's new entries — but
            // which both only added to since the lines they share: every entry of both, no copy.
            return (Array(union.utf8), false, false)
        }
        return (Array(result.text.utf8), result.conflicts > 0, false)
    }

    static func commonLinePrefix(_ a: String, _ b: String) -> String {
        var result = ""
        for (x, y) in zip(LineDiff.lines(a[...]), LineDiff.lines(b[...])) {
            guard x == y, x.hasSuffix("\n") else { break }
            result += x
        }
        return result
    }
}
