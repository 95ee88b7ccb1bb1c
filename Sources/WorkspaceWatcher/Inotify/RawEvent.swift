/// What the inotify thread reports, paths relative to the workspace root.
public enum RawEvent: Sendable, Equatable {
    /// A file changed. `closed` when it was closed after writing or moved in: the moments a
    /// file can be complete. Plain modifications and creations only postpone settling.
    case file(path: String, closed: Bool)
    /// A file or folder left (deleted or moved out); for a folder, everything under it left.
    case removed(path: String, folder: Bool)
    /// The kernel's queue overflowed: events were lost, rescan.
    case overflow
}

/// Why watching stopped or could not start.
public struct WatcherError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable { case watchLimit, instanceLimit, rootGone, system }
    public var code: Code
    public var message: String
    public var description: String { message }
}

/// The kernel's inotify limits, read from /proc (libinotifytools' own getter for the queue
/// limit is broken in 3.22).
public struct InotifyLimits: Sendable, Codable, Equatable {
    public var maxUserWatches: Int?
    public var maxUserInstances: Int?
    public var maxQueuedEvents: Int?
    /// The limit of the current user namespace (Linux 5.11+), which may be lower.
    public var namespaceMaxWatches: Int?

    public static func current() -> InotifyLimits {
        func read(_ path: String) -> Int? {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return InotifyLimits(
            maxUserWatches: read("/proc/sys/fs/inotify/max_user_watches"),
            maxUserInstances: read("/proc/sys/fs/inotify/max_user_instances"),
            maxQueuedEvents: read("/proc/sys/fs/inotify/max_queued_events"),
            namespaceMaxWatches: read("/proc/sys/user/max_inotify_watches"))
    }
}

import Foundation
