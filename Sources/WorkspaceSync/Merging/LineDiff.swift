/// A line-based diff (Myers' O(ND) algorithm): the edits that turn `old` into `new`, as hunks
/// of replaced line ranges. The three-way merge is built on it.
public struct LineDiff: Sendable, Equatable {
    /// Lines `oldRange` of the old text were replaced by `newLines`. An insertion has an empty
    /// `oldRange` (at its lower bound), a deletion empty `newLines`.
    public struct Hunk: Sendable, Equatable {
        public var oldRange: Range<Int>
        public var newLines: [Substring]
    }

    public var hunks: [Hunk]

    public init(old: [Substring], new: [Substring]) {
        hunks = Self.hunks(old, new)
    }

    /// Splits text into lines, each keeping its "\n" (the last may lack one), so joining the
    /// lines gives the text back byte for byte.
    public static func lines(_ text: Substring) -> [Substring] {
        var result: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == "\n" {
                result.append(text[start..<next])
                start = next
            }
            index = next
        }
        if start < text.endIndex { result.append(text[start...]) }
        return result
    }

    private static func hunks(_ a: [Substring], _ b: [Substring]) -> [Hunk] {
        // Trim the common head and tail: most edits are small and local.
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = Array(a[prefix..<(a.count - suffix)])
        let newMiddle = Array(b[prefix..<(b.count - suffix)])
        let matches = myersMatches(oldMiddle, newMiddle)
        // Turn matched pairs into hunks between them.
        var result: [Hunk] = []
        var i = 0, j = 0
        for (mi, mj) in matches + [(oldMiddle.count, newMiddle.count)] {
            if mi > i || mj > j {
                result.append(Hunk(oldRange: (prefix + i)..<(prefix + mi), newLines: Array(newMiddle[j..<mj])))
            }
            i = mi + 1
            j = mj + 1
        }
        return result
    }

    /// The matching line pairs of a shortest edit script, in order.
    private static func myersMatches(_ a: [Substring], _ b: [Substring]) -> [(Int, Int)] {
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
                if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) {
                    x = v[offset + k + 1]
                } else {
                    x = v[offset + k - 1] + 1
                }
                var y = x - k
                while x < n && y < m && a[x] == b[y] { x += 1; y += 1 }
                v[offset + k] = x
                if x >= n && y >= m { break outer }
            }
        }
        // Walk the trace back to recover the snakes (matched diagonals).
        var matches: [(Int, Int)] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let v = trace[d]
            let k = x - y
            let previousK: Int
            if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) {
                previousK = k + 1
            } else {
                previousK = k - 1
            }
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
