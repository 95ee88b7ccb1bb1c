/// The journal of a run (`JournalRecord`s, RunJournal.swift), indexed for serving recorded
/// replies and results again.
struct RecordedRun {
    var requests: [String: JournalRecord] = [:]
    var responses: [String: JournalRecord] = [:]
    var tools: [String: JournalRecord] = [:]
    var effects: [String: JournalRecord] = [:]
    var intents: [String: JournalRecord] = [:]
    var steps: [Int: JournalRecord] = [:]
    var ended: JournalRecord?

    init(_ records: [JournalRecord] = []) {
        for record in records {
            switch record.type {
            case .request: if let key = record.key { requests[key] = record }
            case .response: if let key = record.key { responses[key] = record }
            case .tool: if let key = record.key { tools[key] = record }
            case .effect: if let key = record.key { effects[key] = record }
            case .step: if let step = record.step { steps[step] = record }
            case .finished: ended = record
            case .failed, .interrupted: ended = nil
            case .intent: if let key = record.key { intents[key] = record }
            case .note: break
            }
        }
    }

    var isEmpty: Bool { responses.isEmpty && effects.isEmpty }
}
