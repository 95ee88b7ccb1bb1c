import Foundation

/// A run's event stream read by curl (a real client, in its own process), event by event, so a
/// test can hang up in the middle of a run and reconnect as a browser would.
final class SSEReader: @unchecked Sendable {
    struct Event: Equatable {
        var id: Int?
        var data: String
        var object: [String: Any] { jsonObject(data) ?? [:] }
        var kind: String { object["event"] as? String ?? "" }
        static func == (lhs: Event, rhs: Event) -> Bool { lhs.id == rhs.id && lhs.data == rhs.data }
    }

    let process = Process()
    private let output = Pipe()
    private var buffer = Data()
    private(set) var events: [Event] = []
    private(set) var ended = false

    /// Connects to `url` (`Last-Event-ID: lastEventID` when given).
    init(url: String, lastEventID: Int? = nil, headers: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        var arguments = ["-s", "-N", url]
        if let lastEventID { arguments += ["-H", "Last-Event-ID: \(lastEventID)"] }
        for header in headers { arguments += ["-H", header] }
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit { hangUp() }

    /// Reads until `done` holds for the events so far, or the stream ends.
    @discardableResult
    func read(until done: ([Event]) -> Bool = { _ in false }) -> [Event] {
        while !done(events) && !ended {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { ended = true; break }
            buffer.append(chunk)
            parse()
        }
        return events
    }

    /// Closes the connection as a browser tab being closed would.
    func hangUp() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    private func parse() {
        let separator = Data("\n\n".utf8)
        while let range = buffer.range(of: separator) {
            let block = String(decoding: buffer[buffer.startIndex..<range.lowerBound], as: UTF8.self)
            buffer = Data(buffer[range.upperBound...])
            var id: Int?
            var data: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("id: ") { id = Int(line.dropFirst(4)) }
                if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
            }
            if !data.isEmpty { events.append(Event(id: id, data: data.joined(separator: "\n"))) }
        }
    }
}
