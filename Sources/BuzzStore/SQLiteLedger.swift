import BirthdayBuzz
import Foundation
import GRDB

/// The delivery ledger in SQLite: one row per (event, channel). A single `save`
/// is one statement in autocommit mode — its own short transaction; a batch
/// `save` is one transaction. Both go through cached, raw-bound statements.
public final class SQLiteLedger: DeliveryLedger {
    private let database: BuzzDatabase

    public init(_ database: BuzzDatabase) {
        self.database = database
    }

    private static let kinds: [Message.Kind: String] = [.reminder: "reminder", .anniversary: "reminder", .ask: "ask", .message: "reminder",
                                                               // A wish is a message to the contact, as an ask is; its
                                                               // event id (`…/wish/…`) tells them apart (ledgerKind).
                                                               .wish: "ask"]

    public func row(eventID: String, channel: String) throws -> LedgerRow? {
        try database.writeWithoutTransaction { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Self.columns) FROM delivery WHERE event_id = ? AND channel = ?"),
                             arguments: [eventID, channel]).map(Self.decode)
        }
    }

    public func save(_ row: LedgerRow, now: Int64) throws {
        try database.writeWithoutTransaction { db in try Self.upsert(row, now: now, db) }
    }

    /// All of `rows` or none: two rows (the delivery loop's outcome + next claim)
    /// as one two-row statement in autocommit mode, more in one transaction.
    public func save(_ rows: [LedgerRow], now: Int64) throws {
        switch rows.count {
        case 0:
            return
        case 1:
            try save(rows[0], now: now)
        case 2:
            // One statement is atomic by itself: no BEGIN/COMMIT round trips.
            try database.writeWithoutTransaction { db in
                var statement = try RawStatement(db, sql: Self.pairUpsertSQL)
                Self.bind(rows[0], to: &statement)
                Self.bind(rows[1], to: &statement)
                statement.bindAt(21, now)
                try statement.execute()
            }
        default:
            try database.write { db in
                for row in rows { try Self.upsert(row, now: now, db) }
            }
        }
    }

    /// Inserts or updates `rows` rows: parameters ?1–?10 for the first row, ?11–?20
    /// for the second, …, then one more for `now`.
    private static func upsertSQL(rows: Int) -> String {
        let values = (0..<rows).map { row in
            "(" + (1...10).map { "?\(row * 10 + $0)" }.joined(separator: ", ") + ", ?\(rows * 10 + 1), ?\(rows * 10 + 1))"
        }
        return """
            INSERT INTO delivery (event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                                  next_attempt_at, sent_at, created_at, updated_at)
            VALUES \(values.joined(separator: ", "))
            ON CONFLICT(event_id, channel) DO UPDATE SET
                state = excluded.state, attempts = excluded.attempts, last_error = excluded.last_error,
                next_attempt_at = excluded.next_attempt_at, sent_at = excluded.sent_at,
                fire_at = excluded.fire_at, updated_at = excluded.updated_at
            """
    }

    private static let singleUpsertSQL = upsertSQL(rows: 1)
    private static let pairUpsertSQL = upsertSQL(rows: 2)

    private static func upsert(_ row: LedgerRow, now: Int64, _ db: Database) throws {
        var statement = try RawStatement(db, sql: singleUpsertSQL)
        bind(row, to: &statement)
        statement.bindAt(11, now)
        try statement.execute()
    }

    /// The row's ten values, at the statement's next ten positions.
    private static func bind(_ row: LedgerRow, to statement: inout RawStatement) {
        statement.bind(row.eventID)
        statement.bind(row.channel)
        statement.bind(row.contactID)
        statement.bind(Self.kinds[row.kind] ?? "reminder")
        statement.bind(row.state.rawValue)
        statement.bind(row.fireAt)
        statement.bind(row.attempts)
        statement.bind(row.lastError)
        statement.bind(row.nextAttemptAt)
        statement.bind(row.sentAt)
    }

    /// Every channel's row for one event, by channel.
    public func rows(eventID: String) throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM delivery WHERE event_id = ? ORDER BY channel",
                             arguments: [eventID]).map(Self.decode)
        }
    }

    public func keys(firedAfter after: Int64, upTo: Int64) throws -> Set<LedgerKey> {
        try database.read { db in
            var keys: Set<LedgerKey> = []
            let rows = try Row.fetchCursor(db, sql: "SELECT event_id, channel FROM delivery WHERE fire_at > ? AND fire_at <= ?",
                                           arguments: [after, upTo])
            while let row = try rows.next() {
                let event: String = row[0]
                let channel: String = row[1]
                keys.insert(LedgerKey(eventID: event, channel: channel))
            }
            return keys
        }
    }

    public func unfinished() throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery WHERE state IN ('pending', 'sending', 'retrying')
                ORDER BY fire_at, event_id, channel
                """).map(Self.decode)
        }
    }

    public func rows(in states: Set<DeliveryState>) throws -> [LedgerRow] {
        let list = states.map { "'\($0.rawValue)'" }.sorted().joined(separator: ",")
        return try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery WHERE state IN (\(list))
                ORDER BY fire_at DESC, event_id, channel
                """).map(Self.decode)
        }
    }

    public func watermark() throws -> Int64? {
        try database.meta("dispatch_watermark").flatMap { Int64($0) }
    }

    public func setWatermark(_ value: Int64) throws {
        try database.setMeta("dispatch_watermark", String(value))
    }

    public func epoch() throws -> Int64? {
        try database.meta("dispatch_epoch").flatMap { Int64($0) }
    }

    public func setEpoch(_ value: Int64) throws {
        try database.setMeta("dispatch_epoch", String(value))
    }

    @discardableResult
    public func prune(firedBefore cutoff: Int64) throws -> Int {
        try database.write { db in
            try db.execute(sql: "DELETE FROM delivery WHERE fire_at < ? AND state NOT IN ('pending', 'sending', 'retrying')",
                           arguments: [cutoff])
            return db.changesCount
        }
    }

    /// Puts failed rows back to be sent on the next pass (all, or the ids named); returns how many.
    public func retry(eventIDs: [String]?, now: Int64) throws -> Int {
        try database.write { db in
            if let eventIDs {
                var count = 0
                for id in eventIDs {
                    try db.execute(sql: """
                        UPDATE delivery SET state = 'retrying', next_attempt_at = ?, attempts = 0, updated_at = ?
                        WHERE state = 'failed' AND event_id = ?
                        """, arguments: [now, now, id])
                    count += db.changesCount
                }
                return count
            }
            try db.execute(sql: """
                UPDATE delivery SET state = 'retrying', next_attempt_at = ?, attempts = 0, updated_at = ? WHERE state = 'failed'
                """, arguments: [now, now])
            return db.changesCount
        }
    }

    private static let columns = """
        event_id, channel, contact_id, kind, state, fire_at, attempts, last_error, next_attempt_at, sent_at
        """

    private static func decode(_ row: Row) -> LedgerRow {
        let kind: String = row[3]
        return LedgerRow(eventID: row[0], channel: row[1], contactID: row[2], kind: ledgerKind(kind, eventID: row[0]),
                         state: DeliveryState(rawValue: row[4]) ?? .failed, fireAt: row[5], attempts: row[6],
                         lastError: row[7], nextAttemptAt: row[8], sentAt: row[9])
    }
}

/// The kind of a stored row: the `kind` column says reminder or a message to the
/// contact ("ask"); of those, a wish's event id is `<contact>/wish/<date>`.
func ledgerKind(_ column: String, eventID: String) -> Message.Kind {
    guard column == "ask" else { return .reminder }
    return eventID.contains("/wish/") ? .wish : .ask
}

extension BuzzDatabase {
    /// The contacts wished (a sent `…/wish/…` row) between `start` and `end`
    /// (seconds since 1970): who `list` marks as wished today.
    public func wishedContacts(sentFrom start: Int64, to end: Int64) throws -> Set<String> {
        try read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT contact_id FROM delivery
                WHERE kind = 'ask' AND state = 'sent' AND sent_at >= ? AND sent_at < ? AND event_id LIKE '%/wish/%'
                """, arguments: [start, end]))
        }
    }

    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.writeWithoutTransaction(body)
        } catch let error as DatabaseError {
            throw StoreError("\(path): \(error.message ?? "database error \(error.resultCode)")")
        }
    }
}
