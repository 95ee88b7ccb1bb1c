/// One server-sent event: its `event:` name (nil when the server gave none) and its `data:`
/// lines joined with "\n".
public struct ServerSentEvent: Sendable, Equatable {
    public var event: String?
    public var data: String
    public var id: String?

    public init(event: String? = nil, data: String, id: String? = nil) {
        self.event = event
        self.data = data
        self.id = id
    }
}

/// An incremental parser of `text/event-stream` (the WHATWG rules): feed it the body's bytes as
/// they arrive, in chunks cut anywhere — in the middle of a line, of a `\r\n`, or of a UTF-8
/// character — and it returns each event once its blank line has arrived.
///
/// Bytes are kept until a line ends, and only whole lines are decoded as UTF-8, so a character
/// split across two chunks arrives whole.
///
/// For example:
/// ```swift
/// var parser = ServerSentEventParser()
/// parser.feed(Array("data: hel".utf8))      // []
/// parser.feed(Array("lo\n\n".utf8))         // [ServerSentEvent(data: "hello")]
/// ```
public struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var lastByteWasCarriageReturn = false
    private var startOfStream = true
    private var eventName: String?
    private var dataLines: [String] = []
    private var lastEventID: String?

    public init() {}

    /// Adds bytes; returns the events they complete, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if byte == 0x0A && lastByteWasCarriageReturn {
                // The \n of a \r\n whose \r ended the line already (maybe in the last chunk).
                lastByteWasCarriageReturn = false
                continue
            }
            lastByteWasCarriageReturn = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let event = processLine() { events.append(event) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        return events
    }

    /// Ends the stream: an event whose blank line never came is dispatched (servers that close
    /// right after the last `data:` line exist), as the spec's "end of file" allows.
    public mutating func finish() -> ServerSentEvent? {
        var event: ServerSentEvent?
        if !line.isEmpty { event = processLine() }
        line.removeAll()
        if event == nil { event = dispatch() }
        return event
    }

    private mutating func processLine() -> ServerSentEvent? {
        var bytes = line[...]
        if startOfStream {
            startOfStream = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if bytes.isEmpty { return dispatch() }
        if bytes.first == UInt8(ascii: ":") { return nil }  // a comment, such as a keep-alive
        let field: String
        let value: String
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var rest = bytes[(colon + 1)...]
            if rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
            value = String(decoding: rest, as: UTF8.self)
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "data": dataLines.append(value)
        case "event": eventName = value
        case "id": if !value.contains("\0") { lastEventID = value }
        default: break  // "retry" and unknown fields: nothing a model client needs
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { eventName = nil; dataLines.removeAll() }
        guard !dataLines.isEmpty else { return nil }
        return ServerSentEvent(event: eventName, data: dataLines.joined(separator: "\n"), id: lastEventID)
    }
}
