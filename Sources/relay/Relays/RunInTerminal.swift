import Dispatch
import Foundation
import Glibc
import RelayEngine

/// Runs a run with its group chat on the terminal; Ctrl-C or SIGTERM stop it cleanly (the
/// model request is cancelled, nothing half-written stays) and leave it resumable.
enum RunInTerminal {
    static func run(_ engine: RelayRunner, id: String, chat: GroupChat) async throws {
        let task = Task {
            try await engine.execute(id) { chat.show($0) }
        }
        let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer {
            for source in signals { source.cancel() }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
        do {
            try await task.value
        } catch is CancellationError {
            throw CommandFailure(message: "stopped; run \(id) is saved and `relay resume \(id)` continues it", status: 130)
        } catch let error as RelayError where error.code == .model {
            throw CommandFailure(message: "\(error.message)\nrun \(id) is saved: `relay resume \(id)` continues it once the model answers", status: error.isUsageError ? 2 : 1)
        } catch let error as RelayError {
            throw CommandFailure(message: error.message, status: error.isUsageError ? 2 : 1)
        }
    }
}
