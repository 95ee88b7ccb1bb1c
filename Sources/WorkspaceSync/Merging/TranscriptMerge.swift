import Foundation

/// Chat transcripts (`Chats/*.json`): a JSON object whose `"messages"` array holds objects with
/// an `"id"` and a `"time"`. Two versions merge into the union of their messages by id, ordered
/// by (time, id). A message only one side changed since `base` takes that change; one both
/// sides changed differently (or both added under one id) keeps the `winner`'s version and
/// counts as a conflict — the caller keeps the other side whole in a conflict copy. Other
/// top-level fields are the winner's. The output is pretty-printed with sorted keys, so every
/// replica computes the same bytes. Returns nil when either side is not such a transcript.
public enum TranscriptMerge {
    public struct Result: Equatable {
        public var bytes: [UInt8]
        /// Messages both sides changed differently (the winner's version was kept).
        public var conflicts: Int
    }

    public static func merge(base: [UInt8]? = nil, ours: [UInt8], theirs: [UInt8], winner: ThreeWayMerge.Side) -> Result? {
        guard let a = parse(ours), let b = parse(theirs) else { return nil }
        let original = base.flatMap(parse)
        var baseByID: [String: [UInt8]] = [:]
        for message in original?.messages ?? [] { baseByID[message.id] = canonical(message.object) }
        let (first, second) = winner == .ours ? (a, b) : (b, a)  // `first` wins ties
        var byID: [String: [String: Any]] = [:]
        var secondBytes: [String: [UInt8]] = [:]
        for message in second.messages {
            byID[message.id] = message.object
            secondBytes[message.id] = canonical(message.object)
        }
        var conflicts = 0
        for message in first.messages {
            guard let other = secondBytes[message.id] else {
                byID[message.id] = message.object
                continue
            }
            let mine = canonical(message.object)
            if mine == other { continue }
            let was = baseByID[message.id]
            if was == mine { continue }  // only the other side changed it
            if was != other { conflicts += 1 }  // both changed it (or both added it)
            byID[message.id] = message.object
        }
        let ordered = byID.map { ($0.key, $0.value) }.sorted { lhs, rhs in
            let lt = timeKey(lhs.1), rt = timeKey(rhs.1)
            return lt != rt ? lt < rt : lhs.0 < rhs.0
        }
        var object = second.object.merging(first.object) { _, new in new }
        object["messages"] = ordered.map(\.1)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return Result(bytes: Array(data) + [10], conflicts: conflicts)
    }

    /// A message as comparable bytes.
    private static func canonical(_ object: [String: Any]) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map(Array.init) ?? []
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
