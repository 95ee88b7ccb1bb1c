/// A version vector: for each replica, how many edits of this file it has made. Vectors order
/// the histories of a file across any number of replicas in any topology (no pairwise
/// archives): one vector dominates another when it has seen every edit the other has.
///
/// For example:
/// ```swift
/// var a = VersionVector(); a.increment("laptop")          // {laptop: 1}
/// var b = a; b.increment("desktop")                        // {desktop: 1, laptop: 1}
/// a.compare(to: b)                                         // .before: copy b to a
/// a.increment("laptop"); a.compare(to: b)                  // .concurrent: merge
/// ```
public struct VersionVector: Sendable, Hashable, Codable, CustomStringConvertible {
    public private(set) var counters: [String: UInt64]

    public init(_ counters: [String: UInt64] = [:]) {
        self.counters = counters.filter { $0.value > 0 }
    }

    public enum Order: Sendable, Equatable {
        case equal, before, after, concurrent
    }

    public subscript(replica: String) -> UInt64 { counters[replica] ?? 0 }

    public mutating func increment(_ replica: String) {
        counters[replica, default: 0] += 1
    }

    /// The pointwise maximum: a vector that has seen everything both have.
    public func merged(with other: VersionVector) -> VersionVector {
        VersionVector(counters.merging(other.counters) { max($0, $1) })
    }

    public func compare(to other: VersionVector) -> Order {
        var less = false, greater = false
        for replica in Set(counters.keys).union(other.counters.keys) {
            let mine = self[replica], theirs = other[replica]
            if mine < theirs { less = true }
            if mine > theirs { greater = true }
        }
        switch (less, greater) {
        case (false, false): return .equal
        case (true, false): return .before
        case (false, true): return .after
        case (true, true): return .concurrent
        }
    }

    /// Whether this vector has seen every edit `other` has.
    public func dominates(_ other: VersionVector) -> Bool {
        let order = compare(to: other)
        return order == .after || order == .equal
    }

    /// "desktop:2,laptop:1", sorted by replica: stable, for the index and for messages.
    public var description: String {
        counters.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    /// Parses `description`'s form; nil when malformed.
    public init?(text: String) {
        var counters: [String: UInt64] = [:]
        for part in text.split(separator: ",") {
            let pieces = part.split(separator: ":")
            guard pieces.count == 2, !pieces[0].isEmpty, let value = UInt64(pieces[1]) else { return nil }
            counters[String(pieces[0])] = value
        }
        self.init(counters)
    }
}
