import GRDB
import GRDBSQLite

/// Binds and steps a cached GRDB statement through SQLite's C API directly.
///
/// For the hot loops only (import, and later the delivery ledger): GRDB's
/// `StatementArguments` boxes every value, which costs more than the insert
/// itself at 100k rows. Values are bound by position, 1-based.
struct RawStatement {
    private let handle: OpaquePointer
    private let db: Database
    private var index: Int32 = 0

    init(_ db: Database, sql: String) throws {
        self.db = db
        handle = try db.cachedStatement(sql: sql).sqliteStatement
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    mutating func bind(_ text: String?) {
        index += 1
        guard let text else { sqlite3_bind_null(handle, index); return }
        _ = text.withCString { sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count), RawStatement.transient) }
    }

    mutating func bind(_ value: Int64?) {
        index += 1
        guard let value else { sqlite3_bind_null(handle, index); return }
        sqlite3_bind_int64(handle, index, value)
    }

    mutating func bind(_ value: Int?) {
        bind(value.map(Int64.init))
    }

    mutating func bind(_ value: Bool) {
        bind(Int64(value ? 1 : 0))
    }

    /// Binds a value to an explicit parameter number (`?1000`), leaving the running position alone.
    func bindAt(_ position: Int32, _ value: Bool) {
        sqlite3_bind_int64(handle, position, value ? 1 : 0)
    }

    func bindAt(_ position: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, position, value) } else { sqlite3_bind_null(handle, position) }
    }

    /// Runs the statement once with the values bound so far, then resets it for reuse.
    mutating func execute() throws {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            index = 0
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))
        }
    }
}
