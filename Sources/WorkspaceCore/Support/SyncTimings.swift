import Foundation

/// Where a sync's wall time goes, for whoever works on its speed: with `RELAY_SYNC_TIMINGS=1`
/// in the environment, each phase's time (ms since the previous mark, and since the start) is
/// written to standard error as `relay-sync-timings <label> <ms> <total ms>`. Off, a mark costs
/// one branch.
public struct SyncTimings: @unchecked Sendable {
    public static let enabled = ProcessInfo.processInfo.environment["RELAY_SYNC_TIMINGS"] == "1"
    private let start: UInt64
    private var last: UInt64
    let owner: String

    public init(_ owner: String) {
        self.owner = owner
        start = Self.enabled ? DispatchTime.now().uptimeNanoseconds : 0
        last = start
    }

    public mutating func mark(_ label: @autoclosure () -> String) {
        guard Self.enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let line = String(format: "relay-sync-timings %@ %@ %.1f %.1f\n", owner, label(),
                          Double(now - last) / 1e6, Double(now - start) / 1e6)
        FileHandle.standardError.write(Data(line.utf8))
        last = now
    }
}
