import Foundation
import LanguageModels
import WorkspaceCore

/// One line of a run's write-ahead journal (`.relay/runs/<id>/journal.jsonl`).
///
/// Each model request is recorded before it is sent and its whole reply after it arrives; each
/// tool result and each file the run changes is recorded as it happens; each finished step is
/// recorded before the next starts. Resume and replay re-run the engine against these records:
/// a recorded reply is served instead of asking the model again.
public struct JournalRecord: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case request, response, tool, effect, step, note, interrupted, failed, finished
        /// An append about to be made (the file's size then): an append is the one change that
        /// is not idempotent, so resume looks for its bytes before making it again.
        case intent
    }

    public var type: Kind
    /// "step/call" for requests and responses, "step/call/toolCallID" for tools, a file key for effects.
    public var key: String?
    public var step: Int?
    public var agent: String?
    /// When the model call or the tool started (UTC ISO 8601), and how long it took.
    public var started: String?
    public var milliseconds: Int?
    // request
    public var messages: [ChatMessage]?
    public var tools: [String]?
    /// The tools as offered (schemas included) and the reply limit: the whole request.
    public var toolDefinitions: [ToolDefinition]?
    public var maxTokens: Int?
    public var requestHash: String?
    // response
    public var text: String?
    public var toolCalls: [ToolCall]?
    public var usage: TokenUsage?
    public var finish: String?
    // tool
    public var tool: String?
    public var result: String?
    public var isError: Bool?
    // effect
    public var path: String?
    public var mode: String?
    public var before: String?
    public var after: String?
    // intent: the size of the file just before the append
    public var offset: Int?
    // step, note, failed, finished
    public var message: String?
    public var state: String?

    public init(_ type: Kind) { self.type = type }
}

/// Appends records to a run's journal, each one fsynced before `append` returns (an
/// `AppendOnlyFile`: the system-call layer's writes and checked fsyncs).
final class RunJournalWriter: @unchecked Sendable {
    let path: String
    private let file: AppendOnlyFile
    private let durable: Bool
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Opens (or creates) the journal; a line a killed writer left without its newline is ended.
    init(path: String, durable: Bool) throws {
        self.path = path
        self.durable = durable
        do { file = try AppendOnlyFile(path: path) } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot open the run journal: \(error.message)", path: path, cause: error)
        }
    }

    /// Appends `record`; with `sync` (the default) it is on disk when this returns. Records
    /// whose loss only means redoing unfinished work (a request not yet answered, a step's
    /// summary) skip the fsync: the next synced record carries them to disk too.
    /// - throws: `RelayError` `.io` naming the journal when the write or the fsync fails: a
    ///   record that may not be on the disk must not be built on.
    func append(_ record: JournalRecord, sync: Bool = true) throws {
        var bytes = Array(try encoder.encode(record))
        bytes.append(0x0A)
        do { try file.append(bytes, sync: durable && sync) } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot write the run journal: \(error.message)", path: path, cause: error)
        }
    }
}

/// Reads a run's journal. A last line without its newline is what a `kill -9` left half
/// written: it is ignored (its step simply runs again).
enum RunJournalReader {
    static func read(_ path: String) throws -> [JournalRecord] {
        let read: [UInt8]?
        do { read = try StateFile.read(path) } catch let error as WorkspaceError {
            throw RelayError(.io, "cannot read the run journal: \(error.message)", path: path, cause: error)
        }
        guard let bytes = read else { return [] }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        var records: [JournalRecord] = []
        var lineNumber = 0
        var start = data.startIndex
        while let newline = data[start...].firstIndex(of: 0x0A) {
            lineNumber += 1
            let line = data[start..<newline]
            start = data.index(after: newline)
            if line.isEmpty { continue }
            do {
                records.append(try decoder.decode(JournalRecord.self, from: line))
            } catch {
                // A torn line followed by a newline from the next writer: skip it, say where.
                if let first = line.first, first != UInt8(ascii: "{") || line.last != UInt8(ascii: "}") { continue }
                throw RelayError(.corruptRun, "\(path):\(lineNumber): not a journal record (\(error))")
            }
        }
        return records
    }
}
