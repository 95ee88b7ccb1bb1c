import RelaySQLite

extension SyncError {
    /// Runs `body`; a failure of the sync index's database (SQLite's error, which names the file
    /// and the statement) leaves it as a `SyncError` `.database` holding it as the cause, so
    /// callers handle one error type and need not import RelaySQLite.
    static func wrappingDatabase<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError {
            throw SyncError(.database, error.message, cause: error)
        }
    }
}
