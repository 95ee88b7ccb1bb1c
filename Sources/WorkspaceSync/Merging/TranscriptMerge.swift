import Foundation

/// Chat transcripts (`Chats/*.json`): a JSON object whose `"messages"` array holds objects with
/// an `"id"` and a `"time"`. Two versions merge into the union of their messages by id, ordered
/// by (time, id); a message both sides changed keeps the `winner`'s version, as do the other
/// top-level fields. The output is pretty-printed with sorted keys, so every replica computes
/// the same bytes. Returns nil when either side is not such a transcript.
public enum TranscriptMerge {
    public static func merge(ours: [UInt8], theirs: [UInt8], winner: ThreeWayMerge.Side) -> [UInt8]? {
        guard let a = parse(ours), let b = parse(theirs) else { return nil }
        let (first, second) = winner == .ours ? (a, b) : (b, a)  // `first` wins ties
        var byID: [String: [String: Any]] = [:]
        for message in second.messages { byID[message.id] = message.object }
        for message in first.messages { byID[message.id] = message.object }
        let ordered = byID.map { ($0.key, $0.value) }.sorted { lhs, rhs in
            let lt = timeKey(lhs.1), rt = timeKey(rhs.1)
            return lt != rt ? lt < rt : lhs.0 < rhs.0
        }
        var object = second.object.merging(first.object) { _, new in new }
        object["messages"] = ordered.map(\.1)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return Array(data) + [10]
    }

    private struct Transcript {
        var object: [String: Any]
        var messages: [(id: String, object: [String: Any])]
    }

    private static func parse(_ bytes: [UInt8]) -> Transcript? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let messages = object["messages"] as? [[String: Any]] else { return nil }
        var result: [(String, [String: Any])] = []
        for message in messages {
            guard let id = message["id"] as? String else { return nil }
            result.append((id, message))
        }
        return Transcript(object: object, messages: result)
    }

    /// ISO-8601 strings sort as text; numbers (seconds) are turned into fixed-width text.
    private static func timeKey(_ message: [String: Any]) -> String {
        if let text = message["time"] as? String { return text }
        if let number = message["time"] as? Double { return String(format: "%020.6f", number) }
        return ""
    }
}
