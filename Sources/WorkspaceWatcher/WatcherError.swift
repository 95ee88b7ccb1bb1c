import RelaySQLite

/// Why watching stopped or could not start, or why the watcher's index and queue
/// (`.relay/watch.sqlite`) could not be read or written.
public struct WatcherError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable { case watchLimit, instanceLimit, rootGone, system, database }
    public var code: Code
    public var message: String
    /// The folder or file the failure is about, when there is one.
    public var path: String?
    /// The system error underneath (`errno`), when there is one.
    public var cause: Int32?
    public var description: String { message }

    public init(code: Code, message: String, path: String? = nil, cause: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
    }
}

extension WatcherError {
    /// Runs `body`, turning an `SQLiteError` from the index or queue into a `.database`
    /// `WatcherError` with the same message (it names the database file and the statement),
    /// so callers of the watcher need not know its storage.
    static func translatingDatabaseErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw WatcherError(code: .database, message: error.message, cause: error.code)
        }
    }
}
