import BirthdayBuzz
import Foundation
import GRDB
import Testing
@testable import BuzzStore
import BuzzTestKit

@Suite struct LedgerTests {
    static func database() throws -> (BuzzDatabase, String) {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-ledger-" + UUID().uuidString).path
        return (try BuzzDatabase(directory: directory), directory)
    }

    @Test func rowsRoundTripAndUpsert() throws {
        let (database, directory) = try Self.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = SQLiteLedger(database)
        var row = LedgerRow(eventID: "a/1/2027-03-15", channel: "hook", contactID: "a", state: .sending, fireAt: 100, attempts: 1)
        try ledger.save(row, now: 100)
        #expect(try ledger.row(eventID: "a/1/2027-03-15", channel: "hook") == row)
        #expect(try ledger.unfinished() == [row])
        row.state = .retrying
        row.lastError = "hook: HTTP 500"
        row.nextAttemptAt = 130
        try ledger.save(row, now: 101)
        #expect(try ledger.row(eventID: "a/1/2027-03-15", channel: "hook") == row)
        row.state = .sent
        row.sentAt = 131
        row.nextAttemptAt = nil
        row.lastError = nil
        try ledger.save(row, now: 131)
        #expect(try ledger.unfinished().isEmpty)
        #expect(try ledger.rows(in: [.sent]).map(\.eventID) == ["a/1/2027-03-15"])
        #expect(try ledger.row(eventID: "a/1/2027-03-15", channel: "other") == nil)
    }

    @Test func aBatchIsOneTransaction() throws {
        let (database, directory) = try Self.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = SQLiteLedger(database)
        var sent = LedgerRow(eventID: "a/0/2027-03-15", channel: "hook", contactID: "a", state: .sending, fireAt: 100, attempts: 1)
        try ledger.save(sent, now: 100)
        sent.state = .sent
        sent.sentAt = 101
        let next = LedgerRow(eventID: "b/0/2027-03-15", channel: "hook", contactID: "b", state: .sending, fireAt: 100, attempts: 1)
        try ledger.save([sent, next], now: 101)
        #expect(try ledger.row(eventID: "a/0/2027-03-15", channel: "hook") == sent)
        #expect(try ledger.unfinished() == [next])
        // A batch that fails part-way writes nothing (a trigger refuses its second row).
        let pending = LedgerRow(eventID: "c/0/2027-03-15", channel: "hook", contactID: "c", state: .pending, fireAt: 100)
        try database.writeWithoutTransaction { db in
            var trigger = try RawStatement(db, sql: """
                CREATE TEMP TRIGGER refuse BEFORE INSERT ON delivery WHEN NEW.event_id = 'bad'
                BEGIN SELECT RAISE(ABORT, 'refused'); END
                """)
            try trigger.execute()
        }
        let bad = LedgerRow(eventID: "bad", channel: "hook", contactID: "x", state: .pending, fireAt: 100)
        #expect(throws: StoreError.self) { try ledger.save([pending, bad], now: 102) }
        #expect(try ledger.row(eventID: "c/0/2027-03-15", channel: "hook") == nil)
        try ledger.save([pending, next], now: 103)  // the connection is usable again, outside any transaction
        #expect(try ledger.unfinished().map(\.eventID) == ["b/0/2027-03-15", "c/0/2027-03-15"])
    }

    @Test func watermarkPersists() throws {
        let (database, directory) = try Self.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try SQLiteLedger(database).watermark() == nil)
        try SQLiteLedger(database).setWatermark(1_800_000_000)
        let reopened = try BuzzDatabase(directory: directory)
        #expect(try SQLiteLedger(reopened).watermark() == 1_800_000_000)
    }

    @Test func pruneKeepsAYearAndUnfinishedRows() throws {
        let (database, directory) = try Self.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = SQLiteLedger(database)
        let now: Int64 = 2_000_000_000
        let old = now - Dispatcher.retention - 10
        try ledger.save(LedgerRow(eventID: "old/0/2020-01-01", channel: "c", contactID: "old", state: .sent, fireAt: old), now: now)
        try ledger.save(LedgerRow(eventID: "stuck/0/2020-01-01", channel: "c", contactID: "s", state: .retrying, fireAt: old), now: now)
        try ledger.save(LedgerRow(eventID: "new/0/2026-01-01", channel: "c", contactID: "n", state: .sent, fireAt: now - 86_400), now: now)
        #expect(try ledger.prune(firedBefore: now - Dispatcher.retention) == 1)
        #expect(Set(try ledger.rows(in: Set(DeliveryState.allCases)).map(\.eventID)) == ["stuck/0/2020-01-01", "new/0/2026-01-01"])
    }

    @Test func retryPutsFailedRowsBack() throws {
        let (database, directory) = try Self.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = SQLiteLedger(database)
        for id in ["a", "b"] {
            try ledger.save(LedgerRow(eventID: "\(id)/0/2027-03-15", channel: "c", contactID: id, state: .failed, fireAt: 5,
                                      attempts: 8, lastError: "gave up"), now: 10)
        }
        #expect(try ledger.retry(eventIDs: ["a/0/2027-03-15"], now: 20) == 1)
        #expect(try ledger.row(eventID: "a/0/2027-03-15", channel: "c")?.state == .retrying)
        #expect(try ledger.row(eventID: "a/0/2027-03-15", channel: "c")?.attempts == 0)
        #expect(try ledger.retry(eventIDs: nil, now: 20) == 1)
        #expect(try ledger.retry(eventIDs: nil, now: 20) == 0)
    }
}

/// Migration v2 rebuilds the delivery table (its state CHECK as comparisons).
@Suite struct LedgerMigrationTests {
    @Test func v2KeepsEveryRowAndStillRejectsUnknownStates() throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-v2-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/buzz.sqlite"
        do {
            // A data dir as v1 left it, with a row in each state.
            let queue = try DatabaseQueue(path: path)
            try BuzzDatabase.migrator.migrate(queue, upTo: "v1")
            try queue.write { db in
                for (index, state) in ["pending", "sending", "sent", "retrying", "failed", "missed", "skipped"].enumerated() {
                    try db.execute(sql: """
                        INSERT INTO delivery (event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                                              next_attempt_at, sent_at, created_at, updated_at)
                        VALUES (?, 'hook', 'c', 'ask', ?, ?, 2, 'HTTP 500', 7, NULL, 1, 2)
                        """, arguments: ["e\(index)", state, 100 + index])
                }
            }
        }
        let database = try BuzzDatabase(directory: directory)
        let ledger = SQLiteLedger(database)
        let row = try #require(try ledger.row(eventID: "e3", channel: "hook"))
        #expect(row.state == .retrying && row.attempts == 2 && row.fireAt == 103 && row.lastError == "HTTP 500")
        #expect(try ledger.unfinished().map(\.eventID) == ["e0", "e1", "e3"])
        let indexes = try database.writeWithoutTransaction { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'delivery' AND sql IS NOT NULL")
        }
        // No index on state: only (from v8) the partial index of rows that ended missed or failed.
        #expect(indexes == ["delivery_ended"])
        #expect(throws: (any Error).self) {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: """
                    INSERT INTO delivery (event_id, channel, contact_id, state, fire_at, created_at, updated_at)
                    VALUES ('bad', 'hook', 'c', 'bogus', 1, 1, 1)
                    """)
            }
        }
    }

    /// Before v6 an anniversary's reminder was stored as `reminder` and a wish as
    /// `ask`: read back, both had another kind's name. The migration gives each
    /// row its kind, and every kind written now reads back as written.
    @Test func v6GivesEveryRowItsOwnKind() throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-v6-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/buzz.sqlite"
        do {
            let queue = try DatabaseQueue(path: path)
            try BuzzDatabase.migrator.migrate(queue, upTo: "v5-notification-server")
            try queue.write { db in
                for (id, kind) in [("c/1/2027-03-15", "reminder"), ("c/anniversary/0/2027-06-01", "reminder"),
                                   ("c/ask/1", "ask"), ("c/wish/2027-03-15", "ask")] {
                    try db.execute(sql: """
                        INSERT INTO delivery (event_id, channel, contact_id, kind, state, fire_at, attempts, created_at, updated_at)
                        VALUES (?, 'hook', 'c', ?, 'sent', 5, 1, 3, 4)
                        """, arguments: [id, kind])
                }
            }
        }
        let database = try BuzzDatabase(directory: directory)
        let ledger = SQLiteLedger(database)
        #expect(try ledger.row(eventID: "c/1/2027-03-15", channel: "hook")?.kind == .reminder)
        #expect(try ledger.row(eventID: "c/anniversary/0/2027-06-01", channel: "hook")?.kind == .anniversary)
        #expect(try ledger.row(eventID: "c/ask/1", channel: "hook")?.kind == .ask)
        #expect(try ledger.row(eventID: "c/wish/2027-03-15", channel: "hook")?.kind == .wish)
        #expect(try ledger.row(eventID: "c/1/2027-03-15", channel: "hook")?.createdAt == 3)

        for (index, kind) in [Message.Kind.reminder, .anniversary, .ask, .wish, .notice, .digest, .message].enumerated() {
            let row = LedgerRow(eventID: "k\(index)", channel: "hook", contactID: "c", kind: kind, state: .failed, fireAt: 9,
                                via: index.isMultiple(of: 2) ? .fallback(for: ["desktop", "hook"]) : .escalated(from: "desktop"))
            try ledger.save(row, now: 10)
            let back = try #require(try ledger.row(eventID: "k\(index)", channel: "hook"))
            #expect(back == row && back.kind == kind && back.via == row.via && back.createdAt == 10)
            var later = row
            later.state = .sent
            try ledger.save(later, now: 20)
            #expect(try ledger.row(eventID: "k\(index)", channel: "hook")?.createdAt == 10)  // the first write stays
        }
        #expect(try ledger.rows(kind: .notice, firedAfter: 0).map(\.eventID) == ["k4"])
    }

    /// Problems are found through the index of ended rows, and agree with the
    /// in-memory ledger's answer and with the scan of unsent rows.
    @Test func problemsFromTheIndexOfEndedRowsAgreeWithAScan() throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-ended-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try BuzzDatabase(directory: directory)
        let sqlite = SQLiteLedger(database)
        let memory = InMemoryLedger()
        let rows = [
            LedgerRow(eventID: "a/0/2027-03-15", channel: "hook", contactID: "a", state: .missed, fireAt: 100),
            LedgerRow(eventID: "b/0/2027-03-15", channel: "hook", contactID: "b", state: .failed, fireAt: 100, lastError: "hook: 404"),
            LedgerRow(eventID: "b/0/2027-03-15", channel: "mail", contactID: "b", state: .sent, fireAt: 100),
            LedgerRow(eventID: "c/0/2027-03-15", channel: "hook", contactID: "c", state: .failed, fireAt: 100, lastError: "hook: 404"),
            LedgerRow(eventID: "c/0/2027-03-15", channel: "mail", contactID: "c", state: .retrying, fireAt: 100),
            LedgerRow(eventID: "d/anniversary/0/2027-03-15", channel: "hook", contactID: "d", kind: .anniversary, state: .failed,
                      fireAt: 100, lastError: "hook: 410"),
            LedgerRow(eventID: "e/0/2027-03-15", channel: "hook", contactID: "e", state: .missed, fireAt: 5),
            LedgerRow(eventID: "%notice/a/0/2027-03-15", channel: "hook", contactID: "a", kind: .notice, state: .failed, fireAt: 100),
        ]
        for row in rows {
            try sqlite.save(row, now: 1_000)
            try memory.save(row, now: 1_000)
        }
        let fromIndex = try sqlite.problems(firedAfter: 50)
        #expect(fromIndex.map(\.eventID) == ["a/0/2027-03-15", "d/anniversary/0/2027-03-15"])
        #expect(fromIndex.map(\.state) == [.missed, .failed])
        #expect(try memory.problems(firedAfter: 50) == fromIndex)
        #expect(DeliveryProblems.find(in: try sqlite.unsentReminderRows(firedAfter: 50)) == fromIndex)
        let plan = try database.writeWithoutTransaction { db in
            try Row.fetchAll(db, sql: """
                EXPLAIN QUERY PLAN SELECT event_id FROM delivery WHERE fire_at > 0 AND (state = 'missed' OR state = 'failed')
                """).map { "\($0)" }.joined(separator: "\n")
        }
        #expect(plan.contains("delivery_ended"), "\(plan)")
    }
}
