import BirthdayBuzz
import Foundation
import GRDB

/// A desktop notification that offered actions: the event and contact it was
/// about and the channel that showed it (DESIGN §6a). Kept in the store so a
/// click heard by a later daemon (the server keeps the notification across
/// our restarts) still finds its reminder.
public struct ShownNotification: Sendable, Equatable {
    /// The notification server's id.
    public var id: UInt32
    /// The reminder's event id (`<contact>/0/<date>`, or a snoozed `…/snooze/<n>`).
    public var eventID: String
    public var contactID: String
    /// The dbus channel's name.
    public var channel: String
    /// When it was shown, seconds since 1970.
    public var shownAt: Int64
    /// The unique bus name (`:1.42`) of the notification server that answered
    /// `Notify`: a click or close on this notification counts only from it. nil
    /// for a notification kept by a version that did not record it.
    public var server: String?

    public init(id: UInt32, eventID: String, contactID: String, channel: String, shownAt: Int64, server: String? = nil) {
        self.id = id
        self.eventID = eventID
        self.contactID = contactID
        self.channel = channel
        self.shownAt = shownAt
        self.server = server
    }
}

extension BuzzDatabase {
    /// How long a shown notification is kept: a wish is still for a birthday seven
    /// days late (`buzz wish`), and servers forget old notifications long before.
    public static let shownNotificationRetention: Int64 = 8 * 86_400

    static func registerNotifications(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v5-notifications") { db in
            try db.execute(sql: """
                CREATE TABLE notification (
                    id INTEGER PRIMARY KEY,
                    event_id TEXT NOT NULL,
                    contact_id TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    shown_at INTEGER NOT NULL
                );
                """)
        }
        // Which server showed it: signals about a notification count only from
        // that bus name (another process on the bus could send them). Rows kept
        // before have none, and a click on them is ignored.
        migrator.registerMigration("v5-notification-server") { db in
            try db.execute(sql: "ALTER TABLE notification ADD COLUMN server TEXT")
        }
    }

    /// Records a shown notification. A server numbers afresh after it restarts,
    /// so an id seen again replaces the old entry; entries past the retention go.
    public func recordShown(_ notification: ShownNotification) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM notification WHERE shown_at < ?",
                           arguments: [notification.shownAt - Self.shownNotificationRetention])
            try db.execute(sql: """
                INSERT INTO notification (id, event_id, contact_id, channel, shown_at, server) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET event_id = excluded.event_id, contact_id = excluded.contact_id,
                    channel = excluded.channel, shown_at = excluded.shown_at, server = excluded.server
                """, arguments: [Int64(notification.id), notification.eventID, notification.contactID,
                                 notification.channel, notification.shownAt, notification.server])
        }
    }

    /// The notification shown with `id`, if it is one of ours and still kept.
    public func shownNotification(id: UInt32) throws -> ShownNotification? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT id, event_id, contact_id, channel, shown_at, server FROM notification WHERE id = ?",
                             arguments: [Int64(id)]).map { row in
                let number: Int64 = row[0]
                return ShownNotification(id: UInt32(truncatingIfNeeded: number), eventID: row[1], contactID: row[2],
                                         channel: row[3], shownAt: row[4], server: row[5])
            }
        }
    }

    /// Forgets a notification the server closed: no action can come for it any more.
    public func forgetShown(id: UInt32) throws {
        try write { db in try db.execute(sql: "DELETE FROM notification WHERE id = ?", arguments: [Int64(id)]) }
    }

    /// Whether a notification shown at `since` or later is kept: `run` then listens from its start.
    public func hasShownNotifications(since: Int64 = .min) throws -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM notification WHERE shown_at >= ?)",
                              arguments: [since]) ?? false
        }
    }
}
