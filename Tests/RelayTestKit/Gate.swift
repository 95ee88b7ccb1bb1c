/// A gate a test opens once; tasks that wait on it go on when it opens (or at once if it has).
/// Lets a test order events — worker 1 finishes after worker 2, a check runs once a reply is
/// streaming — without any timing.
public final class Gate: Sendable {
    private let state = LockedBox<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public var isOpen: Bool { state.value.isOpen }

    public func open() {
        let waiting = state.mutate { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.mutate { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
