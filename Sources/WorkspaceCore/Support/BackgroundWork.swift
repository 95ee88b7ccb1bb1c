import Foundation

/// Work on a thread of its own (or at once, when not `inBackground`) whose result is waited
/// for: a peer's refresh beside this side's, the walk beside the index read, the server's
/// refresh begun at hello, a write batch's last flush beside its caller's records. What the
/// work captured (an endpoint, its index connection) is let go of as soon as it has run, and
/// nothing else may use it until `wait` returns.
public final class BackgroundWork<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var work: (() throws -> Value)?
    private var result: Result<Value, Error>?
    private var waited = false

    public init(inBackground: Bool = true, _ work: @escaping () throws -> Value) {
        self.work = work
        if inBackground { Thread.detachNewThread { [self] in run() } } else { run() }
    }

    private func run() {
        result = Result { try work!() }
        work = nil
        done.signal()
    }

    /// Waits until the work has run (the first call; later ones return at once) and returns
    /// what it gave or throws what it threw.
    public func wait() throws -> Value {
        if !waited {
            done.wait()
            waited = true
        }
        return try result!.get()
    }
}
