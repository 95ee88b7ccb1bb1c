import Foundation

/// Reads and hashes files on a thread of its own, ahead of a caller that will read them in a
/// known order: a sync that copies thousands of files reads each source file (open, read,
/// SHA-256) on this thread while its own thread writes the previous ones on the other side.
///
/// A read ahead is exactly `Workspace.readHashed` (the sandbox, the stable snapshot, the hash),
/// made earlier; the caller still checks the hash against what it expects, as it would its
/// own read. Paths the caller skips are dropped, a path it asks for before this thread got
/// there it reads itself (`take` returns nil), and at most `budgetBytes` (or `budgetFiles`
/// files) wait read.
///
/// For example:
/// ```swift
/// let ahead = ReadAhead(workspace, paths: ["a.md", "b.md"])
/// defer { ahead.stop() }
/// let read = try ahead.take("a.md")?.get() ?? workspace.readHashed("a.md")
/// ```
package final class ReadAhead: @unchecked Sendable {
    package typealias Read = Result<(bytes: [UInt8], hash: ContentHash), Error>

    private let workspace: Workspace
    private let paths: [String]
    private let order: [String: Int]
    private let budgetBytes: Int
    private let budgetFiles: Int
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var ready: [Int: Read] = [:]
    private var readyBytes = 0
    /// The next path this thread reads.
    private var next = 0
    /// Paths below this one the caller is past: not kept.
    private var wanted = 0
    private var stopped = false
    private var readSoFar = 0

    /// How many files this thread has read (for tests, which wait for it instead of a clock).
    package var filesRead: Int {
        condition.lock()
        defer { condition.unlock() }
        return readSoFar
    }

    /// Blocks until this thread has read `count` files (or stopped, or has no more to read):
    /// each read is the event, for tests that order the caller after the thread without a clock.
    package func waitForFilesRead(_ count: Int) {
        condition.lock()
        defer { condition.unlock() }
        while readSoFar < min(count, paths.count) && !stopped { condition.wait() }
    }

    /// Starts reading `paths`, in order, at once. Call `stop` when done.
    package init(_ workspace: Workspace, paths: [String], budgetBytes: Int = 8 << 20, budgetFiles: Int = 256) {
        self.workspace = workspace
        self.paths = paths
        var order: [String: Int] = [:]
        order.reserveCapacity(paths.count)
        // A path listed twice is read ahead the first time only.
        for (index, path) in paths.enumerated() where order[path] == nil { order[path] = index }
        self.order = order
        self.budgetBytes = budgetBytes
        self.budgetFiles = budgetFiles
        guard !paths.isEmpty else { return }
        Thread.detachNewThread { [self] in run() }
    }

    /// The read of `path` made ahead, waiting for it if this thread is reading it now; nil when
    /// it is not one of the paths or this thread has not got to it (the caller reads it).
    package func take(_ path: String) -> Read? {
        guard let index = order[path] else { return nil }
        condition.lock()
        defer { condition.unlock() }
        guard index >= wanted, !stopped else { return nil }
        // Whatever the caller skipped goes.
        for skipped in wanted..<index {
            if let read = ready.removeValue(forKey: skipped) { readyBytes -= Self.size(read) }
        }
        if next <= index {
            // Not begun: the caller reads it now, and this thread goes on after it.
            next = index + 1
            wanted = index + 1
            condition.broadcast()
            return nil
        }
        wanted = index
        condition.broadcast()
        while ready[index] == nil && !stopped { condition.wait() }
        wanted = index + 1
        guard let read = ready.removeValue(forKey: index) else { return nil }
        readyBytes -= Self.size(read)
        condition.broadcast()
        return read
    }

    /// Ends the reading (the thread stops after the file it is reading) and drops what waits.
    package func stop() {
        condition.lock()
        stopped = true
        ready = [:]
        readyBytes = 0
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        let folders = ResolvedFolders()
        var sinceForgetting = 0
        while true {
            condition.lock()
            while !stopped && next < paths.count && (readyBytes >= budgetBytes || ready.count >= budgetFiles) {
                condition.wait()
            }
            if stopped || next >= paths.count {
                condition.unlock()
                return
            }
            let index = next
            next += 1
            condition.unlock()

            let read = Read { try workspace.readHashed(paths[index], folders: folders) }
            // The folders are looked at again every so often, as a write batch's are at each commit.
            sinceForgetting += 1
            if sinceForgetting == ResolvedFolders.resolvesPerLook {
                folders.forget()
                sinceForgetting = 0
            }

            condition.lock()
            readSoFar += 1
            if !stopped && index >= wanted {
                ready[index] = read
                readyBytes += Self.size(read)
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    private static func size(_ read: Read) -> Int {
        (try? read.get().bytes.count) ?? 0
    }
}
