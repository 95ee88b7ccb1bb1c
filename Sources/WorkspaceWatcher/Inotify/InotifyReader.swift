// The one file that talks to libinotifytools. Its state is process-wide (one inotify fd, one
// table, one error, one static event buffer), so there is one reader per process and every
// call to it happens on one thread at a time: the service's during the start-up walk (which
// adds the watches), then the reader's own, from `startReading` on.

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
///
/// Events go straight to `sink` on the reader's thread (the settler, behind a lock): nothing
/// on this path hashes, touches SQLite or waits for the loop. The thread blocks in the read
/// with no timeout, so an idle workspace costs no wake-ups.
///
/// A rename inside the tree is two events with one cookie, `IN_MOVED_FROM` then `IN_MOVED_TO`
/// (the kernel queues them back to back). A MOVED_FROM is held until the next event: the
/// matching MOVED_TO makes it `.renamed` (a renamed folder keeps its watches, whose paths are
/// rewritten); anything else, or no event within `pairingWindow`, makes it a move out.
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
    private var sink: (@Sendable (RawEvent) -> Void)?
    /// The inotify descriptor libinotifytools opened (found in /proc/self/fd; it has no getter),
    /// polled briefly while a MOVED_FROM waits for its MOVED_TO.
    private var descriptor: Int32 = -1
    /// A MOVED_FROM waiting for its MOVED_TO: its cookie, path, whether a folder, when seen.
    private var heldMove: (cookie: UInt32, path: String, folder: Bool)?
    /// How long a MOVED_FROM waits for its MOVED_TO when the queue is empty.
    static let pairingWindowMilliseconds: Int32 = 2
    private var finished: [CheckedContinuation<Void, Never>] = []
    private var hasFinished = false
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

    /// Opens the process's inotify instance. Then `watchFolder` is called for every folder of
    /// the tree as the start-up walk enters it — before listing it, so a file made meanwhile is
    /// caught by the listing or by the watch — and `startReading` starts the thread. (The walk
    /// and the watches share one listing of each folder; events wait in the kernel's queue until
    /// the thread reads them, and an overflow there is a rescan.) A watch-limit error is thrown
    /// to the caller, not lost on a thread.
    func open() throws {
        try Self.instanceLock.withLock {
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
        }
        descriptor = Self.inotifyDescriptor()
    }

    /// Watches one folder of the tree (`relative`, "" for the root), without listing it: the
    /// start-up walk lists it. Only before `startReading`.
    func watchFolder(_ relative: String) throws {
        precondition(thread == nil, "watchFolder is for the start-up walk, before the reader thread runs")
        if relative == WorkspaceLayout.stateFolderName || relative.hasPrefix(WorkspaceLayout.stateFolderName + "/") { return }
        _ = try addWatch(relative)
    }

    /// Starts the reader thread, which hands every event to `sink`.
    func startReading(sink: @escaping @Sendable (RawEvent) -> Void) {
        self.sink = sink
        let thread = Thread { [self] in run() }
        thread.name = "relay.inotify"
        self.thread = thread
        thread.start()
        logger.info("watching", metadata: ["relay.root": "\(root)", "relay.watches": "\(folders.count)"])
    }

    /// Closes the instance when the start failed before `startReading` (a watch limit, a walk
    /// that could not list the root).
    func abandon() {
        guard thread == nil else { return }
        inotifytools_cleanup()
        Self.instanceLock.withLock { Self.instanceActive = false }
    }

    /// Returns once the reader thread has ended (after `stop`).
    func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = stopLock.withLock {
                if hasFinished { return true }
                finished.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The descriptor of this process's inotify instance (there is one: libinotifytools'), or -1.
    private static func inotifyDescriptor() -> Int32 {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        for name in names {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
               target == "anon_inode:inotify", let fd = Int32(name) { return fd }
        }
        return -1
    }

    /// Asks the thread to stop; it finishes the stream within about a second (at once when a
    /// file in the tree changes, which this provokes).
    func stop() {
        stopLock.withLock { stopRequested = true }
        let wake = root + "/" + WorkspaceLayout.temporaryPrefix + "wake-" + UUID().uuidString
        FileManager.default.createFile(atPath: wake, contents: nil)
        _ = Syscall.unlink(wake)
    }

    private var shouldStop: Bool { stopLock.withLock { stopRequested } }

    private func run() {
        defer {
            inotifytools_cleanup()
            Self.instanceLock.withLock { Self.instanceActive = false }
            let waiting = stopLock.withLock {
                hasFinished = true
                defer { finished = [] }
                return finished
            }
            for continuation in waiting { continuation.resume() }
        }
        while !shouldStop {
            // Block until an event (no timeout: no idle wake-ups), except while a MOVED_FROM
            // waits for its MOVED_TO: then take only what is already there.
            guard let event = inotifytools_next_events(heldMove == nil ? -1 : 0, 1) else {
                let code = inotifytools_error()
                if code != 0 && code != EINTR && code != EAGAIN {
                    logger.error("reading inotify events failed", metadata: ["relay.errno": "\(code)"])
                    return
                }
                if heldMove != nil && !pollBriefly() { flushHeldMove() }
                continue
            }
            // The event lives in libinotifytools' static buffer: copy what we need now.
            let wd = event.pointee.wd
            let mask = InotifyMask(rawValue: event.pointee.mask)
            let cookie = event.pointee.cookie
            let length = Int(event.pointee.len)
            let name: String = length == 0 ? "" : UnsafeRawPointer(event).advanced(by: MemoryLayout<inotify_event>.size)
                .withMemoryRebound(to: CChar.self, capacity: length) { String(cString: $0) }
            handle(wd: wd, mask: mask, cookie: cookie, name: name)
            if let stall = stallAfterFirstEvent, !stalled, name == "relay-test-stall" {
                stalled = true
                logger.warning("test hook: stalling the inotify reader", metadata: ["relay.stall": "\(stall)"])
                Thread.sleep(forTimeInterval: Double(stall.components.seconds) + Double(stall.components.attoseconds) / 1e18)
            }
        }
        flushHeldMove()
    }

    /// Waits at most the pairing window for the inotify descriptor to have something to read.
    private func pollBriefly() -> Bool {
        guard descriptor >= 0 else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Self.pairingWindowMilliseconds) > 0
    }

    /// The held MOVED_FROM had no MOVED_TO: the file or folder left the tree.
    private func flushHeldMove() {
        guard let held = heldMove else { return }
        heldMove = nil
        if held.folder { dropTree(held.path) }
        emit(.movedOut(path: held.path, folder: held.folder))
    }

    private func emit(_ event: RawEvent) { sink?(event) }

    private func handle(wd: Int32, mask: InotifyMask, cookie: UInt32, name: String) {
        // Anything but the MOVED_TO of the held MOVED_FROM: that one moved out.
        if let held = heldMove, !(mask.contains(.movedTo) && cookie == held.cookie) { flushHeldMove() }
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

        if mask.contains(.movedFrom) && cookie != 0 {
            heldMove = (cookie, path, mask.contains(.isDirectory))
            return
        }
        if mask.contains(.movedTo), let held = heldMove, cookie == held.cookie {
            heldMove = nil
            emit(.renamed(from: held.path, to: path, folder: held.folder))
            guard held.folder else { return }
            if wds[held.path] != nil {
                renameTree(from: held.path, to: path)
            } else {
                // A folder made a moment before, renamed before it could be watched: to us it
                // arrives now, like a folder moved in (watched, listed, its files reported).
                do { _ = try watchTree(path, report: true) } catch {
                    logger.error("cannot watch a new folder", metadata: ["relay.path": "\(path)", "relay.error": "\(error)"])
                    emit(.overflow)
                }
            }
            return
        }

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
            emit(.file(path: path, closed: true, wrote: mask.contains(.movedTo) || mask.contains(.modify)))
        } else if mask.contains(.create) || mask.contains(.modify) || mask.contains(.attributes) {
            emit(.file(path: path, closed: false, wrote: mask.contains(.create) || mask.contains(.modify)))
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
                guard try addWatch(folder) else { continue }  // gone again already
                count += 1
            }
            for (name, kind) in Self.entries(of: absolute) {
                if folder.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
                let child = folder.isEmpty ? name : folder + "/" + name
                var mode = kind
                if mode == 0 {
                    // The file system does not say (DT_UNKNOWN): ask.
                    var info = stat()
                    guard lstat(root + "/" + child, &info) == 0 else { continue }
                    mode = info.st_mode & S_IFMT
                }
                switch mode {
                case S_IFDIR: pending.append(child)
                case S_IFREG: if report { emit(.file(path: child, closed: true)) }
                default: break
                }
            }
        }
        return count
    }

    /// Adds the watch of one folder; false when it is gone already.
    private func addWatch(_ folder: String) throws -> Bool {
        let absolute = folder.isEmpty ? root + "/" : root + "/" + folder + "/"
        let mask = InotifyMask.watched.union([.onlyDirectory, .dontFollow, .excludeUnlinked])
        if inotifytools_watch_file(absolute, Int32(bitPattern: mask.rawValue)) == 0 {
            let code = inotifytools_error()
            if code == ENOSPC { throw Self.watchLimitError(watching: folders.count) }
            if code == ENOENT || code == ENOTDIR { return false }
            throw WatcherError(code: .system, message: "\(absolute): cannot watch: \(String(cString: strerror(code)))", path: absolute, cause: code)
        }
        let wd = inotifytools_wd_from_filename(absolute)
        if wd < 0 {
            throw WatcherError(code: .system, message: "\(absolute): watched, but libinotifytools lost its descriptor", path: absolute)
        }
        // The same folder already watched under another path (inotify has one watch per inode:
        // it moved here before its move out was seen): it stands for this path now.
        if let old = folders[wd], old != folder { wds.removeValue(forKey: old) }
        folders[wd] = folder
        wds[folder] = wd
        return true
    }

    /// A folder renamed inside the tree: its watches stay (they follow the inodes); only the
    /// paths they stand for change.
    private func renameTree(from old: String, to new: String) {
        // A folder renamed over an empty folder replaced it: that one's watch is gone.
        if let replaced = wds[new] { folders.removeValue(forKey: replaced); wds.removeValue(forKey: new) }
        let prefix = old + "/"
        for (folder, wd) in wds where folder == old || folder.hasPrefix(prefix) {
            let moved = new + folder.dropFirst(old.count)
            wds.removeValue(forKey: folder)
            wds[moved] = wd
            folders[wd] = moved
        }
    }

    /// The names in a folder with their kind from the directory entry (`d_type`, as S_IFDIR,
    /// S_IFREG, …; 0 when the file system does not say): watching 5,000 folders of 100,000
    /// files needs no lstat per file. The corresponding C functions are `opendir`/`readdir`.
    private static func entries(of folder: String) -> [(name: String, kind: mode_t)] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var result: [(String, mode_t)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            let kind: mode_t
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_DIR): kind = S_IFDIR
            case Int32(DT_REG): kind = S_IFREG
            case Int32(DT_UNKNOWN): kind = 0
            default: kind = S_IFLNK  // links, sockets, devices: neither watched nor reported
            }
            result.append((name, kind))
        }
        return result
    }

    /// Stops watching `relative` and every folder below it (it left the tree).
    private func dropTree(_ relative: String) {
        let prefix = relative + "/"
        for (folder, wd) in wds where folder == relative || folder.hasPrefix(prefix) {
            wds.removeValue(forKey: folder)
            // A watch that stands for another path now (the folder was watched again where it
            // went) stays.
            guard folders[wd] == folder else { continue }
            inotifytools_remove_watch_by_wd(wd)
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
