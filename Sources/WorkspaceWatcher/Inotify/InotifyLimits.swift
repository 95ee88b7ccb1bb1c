import Foundation

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


extension InotifyLimits {
    /// inotify use by this user's processes right now, counted from /proc/*/fdinfo: each
    /// inotify descriptor is an instance, each "inotify wd:" line in it a watch.
    public struct Usage: Sendable, Codable, Equatable {
        public var instances: Int
        public var watches: Int
    }

    public static func usage() -> Usage {
        var usage = Usage(instances: 0, watches: 0)
        let uid = getuid()
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return usage }
        for pid in pids where pid.allSatisfy(\.isNumber) {
            var info = stat()
            guard stat("/proc/\(pid)", &info) == 0, info.st_uid == uid,
                  let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
            for fd in fds {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                      target == "anon_inode:inotify",
                      let text = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { continue }
                usage.instances += 1
                usage.watches += text.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
            }
        }
        return usage
    }
}
