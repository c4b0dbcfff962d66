import GRDB
import GRDBSQLite

/// Binds and steps a cached GRDB statement through SQLite's C API directly.
///
/// For the hot loops only (import, and the delivery ledger): GRDB's
/// `StatementArguments` boxes every value, which costs more than the insert
/// itself at 100k rows. Values are bound by position, 1-based.
///
/// Text values are bound without a copy (`SQLITE_STATIC`): `bind(_:)` keeps
/// the String, and `execute()` binds its bytes in place only while running
/// the statement, then resets and clears the bindings, so SQLite never holds
/// a pointer past the String's lifetime.
struct RawStatement {
    private let statement: Statement
    private let handle: OpaquePointer
    private var index: Int32 = 0
    /// Texts bound so far (position, value), bound for real in `execute()`.
    private var texts: [(position: Int32, text: String)] = []

    init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        handle = statement.sqliteStatement
    }

    private static let staticText = unsafeBitCast(0, to: sqlite3_destructor_type.self)

    mutating func bind(_ text: String?) {
        index += 1
        guard let text else { sqlite3_bind_null(handle, index); return }
        texts.append((index, text))
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
            texts.removeAll(keepingCapacity: true)
        }
        let code = withTextsBound(from: 0) { sqlite3_step(handle) }
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))
        }
    }

    /// Binds `texts[from...]` in place, each valid for the whole of `body`
    /// (nested `withCString` scopes), then runs `body`.
    private func withTextsBound(from first: Int, _ body: () -> Int32) -> Int32 {
        guard first < texts.count else { return body() }
        let (position, text) = texts[first]
        return text.withCString { pointer in
            _ = sqlite3_bind_text(handle, position, pointer, Int32(text.utf8.count), RawStatement.staticText)
            return withTextsBound(from: first + 1, body)
        }
    }
}
