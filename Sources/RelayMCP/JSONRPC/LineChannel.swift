import Foundation
import Synchronization
import WorkspaceCore

/// MCP's stdio transport: newline-delimited messages in on one file, out on another.
///
/// The reads and writes are WorkspaceCore's `Syscall`s (the one place system calls are made).
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

    private let input: CInt
    private let output: CInt
    private let writing = Mutex<Bool>(true)

    init(input: CInt, output: CInt) {
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
                var block = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    // One read: whatever the client has sent (a line may come in pieces).
                    guard case .success(let count) = Syscall.read(input, into: &block), count > 0 else { break }
                    let chunk = block[0..<count]
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
            if case .failure = line.withUnsafeBytes({ Syscall.writeAll(output, $0) }) { open = false }
        }
    }
}
