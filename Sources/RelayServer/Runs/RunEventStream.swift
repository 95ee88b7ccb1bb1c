import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RelayEngine
import ServiceLifecycle

/// `GET /runs/ID/events`: the run's event log (``RunEventLog``) as server-sent events, each
/// `id: SEQ` and `data: {event JSON}`, from the line after `Last-Event-ID` (all of it without
/// one), then live as the run goes on.
///
/// The stream owns nothing but its position in the file: a client that reconnects with the last
/// id it saw gets exactly the lines after it, and a finished run replays whole. It ends after
/// an `end` line once no process executes the run; for a run that stopped without one (a
/// daemon killed with SIGKILL), it ends with a synthesised `end` line without an `id:`, giving
/// the run's state. A graceful shutdown ends it too.
struct RunEventStream: Sendable {
    let runID: String
    let after: Int
    let engine: RelayRunner
    let hub: RunHub

    func write(to writer: inout any ResponseBodyWriter) async throws {
        var reader = RunEventLog.Reader(path: engine.store.eventsPath(runID))
        var lastWasEnd = false
        // Tell the client how soon to come back when the connection drops.
        var clientGone = !(await send(ByteBuffer(string: "retry: 1000\n\n"), &writer))
        let shutdown = ShutdownFlag()
        let subscription = RunEventSignal.shared.subscribe(to: runID)
        defer { subscription.cancel() }
        var wakeUps = subscription.stream.makeAsyncIterator()
        await withGracefulShutdownHandler {
            while !clientGone, !shutdown.isSet {
                // Whether someone executes it is asked before reading, so lines written after
                // the answer are read in the next round, never lost.
                let active = hub.isActive(runID) || engine.store.isRunning(runID)
                var batch = ByteBuffer()
                for entry in reader.read() where entry.sequence > after {
                    batch.writeString("id: \(entry.sequence)\ndata: \(entry.json)\n\n")
                    lastWasEnd = entry.isEnd
                }
                if batch.readableBytes > 0, !(await send(batch, &writer)) { clientGone = true; break }
                if !active {
                    if !lastWasEnd { clientGone = !(await send(synthesisedEnd(), &writer)) }
                    break
                }
                guard await wakeUps.next() != nil else { break }
            }
        } onGracefulShutdown: {
            // The client reconnects to the next daemon with its last id.
            shutdown.set()
        }
        if !clientGone { try? await writer.finish(nil) }
    }

    private func send(_ buffer: ByteBuffer, _ writer: inout any ResponseBodyWriter) async -> Bool {
        do { try await writer.write(buffer); return true } catch { return false }
    }

    /// The end of a run whose log has none: how the journal says it stopped.
    private func synthesisedEnd() -> ByteBuffer {
        let state = (try? engine.store.summary(runID).state.rawValue) ?? "interrupted"
        let object: [String: Any] = ["event": "end", "run": runID, "state": state == "done" || state == "skipped" ? "done" : state]
        var buffer = ByteBuffer(string: "data: ")
        buffer.writeBytes(JSONBody.data(object))
        buffer.writeString("\n\n")
        return buffer
    }
}

/// Set once by a graceful shutdown's handler, read by the stream's loop.
private final class ShutdownFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
