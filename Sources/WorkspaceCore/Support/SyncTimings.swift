import Foundation

/// Where a sync's wall time goes, for whoever works on its speed: with `RELAY_SYNC_TIMINGS=1`
/// in the environment, each phase's time (ms since the previous mark, and since the start) is
/// written to standard error as `relay-sync-timings <label> <ms> <total ms> @<wall clock s>` (the
/// wall clock lines up a client's marks with its server's). Off, a mark costs one branch.
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
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let line = String(format: "relay-sync-timings %@ %@ %.1f %.1f @%.4f\n", owner, label(),
                          Double(now - last) / 1e6, Double(now - start) / 1e6,
                          Double(wall.tv_sec % 1000) + Double(wall.tv_nsec) / 1e9)
        FileHandle.standardError.write(Data(line.utf8))
        last = now
    }

    /// Writes the process's peak resident set so far — `relay-sync-timings <owner> peak-resident-kb
    /// N` — from the kernel's `VmHWM`: this process's own memory since it started, whoever started
    /// it (`getrusage` would also count the memory of the process that spawned it, before exec).
    public func markPeakMemory() {
        guard Self.enabled, let kilobytes = Self.peakResidentKilobytes() else { return }
        FileHandle.standardError.write(Data("relay-sync-timings \(owner) peak-resident-kb \(kilobytes)\n".utf8))
    }

    /// `VmHWM` of /proc/self/status, in KiB.
    public static func peakResidentKilobytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}

extension SyncTimings {
    /// Time summed by kind (a server's requests by op, say), written as one line per kind by
    /// `report` — `relay-sync-timings <owner> <kind> ×<count> <ms>` — when timings are on.
    public struct Tally: @unchecked Sendable {
        private var totals: [String: (count: Int, nanoseconds: UInt64, cpu: UInt64)] = [:]
        private var order: [String] = []
        let owner: String

        public init(_ owner: String) { self.owner = owner }

        /// Runs `body`, adding its time to `kind`.
        public mutating func time<T>(_ kind: @autoclosure () -> String, _ body: () throws -> T) rethrows -> T {
            guard SyncTimings.enabled else { return try body() }
            let start = DispatchTime.now().uptimeNanoseconds, cpuStart = Self.threadCPU()
            defer { add(kind(), nanoseconds: DispatchTime.now().uptimeNanoseconds - start, cpu: Self.threadCPU() - cpuStart) }
            return try body()
        }

        /// Adds one occurrence of `kind` that took `nanoseconds`, `cpu` of them on a core (for
        /// work timed on another thread than the one that keeps the tally).
        public mutating func add(_ kind: String, nanoseconds: UInt64, cpu: UInt64 = 0) {
            if totals[kind] == nil { order.append(kind) }
            totals[kind, default: (0, 0, 0)].count += 1
            totals[kind, default: (0, 0, 0)].nanoseconds += nanoseconds
            totals[kind, default: (0, 0, 0)].cpu += cpu
        }

        /// This thread's CPU time so far, in nanoseconds.
        static func threadCPU() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        public func report() {
            guard SyncTimings.enabled else { return }
            var text = ""
            for key in order {
                let total = totals[key]!
                text += String(format: "relay-sync-timings %@ %@ ×%d %.1f (CPU %.1f)\n", owner, key, total.count,
                               Double(total.nanoseconds) / 1e6, Double(total.cpu) / 1e6)
            }
            FileHandle.standardError.write(Data(text.utf8))
        }
    }
}
