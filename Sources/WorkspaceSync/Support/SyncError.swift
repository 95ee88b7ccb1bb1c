/// Why a sync stopped before changing anything.
public struct SyncError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
