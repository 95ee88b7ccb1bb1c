import Foundation
import LanguageModels
import WorkspaceCore

/// The events of a run as they were emitted, one line each in `.relay/runs/<id>/events.jsonl`:
/// `SEQ<TAB>{event JSON}`, where `SEQ` counts 1, 2, 3 … over every execution of the run (a
/// resume goes on counting), and the event JSON is ``RelayEvent/json`` — what `relay ask --json`
/// prints. When an execution ends, one more line says how: `{"event": "end", "state": "done"}`
/// (or `failed`, `interrupted`, `cancelled`).
///
/// This is what the HTTP API streams: a client that reconnects with the last sequence number it
/// saw gets exactly the lines after it, so the stream is a view of this file, never state of
/// its own. Lines are not fsynced (losing the tail to a power cut loses only progress display;
/// the journal beside it is what a resume relies on). A line torn by `kill -9` is skipped.
public enum RunEventLog {
    /// One line of the log.
    public struct Entry: Sendable, Equatable {
        public var sequence: Int
        /// The event as JSON text (an object with `"event"` naming its kind).
        public var json: String
        /// True for the line that ends an execution (`"event": "end"`).
        public var isEnd: Bool
    }

    /// How an execution of a run ended, as the log's `end` line says it.
    public enum EndState: String, Sendable {
        case done, failed, interrupted, cancelled
    }

    /// Appends a run's events; one writer per execution (the run's lease makes it the only one).
    /// An `AppendOnlyFile` of WorkspaceCore: its writes go through the one system-call layer, and
    /// opening it ends a line a killed writer left without its newline (that line is skipped).
    final class Writer: @unchecked Sendable {
        let runID: String
        private let file: AppendOnlyFile
        private let lock = NSLock()
        private var next: Int

        init(path: String, runID: String) throws {
            self.runID = runID
            var reader = Reader(path: path)
            next = (reader.read().last?.sequence ?? 0) + 1
            do { file = try AppendOnlyFile(path: path) } catch let error as WorkspaceError {
                throw RelayError(.io, "cannot open the run's event log: \(error.message)", path: path, cause: error)
            }
        }

        func append(_ event: RelayEvent) {
            append(json: Self.text(event.json))
        }

        func end(_ state: EndState, message: String? = nil) {
            var object: [String: JSONValue] = ["event": "end", "run": .string(runID), "state": .string(state.rawValue)]
            if let message { object["message"] = .string(message) }
            append(json: Self.text(.object(object)))
        }

        /// Failing to write progress must not fail the run: the journal is what counts.
        private func append(json: String) {
            lock.withLock {
                guard (try? file.append(Array("\(next)\t\(json)\n".utf8), sync: false)) != nil else { return }
                next += 1
            }
            RunEventSignal.shared.post(runID)
        }

        static func text(_ value: JSONValue) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    /// Reads a run's event log from where the last read stopped, whole lines only.
    public struct Reader: Sendable {
        public let path: String
        private var offset: Int64 = 0
        private var lastSequence = 0

        public init(path: String) { self.path = path }

        /// The lines written since the last call (all of them the first time), skipping torn
        /// lines and any whose sequence does not go up.
        public mutating func read() -> [Entry] {
            // An event log not written yet, or unreadable for now, has nothing new: a reader polls again.
            guard let bytes = try? StateFile.read(path, from: Int(offset)) else { return [] }
            guard let lastNewline = bytes.lastIndex(of: 0x0A) else { return [] }
            offset += Int64(lastNewline + 1)
            var entries: [Entry] = []
            var start = 0
            while start <= lastNewline {
                let end = bytes[start...].firstIndex(of: 0x0A)!
                defer { start = end + 1 }
                guard let tab = bytes[start..<end].firstIndex(of: 0x09),
                      let sequence = Int(String(decoding: bytes[start..<tab], as: UTF8.self)), sequence > lastSequence else { continue }
                let json = Data(bytes[(tab + 1)..<end])
                guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { continue }
                lastSequence = sequence
                entries.append(Entry(sequence: sequence, json: String(decoding: json, as: UTF8.self), isEnd: object["event"] as? String == "end"))
            }
            return entries
        }
    }
}

/// Wakes the readers of a run's event log in this process when a line is appended. Readers of
/// runs another process executes (a `relay resume` in a terminal) also look on a timer.
public final class RunEventSignal: @unchecked Sendable {
    public static let shared = RunEventSignal()

    private let lock = NSLock()
    private var waiting: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]

    /// Wake-ups for one reader of run `id`'s log: one whenever the log grows (coalesced: at most
    /// one waits), and one every `interval` in any case. ``Subscription/cancel()`` ends it.
    public func subscribe(to id: String, interval: Duration = .milliseconds(250)) -> Subscription {
        let key = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        lock.withLock { waiting[id, default: [:]][key] = continuation }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                continuation.yield()
            }
        }
        return Subscription(stream: stream) { [weak self] in
            ticker.cancel()
            continuation.finish()
            guard let self else { return }
            lock.withLock {
                waiting[id]?[key] = nil
                if waiting[id]?.isEmpty == true { waiting[id] = nil }
            }
        }
    }

    /// A reader's wake-ups; cancel it when the reader is done.
    public final class Subscription: @unchecked Sendable {
        public let stream: AsyncStream<Void>
        private let end: @Sendable () -> Void
        init(stream: AsyncStream<Void>, end: @escaping @Sendable () -> Void) {
            self.stream = stream
            self.end = end
        }
        public func cancel() { end() }
        deinit { end() }
    }

    func post(_ id: String) {
        let continuations = lock.withLock { waiting[id].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield() }
    }
}
