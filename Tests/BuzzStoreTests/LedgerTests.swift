import BirthdayBuzz
import Foundation
import Testing
@testable import BuzzStore

@Suite struct LedgerTests {
    static func database() throws -> (BuzzDatabase, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("buzz-ledger-" + UUID().uuidString).path
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
