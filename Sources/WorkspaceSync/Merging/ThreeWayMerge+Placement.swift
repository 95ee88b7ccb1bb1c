/// Where a hunk may equally sit. A diff's hunks are one edit script of many equally short ones:
/// a block of lines inserted next to lines equal to its own ends (a paragraph and its blank
/// line, a list item after items) can be put a line or more higher or lower, and a replacement
/// that adds or removes lines can pair its lines with the base's from either end. Myers' search
/// picks one; git's xdiff often picks another, and where the two sides' hunks then touch in one
/// script and not in the other, git merges cleanly and the merge here made a conflict copy.
///
/// `separate` looks, for each pair of hunks of the two sides that touch and nothing else, at
/// every placement of the two (each side's text stays the same in all of them) and takes the
/// first where they no longer touch — only when every such placement gives the same merged
/// lines. When placements disagree (the order of the two sides' lines would depend on the
/// choice), the pair stays a conflict: the merge never picks an order for the person. So does
/// a pair where one side adds lines the other removes (a blank line added next to a blank line
/// taken out).
extension ThreeWayMerge {
    /// The most placements looked at per hunk, and per pair.
    static let placementsPerHunk = 24
    static let placementsPerPair = 256

    static func separate(_ ours: inout [LineDiff.Hunk], _ theirs: inout [LineDiff.Hunk], base: [Substring]) {
        func touch(_ a: LineDiff.Hunk, _ b: LineDiff.Hunk) -> Bool {
            a.oldRange.lowerBound <= b.oldRange.upperBound && b.oldRange.lowerBound <= a.oldRange.upperBound
        }
        var i = 0
        while i < ours.count {
            let touching = theirs.indices.filter { touch(ours[i], theirs[$0]) }
            guard touching.count == 1, let j = touching.first,
                  ours.indices.filter({ touch(ours[$0], theirs[j]) }) == [i],
                  !(ours[i].oldRange == theirs[j].oldRange && ours[i].newLines == theirs[j].newLines) else {
                i += 1
                continue
            }
            if let (mine, other) = placement(ours, i, theirs, j, base: base) {
                ours.replaceSubrange(i...i, with: mine)
                theirs.replaceSubrange(j...j, with: other)
                i += mine.count
            } else {
                i += 1
            }
        }
    }

    /// Placements of `ours[i]` and `theirs[j]` that touch no hunk of the other side except an
    /// identical one, if any, and all of them give the same lines: the first of them.
    private static func placement(_ ours: [LineDiff.Hunk], _ i: Int, _ theirs: [LineDiff.Hunk], _ j: Int,
                                  base: [Substring]) -> ([LineDiff.Hunk], [LineDiff.Hunk])? {
        let mine = alternatives(ours, i, base: base), other = alternatives(theirs, j, base: base)
        guard mine.count * other.count <= placementsPerPair else { return nil }
        // The base span every placement lies in, so the merged lines of all are comparable.
        let all = (mine + other).flatMap { $0 }
        let low = all.map(\.oldRange.lowerBound).min()!, high = all.map(\.oldRange.upperBound).max()!
        var chosen: ([LineDiff.Hunk], [LineDiff.Hunk])?
        var text: [Substring]?
        var orders = Set<Bool>()
        for a in mine {
            for b in other {
                // Which side's change comes first, in this placement (pieces both made alike
                // aside): when one placement puts ours first and another theirs, the order of
                // the merged lines is the merge's guess — a conflict (ours adds an "x" next to
                // the "x" theirs changes: before it, or after it?).
                let a2 = a.filter { x in !b.contains { $0.oldRange == x.oldRange && $0.newLines == x.newLines } }
                let b2 = b.filter { y in !a.contains { $0.oldRange == y.oldRange && $0.newLines == y.newLines } }
                if let aLow = a2.map(\.oldRange.lowerBound).min(), let aHigh = a2.map(\.oldRange.upperBound).max(),
                   let bLow = b2.map(\.oldRange.lowerBound).min(), let bHigh = b2.map(\.oldRange.upperBound).max() {
                    if aHigh <= bLow { orders.insert(true) }
                    if bHigh <= aLow { orders.insert(false) }
                    if orders.count > 1 { return nil }
                }
                guard let merged = mergedIfApart(a, b, ours: ours, i, theirs: theirs, j, base: base, span: low..<high) else { continue }
                if let text, text != merged { return nil }
                text = merged
                if chosen == nil { chosen = (a, b) }
            }
        }
        return chosen
    }

    /// The lines of `span` with both placements applied, when no piece of one touches a piece
    /// (or another hunk) of the other side, identical pieces apart; nil otherwise.
    private static func mergedIfApart(_ a: [LineDiff.Hunk], _ b: [LineDiff.Hunk], ours: [LineDiff.Hunk], _ i: Int,
                                      theirs: [LineDiff.Hunk], _ j: Int, base: [Substring], span: Range<Int>) -> [Substring]? {
        func touch(_ x: LineDiff.Hunk, _ y: LineDiff.Hunk) -> Bool {
            x.oldRange.lowerBound <= y.oldRange.upperBound && y.oldRange.lowerBound <= x.oldRange.upperBound
        }
        // One side adding lines the other takes out (a blank line added, a blank line
        // removed, in a run of them) stays a conflict, however the two can be placed: the sides
        // want opposite things of the same lines.
        func added(_ pieces: [LineDiff.Hunk]) -> Set<Substring> { Set(pieces.filter { $0.oldRange.isEmpty }.flatMap(\.newLines)) }
        func removed(_ pieces: [LineDiff.Hunk]) -> Set<Substring> { Set(pieces.filter { $0.newLines.isEmpty }.flatMap { base[$0.oldRange] }) }
        if !added(a).isDisjoint(with: removed(b)) || !added(b).isDisjoint(with: removed(a)) { return nil }
        let otherTheirs = theirs.indices.filter { $0 != j }.map { theirs[$0] }
        let otherOurs = ours.indices.filter { $0 != i }.map { ours[$0] }
        // A piece both sides made alike is taken once; any other piece may touch nothing of the
        // other side (an alike piece included: the merge would chain them into one conflict).
        func alike(_ x: LineDiff.Hunk, _ pieces: [LineDiff.Hunk]) -> Bool {
            pieces.contains { $0.oldRange == x.oldRange && $0.newLines == x.newLines }
        }
        var pieces: [LineDiff.Hunk] = b
        for x in a {
            if alike(x, b) { continue }
            if b.contains(where: { touch(x, $0) }) || otherTheirs.contains(where: { touch(x, $0) }) { return nil }
            pieces.append(x)
        }
        for y in b where !alike(y, a) {
            if a.contains(where: { touch(y, $0) }) || otherOurs.contains(where: { touch(y, $0) }) { return nil }
        }
        pieces.sort { ($0.oldRange.lowerBound, $0.oldRange.upperBound) < ($1.oldRange.lowerBound, $1.oldRange.upperBound) }
        var result: [Substring] = []
        var cursor = span.lowerBound
        for piece in pieces {
            guard piece.oldRange.lowerBound >= cursor else { return nil }
            result += base[cursor..<piece.oldRange.lowerBound]
            result += piece.newLines
            cursor = piece.oldRange.upperBound
        }
        result += base[cursor..<span.upperBound]
        return result
    }

    /// The placements of `hunks[index]` that give its side the same text: itself, a pure
    /// insertion or deletion moved up or down over equal lines, and a replacement that changes
    /// the number of lines split into a replacement and an insertion or deletion at either end
    /// (that one moved likewise). Never past the side's neighbouring hunks.
    static func alternatives(_ hunks: [LineDiff.Hunk], _ index: Int, base: [Substring]) -> [[LineDiff.Hunk]] {
        let hunk = hunks[index]
        let floor = index > 0 ? hunks[index - 1].oldRange.upperBound : 0
        let ceiling = index + 1 < hunks.count ? hunks[index + 1].oldRange.lowerBound : base.count
        var result: [[LineDiff.Hunk]] = [[hunk]]
        let old = hunk.oldRange.count, new = hunk.newLines.count
        if old == 0 || new == 0 {
            result += slides(hunk, base: base, floor: floor, ceiling: ceiling).map { [$0] }
        } else if new > old {
            let s = hunk.oldRange.lowerBound, e = hunk.oldRange.upperBound
            // The extra lines inserted after the replaced ones, or before them.
            let after = LineDiff.Hunk(oldRange: e..<e, newLines: Array(hunk.newLines[old...]))
            let replacedFirst = LineDiff.Hunk(oldRange: s..<e, newLines: Array(hunk.newLines[..<old]))
            for moved in [after] + slides(after, base: base, floor: e, ceiling: ceiling) { result.append([replacedFirst, moved]) }
            let before = LineDiff.Hunk(oldRange: s..<s, newLines: Array(hunk.newLines[..<(new - old)]))
            let replacedLast = LineDiff.Hunk(oldRange: s..<e, newLines: Array(hunk.newLines[(new - old)...]))
            for moved in [before] + slides(before, base: base, floor: floor, ceiling: s) { result.append([moved, replacedLast]) }
        } else if new < old {
            let s = hunk.oldRange.lowerBound, e = hunk.oldRange.upperBound
            let keptFirst = LineDiff.Hunk(oldRange: s..<(s + new), newLines: hunk.newLines)
            let deletedAfter = LineDiff.Hunk(oldRange: (s + new)..<e, newLines: [])
            for moved in [deletedAfter] + slides(deletedAfter, base: base, floor: s + new, ceiling: ceiling) { result.append([keptFirst, moved]) }
            let deletedBefore = LineDiff.Hunk(oldRange: s..<(e - new), newLines: [])
            let keptLast = LineDiff.Hunk(oldRange: (e - new)..<e, newLines: hunk.newLines)
            for moved in [deletedBefore] + slides(deletedBefore, base: base, floor: floor, ceiling: e - new) { result.append([moved, keptLast]) }
        }
        return Array(result.prefix(placementsPerHunk))
    }

    /// A pure insertion or deletion moved up, then down, one line at a time while the line it
    /// passes equals the one at its other end, within `floor..<ceiling` of the base.
    static func slides(_ hunk: LineDiff.Hunk, base: [Substring], floor: Int, ceiling: Int) -> [LineDiff.Hunk] {
        var result: [LineDiff.Hunk] = []
        if hunk.oldRange.isEmpty {
            guard !hunk.newLines.isEmpty else { return [] }
            var up = hunk
            while up.oldRange.lowerBound > floor, base[up.oldRange.lowerBound - 1] == up.newLines.last!, result.count < placementsPerHunk {
                let p = up.oldRange.lowerBound - 1
                up = LineDiff.Hunk(oldRange: p..<p, newLines: [up.newLines.last!] + up.newLines.dropLast())
                result.append(up)
            }
            var down = hunk
            while down.oldRange.lowerBound < ceiling, base[down.oldRange.lowerBound] == down.newLines.first!, result.count < placementsPerHunk {
                let p = down.oldRange.lowerBound + 1
                down = LineDiff.Hunk(oldRange: p..<p, newLines: Array(down.newLines.dropFirst()) + [down.newLines.first!])
                result.append(down)
            }
        } else if hunk.newLines.isEmpty {
            var up = hunk.oldRange
            while up.lowerBound > floor, base[up.lowerBound - 1] == base[up.upperBound - 1], result.count < placementsPerHunk {
                up = (up.lowerBound - 1)..<(up.upperBound - 1)
                result.append(LineDiff.Hunk(oldRange: up, newLines: []))
            }
            var down = hunk.oldRange
            while down.upperBound < ceiling, base[down.lowerBound] == base[down.upperBound], result.count < placementsPerHunk {
                down = (down.lowerBound + 1)..<(down.upperBound + 1)
                result.append(LineDiff.Hunk(oldRange: down, newLines: []))
            }
        }
        return result
    }
}
