// What a sync reports: its summary, and its progress while it runs.

/// What a sync did (or, with a dry run, would do).
public struct SyncSummary: Sendable, Codable, Equatable {
    public var copied = 0
    public var merged = 0
    public var deleted = 0
    public var conflicts = 0
    public var bytes = 0
    /// Paths left for the next sync because somebody changed them while this one ran.
    public var skipped: [String] = []
    /// One line per change, for --dry-run and logs: "copy → peer: notes.md".
    public var actions: [String] = []
    /// Paths the peer sent that the sandbox refuses (`..`, absolute, `.relay/`, links out).
    public var refused: [String] = []
    /// Paths both sides changed that were too large to merge line by line (past
    /// `Options.maximumMergeBytes`, or more edits than a merge takes): both versions are kept,
    /// one in the file and the other in a conflict copy.
    public var tooLargeToMerge: [String] = []
    /// Paths left alone because one side has a file where the other has a folder: the file, and
    /// the other side's files under that folder. A person renames one of them.
    public var clashes: [String] = []
    /// How the peer's index came over the protocol (nil for a folder): rows at refresh,
    /// whether it was the whole index, rows with the closing ack.
    public var peerIndex: IndexTransfer?
    /// Paths this sync looked at. After a clean sync of the same two replicas only those
    /// written on either side since are looked at (see `SyncMark`); the rest are known to be
    /// the same on both.
    public var examined = 0
    /// The peer was a missing or empty folder this sync made a new replica (set by the caller
    /// that started it: `relay sync`).
    public var startedReplica = false
    public init() {}
    public var transferred: Int { copied + merged + deleted }
}

/// How far a sync has come: paths looked at, and files and bytes moved so far.
public struct SyncProgress: Sendable, Equatable {
    public var pathsDone: Int
    public var pathsTotal: Int
    /// Files copied, merged or deleted so far (on either side).
    public var files: Int
    /// Bytes of the files copied and merged so far.
    public var bytes: Int
    public var finished: Bool { pathsDone == pathsTotal }
}
