import Foundation
import Testing
import WorkspaceCore

@Suite("Timestamps: the formats Relay writes times in")
struct TimestampTests {
    @Test func utcFormatsMatchISO8601AndTheCompactFileNameForm() {
        let date = Date(timeIntervalSince1970: 1_795_688_673.125)
        #expect(Timestamp.iso8601(date) == ISO8601DateFormatter().string(from: date))
        #expect(Timestamp.iso8601Milliseconds(date) == "2026-11-26T10:24:33.125Z")
        #expect(Timestamp.iso8601Milliseconds(Date(timeIntervalSince1970: 1_795_688_673.009)) == "2026-11-26T10:24:33.009Z")
        #expect(Timestamp.compactUTC(date) == "20261126-102433")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test func theLocalFormMatchesAFormatterInThisMachinesTimeZone() {
        let date = Date(timeIntervalSince1970: 1_795_688_673)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        #expect(Timestamp.localDateTime(date) == formatter.string(from: date))
    }
}
