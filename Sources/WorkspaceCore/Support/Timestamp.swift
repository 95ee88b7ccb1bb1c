import Foundation
import Glibc

/// The formats Relay writes times in, made from the C library's broken-down time (`gmtime_r`,
/// `localtime_r`) rather than Foundation's formatters: those go through ICU, whose code and data
/// a daemon that logs a line would otherwise keep resident for its whole life, and a formatter
/// is costly to build and not promised safe to share between threads.
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
        let (t, _) = fields(date, local: false)
        return "\(year(t))-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))Z"
    }

    /// ISO 8601 in UTC with milliseconds: "2026-11-27T10:24:33.125Z" (a run's journal).
    public static func iso8601Milliseconds(_ date: Date = Date()) -> String {
        let (t, milliseconds) = fields(date, local: false)
        let ms = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(year(t))-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)).\(ms)Z"
    }

    /// "yyyyMMdd-HHmmss" in UTC: sorts by age in a file name (run ids, conflict copies).
    public static func compactUTC(_ date: Date = Date()) -> String {
        let (t, _) = fields(date, local: false)
        return "\(year(t))\(two(t.tm_mon + 1))\(two(t.tm_mday))-\(two(t.tm_hour))\(two(t.tm_min))\(two(t.tm_sec))"
    }

    /// The date a "yyyyMMdd-HHmmss" (UTC) stamp stands for — a run id's first 15 characters;
    /// nil when it is not one.
    public static func date(fromCompactUTC stamp: String) -> Date? {
        let bytes = Array(stamp.utf8)
        guard bytes.count == 15, bytes[8] == UInt8(ascii: "-"),
              bytes.enumerated().allSatisfy({ $0.offset == 8 || (48...57).contains($0.element) }) else { return nil }
        func number(_ from: Int, _ count: Int) -> Int32 { Int32(String(decoding: bytes[from..<(from + count)], as: UTF8.self))! }
        var broken = tm()
        broken.tm_year = number(0, 4) - 1900
        broken.tm_mon = number(4, 2) - 1
        broken.tm_mday = number(6, 2)
        broken.tm_hour = number(9, 2)
        broken.tm_min = number(11, 2)
        broken.tm_sec = number(13, 2)
        guard (0...11).contains(broken.tm_mon), (1...31).contains(broken.tm_mday), broken.tm_hour < 24, broken.tm_min < 60, broken.tm_sec < 61 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&broken)))
    }

    /// "yyyy-MM-dd HH:mm:ss" in this machine's time zone: for a person reading a list.
    public static func localDateTime(_ date: Date) -> String {
        let (t, _) = fields(date, local: true)
        return "\(year(t))-\(two(t.tm_mon + 1))-\(two(t.tm_mday)) \(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))"
    }

    /// "yyyy-MM-dd" in this machine's time zone: the day a person's journal note or chat is of.
    public static func localDay(_ date: Date = Date()) -> String {
        let (t, _) = fields(date, local: true)
        return "\(year(t))-\(two(t.tm_mon + 1))-\(two(t.tm_mday))"
    }

    /// "HH-mm" in this machine's time zone: a time that can stand in a file name.
    public static func localHourMinute(_ date: Date = Date()) -> String {
        let (t, _) = fields(date, local: true)
        return "\(two(t.tm_hour))-\(two(t.tm_min))"
    }

    /// The broken-down time of `date` and its milliseconds (truncated, as the formatters did).
    private static func fields(_ date: Date, local: Bool) -> (tm, Int) {
        let since = date.timeIntervalSince1970
        let whole = since.rounded(.down)
        var seconds = time_t(whole)
        var broken = tm()
        if local { localtime_r(&seconds, &broken) } else { gmtime_r(&seconds, &broken) }
        return (broken, min(999, Int((since - whole) * 1000)))
    }

    private static func year(_ t: tm) -> String {
        let year = Int(t.tm_year) + 1900
        return year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
