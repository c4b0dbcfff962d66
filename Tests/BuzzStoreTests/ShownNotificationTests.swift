import BirthdayBuzz
import BuzzTestKit
import Foundation
import GRDB
import Testing
@testable import BuzzStore

/// The notification ids `buzz run` keeps for clicks on actions (docs/design/asks-and-wishes.md).
@Suite struct ShownNotificationTests {
    @Test func keptReplacedForgottenAndPruned() throws {
        let (database, directory) = try LedgerTests.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try !database.hasShownNotifications())
        let day: Int64 = 86_400
        let first = ShownNotification(id: 7, eventID: "ana/0/2027-03-15", contactID: "ana", channel: "desktop", shownAt: 10 * day,
                                      server: ":1.7")
        try database.recordShown(first)
        #expect(try database.shownNotification(id: 7) == first)
        #expect(try database.hasShownNotifications())
        #expect(try database.shownNotification(id: 8) == nil)

        // A restarted server numbers from 1 again: the same id now names another reminder.
        let reused = ShownNotification(id: 7, eventID: "bo/0/2027-03-16", contactID: "bo", channel: "desktop", shownAt: 11 * day)
        try database.recordShown(reused)
        #expect(try database.shownNotification(id: 7) == reused)
        #expect(try database.shownNotification(id: 7)?.server == nil)

        try database.forgetShown(id: 7)
        #expect(try database.shownNotification(id: 7) == nil)

        // Older than the retention: dropped when the next one is recorded.
        try database.recordShown(ShownNotification(id: 1, eventID: "a/0/2027-03-01", contactID: "a", channel: "d", shownAt: day))
        try database.recordShown(ShownNotification(id: 2, eventID: "b/0/2027-03-20", contactID: "b", channel: "d", shownAt: 20 * day))
        #expect(try database.shownNotification(id: 1) == nil)
        #expect(try database.shownNotification(id: 2) != nil)
        #expect(try database.hasShownNotifications(since: 20 * day))
        #expect(try !database.hasShownNotifications(since: 20 * day + 1))
        // Ids are UInt32: the largest one round-trips.
        let large = ShownNotification(id: .max, eventID: "c/0/2027-03-20", contactID: "c", channel: "d", shownAt: 20 * day)
        try database.recordShown(large)
        #expect(try database.shownNotification(id: .max) == large)
    }

    /// Escalation when unseen: a watched notification is one server's, so a
    /// restarted server's id 1 is another entry; a close keeps it with its
    /// reason, and only the user's dismissal (reason 2) or an action acknowledges.
    @Test func watchedNotificationsAreKeptPerServerUntilSeenOrEscalated() throws {
        let (database, directory) = try LedgerTests.database()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func watched(_ id: UInt32, _ server: String, _ event: String) -> ShownNotification {
            ShownNotification(id: id, eventID: event, contactID: "c", channel: "desktop", shownAt: 100, server: server,
                              escalation: .watching)
        }
        try database.recordShown(watched(1, ":1.5", "a/1/2027-05-10"))
        try database.recordShown(watched(1, ":1.9", "a/0/2027-05-10"))  // the restarted server's id 1
        try database.recordShown(watched(2, ":1.9", "b/0/2027-05-10"))
        try database.recordShown(watched(3, ":1.9", "c/0/2027-05-10"))
        try database.recordShown(ShownNotification(id: 4, eventID: "d/0/2027-05-10", contactID: "d", channel: "desktop",
                                                   shownAt: 100, server: ":1.9"))  // actions only, not watched
        #expect(try database.watchedNotifications().map(\.eventID)
                == ["a/1/2027-05-10", "a/0/2027-05-10", "b/0/2027-05-10", "c/0/2027-05-10"])
        #expect(try database.shownNotification(id: 1, server: ":1.5")?.eventID == "a/1/2027-05-10")
        #expect(try database.shownNotification(id: 1, server: ":1.9")?.eventID == "a/0/2027-05-10")

        try database.notificationClosed(id: 1, server: ":1.9", reason: 1)  // expired: not seen
        try database.notificationClosed(id: 2, server: ":1.9", reason: 2)  // dismissed by the user
        try database.notificationClosed(id: 3, server: ":1.7", reason: 2)  // not the server that showed it
        try database.notificationActedOn(id: 3, server: ":1.7")
        try database.notificationClosed(id: 4, server: ":1.9", reason: 2)  // not watched: forgotten
        #expect(try database.shownNotification(id: 1, server: ":1.9")?.closedReason == 1)
        #expect(try database.shownNotification(id: 2, server: ":1.9")?.escalation == .acknowledged)
        #expect(try database.shownNotification(id: 2, server: ":1.9")?.closedReason == 2)
        #expect(try database.shownNotification(id: 4) == nil)
        #expect(try database.watchedNotifications().map(\.eventID) == ["a/1/2027-05-10", "a/0/2027-05-10", "c/0/2027-05-10"])

        try database.notificationActedOn(id: 3, server: ":1.9")
        try database.markEscalated(id: 1, server: ":1.5")
        #expect(try database.shownNotification(id: 3, server: ":1.9")?.escalation == .acknowledged)
        #expect(try database.shownNotification(id: 1, server: ":1.5")?.escalation == .escalated)
        #expect(try database.watchedNotifications().map(\.eventID) == ["a/0/2027-05-10"])
        // Kept in a data dir opened again (a restarted daemon).
        let reopened = try BuzzDatabase(directory: directory)
        #expect(try reopened.watchedNotifications().map(\.eventID) == ["a/0/2027-05-10"])
    }

    /// Notifications kept before v7 (keyed by id alone, maybe without a server) survive its new key.
    @Test func v7KeepsTheNotificationsShownBefore() throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-v7-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let queue = try DatabaseQueue(path: directory + "/buzz.sqlite")
            try BuzzDatabase.migrator.migrate(queue, upTo: "v6-ledger-kinds")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO notification (id, event_id, contact_id, channel, shown_at, server)
                    VALUES (1, 'a/0/2027-05-10', 'a', 'desktop', 50, ':1.4'), (2, 'b/0/2027-05-10', 'b', 'desktop', 60, NULL)
                    """)
            }
        }
        let database = try BuzzDatabase(directory: directory)
        #expect(try database.shownNotification(id: 1)
                == ShownNotification(id: 1, eventID: "a/0/2027-05-10", contactID: "a", channel: "desktop", shownAt: 50, server: ":1.4"))
        #expect(try database.shownNotification(id: 2)?.server == nil)
        #expect(try database.watchedNotifications().isEmpty)
    }
}
