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

    /// - parameter onPool: run on the process's pool of threads (`DispatchQueue.global()`),
    ///   for short work started often (a refresh's reads, a chunk at a time), instead of on a
    ///   thread made for it.
    public init(inBackground: Bool = true, onPool: Bool = false, _ work: @escaping () throws -> Value) {
        self.work = work
        if !inBackground {
            run()
        } else if onPool {
            DispatchQueue.global().async { [self] in run() }
        } else {
            Thread.detachNewThread { [self] in run() }
        }
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
