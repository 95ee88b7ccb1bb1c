import Foundation
import Synchronization

/// The formats Relay writes times in, each made by one formatter kept for the process (a
/// formatter is costly to build: one used to be built per log line). Formatters are used under
/// a lock: Foundation does not promise every platform's are safe to share between threads.
///
/// For example:
/// ```swift
/// Timestamp.iso8601(Date())        // "2026-11-27T10:24:33Z"
/// Timestamp.compactUTC(Date())     // "20261127-102433" (run ids, conflict copies)
/// Timestamp.localDay(Date())       // "2026-11-27" (journal notes, chat files)
/// ```
public enum Timestamp {
    /// ISO 8601 in UTC, to the second: "2026-11-27T10:24:33Z" (logs, holds, queues).
    public static func iso8601(_ date: Date = Date()) -> String {
        seconds.withLock { $0.string(from: date) }
    }

    /// ISO 8601 in UTC with milliseconds: "2026-11-27T10:24:33.125Z" (a run's journal).
    public static func iso8601Milliseconds(_ date: Date = Date()) -> String {
        milliseconds.withLock { $0.string(from: date) }
    }

    /// "yyyyMMdd-HHmmss" in UTC: sorts by age in a file name (run ids, conflict copies).
    public static func compactUTC(_ date: Date = Date()) -> String {
        compact.withLock { $0.string(from: date) }
    }

    /// The date a "yyyyMMdd-HHmmss" (UTC) stamp stands for — a run id's first 15 characters;
    /// nil when it is not one.
    public static func date(fromCompactUTC stamp: String) -> Date? {
        compact.withLock { $0.date(from: stamp) }
    }

    /// "yyyy-MM-dd HH:mm:ss" in this machine's time zone: for a person reading a list.
    public static func localDateTime(_ date: Date) -> String {
        local.withLock { $0.string(from: date) }
    }

    /// "yyyy-MM-dd" in this machine's time zone: the day a person's journal note or chat is of.
    public static func localDay(_ date: Date = Date()) -> String {
        day.withLock { $0.string(from: date) }
    }

    /// "HH-mm" in this machine's time zone: a time that can stand in a file name.
    public static func localHourMinute(_ date: Date = Date()) -> String {
        hourMinute.withLock { $0.string(from: date) }
    }

    private static let seconds = Mutex(Formatter(ISO8601DateFormatter()))
    private static let milliseconds: Mutex<Formatter> = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return Mutex(Formatter(formatter))
    }()
    private static let compact = Mutex(Formatter(pattern: "yyyyMMdd-HHmmss", timeZone: TimeZone(identifier: "UTC")!))
    private static let local = Mutex(Formatter(pattern: "yyyy-MM-dd HH:mm:ss", timeZone: .current))
    private static let day = Mutex(Formatter(pattern: "yyyy-MM-dd", timeZone: .current))
    private static let hourMinute = Mutex(Formatter(pattern: "HH-mm", timeZone: .current))

    /// One of Foundation's two formatter classes, owned by its mutex.
    private struct Formatter: @unchecked Sendable {
        let iso: ISO8601DateFormatter?
        let pattern: DateFormatter?

        init(_ iso: ISO8601DateFormatter) {
            self.iso = iso
            pattern = nil
        }

        init(pattern format: String, timeZone: TimeZone) {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = timeZone
            formatter.dateFormat = format
            iso = nil
            pattern = formatter
        }

        func string(from date: Date) -> String { iso?.string(from: date) ?? pattern!.string(from: date) }
        func date(from text: String) -> Date? { iso?.date(from: text) ?? pattern?.date(from: text) }
    }
}
