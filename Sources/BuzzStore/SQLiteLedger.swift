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

    /// The `kind` column: each row's kind as written, read back the same.
    /// Every occasion kind's reminders under the kind's `ledgerName` (`reminder` for
    /// birthdays, `anniversary`, `memorial`, …), then the other messages.
    static let kinds: [Message.Kind: String] = Dictionary(uniqueKeysWithValues:
        OccasionKind.all.map { (Message.Kind.reminder(of: $0), $0.ledgerName) }
            + [(.ask, "ask"), (.wish, "wish"), (.notice, "notice"), (.digest, "digest"), (.message, "message")])
    /// The stored names of reminders of every kind, as an SQL list: `'reminder', 'anniversary', …`.
    static let reminderKindsSQL = OccasionKind.all.map { "'\($0.ledgerName)'" }.joined(separator: ", ")
    private static let kindsByName = Dictionary(uniqueKeysWithValues: kinds.map { ($0.value, $0.key) })

    /// A kind's stored name (`reminder` for a birthday's reminder, `anniversary`, `ask`, `wish`, …).
    public static func kindName(_ kind: Message.Kind) -> String { kinds[kind] ?? "message" }

    /// Rows before v6 stored a birthday's and an anniversary's reminder as `reminder`, an
    /// ask and a wish as `ask`: the migration rewrites them (by their ids) to their kinds.
    static func registerLedgerKinds(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v6-ledger-kinds") { db in
            try db.execute(sql: """
                CREATE TABLE delivery_v6 (
                    event_id TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    contact_id TEXT NOT NULL,
                    kind TEXT NOT NULL DEFAULT 'reminder',
                    state TEXT NOT NULL CHECK (state = 'pending' OR state = 'sending' OR state = 'sent'
                        OR state = 'retrying' OR state = 'failed' OR state = 'missed' OR state = 'skipped'),
                    fire_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    next_attempt_at INTEGER,
                    sent_at INTEGER,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    via TEXT,
                    PRIMARY KEY (event_id, channel)
                ) WITHOUT ROWID;
                INSERT INTO delivery_v6 (event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                                         next_attempt_at, sent_at, created_at, updated_at)
                    SELECT event_id, channel, contact_id,
                           CASE WHEN kind = 'ask' AND instr(event_id, '/wish/') > 0 THEN 'wish'
                                WHEN kind = 'reminder' AND instr(event_id, '/anniversary/') > 0 THEN 'anniversary'
                                ELSE kind END,
                           state, fire_at, attempts, last_error, next_attempt_at, sent_at, created_at, updated_at
                    FROM delivery;
                DROP TABLE delivery;
                ALTER TABLE delivery_v6 RENAME TO delivery;
                """)
        }
    }

    /// An index of the rows that ended `missed` or `failed` (few: a sent row is
    /// never in it, so a send writes no more pages than before), by fire time:
    /// `status`, `doctor` and every pass find the problems from it without reading
    /// the whole ledger (50,000 rows cost `status` 5.5 ms as a scan).
    static func registerProblemIndex(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v8-delivery-ended-index") { db in
            try db.execute(sql: """
                CREATE INDEX delivery_ended ON delivery(fire_at) WHERE state = 'missed' OR state = 'failed'
                """)
        }
    }

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
                statement.bindAt(23, now)
                try statement.execute()
            }
        default:
            try database.write { db in
                for row in rows { try Self.upsert(row, now: now, db) }
            }
        }
    }

    /// Inserts or updates `rows` rows: parameters ?1–?11 for the first row, ?12–?22
    /// for the second, …, then one more for `now`. `created_at` stays as first written.
    private static func upsertSQL(rows: Int) -> String {
        let values = (0..<rows).map { row in
            "(" + (1...11).map { "?\(row * 11 + $0)" }.joined(separator: ", ") + ", ?\(rows * 11 + 1), ?\(rows * 11 + 1))"
        }
        return """
            INSERT INTO delivery (event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                                  next_attempt_at, sent_at, via, created_at, updated_at)
            VALUES \(values.joined(separator: ", "))
            ON CONFLICT(event_id, channel) DO UPDATE SET
                state = excluded.state, attempts = excluded.attempts, last_error = excluded.last_error,
                next_attempt_at = excluded.next_attempt_at, sent_at = excluded.sent_at,
                fire_at = excluded.fire_at, via = excluded.via, updated_at = excluded.updated_at
            """
    }

    private static let singleUpsertSQL = upsertSQL(rows: 1)
    private static let pairUpsertSQL = upsertSQL(rows: 2)

    private static func upsert(_ row: LedgerRow, now: Int64, _ db: Database) throws {
        var statement = try RawStatement(db, sql: singleUpsertSQL)
        bind(row, to: &statement)
        statement.bindAt(12, now)
        try statement.execute()
    }

    /// The row's eleven values, at the statement's next eleven positions.
    private static func bind(_ row: LedgerRow, to statement: inout RawStatement) {
        statement.bind(row.eventID)
        statement.bind(row.channel)
        statement.bind(row.contactID)
        statement.bind(Self.kinds[row.kind] ?? "message")
        statement.bind(row.state.rawValue)
        statement.bind(row.fireAt)
        statement.bind(row.attempts)
        statement.bind(row.lastError)
        statement.bind(row.nextAttemptAt)
        statement.bind(row.sentAt)
        statement.bind(row.via?.stored)
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

    public func unsentReminderRows(firedAfter after: Int64) throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery AS d
                WHERE fire_at > ? AND kind IN (\(Self.reminderKindsSQL))
                  AND NOT EXISTS (SELECT 1 FROM delivery AS s WHERE s.event_id = d.event_id AND s.state = 'sent')
                ORDER BY fire_at, event_id, created_at, channel
                """, arguments: [after]).map(Self.decode)
        }
    }

    public func endedReminderRows(firedAfter after: Int64) throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery AS d
                WHERE event_id IN (SELECT event_id FROM delivery
                                   WHERE fire_at > ? AND (state = 'missed' OR state = 'failed')
                                     AND kind IN (\(Self.reminderKindsSQL)))
                  AND NOT EXISTS (SELECT 1 FROM delivery AS s WHERE s.event_id = d.event_id AND s.state = 'sent')
                ORDER BY fire_at, event_id, created_at, channel
                """, arguments: [after]).map(Self.decode)
        }
    }

    public func rows(kind: Message.Kind, firedAfter after: Int64) throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery WHERE fire_at > ? AND kind = ? ORDER BY fire_at, event_id, channel
                """, arguments: [after, Self.kinds[kind] ?? "message"]).map(Self.decode)
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

    public func history(for contactID: String) throws -> [LedgerRow] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM delivery WHERE contact_id = ? ORDER BY fire_at DESC, event_id, channel
                """, arguments: [contactID]).map(Self.decode)
        }
    }

    /// Who `list` marks as wished today.
    public func wishedContacts(sentFrom start: Int64, to end: Int64) throws -> Set<String> {
        try database.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT DISTINCT contact_id FROM delivery
                WHERE kind = 'wish' AND state = 'sent' AND sent_at >= ? AND sent_at < ?
                """, arguments: [start, end]))
        }
    }

    /// The flock on `<data dir>/dispatch.lock` (the database's folder), as `tick`,
    /// `run`, `digest`, `ask` and `wish` have always taken it.
    public func deliveryLock(wait: Int) throws -> (any DeliveryLock)? {
        try DispatchLock.acquire(dataDirectory: database.directory, wait: wait)
    }

    static let columns = """
        event_id, channel, contact_id, kind, state, fire_at, attempts, last_error, next_attempt_at, sent_at, via, created_at
        """

    static func decode(_ row: Row) -> LedgerRow {
        let kind: String = row[3]
        let via: String? = row[10]
        var decoded = LedgerRow(eventID: row[0], channel: row[1], contactID: row[2], kind: kindsByName[kind] ?? .message,
                                state: DeliveryState(rawValue: row[4]) ?? .failed, fireAt: row[5], attempts: row[6],
                                lastError: row[7], nextAttemptAt: row[8], sentAt: row[9], via: via.flatMap(DeliveryVia.init(stored:)))
        decoded.createdAt = row[11]
        return decoded
    }
}

extension BuzzDatabase {
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.writeWithoutTransaction(body)
        } catch let error as DatabaseError {
            throw StoreError("\(path): \(error.message ?? "database error \(error.resultCode)")")
        }
    }
}

extension BuzzDatabase {
    /// This store's delivery ledger, as the abstraction: what code outside the
    /// store (the commands' wiring, tests of other targets) holds.
    public var deliveryLedger: any DeliveryLedger { SQLiteLedger(self) }
}
