/// One line of a path's history: the engine replaced `replaced` with `installed`.
/// `relay fs history PATH` prints these; `relay fs restore PATH VERSION` takes a `replaced`
/// version back out of the store.
public struct VersionRecord: Codable, Sendable, Equatable {
    /// When the replacement happened, nanoseconds since 1970 (UTC).
    public var timeNanoseconds: Int64
    public var path: String
    /// "write", "update", "restore", or another caller's name for the operation.
    public var operation: String
    /// The version that was displaced, nil when the file was created.
    public var replaced: ContentHash?
    public var replacedSize: Int?
    /// Whether the displaced version is in the object store (false when it was over the size limit).
    public var replacedStored: Bool
    public var installed: ContentHash
    public var installedSize: Int
}
