import Foundation
import Synchronization

/// MCP's stdio transport: newline-delimited messages in on one file, out on another.
///
/// Reading blocks, so it happens on a thread of its own and crosses into Swift concurrency as
/// an `AsyncStream` of lines. Writing is serialised by a lock, so the responses of requests
/// handled at the same time, and notifications, never interleave within a line. Nothing but
/// messages goes to `output`: logs go to standard error.
final class LineChannel: Sendable {
    /// A line longer than this is not read whole (a client cannot need it; a broken one could
    /// otherwise make the server hold its whole output): it is skipped and answered with a
    /// parse error.
    static let longestLine = 64 * 1024 * 1024

    enum Incoming: Sendable {
        case line([UInt8])
        case tooLong(Int)
    }

    private let input: FileHandle
    private let output: FileHandle
    private let writing = Mutex<Bool>(true)

    init(input: FileHandle, output: FileHandle) {
        self.input = input
        self.output = output
    }

    /// The lines of `input` until it ends (the client closed it or exited).
    func lines() -> AsyncStream<Incoming> {
        let input = self.input
        return AsyncStream { continuation in
            let thread = Thread {
                var buffer: [UInt8] = []
                var skipping = 0  // bytes of an over-long line dropped so far
                while true {
                    let chunk = input.availableData
                    if chunk.isEmpty { break }
                    var start = chunk.startIndex
                    while let newline = chunk[start...].firstIndex(of: 10) {
                        if skipping > 0 {
                            continuation.yield(.tooLong(skipping + (newline - start)))
                            skipping = 0
                        } else {
                            buffer.append(contentsOf: chunk[start..<newline])
                            if buffer.last == 13 { buffer.removeLast() }  // tolerate CRLF
                            if !buffer.isEmpty { continuation.yield(.line(buffer)) }
                        }
                        buffer.removeAll(keepingCapacity: true)
                        start = newline + 1
                    }
                    if skipping > 0 {
                        skipping += chunk.endIndex - start
                    } else {
                        buffer.append(contentsOf: chunk[start...])
                        if buffer.count > Self.longestLine {
                            skipping = buffer.count
                            buffer = []
                        }
                    }
                }
                if !buffer.isEmpty, skipping == 0 { continuation.yield(.line(buffer)) }
                continuation.finish()
            }
            thread.name = "relay-mcp-stdin"
            thread.start()
        }
    }

    /// Writes one line. A client that went away (EPIPE; SIGPIPE is ignored by the executable)
    /// stops all further output instead of failing every later send.
    func send(_ line: [UInt8]) {
        writing.withLock { open in
            guard open else { return }
            do { try output.write(contentsOf: Data(line)) } catch { open = false }
        }
    }
}
