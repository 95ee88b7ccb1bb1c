// The one file that talks to SQLite (the system library, Debian's libsqlite3). A thin,
// synchronous wrapper; the watcher's queue and the sync index each use one connection from
// one actor or thread at a time.

import CSQLite
import Foundation
import Glibc

/// An error from SQLite, with the database file and the statement that failed.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { message }
}

/// A connection to one database file, in WAL mode with a busy timeout, so the daemon and
/// `relay status` can read it at the same time.
public final class SQLiteDatabase {
    private var handle: OpaquePointer?
    public let file: String

    public init(file: String) throws {
        self.file = file
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(file, &handle, flags, nil)
        guard result == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw SQLiteError(code: result, message: "\(file): cannot open the database: \(message)")
        }
        sqlite3_busy_timeout(handle, 10_000)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
        // Statement journals (a statement that fires triggers keeps the pages it changes, to
        // undo it alone) in memory: in a file under /var/tmp they were ten writes per file a
        // first sync indexes. A statement changes a few pages; a transaction is not affected.
        try execute("PRAGMA temp_store = MEMORY")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Leaves the write-ahead log for a later checkpoint when the last connection closes,
    /// instead of copying it into the database and fsyncing both then (SQLite's default). The
    /// log is checkpointed when it grows past SQLite's 1,000 pages, by whichever connection
    /// commits then. Commits stay atomic; with `synchronous = NORMAL` the last ones reach the
    /// disk at that later checkpoint rather than at close, so use this only where losing the
    /// last commits to a power cut is recoverable. The corresponding C call is
    /// `sqlite3_db_config(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE)`.
    public func leaveLogAtClose() throws {
        let result = relay_sqlite3_set_no_checkpoint_on_close(handle, 1)
        guard result == SQLITE_OK else {
            throw SQLiteError(code: result, message: "\(file): cannot leave the log at close: \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    /// Copies what the write-ahead log holds into the database without waiting for readers or
    /// writers (`PRAGMA wal_checkpoint(PASSIVE)`): done where nobody waits for it, it keeps
    /// the log short, so SQLite's own checkpoint (when the log passes 1,000 pages, inside
    /// whichever commit gets there) does not land in the middle of a sync.
    public func checkpoint() throws {
        try execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Copies the whole write-ahead log into the database and truncates the log to nothing
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`), waiting at most `patience` seconds for other
    /// connections' transactions. The next process to open the database then finds no log to
    /// read: the first connection to a database whose log was left (`leaveLogAtClose`) reads
    /// every frame of it to rebuild its index (opening with a 5 MB log took 1.5 ms, with none
    /// 0.3 ms), at the start of the next sync. Returns whether the log was truncated (not when
    /// another connection kept a transaction open past `patience`).
    @discardableResult
    public func checkpointAndTruncate(patience: Double = 0.5) throws -> Bool {
        sqlite3_busy_timeout(handle, Int32(patience * 1000))
        defer { sqlite3_busy_timeout(handle, 10_000) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &statement, nil) == SQLITE_OK else {
            throw SQLiteError(code: sqlite3_errcode(handle), message: "\(file): \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        // One row: busy (1 when it could not finish), log frames, frames checkpointed.
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return sqlite3_column_int(statement, 0) == 0
        case SQLITE_BUSY: return false
        case let code: throw SQLiteError(code: code, message: "\(file): \(String(cString: sqlite3_errmsg(handle))) (in: PRAGMA wal_checkpoint(TRUNCATE))")
        }
    }

    /// Runs statements that return no rows.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "error \(result)"
            sqlite3_free(errorMessage)
            throw SQLiteError(code: result, message: "\(file): \(message) (in: \(sql.prefix(80)))")
        }
    }

    /// Runs `body` in one transaction (BEGIN IMMEDIATE … COMMIT, or ROLLBACK when it throws).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw SQLiteError(code: result, message: "\(file): \(String(cString: sqlite3_errmsg(handle))) (in: \(sql.prefix(80)))")
        }
        return Statement(statement: statement, database: self)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }
    public var lastInsertID: Int64 { sqlite3_last_insert_rowid(handle) }

    fileprivate func failure(_ result: Int32, _ sql: String) -> SQLiteError {
        SQLiteError(code: result, message: "\(file): \(String(cString: sqlite3_errmsg(handle))) (in: \(sql.prefix(80)))")
    }

    /// A prepared statement: bind values, step through rows, reset, run again.
    public final class Statement {
        private let statement: OpaquePointer
        private unowned let database: SQLiteDatabase

        fileprivate init(statement: OpaquePointer, database: SQLiteDatabase) {
            self.statement = statement
            self.database = database
        }

        deinit { sqlite3_finalize(statement) }

        public enum Value {
            case integer(Int64)
            case text(String)
            case real(Double)
            case null
        }

        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        /// Binds the values to ?1, ?2, … after resetting the statement.
        @discardableResult
        public func bind(_ values: [Value]) -> Statement {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .integer(let number): sqlite3_bind_int64(statement, index, number)
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, Self.transient)
                case .real(let number): sqlite3_bind_double(statement, index, number)
                case .null: sqlite3_bind_null(statement, index)
                }
            }
            return self
        }

        /// Runs a statement that returns no rows.
        public func run(_ values: [Value] = []) throws {
            bind(values)
            let result = sqlite3_step(statement)
            guard result == SQLITE_DONE || result == SQLITE_ROW else { throw database.failure(result, String(cString: sqlite3_sql(statement))) }
            sqlite3_reset(statement)
        }

        /// Runs a query and hands each row to `body` (no array of results is built).
        public func forEachRow(_ values: [Value] = [], _ body: (Row) throws -> Void) throws {
            bind(values)
            defer { sqlite3_reset(statement) }
            while true {
                let result = sqlite3_step(statement)
                if result == SQLITE_DONE { break }
                guard result == SQLITE_ROW else { throw database.failure(result, String(cString: sqlite3_sql(statement))) }
                try body(Row(statement: statement))
            }
        }

        /// Runs a query and maps each row.
        public func rows<T>(_ values: [Value] = [], _ map: (Row) throws -> T) throws -> [T] {
            bind(values)
            var results: [T] = []
            while true {
                let result = sqlite3_step(statement)
                if result == SQLITE_DONE { break }
                guard result == SQLITE_ROW else { throw database.failure(result, String(cString: sqlite3_sql(statement))) }
                results.append(try map(Row(statement: statement)))
            }
            sqlite3_reset(statement)
            return results
        }
    }

    /// One row of a result, read by column index.
    public struct Row {
        fileprivate let statement: OpaquePointer

        public func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        public func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
        public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
        public func text(_ column: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, column) else { return "" }
            // The length SQLite knows (no strlen); invalid UTF-8 is repaired, as String(cString:) does.
            return String(decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
        }

        /// The column's text as bytes, valid only inside `body` (no String is made).
        public func withText<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
            guard let pointer = sqlite3_column_text(statement, column) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
            return try body(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column))))
        }
    }
}
