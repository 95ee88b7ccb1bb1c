// The one file that talks to libinotifytools. Its state is process-wide (one inotify fd, one
// table, one error, one static event buffer), so there is one reader per process and every
// call to it happens on the reader's own thread, after `start` has set up the watches.

import CInotifyTools
import Foundation
import Glibc
import Logging
import WorkspaceCore

/// Watches a workspace tree through libinotifytools and reports `RawEvent`s.
///
/// New and moved-in folders are watched first and listed second (listing first loses files
/// created in the gap); files found by the listing are reported as closed changes. A folder
/// that leaves the tree drops every watch below it. `.relay/` is never watched.
final class InotifyReader: @unchecked Sendable {
    let root: String
    let logger: Logger
    /// Test hook: stall the reader this long when it sees a file named `relay-test-stall`,
    /// so that the kernel queue overflows (RELAY_WATCH_TEST_STALL_MS).
    let stallAfterFirstEvent: Duration?

    // Touched only by the thread that called `start` (before the reader thread starts) and then
    // only by the reader thread.
    private var folders: [Int32: String] = [:]
    private var wds: [String: Int32] = [:]
    private var continuation: AsyncStream<RawEvent>.Continuation?
    private let stopLock = NSLock()
    private var stopRequested = false
    private var thread: Thread?
    private var stalled = false
    private static let instanceLock = NSLock()
    private nonisolated(unsafe) static var instanceActive = false

    init(root: String, logger: Logger, stallAfterFirstEvent: Duration? = nil) {
        self.root = root
        self.logger = logger
        self.stallAfterFirstEvent = stallAfterFirstEvent
    }

    var watchCount: Int { folders.count }

    /// Sets up the watches on the whole tree (so a watch-limit error is thrown here, not lost)
    /// and starts the reader thread.
    func start() throws -> AsyncStream<RawEvent> {
        Self.instanceLock.lock()
        defer { Self.instanceLock.unlock() }
        guard !Self.instanceActive else {
            throw WatcherError(code: .system, message: "only one watcher can run in a process (libinotifytools is process-wide)")
        }
        guard inotifytools_initialize() != 0 else {
            let code = inotifytools_error()
            if code == EMFILE {
                let limits = InotifyLimits.current()
                throw WatcherError(code: .instanceLimit, message: "the kernel's limit on inotify instances is reached (fs.inotify.max_user_instances = \(limits.maxUserInstances.map(String.init) ?? "?")); close other watchers or raise it: sysctl fs.inotify.max_user_instances=\((limits.maxUserInstances ?? 128) * 2)")
            }
            throw WatcherError(code: .system, message: "cannot start inotify: \(String(cString: strerror(code)))", cause: code)
        }
        Self.instanceActive = true
        do {
            _ = try watchTree("", report: false)
        } catch {
            inotifytools_cleanup()
            Self.instanceActive = false
            throw error
        }
        let (stream, continuation) = AsyncStream<RawEvent>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        let thread = Thread { [self] in run() }
        thread.name = "relay.inotify"
        self.thread = thread
        thread.start()
        logger.info("watching", metadata: ["relay.root": "\(root)", "relay.watches": "\(folders.count)"])
        return stream
    }

    /// Asks the thread to stop; it finishes the stream within about a second (at once when a
    /// file in the tree changes, which this provokes).
    func stop() {
        stopLock.withLock { stopRequested = true }
        let wake = root + "/" + WorkspaceLayout.temporaryPrefix + "wake-" + UUID().uuidString
        FileManager.default.createFile(atPath: wake, contents: nil)
        unlink(wake)
    }

    private var shouldStop: Bool { stopLock.withLock { stopRequested } }

    private func run() {
        defer {
            inotifytools_cleanup()
            Self.instanceLock.withLock { Self.instanceActive = false }
            continuation?.finish()
        }
        while !shouldStop {
            guard let event = inotifytools_next_events(1, 1) else {
                let code = inotifytools_error()
                if code != 0 && code != EINTR && code != EAGAIN {
                    logger.error("reading inotify events failed", metadata: ["relay.errno": "\(code)"])
                    return
                }
                continue
            }
            // The event lives in libinotifytools' static buffer: copy what we need now.
            let wd = event.pointee.wd
            let mask = InotifyMask(rawValue: event.pointee.mask)
            let length = Int(event.pointee.len)
            let name: String = length == 0 ? "" : UnsafeRawPointer(event).advanced(by: MemoryLayout<inotify_event>.size)
                .withMemoryRebound(to: CChar.self, capacity: length) { String(cString: $0) }
            handle(wd: wd, mask: mask, name: name)
            if let stall = stallAfterFirstEvent, !stalled, name == "relay-test-stall" {
                stalled = true
                logger.warning("test hook: stalling the inotify reader", metadata: ["relay.stall": "\(stall)"])
                Thread.sleep(forTimeInterval: Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18)
            }
        }
    }

    private func emit(_ event: RawEvent) { continuation?.yield(event) }

    private func handle(wd: Int32, mask: InotifyMask, name: String) {
        if mask.contains(.queueOverflow) {
            logger.warning("the kernel's inotify queue overflowed; rescanning")
            emit(.overflow)
            return
        }
        if mask.contains(.ignored) {
            if let folder = folders.removeValue(forKey: wd) { wds.removeValue(forKey: folder) }
            return
        }
        guard let folder = folders[wd] else { return }  // a folder we already dropped
        if mask.contains(.deleteSelf) || mask.contains(.moveSelf) {
            if folder.isEmpty {
                logger.critical("the workspace folder itself was deleted or moved")
                emit(.removed(path: "", folder: true))
            }
            return
        }
        guard !name.isEmpty else { return }
        let path = folder.isEmpty ? name : folder + "/" + name
        if folder.isEmpty && name == WorkspaceLayout.stateFolderName { return }

        if mask.contains(.isDirectory) {
            if mask.contains(.create) || mask.contains(.movedTo) {
                do { _ = try watchTree(path, report: true) } catch {
                    logger.error("cannot watch a new folder", metadata: ["relay.path": "\(path)", "relay.error": "\(error)"])
                    // Still report what is inside, so a watch limit does not also lose files.
                    emit(.overflow)
                }
            } else if mask.contains(.movedFrom) || mask.contains(.delete) {
                dropTree(path)
                emit(.removed(path: path, folder: true))
            }
            return
        }
        if mask.contains(.movedFrom) || mask.contains(.delete) {
            emit(.removed(path: path, folder: false))
        } else if mask.contains(.closeWrite) || mask.contains(.movedTo) {
            emit(.file(path: path, closed: true))
        } else if mask.contains(.create) || mask.contains(.modify) || mask.contains(.attributes) {
            emit(.file(path: path, closed: false))
        }
    }

    /// Watches `relative` and every folder below it: watch first, then list, so nothing created
    /// in between is missed. With `report`, files found are reported as closed changes.
    /// Returns the number of folders watched.
    @discardableResult
    private func watchTree(_ relative: String, report: Bool) throws -> Int {
        var pending = [relative]
        var count = 0
        while let folder = pending.popLast() {
            let absolute = folder.isEmpty ? root + "/" : root + "/" + folder + "/"
            if wds[folder] == nil {
                let mask = InotifyMask.watched.union([.onlyDirectory, .dontFollow, .excludeUnlinked])
                if inotifytools_watch_file(absolute, Int32(bitPattern: mask.rawValue)) == 0 {
                    let code = inotifytools_error()
                    if code == ENOSPC { throw Self.watchLimitError(watching: folders.count) }
                    if code == ENOENT || code == ENOTDIR { continue }  // gone again already
                    throw WatcherError(code: .system, message: "\(absolute): cannot watch: \(String(cString: strerror(code)))", path: absolute, cause: code)
                }
                let wd = inotifytools_wd_from_filename(absolute)
                if wd < 0 {
                    throw WatcherError(code: .system, message: "\(absolute): watched, but libinotifytools lost its descriptor", path: absolute)
                }
                folders[wd] = folder
                wds[folder] = wd
                count += 1
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: absolute) else { continue }
            for name in names {
                if folder.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
                let child = folder.isEmpty ? name : folder + "/" + name
                var info = stat()
                guard lstat(root + "/" + child, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: pending.append(child)
                case S_IFREG: if report { emit(.file(path: child, closed: true)) }
                default: break
                }
            }
        }
        return count
    }

    /// Stops watching `relative` and every folder below it (it left the tree).
    private func dropTree(_ relative: String) {
        let prefix = relative + "/"
        for (folder, wd) in wds where folder == relative || folder.hasPrefix(prefix) {
            inotifytools_remove_watch_by_wd(wd)
            wds.removeValue(forKey: folder)
            folders.removeValue(forKey: wd)
        }
    }

    static func watchLimitError(watching: Int) -> WatcherError {
        let limits = InotifyLimits.current()
        var message = "the kernel's limit on inotify watches is reached after \(watching) folders"
        message += " (fs.inotify.max_user_watches = \(limits.maxUserWatches.map(String.init) ?? "?")"
        if let namespace = limits.namespaceMaxWatches, namespace != limits.maxUserWatches {
            message += ", user.max_inotify_watches in this user namespace = \(namespace)"
        }
        message += "); raise it, e.g. `sudo sysctl fs.inotify.max_user_watches=\(max(524_288, (limits.maxUserWatches ?? 8192) * 2))`"
        message += " (persist it in /etc/sysctl.d/), or watch a smaller workspace"
        return WatcherError(code: .watchLimit, message: message)
    }
}
