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
        // A scan of the bytes: the sync reads every row's vector, so this is on the hot path.
        var counters: [String: UInt64] = [:]
        var utf8 = Array(text.utf8)
        utf8.append(UInt8(ascii: ","))
        var start = 0, colon = -1
        for (index, byte) in utf8.enumerated() {
            if byte == UInt8(ascii: ":") {
                guard colon < 0 else { return nil }
                colon = index
            } else if byte == UInt8(ascii: ",") {
                if index == start && index == utf8.count - 1 { break }  // "" or a trailing end
                guard colon > start, colon < index - 1 else { return nil }
                var value: UInt64 = 0
                for digit in utf8[(colon + 1)..<index] {
                    guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                    let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                    guard !overflow1, !overflow2 else { return nil }
                    value = sum
                }
                counters[String(decoding: utf8[start..<colon], as: UTF8.self)] = value
                start = index + 1
                colon = -1
            }
        }
        self.init(counters)
    }
}
