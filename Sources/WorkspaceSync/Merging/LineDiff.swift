/// A line-based diff (Myers' O(ND) algorithm): the edits that turn `old` into `new`, as hunks
/// of replaced line ranges. The three-way merge is built on it.
///
/// The edit script is the one Myers' greedy search finds and walks back from the end — the
/// same hunks, line for line, as before — in bounded memory. The search keeps one array of the
/// furthest point reached on each diagonal (`V`), rewritten at each edit distance d; walking
/// back needs the V of every d. A search that ends within `traceBudget` entries keeps them,
/// d + 1 per d; a longer one (a file rewritten, large files changed all over) keeps none and
/// finds its path by halves instead: it runs the search again from a kept V to the end of a
/// span of distances, carrying for each diagonal the diagonal its path had at the span's
/// middle, so the path's point there is known, and each half is solved alike (a few full
/// arrays, one per halving, at most). It used to copy the whole V array (2·(N+M)+2 entries) for
/// every d: a 5,000-line file rewritten on both replicas took 1.6 GB.
public struct LineDiff: Sendable, Equatable {
    /// Lines `oldRange` of the old text were replaced by `newLines`. An insertion has an empty
    /// `oldRange` (at its lower bound), a deletion empty `newLines`.
    public struct Hunk: Sendable, Equatable {
        public var oldRange: Range<Int>
        public var newLines: [Substring]
    }

    public var hunks: [Hunk]
    /// The most integers the search held at once (its V arrays, the kept trace, the lines'
    /// numbers): what bounds this diff's memory, 4 or 8 bytes each.
    public private(set) var workingStorage = 0

    /// How many V entries a search keeps to walk back in one pass (4 bytes each): searches of
    /// up to ~2,800 edits.
    static let traceBudget = 4 * 1024 * 1024

    public init(old: [Substring], new: [Substring]) {
        self = Self.diff(old, new, maximumEdits: .max, traceBudget: Self.traceBudget)!
    }

    /// The diff, or nil when more than `maximumEdits` lines must be inserted or deleted (the
    /// search stops there: its time grows with N·D).
    public init?(old: [Substring], new: [Substring], maximumEdits: Int) {
        guard let diff = Self.diff(old, new, maximumEdits: maximumEdits, traceBudget: Self.traceBudget) else { return nil }
        self = diff
    }

    init(hunks: [Hunk], workingStorage: Int) {
        self.hunks = hunks
        self.workingStorage = workingStorage
    }

    public static func == (lhs: LineDiff, rhs: LineDiff) -> Bool { lhs.hunks == rhs.hunks }

    /// Splits text into lines, each keeping its "\n" (the last may lack one), so joining the
    /// lines gives the text back byte for byte. Lines end at the byte 10, as git's do: a file
    /// with Windows line ends ("\r\n", one Character in Swift) used to be one single line, so
    /// any two edits of it were a conflict.
    public static func lines(_ text: Substring) -> [Substring] {
        var result: [Substring] = []
        let bytes = text.utf8
        var start = bytes.startIndex
        var index = bytes.startIndex
        while let newline = bytes[index...].firstIndex(of: 10) {
            let next = bytes.index(after: newline)
            result.append(text[start..<next])
            start = next
            index = next
        }
        if start < bytes.endIndex { result.append(text[start...]) }
        return result
    }

    /// `traceBudget`: a test's smaller one makes small searches take the path by halves.
    static func diff(_ a: [Substring], _ b: [Substring], maximumEdits: Int, traceBudget: Int) -> LineDiff? {
        // Trim the common head and tail: most edits are small and local.
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = a[prefix..<(a.count - suffix)], newMiddle = b[prefix..<(b.count - suffix)]
        // Lines as numbers (equal lines, equal numbers): the search compares them many times.
        var numbers: [Substring: Int32] = [:]
        func number(_ line: Substring) -> Int32 {
            if let known = numbers[line] { return known }
            let next = Int32(numbers.count)
            numbers[line] = next
            return next
        }
        var search = GreedySearch(a: oldMiddle.map(number), b: newMiddle.map(number), traceBudget: traceBudget)
        guard let matches = search.matches(maximumEdits: maximumEdits) else { return nil }
        // Turn matched pairs into hunks between them.
        var result: [Hunk] = []
        var i = 0, j = 0
        for (mi, mj) in matches + [(oldMiddle.count, newMiddle.count)] {
            if mi > i || mj > j {
                result.append(Hunk(oldRange: (prefix + i)..<(prefix + mi), newLines: Array(newMiddle[(newMiddle.startIndex + j)..<(newMiddle.startIndex + mj)])))
            }
            i = mi + 1
            j = mj + 1
        }
        return LineDiff(hunks: result, workingStorage: search.peak + numbers.count * 2 + oldMiddle.count + newMiddle.count)
    }
}

/// Myers' greedy search for a shortest edit script of `a` into `b`, and the walk back from its
/// end that gives the matched lines — in memory that does not grow with D·(N+M) (see `LineDiff`).
struct GreedySearch {
    let a: [Int32], b: [Int32]
    let n: Int, m: Int
    /// Diagonal k is at index k + offset of a V array.
    let offset: Int
    let traceBudget: Int
    /// The integers held now, and the most held at once.
    private(set) var live = 0
    private(set) var peak = 0

    init(a: [Int32], b: [Int32], traceBudget: Int) {
        self.a = a
        self.b = b
        n = a.count
        m = b.count
        offset = n + m
        self.traceBudget = traceBudget
    }

    private mutating func hold(_ count: Int) {
        live += count
        peak = max(peak, live)
    }

    private var width: Int { 2 * (n + m) + 2 }

    /// One distance of the search: V of d from V of d - 1, in place (`v`). With `ancestors`,
    /// each diagonal's entry follows the one its point came from. True when (n, m) is reached.
    private func advance(_ v: inout [Int], to d: Int, ancestors: UnsafeMutablePointer<Int32>? = nil) -> Bool {
        let n = n, m = m, offset = offset
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                v.withUnsafeMutableBufferPointer { v in
                    for k in stride(from: -d, through: d, by: 2) {
                        var x: Int
                        let down = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])
                        if down { x = v[offset + k + 1] } else { x = v[offset + k - 1] + 1 }
                        if let ancestors { ancestors[offset + k] = ancestors[offset + k + (down ? 1 : -1)] }
                        var y = x - k
                        while x < n && y < m && a[x] == b[y] { x += 1; y += 1 }
                        v[offset + k] = x
                        if x >= n && y >= m { return true }
                    }
                    return false
                }
            }
        }
    }

    /// The matching line pairs of the script, in order; nil past `maximumEdits`.
    mutating func matches(maximumEdits: Int) -> [(Int, Int)]? {
        if n == 0 || m == 0 { return [] }
        // No line in common (a file rewritten): whatever the path, nothing matches.
        if Set(a).isDisjoint(with: b) { return n + m > maximumEdits ? nil : [] }
        // Past the limit for certain, without a search: each insertion or deletion changes one
        // line's count by one, so the counts' differences add up to at most the distance. A
        // file rewritten all over (every other row of a 50,000-line table) is refused at once
        // instead of after a search of ~maximumEdits² steps.
        if maximumEdits < n + m && Self.leastDistance(a, b) > maximumEdits { return nil }
        var v = [Int](repeating: 0, count: width)
        hold(width)
        // V of each d, d + 1 entries each (the diagonals of d's parity), while within budget.
        var trace: [Int32] = []
        var starts: [Int] = []
        var keeping = true
        var distance = -1
        for d in 0...(n + m) {
            if d > maximumEdits { return nil }
            if advance(&v, to: d) { distance = d; break }
            guard keeping else { continue }
            if trace.count + d + 1 > traceBudget {
                keeping = false
                hold(-trace.count)
                trace = []
                starts = []
                continue
            }
            starts.append(trace.count)
            for k in stride(from: -d, through: d, by: 2) { trace.append(Int32(v[offset + k])) }
            hold(d + 1)
        }
        var result: [(Int, Int)] = []
        if keeping {
            walkBack(from: distance, to: -1, x: n, y: m, into: &result) { level, k in
                level < 0 ? 0 : Int(trace[starts[level] + (k + level) / 2])
            }
        } else {
            v = []
            hold(-width)
            var zeros = [Int](repeating: 0, count: width)
            hold(width)
            walk(from: -1, &zeros, to: distance, x: n, y: m, into: &result)
        }
        return result.reversed()
    }

    /// A lower bound of the edit distance: Σ over distinct lines of |count in a − count in b|.
    static func leastDistance(_ a: [Int32], _ b: [Int32]) -> Int {
        // Lines are numbered densely from 0 (`LineDiff.diff`), so an array holds their counts.
        var balance = [Int](repeating: 0, count: Int(max(a.max() ?? 0, b.max() ?? 0)) + 1)
        for line in a { balance[Int(line)] += 1 }
        for line in b { balance[Int(line)] -= 1 }
        return balance.reduce(0) { $0 + abs($1) }
    }

    /// The walk back over distances `high` down to `low + 1` from the path's point (x, y) at
    /// `high`, appending the matched pairs met (last first), as the search's own walk does:
    /// at each d, the point it came from is the one on diagonal k ± 1 at d - 1 that reaches
    /// further (`value(d - 1, k)`: V of d - 1; V of -1 is all zeros).
    private func walkBack(from high: Int, to low: Int, x startX: Int, y startY: Int, into matches: inout [(Int, Int)],
                          value: (Int, Int) -> Int) {
        var x = startX, y = startY
        var d = high
        while d > low {
            let k = x - y
            let previousK = k == -d || (k != d && value(d - 1, k - 1) < value(d - 1, k + 1)) ? k + 1 : k - 1
            let previousX = value(d - 1, previousK)
            let previousY = previousX - previousK
            while x > previousX && y > previousY {
                x -= 1; y -= 1
                matches.append((x, y))
            }
            if d > 0 { x = previousX; y = previousY }
            d -= 1
        }
    }

    /// The walk back from (x, y) at distance `high` to distance `low + 1`, given V of `low`
    /// (`vLow`): within budget, the search is run again from `vLow` keeping every V; otherwise
    /// it is run to `high - 1` carrying each diagonal's diagonal at the middle distance, which
    /// gives the path's point there, and the two halves are walked alike.
    private mutating func walk(from low: Int, _ vLow: inout [Int], to high: Int, x: Int, y: Int, into matches: inout [(Int, Int)]) {
        let span = high - low
        // V of low ... high - 1, kept: (d + 1) entries for each.
        let kept = (low..<high).reduce(0) { $0 + max($1, 0) + 1 }
        if kept <= traceBudget || span <= 2 {
            var trace: [Int32] = []
            var starts: [Int] = []
            trace.reserveCapacity(kept)
            hold(kept + width)
            var v = vLow
            func keep(_ level: Int) {
                starts.append(trace.count)
                guard level >= 0 else { return }
                for k in stride(from: -level, through: level, by: 2) { trace.append(Int32(v[offset + k])) }
            }
            keep(low)
            for d in (low + 1)..<high {
                _ = advance(&v, to: d)
                keep(d)
            }
            walkBack(from: high, to: low, x: x, y: y, into: &matches) { level, k in
                level < 0 ? 0 : Int(trace[starts[level - low] + (k + level) / 2])
            }
            hold(-(kept + width))
            return
        }
        let middle = low + span / 2
        var v = vLow
        var vMiddle: [Int] = []
        var ancestors = [Int32](repeating: 0, count: width)
        hold(3 * width)
        ancestors.withUnsafeMutableBufferPointer { ancestors in
            for d in (low + 1)..<high {
                _ = advance(&v, to: d, ancestors: d > middle ? ancestors.baseAddress! : nil)
                if d == middle {
                    vMiddle = v
                    for k in stride(from: -d, through: d, by: 2) { ancestors[offset + k] = Int32(k) }
                }
            }
        }
        // The path's point at `middle`: where its point at high - 1 came from.
        let k = x - y
        let previousK = k == -high || (k != high && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1
        let middleK = Int(ancestors[offset + previousK])
        let middleX = vMiddle[offset + middleK]
        hold(-2 * width)  // V and the ancestors go; V of the middle stays for the upper half
        v = []
        ancestors = []
        walk(from: middle, &vMiddle, to: high, x: x, y: y, into: &matches)
        hold(-width)
        vMiddle = []
        walk(from: low, &vLow, to: middle, x: middleX, y: middleX - middleK, into: &matches)
    }
}
