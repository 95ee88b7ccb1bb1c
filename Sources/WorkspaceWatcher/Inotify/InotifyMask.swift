/// inotify event bits (linux/inotify.h), as a Swift option set.
public struct InotifyMask: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let modify = InotifyMask(rawValue: 0x0000_0002)
    public static let attributes = InotifyMask(rawValue: 0x0000_0004)
    public static let closeWrite = InotifyMask(rawValue: 0x0000_0008)
    public static let movedFrom = InotifyMask(rawValue: 0x0000_0040)
    public static let movedTo = InotifyMask(rawValue: 0x0000_0080)
    public static let create = InotifyMask(rawValue: 0x0000_0100)
    public static let delete = InotifyMask(rawValue: 0x0000_0200)
    public static let deleteSelf = InotifyMask(rawValue: 0x0000_0400)
    public static let moveSelf = InotifyMask(rawValue: 0x0000_0800)
    public static let queueOverflow = InotifyMask(rawValue: 0x0000_4000)
    public static let ignored = InotifyMask(rawValue: 0x0000_8000)
    public static let onlyDirectory = InotifyMask(rawValue: 0x0100_0000)
    public static let dontFollow = InotifyMask(rawValue: 0x0200_0000)
    public static let excludeUnlinked = InotifyMask(rawValue: 0x0400_0000)
    public static let isDirectory = InotifyMask(rawValue: 0x4000_0000)

    /// What Relay watches. Never OPEN, ACCESS or CLOSE_NOWRITE: the watcher's own reads
    /// (rescans, hashing) would generate events and, with a full queue, loop.
    public static let watched: InotifyMask = [
        .create, .modify, .closeWrite, .movedFrom, .movedTo, .delete, .deleteSelf, .moveSelf, .attributes,
    ]
}
