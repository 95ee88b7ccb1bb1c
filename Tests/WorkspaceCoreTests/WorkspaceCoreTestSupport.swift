import Foundation
import RelayTestKit
@testable import WorkspaceCore

extension ScratchWorkspace {
    /// The workspace these tests write to: a writer waits up to 20 s for a lock.
    static func core(durable: Bool = false) throws -> ScratchWorkspace {
        try ScratchWorkspace(durable: durable, lockTimeout: .seconds(20))
    }
}

extension WorkspaceError {
    /// Whether this is a sandbox refusal whose message contains `text`.
    func isRefusal(mentioning text: String) -> Bool { code == .pathRefused && message.contains(text) }
}

/// Runs `body` on `count` real threads at once (not the cooperative pool, which has one thread
/// per core) and rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let group = DispatchGroup()
    let failures = LockedBox<[Error]>([])
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            do { try body(index) } catch { failures.mutate { $0.append(error) } }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    if let first = failures.value.first { throw first }
}
