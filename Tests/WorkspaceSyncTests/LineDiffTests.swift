import Foundation
import RelayTestKit
import Testing
@testable import WorkspaceSync

/// The diff before it was made linear-space (issue 20), kept only to prove the new one gives
/// the same hunks: Myers' greedy search copying its whole V array for every d, then walking back.
enum PreviousLineDiff {
    static func hunks(_ a: [Substring], _ b: [Substring]) -> [LineDiff.Hunk] {
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = Array(a[prefix..<(a.count - suffix)])
        let newMiddle = Array(b[prefix..<(b.count - suffix)])
        let matches = myersMatches(oldMiddle, newMiddle)
        var result: [LineDiff.Hunk] = []
        var i = 0, j = 0
        for (mi, mj) in matches + [(oldMiddle.count, newMiddle.count)] {
            if mi > i || mj > j {
                result.append(LineDiff.Hunk(oldRange: (prefix + i)..<(prefix + mi), newLines: Array(newMiddle[j..<mj])))
            }
            i = mi + 1
            j = mj + 1
        }
        return result
    }

    /// What its V copies took: 2·(N+M)+2 entries for each d from 0 to D.
    static func storage(_ a: [Substring], _ b: [Substring], distance: Int) -> Int { (distance + 1) * (2 * (a.count + b.count) + 2) }

    static func myersMatches(_ a: [Substring], _ b: [Substring]) -> [(Int, Int)] {
        let n = a.count, m = b.count
        if n == 0 || m == 0 { return [] }
        let maxD = n + m
        let offset = maxD
        var v = [Int](repeating: 0, count: 2 * maxD + 2)
        var trace: [[Int]] = []
        outer: for d in 0...maxD {
            trace.append(v)
            for k in stride(from: -d, through: d, by: 2) {
                var x: Int
                if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) { x = v[offset + k + 1] } else { x = v[offset + k - 1] + 1 }
                var y = x - k
                while x < n && y < m && a[x] == b[y] { x += 1; y += 1 }
                v[offset + k] = x
                if x >= n && y >= m { break outer }
            }
        }
        var matches: [(Int, Int)] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let v = trace[d]
            let k = x - y
            let previousK = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1
            let previousX = v[offset + previousK]
            let previousY = previousX - previousK
            while x > previousX && y > previousY {
                x -= 1; y -= 1
                matches.append((x, y))
            }
            if d > 0 { x = previousX; y = previousY }
        }
        return matches.reversed()
    }
}

@Suite("The line diff in bounded memory")
struct LineDiffTests {
    func lines(_ text: String) -> [Substring] { LineDiff.lines(text[...]) }

    /// Pairs of texts like the merge fixtures' (MergeTests): few distinct lines, so many edit
    /// scripts of the same length, where another algorithm would pick other hunks.
    static func fixture(_ seed: Int, lines count: Int, edits: Int, vocabulary: Int) -> ([Substring], [Substring]) {
        var random = SeededGenerator(state: UInt64(seed))
        let words = (0..<vocabulary).map { "word \($0)\n" }
        let old = (0..<Int.random(in: 0...count, using: &random)).map { _ in Substring(words.randomElement(using: &random)!) }
        var new = old
        for _ in 0..<Int.random(in: 0...edits, using: &random) {
            let position = Int.random(in: 0...new.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: new.insert(Substring(words.randomElement(using: &random)!), at: position)
            case 1: if position < new.count { new.remove(at: position) }
            default: if position < new.count { new[position] = Substring(words.randomElement(using: &random)!) }
            }
        }
        return (old, new)
    }

    /// The same hunks as the previous algorithm — so the same merges, since the three-way
    /// merge is a function of the two sides' hunks — on the merge tests' fixtures and on larger
    /// ones, both when the walk back keeps every V and when a tiny budget makes it find the
    /// path by halves all the way down.
    @Test(arguments: 1...120)
    func theHunksAreThePreviousAlgorithmsWithAnyBudget(seed: Int) throws {
        let (old, new) = seed <= 40 ? Self.fixture(seed, lines: 30, edits: 8, vocabulary: 6)
            : seed <= 80 ? Self.fixture(seed, lines: 300, edits: 120, vocabulary: 6) : Self.fixture(seed, lines: 600, edits: 400, vocabulary: 40)
        let expected = PreviousLineDiff.hunks(old, new)
        #expect(LineDiff(old: old, new: new).hunks == expected, "seed \(seed)")
        for budget in [0, 7, 300] {
            let diff = try #require(LineDiff.diff(old, new, maximumEdits: .max, traceBudget: budget))
            #expect(diff.hunks == expected, "seed \(seed), trace budget \(budget)")
        }
    }

    @Test func theMergeFixturesDiffAsBefore() {
        let context = MergeTests.context
        let sides = [
            context.replacingOccurrences(of: "- write the llama essay\n", with: "- write the llama essay\n- and the alpaca one\n"),
            context.replacingOccurrences(of: "- use SmolLM2 locally\n", with: "- use SmolLM2 locally\n- sync with the desktop nightly\n"),
            context.replacingOccurrences(of: "- Ada prefers short answers", with: "- Ada prefers bullet points"),
            context + "- one more decision\n", "", "x", "\n\n",
        ]
        for one in sides + [context] {
            for other in sides + [context] {
                let (a, b) = (lines(one), lines(other))
                #expect(LineDiff(old: a, new: b).hunks == PreviousLineDiff.hunks(a, b))
                #expect(LineDiff.diff(a, b, maximumEdits: .max, traceBudget: 0)?.hunks == PreviousLineDiff.hunks(a, b))
            }
        }
    }

    /// A 20,000-line file changed all over on both sides (every 40th line on one, every 40th
    /// from the 20th on the other): the diffs hold a few hundred thousand integers, where the
    /// previous algorithm's V copies came to tens of millions (and grew with D·(N+M)); the
    /// merge keeps both sides' edits, with no conflict.
    @Test func aTwentyThousandLineFileEditedAllOverOnBothSidesMergesInBoundedMemory() throws {
        let base = (0..<20_000).map { "row \($0), some text of a long log or a table\n" }
        var ours = base, theirs = base
        for i in stride(from: 0, to: base.count, by: 40) { ours[i] = "row \(i) changed here\n" }
        for i in stride(from: 20, to: base.count, by: 40) { theirs[i] = "row \(i) changed there\n" }
        ours.insert("a new first line here\n", at: 0)
        theirs.append("a new last line there\n")
        let (baseLines, ourLines) = (lines(base.joined()), lines(ours.joined()))
        let diff = LineDiff(old: baseLines, new: ourLines)
        let distance = diff.hunks.reduce(0) { $0 + $1.oldRange.count + $1.newLines.count }
        #expect(distance == 1 + 2 * 500)
        let previous = PreviousLineDiff.storage(baseLines, ourLines, distance: distance)
        #expect(previous > 40_000_000, "the previous algorithm's V copies: \(previous) integers")
        #expect(diff.workingStorage < 1_000_000, "working storage: \(diff.workingStorage) integers")
        // Past the trace budget (D² / 2 over it), the path is found by halves: still bounded.
        let halves = try #require(LineDiff.diff(baseLines, ourLines, maximumEdits: .max, traceBudget: 10_000))
        #expect(halves.hunks == diff.hunks)
        #expect(halves.workingStorage < 1_000_000, "working storage by halves: \(halves.workingStorage) integers")
        let merged = ThreeWayMerge.merge(base: base.joined(), ours: ours.joined(), theirs: theirs.joined(), winner: .ours)
        #expect(merged.conflicts == 0)
        #expect(merged.text.hasPrefix("a new first line here\n") && merged.text.hasSuffix("a new last line there\n"))
        #expect(merged.text.contains("row 40 changed here\n") && merged.text.contains("row 60 changed there\n"))
        #expect(lines(merged.text).count == 20_002)
    }

    /// The count check that refuses a diff before searching never refuses one within the
    /// limit: with any limit, the diff is refused exactly when its distance is past it.
    @Test(arguments: 1...60)
    func aDiffIsRefusedExactlyWhenItsDistanceIsPastTheLimit(seed: Int) throws {
        let (old, new) = Self.fixture(seed, lines: 200, edits: 150, vocabulary: seed % 2 == 0 ? 5 : 200)
        let full = LineDiff(old: old, new: new)
        let distance = full.hunks.reduce(0) { $0 + $1.oldRange.count + $1.newLines.count }
        for limit in [0, distance / 2, max(distance - 1, 0), distance, distance + 1] {
            let limited = LineDiff(old: old, new: new, maximumEdits: limit)
            if distance > limit { #expect(limited == nil, "seed \(seed), distance \(distance), limit \(limit)") }
            else { #expect(limited?.hunks == full.hunks, "seed \(seed), distance \(distance), limit \(limit)") }
        }
    }

    /// A 50,000-line table with every other row rewritten: the line counts alone show more than
    /// 20,000 edits, so the diff is refused without a search (which would take ~20,000² steps)
    /// and holds no search arrays.
    @Test func aTableRewrittenAllOverIsRefusedByItsLineCountsWithoutASearch() {
        let old = (0..<50_000).map { Substring("row \($0), value \($0 * 31 % 1000)\n") }
        var new = old
        for i in stride(from: 0, to: old.count, by: 2) { new[i] = Substring("row \(i), rewritten\n") }
        #expect(LineDiff(old: old, new: new, maximumEdits: 20_000) == nil)
        #expect(GreedySearch.leastDistance([0, 1, 1, 2], [1, 2, 2, 3]) == 4)
    }

    @Test func aSearchPastItsEditLimitGivesUp() {
        let old = (0..<100).map { Substring("old \($0)\n") }, new = (0..<100).map { Substring("new \($0)\n") }
        #expect(LineDiff(old: old, new: new, maximumEdits: 150) == nil)
        #expect(LineDiff(old: old, new: new, maximumEdits: 200)?.hunks.count == 1)
        #expect(ThreeWayMerge.merge(base: old.joined(), ours: new.joined(), theirs: old.joined() + "x\n", winner: .ours, maximumEdits: 150) == nil)
    }
}
