/// What the inotify thread reports, paths relative to the workspace root.
public enum RawEvent: Sendable, Equatable {
    /// A file changed. `closed` when it was closed after writing or moved in: the moments a
    /// file can be complete. Plain modifications and creations only postpone settling.
    /// `wrote` unless the event cannot have changed the bytes (attributes changed, a close after
    /// writing — the writing itself was its own event): a file that saw only such events holds
    /// what it held, which a baseline row not hashed yet needs to know (a `touch` is no drop).
    case file(path: String, closed: Bool, wrote: Bool = true)
    /// A file or folder left (deleted or moved out); for a folder, everything under it left.
    case removed(path: String, folder: Bool)
    /// A file or folder moved away with no move into the watched tree to pair with: out of the
    /// workspace — or into a folder made a moment before and not watched yet, where it shows
    /// up again as a new file with the same inode and stamp.
    case movedOut(path: String, folder: Bool)
    /// A file or folder renamed inside the workspace (`IN_MOVED_FROM` and `IN_MOVED_TO` paired
    /// by their cookie): the same content under a new path.
    case renamed(from: String, to: String, folder: Bool)
    /// The kernel's queue overflowed: events were lost, rescan.
    case overflow
}
