import Foundation
import WorkspaceSync

/// A replica served over the sync protocol by a `SyncServer` on a thread of this process,
/// through a pair of pipes: the frames, the requests and the answers of `relay sync-serve`,
/// without a process in between.
public final class ServedReplica: @unchecked Sendable {
    public let endpoint: RemoteEndpoint
    private let finished = DispatchSemaphore(value: 0)

    public init(_ replica: ScratchWorkspace) throws {
        // As `relay` does (main.swift): a side gone away is an EPIPE to handle, not a death.
        signal(SIGPIPE, SIG_IGN)
        let toServer = Pipe(), fromServer = Pipe()
        // As `relay sync-serve` makes it: walking the tree while the index opens.
        let server = try LocalEndpoint(workspace: replica.workspace, walkAhead: true)
        let input = toServer.fileHandleForReading, output = fromServer.fileHandleForWriting
        let done = finished
        nonisolated(unsafe) let served = server
        Thread.detachNewThread {
            try? SyncServer.serve(served, input: input.fileDescriptor, output: output.fileDescriptor)
            try? output.close()
            done.signal()
        }
        endpoint = try RemoteEndpoint(writingTo: toServer.fileHandleForWriting, readingFrom: fromServer.fileHandleForReading,
                                      location: "pipe:" + replica.root)
    }

    /// Says bye and waits until the server has let go of the replica's index.
    public func close() {
        endpoint.close()
        finished.wait()
    }
}
