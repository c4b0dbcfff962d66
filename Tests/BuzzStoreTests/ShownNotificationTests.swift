import BirthdayBuzz
import Foundation
import Testing
@testable import BuzzStore

/// The notification ids `buzz run` keeps for clicks on actions (DESIGN §6a).
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
}
