/// Streams the text of a structured reply's `{"answer": "…"}` while it arrives, so a reply in
/// structured tool mode still reads as a stream. Fed the raw JSON deltas; returns the decoded
/// pieces of the answer string (escapes resolved, even when one is split across deltas). A
/// reply that turns out to be a tool call yields nothing.
///
/// For example:
/// ```swift
/// var streamer = AnswerStreamer()
/// streamer.feed(#"{"answer": "Lla"#)   // "Lla"
/// streamer.feed(#"mas\n"}"#)           // "mas\n"
/// ```
struct AnswerStreamer {
    private enum State { case opening, inAnswer, finished, notAnAnswer }
    private static let opening = Array(#"{"answer":""#)

    private var state = State.opening
    /// What the reply began with so far, whitespace dropped, while it may still open an answer.
    private var seen: [Character] = []
    /// An escape sequence begun in one delta and ended in a later one.
    private var pendingEscape = ""
    private var pendingHighSurrogate: UInt32?
    /// All the text given out, to compare with the whole reply at the end.
    private(set) var emitted = ""

    mutating func feed(_ delta: String) -> String {
        var out = ""
        for character in delta {
            switch state {
            case .finished, .notAnAnswer:
                return take(out)
            case .opening:
                if character.isWhitespace { continue }
                seen.append(character)
                if seen.count > Self.opening.count || seen.last != Self.opening[seen.count - 1] {
                    state = .notAnAnswer
                } else if seen.count == Self.opening.count {
                    state = .inAnswer
                }
            case .inAnswer:
                if !pendingEscape.isEmpty {
                    pendingEscape.append(character)
                    if let decoded = decodeEscape() { out += decoded }
                } else if character == "\\" {
                    pendingEscape = "\\"
                } else if character == "\"" {
                    state = .finished
                } else {
                    out.append(character)
                }
            }
        }
        return take(out)
    }

    private mutating func take(_ text: String) -> String {
        emitted += text
        return text
    }

    /// Decodes `pendingEscape` once it is whole; nil while more characters are needed.
    private mutating func decodeEscape() -> String? {
        let body = pendingEscape.dropFirst()
        guard let kind = body.first else { return nil }
        if kind != "u" {
            pendingEscape = ""
            switch kind {
            case "n": return "\n"
            case "t": return "\t"
            case "r": return "\r"
            case "b": return "\u{8}"
            case "f": return "\u{C}"
            default: return String(kind)  // \" \\ \/
            }
        }
        guard body.count == 5 else { return nil }
        pendingEscape = ""
        guard let value = UInt32(body.dropFirst(), radix: 16) else { return "" }
        if (0xD800...0xDBFF).contains(value) {
            pendingHighSurrogate = value
            return ""
        }
        if (0xDC00...0xDFFF).contains(value), let high = pendingHighSurrogate {
            pendingHighSurrogate = nil
            let scalar = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00)
            return Unicode.Scalar(scalar).map { String(Character($0)) } ?? ""
        }
        pendingHighSurrogate = nil
        return Unicode.Scalar(value).map { String(Character($0)) } ?? ""
    }
}
