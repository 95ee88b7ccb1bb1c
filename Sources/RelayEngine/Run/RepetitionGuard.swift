/// Notices a reply stuck in a loop — the same line again and again, which small local models
/// do — so the run can stop the reply there instead of paying for hundreds of repeated tokens.
///
/// A line (12 characters or more, ignoring case and surrounding space) seen 3 times among the
/// last 12 such lines is a loop; the reply is kept up to the end of that line's first
/// appearance. Fed delta by delta, it looks only at lines as they complete.
struct RepetitionGuard {
    static let minimumLength = 12
    static let window = 12
    static let repeats = 3

    /// Every complete line so far, and the one being written.
    private var lines: [Substring] = []
    private var current = ""
    /// (line number, key) of the recent meaningful lines.
    private var recent: [(Int, String)] = []
    private var firstSeen: [String: Int] = [:]

    /// Takes the next piece of the reply; returns the text to keep when the reply has fallen
    /// into a loop, nil while it has not.
    mutating func feed(_ delta: String) -> String? {
        guard delta.contains("\n") else {
            current += delta
            return nil
        }
        var pieces = (current + delta).split(separator: "\n", omittingEmptySubsequences: false)
        current = String(pieces.removeLast())
        for line in pieces {
            lines.append(line)
            let key = line.trimmingCharacters(in: .whitespaces).lowercased()
            guard key.count >= Self.minimumLength else { continue }
            if firstSeen[key] == nil { firstSeen[key] = lines.count - 1 }
            recent.append((lines.count - 1, key))
            if recent.count > Self.window { recent.removeFirst() }
            if recent.filter({ $0.1 == key }).count >= Self.repeats, let first = firstSeen[key] {
                return lines.prefix(first + 1).joined(separator: "\n")
            }
        }
        return nil
    }
}
