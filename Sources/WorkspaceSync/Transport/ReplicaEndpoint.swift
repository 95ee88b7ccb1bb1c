import WorkspaceCore

/// One replica as the reconciler sees it, wherever it is: the local workspace, or a
/// `relay sync-serve --stdio` at the end of an ssh connection. Every operation that changes
/// files checks that the file is still what the index says, so a person's edit made during a
/// sync is never overwritten (`SyncError.changed` instead).
public protocol ReplicaEndpoint: AnyObject {
    var replica: String { get }
    /// For messages: the folder, or host:folder.
    var location: String { get }
    /// Brings the index up to date with the disk and returns it.
    func refresh() throws -> [String: SyncIndex.Entry]
    /// `refresh()` as the reconciler reads it: a peer over the protocol may answer with only
    /// what changed over this replica's copy of its index (`EntryMap`).
    func refreshMap() throws -> EntryMap
    /// The content of `path`, whose SHA-256 is `expected` (checked by every endpoint: a file
    /// changed since, or bytes from the wire that are not those, throw `SyncError.changed`).
    func read(_ path: String, expected: String) throws -> [UInt8]
    /// Writes `bytes` if the file's hash is still `expected` (nil: no file), unless `overwrite`;
    /// records the entry with `vector`.
    func install(_ path: String, bytes: [UInt8], expected: String?, overwrite: Bool, vector: VersionVector) throws -> SyncIndex.Entry
    /// Deletes the file if its hash is still `expected`; records a tombstone with `vector`.
    func remove(_ path: String, expected: String, vector: VersionVector) throws -> SyncIndex.Entry
    /// Records an entry without touching the file (joining vectors, noting a tombstone).
    func record(_ entry: SyncIndex.Entry) throws
    func base(peer: String, path: String) throws -> String?
    /// Records that this replica and `peer` both have version `vector` (content `hash`) of
    /// `path`, keeping `content` in the object store when it is given.
    func setBase(peer: String, path: String, hash: String, vector: VersionVector, content: [UInt8]?) throws
    /// The versions of `path` this replica has had in common with any peer.
    func mergeBases(path: String) throws -> [MergeBase]
    /// Every version of `path` this replica has held, most recent first (`SyncIndex.heldVersions`).
    func heldVersions(path: String) throws -> [HeldVersion]
    func loadObject(_ hash: String) throws -> [UInt8]?
    func recordConflict(path: String, copy: String, kept: String, copied: String) throws
    /// Queues a copy that `flush` installs: written if the file's hash is then still `expected`
    /// (nil: no file), recorded with `vector`. Nothing is in place before `flush`. With
    /// `basePeer` (the replica the copy comes from), `flush` also records the installed copy
    /// as this replica's merge base with that peer — what `setBase` would, without a request
    /// of its own. `hash`: the SHA-256 of `bytes` when the caller has it from `read` (which
    /// checked it), so that a folder does not hash them again; an endpoint that takes bytes
    /// from the wire hashes them itself.
    func stage(_ path: String, bytes: [UInt8], hash: String?, expected: String?, vector: VersionVector, basePeer: String?) throws
    /// Queues a deletion that `flush` makes: the file is removed if its hash is then still
    /// `expected`, and a tombstone recorded with `vector`.
    func stageRemoval(_ path: String, expected: String, vector: VersionVector) throws
    /// Installs what was staged, durably, and commits every index write made since the last
    /// flush. Per staged path: its new entry (a tombstone for a removal), or nil when the file
    /// had changed (left alone).
    func flush() throws -> [String: SyncIndex.Entry?]
    /// Whether `flushInBackground` can commit a batch on another thread (a folder on this
    /// machine; not a peer over the protocol, whose server works through its requests in order).
    var flushesInBackground: Bool { get }
    /// Starts installing what was staged so far, durably, on another thread, and returns at
    /// once: the next copies are staged meanwhile into a batch of their own. The batch begun
    /// by the previous call is waited for first, its index rows written and committed (rows
    /// only ever describe files already durable), and its results are returned as `flush`
    /// returns them. `flush` waits for the batch this call began and returns its results with
    /// its own.
    func flushInBackground() throws -> [String: SyncIndex.Entry?]
    /// Starts `flush` where it runs elsewhere — a peer over the protocol gets the request now
    /// and works on it while this side flushes its own — and `flush` then collects the result.
    /// Nothing else may be asked of the endpoint in between.
    func beginFlush() throws
    /// Failures of requests that were sent without waiting for their answer (a peer over a
    /// pipe: `record`, `setBase`, `stage`, …), by path; each is reported once.
    func takeDeferredFailures() throws -> [(path: String, error: SyncError)]
    /// Called once a sync has applied everything: an endpoint that keeps a copy of the peer's
    /// index brings it up to date (the protocol's ack).
    func finish() throws
    /// How the last `refresh` got the peer's index, where it travelled (nil for a folder).
    var indexTransfer: IndexTransfer? { get }
    /// The files the sync will `read`, in the order it will read them, with their sizes: a
    /// peer over the protocol fetches them many to a round trip instead of one.
    func prefetch(_ wanted: [(path: String, expected: String, size: Int)])
    /// The paths the sync will stage or remove on this replica, in order, and the hashes of the
    /// versions it will bring: the endpoint may bring into memory meanwhile what writing them
    /// reads first (their lock files, the object store's entries).
    func expectWrites(_ paths: [String], contents: [String])
    /// The sequence of this replica's index when the last `refresh` read it (every row written
    /// since has a higher one); nil before a refresh or where it is not known.
    var refreshedSequence: Int64? { get }
    /// This replica's record of its last clean sync with `peer` (see `SyncMark`).
    func syncMark(peer: String) throws -> SyncMark?
    /// Records a clean sync with `peer`. Called after everything is applied and committed.
    func setSyncMark(_ mark: SyncMark, peer: String) throws
    /// The peer over the protocol behind this endpoint, if it is one (or wraps one): it
    /// refreshes in its own process, and keeps its copy of the peer's index in this side's.
    var remote: RemoteEndpoint? { get }
    /// This replica's own sync index, when it is in this process.
    var syncIndex: SyncIndex? { get }
    /// Refuses (`SyncError.refused`) a path from the peer that this replica's sandbox would
    /// not let it write: the reconciler checks the peer's new paths with it before anything
    /// else. An endpoint whose sandbox is elsewhere checks nothing here (its writes do).
    func check(_ path: String) throws
    /// Whether the merge bases a refresh finds are stored at once; a dry run turns it off (it
    /// stores nothing). An endpoint that stores none of its own ignores it.
    var storesBasesAtOnce: Bool { get set }
}

extension ReplicaEndpoint {
    public func stage(_ path: String, bytes: [UInt8], expected: String?, vector: VersionVector) throws {
        try stage(path, bytes: bytes, hash: nil, expected: expected, vector: vector, basePeer: nil)
    }

    public func stage(_ path: String, bytes: [UInt8], expected: String?, vector: VersionVector, basePeer: String?) throws {
        try stage(path, bytes: bytes, hash: nil, expected: expected, vector: vector, basePeer: basePeer)
    }
    public func refreshMap() throws -> EntryMap { EntryMap(try refresh()) }
    public func prefetch(_ wanted: [(path: String, expected: String, size: Int)]) {}
    public func expectWrites(_ paths: [String], contents: [String]) {}
    public func beginFlush() throws {}
    public var flushesInBackground: Bool { false }
    public func flushInBackground() throws -> [String: SyncIndex.Entry?] { try flush() }
    public func takeDeferredFailures() throws -> [(path: String, error: SyncError)] { [] }
    public func finish() throws {}
    public var indexTransfer: IndexTransfer? { nil }
    public var refreshedSequence: Int64? { nil }
    public func syncMark(peer: String) throws -> SyncMark? { nil }
    public func setSyncMark(_ mark: SyncMark, peer: String) throws {}
    public var remote: RemoteEndpoint? { nil }
    public var syncIndex: SyncIndex? { nil }
    public func check(_ path: String) throws {}
    public var storesBasesAtOnce: Bool {
        get { true }
        set {}
    }
}

/// How a replica's index reached the client over the protocol.
public struct IndexTransfer: Sendable, Codable, Equatable {
    /// Rows received at refresh: every row when `whole`, else those changed since the last sync.
    public var rows: Int
    /// The whole index travelled (no usable copy here: first sync, another epoch, a sequence
    /// that went backwards, or a copy that did not match the peer's digest).
    public var whole: Bool
    /// Rows received with the ack at the end (those the sync itself wrote there, mostly).
    public var ackRows: Int
    /// Rows of this replica's copy of the peer's index read for the sync: after a clean sync,
    /// only those of the paths it looks at; all of them when it looks at every path.
    public var copyRowsRead = 0

    public init(rows: Int, whole: Bool, ackRows: Int = 0) {
        self.rows = rows
        self.whole = whole
        self.ackRows = ackRows
    }
}
