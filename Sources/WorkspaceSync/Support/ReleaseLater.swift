import Foundation

/// Frees large values (an index of 10,000 rows, a walk's listing) on a thread of its own, off
/// the path the other side is waiting on: freeing the 10,000-row snapshot a server answered
/// `refresh` from took ~5 ms before the answer could go.
enum ReleaseLater {
    private static let queue = DispatchQueue(label: "relay.release-later", qos: .utility)

    static func release<T: Sendable>(_ value: T) {
        queue.async { withExtendedLifetime(value) {} }
    }
}
