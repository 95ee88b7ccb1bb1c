import Foundation

/// What a running `relay watch` costs the machine, read from /proc: its resident memory (now
/// and at its peak) and how often its threads wake up — voluntary and involuntary context
/// switches of every thread, counted over a short window. An idle daemon should not wake at
/// all: its reader thread blocks in the read, its loop waits for an event or a deadline.
///
/// For example:
/// ```swift
/// if let footprint = DaemonFootprint.sample(pid: pid, over: 1) { print(footprint.residentKiB, footprint.wakeupsPerSecond) }
/// ```
public struct DaemonFootprint: Sendable, Codable, Equatable {
    /// VmRSS: resident memory now, in KiB.
    public var residentKiB: Int
    /// VmHWM: the most resident memory the process has had, in KiB.
    public var peakResidentKiB: Int
    /// Context switches of all its threads per second over the window.
    public var wakeupsPerSecond: Double
    /// How long the window was, in seconds.
    public var windowSeconds: Double

    /// Reads the process `pid` twice, `seconds` apart; nil when it is not there (or /proc is not).
    public static func sample(pid: Int32, over seconds: Double) -> DaemonFootprint? {
        guard let before = switches(pid) else { return nil }
        let start = Date()
        if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
        guard let after = switches(pid), let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let elapsed = max(Date().timeIntervalSince(start), 1e-6)
        // Per thread: a thread that ended meanwhile takes its count with it; one that started
        // counts whole.
        let woken = after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
        return DaemonFootprint(residentKiB: field("VmRSS", in: status) ?? 0, peakResidentKiB: field("VmHWM", in: status) ?? 0,
                               wakeupsPerSecond: seconds > 0 ? Double(max(0, woken)) / elapsed : 0, windowSeconds: seconds)
    }

    /// Each thread's context switches, by thread id.
    static func switches(_ pid: Int32) -> [String: Int]? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var result: [String: Int] = [:]
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            result[task] = (field("voluntary_ctxt_switches", in: status) ?? 0) + (field("nonvoluntary_ctxt_switches", in: status) ?? 0)
        }
        return result
    }

    /// The number in a "Name:   123 kB" line of a /proc status file.
    static func field(_ name: String, in status: String) -> Int? {
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
    }
}
