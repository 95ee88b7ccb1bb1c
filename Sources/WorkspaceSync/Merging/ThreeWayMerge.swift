/// A line-based three-way merge, as diff3 and git do it: the changes each side made to the
/// common base are applied together; where both sides changed the same or touching lines
/// differently, the region is a conflict and takes the `winner`'s lines. Identical changes on
/// both sides are not a conflict.
///
/// For example:
/// ```swift
/// let result = ThreeWayMerge.merge(base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n", winner: .ours)
/// result.text        // "A\nb\nC\n"
/// result.conflicts   // 0
/// ```
public enum ThreeWayMerge {
    public enum Side: Sendable, Equatable { case ours, theirs }

    public struct Result: Sendable, Equatable {
        public var text: String
        /// Regions both sides changed differently (the winner's lines were kept).
        public var conflicts: Int
    }

    public static func merge(base: String, ours: String, theirs: String, winner: Side) -> Result {
        merge(base: base, ours: ours, theirs: theirs, winner: winner, maximumEdits: .max)!
    }

    /// `merge`, or nil when a side inserted or deleted more than `maximumEdits` lines since the
    /// base (the diffs stop there; their time grows with the number of edits).
    public static func merge(base: String, ours: String, theirs: String, winner: Side, maximumEdits: Int) -> Result? {
        if ours == theirs { return Result(text: ours, conflicts: 0) }
        if base == ours { return Result(text: theirs, conflicts: 0) }
        if base == theirs { return Result(text: ours, conflicts: 0) }
        let baseLines = LineDiff.lines(base[...])
        guard let ourDiff = LineDiff(old: baseLines, new: LineDiff.lines(ours[...]), maximumEdits: maximumEdits),
              let theirDiff = LineDiff(old: baseLines, new: LineDiff.lines(theirs[...]), maximumEdits: maximumEdits) else { return nil }
        // Hunks that touch only because of where the diff put them are moved apart, when every
        // placement that parts them gives the same lines (`separate`).
        var ours = ourDiff.hunks, theirs = theirDiff.hunks
        separate(&ours, &theirs, base: baseLines)
        let ourHunks = ours.map { ($0, Side.ours) }
        let theirHunks = theirs.map { ($0, Side.theirs) }
        let all = (ourHunks + theirHunks).sorted {
            ($0.0.oldRange.lowerBound, $0.0.oldRange.upperBound) < ($1.0.oldRange.lowerBound, $1.0.oldRange.upperBound)
        }

        var output: [Substring] = []
        var conflicts = 0
        var cursor = 0
        var index = 0
        while index < all.count {
            // A region: hunks chained by overlapping or touching old ranges.
            var region = [all[index]]
            var lower = all[index].0.oldRange.lowerBound
            var upper = all[index].0.oldRange.upperBound
            index += 1
            while index < all.count && all[index].0.oldRange.lowerBound <= upper {
                region.append(all[index])
                upper = max(upper, all[index].0.oldRange.upperBound)
                lower = min(lower, all[index].0.oldRange.lowerBound)
                index += 1
            }
            output += baseLines[cursor..<lower]
            let ourLines = apply(region.filter { $0.1 == .ours }.map(\.0), to: baseLines, in: lower..<upper)
            let theirLines = apply(region.filter { $0.1 == .theirs }.map(\.0), to: baseLines, in: lower..<upper)
            let sides = Set(region.map { $0.1 == .ours })
            if sides.count == 1 {
                output += sides.first! ? ourLines : theirLines
            } else if ourLines == theirLines {
                output += ourLines
            } else {
                conflicts += 1
                output += winner == .ours ? ourLines : theirLines
            }
            cursor = upper
        }
        output += baseLines[cursor...]
        return Result(text: output.joined(), conflicts: conflicts)
    }

    /// The lines `range` of `base` with `hunks` (all inside it, sorted) applied.
    private static func apply(_ hunks: [LineDiff.Hunk], to base: [Substring], in range: Range<Int>) -> [Substring] {
        var result: [Substring] = []
        var cursor = range.lowerBound
        for hunk in hunks {
            result += base[cursor..<hunk.oldRange.lowerBound]
            result += hunk.newLines
            cursor = hunk.oldRange.upperBound
        }
        result += base[cursor..<range.upperBound]
        return result
    }
}
