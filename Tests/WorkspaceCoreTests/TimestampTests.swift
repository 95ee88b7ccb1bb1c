import Foundation
import Testing
import WorkspaceCore

/// The formats Relay writes times in (from the C library's broken-down time, not Foundation's
/// formatters): each format as it is written, the compact stamp read back (run ids), from any thread.
@Suite("Timestamps: the formats Relay writes times in")
struct TimestampTests {
    // 2026-11-27 10:24:33.125 UTC
    let date = Date(timeIntervalSince1970: 1_795_775_073.125)

    @Test func eachFormatWritesWhatItsNameSays() {
        #expect(Timestamp.iso8601(date) == "2026-11-27T10:24:33Z")
        #expect(Timestamp.iso8601Milliseconds(date) == "2026-11-27T10:24:33.125Z")
        #expect(Timestamp.compactUTC(date) == "20261127-102433")
        // The local ones in this machine's zone, as Foundation's calendar puts them.
        let local = Calendar.current.dateComponents(in: .current, from: date)
        let day = String(format: "%04d-%02d-%02d", local.year!, local.month!, local.day!)
        #expect(Timestamp.localDay(date) == day)
        #expect(Timestamp.localHourMinute(date) == String(format: "%02d-%02d", local.hour!, local.minute!))
        #expect(Timestamp.localDateTime(date) == day + String(format: " %02d:%02d:%02d", local.hour!, local.minute!, local.second!))
    }

    @Test func utcFormatsMatchISO8601AndKeepMillisecondsWithTheirZeros() {
        #expect(Timestamp.iso8601(date) == ISO8601DateFormatter().string(from: date))
        #expect(Timestamp.iso8601Milliseconds(Date(timeIntervalSince1970: 1_795_688_673.009)) == "2026-11-26T10:24:33.009Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test func theLocalFormMatchesAFormatterInThisMachinesTimeZone() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        #expect(Timestamp.localDateTime(date) == formatter.string(from: date))
    }

    @Test func aCompactStampReadsBackToItsSecondAndAnythingElseToNil() {
        #expect(Timestamp.date(fromCompactUTC: "20261127-102433") == Date(timeIntervalSince1970: 1_795_775_073))
        #expect(Timestamp.date(fromCompactUTC: "by-trigger") == nil)
        #expect(Timestamp.date(fromCompactUTC: "2026-11-27") == nil)
        #expect(Timestamp.date(fromCompactUTC: "20261399-102433") == nil)
    }

    @Test func manyThreadsGetWholeStamps() async {
        let stamps = await withTaskGroup(of: String.self) { group in
            for n in 0..<200 { group.addTask { Timestamp.compactUTC(Date(timeIntervalSince1970: Double(n) * 86_400)) } }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(stamps.count == 200 && stamps.allSatisfy { $0.count == 15 })
    }
}
