import Foundation

/// A value shared between threads or tasks of a test, behind a lock: what a callback collects
/// and the test reads back.
///
/// For example:
///
///     let events = LockedBox<[String]>([])
///     try await engine.execute(id) { event in events.mutate { $0.append("\(event)") } }
///     #expect(events.value.count == 4)
public final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    public init(_ value: Value) { stored = value }

    /// A copy of the value as it is now.
    public var value: Value { lock.withLock { stored } }

    /// Changes the value in place, with the lock held, and returns what `change` returns.
    @discardableResult
    public func mutate<Result>(_ change: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try change(&stored) }
    }
}
