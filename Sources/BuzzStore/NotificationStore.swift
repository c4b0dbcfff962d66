import BirthdayBuzz
import Foundation
import GRDB

/// A desktop notification that offered actions: the event and contact it was
/// about and the channel that showed it (docs/design/asks-and-wishes.md). Kept in the store so a
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
    /// Where its escalation stands; nil for a notification that is not watched
    /// (its channel has no `escalate`: kept for its actions only).
    public var escalation: Escalation?
    /// The reason of the server's `NotificationClosed` (1 expired, 2 dismissed by
    /// the user, 3 closed by a call, 4 undefined); nil while it is shown, as far as we heard.
    public var closedReason: UInt32?

    /// A watched notification's escalation: a reminder the user has not seen goes on to other channels.
    public enum Escalation: String, Sendable {
        /// Neither acted on nor dismissed by the user (yet): escalated at `escalate_after`.
        case watching
        /// The user clicked an action or dismissed it (`NotificationClosed` reason 2), as its server said.
        case acknowledged
        /// Gone on to the escalate channels (ledger rows written).
        case escalated
    }

    public init(id: UInt32, eventID: String, contactID: String, channel: String, shownAt: Int64, server: String? = nil,
                escalation: Escalation? = nil, closedReason: UInt32? = nil) {
        self.id = id
        self.eventID = eventID
        self.contactID = contactID
        self.channel = channel
        self.shownAt = shownAt
        self.server = server
        self.escalation = escalation
        self.closedReason = closedReason
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

    static func registerNotificationEscalation(_ migrator: inout DatabaseMigrator) {
        // Escalation when unseen: a notification is one server's (a restarted
        // server numbers from 1 again, and the old one may still wait for its
        // escalation), so the key is (server, id); `''` stands for "not recorded".
        // `escalation` is NULL (not watched), 'watching', 'acknowledged' or
        // 'escalated'; `closed_reason` is the server's NotificationClosed reason.
        migrator.registerMigration("v7-notification-escalation") { db in
            try db.execute(sql: """
                CREATE TABLE notification_shown (
                    id INTEGER NOT NULL,
                    server TEXT NOT NULL DEFAULT '',
                    event_id TEXT NOT NULL,
                    contact_id TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    shown_at INTEGER NOT NULL,
                    escalation TEXT,
                    closed_reason INTEGER,
                    PRIMARY KEY (server, id)
                );
                INSERT INTO notification_shown (id, server, event_id, contact_id, channel, shown_at)
                    SELECT id, ifnull(server, ''), event_id, contact_id, channel, shown_at FROM notification;
                DROP TABLE notification;
                ALTER TABLE notification_shown RENAME TO notification;
                CREATE INDEX notification_by_id ON notification (id);
                CREATE INDEX notification_watching ON notification (escalation) WHERE escalation = 'watching';
                """)
        }
    }

    private static let shownColumns = "id, event_id, contact_id, channel, shown_at, server, escalation, closed_reason"

    private static func shown(_ row: Row) -> ShownNotification {
        let number: Int64 = row[0]
        let server: String = row[5]
        let escalation: String? = row[6]
        let reason: Int64? = row[7]
        return ShownNotification(id: UInt32(truncatingIfNeeded: number), eventID: row[1], contactID: row[2],
                                 channel: row[3], shownAt: row[4], server: server.isEmpty ? nil : server,
                                 escalation: escalation.flatMap(ShownNotification.Escalation.init(rawValue:)),
                                 closedReason: reason.map { UInt32(truncatingIfNeeded: $0) })
    }

    /// Records a shown notification. A server numbers afresh after it restarts:
    /// the same server and id seen again replace the old entry (another server's
    /// notification with the same id is another entry); entries past the
    /// retention go (`escalate_after` is at most a week, shorter than it).
    public func recordShown(_ notification: ShownNotification) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM notification WHERE shown_at < ?",
                           arguments: [notification.shownAt - Self.shownNotificationRetention])
            try db.execute(sql: """
                INSERT INTO notification (id, server, event_id, contact_id, channel, shown_at, escalation, closed_reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(server, id) DO UPDATE SET event_id = excluded.event_id, contact_id = excluded.contact_id,
                    channel = excluded.channel, shown_at = excluded.shown_at, escalation = excluded.escalation,
                    closed_reason = excluded.closed_reason
                """, arguments: [Int64(notification.id), notification.server ?? "", notification.eventID,
                                 notification.contactID, notification.channel, notification.shownAt,
                                 notification.escalation?.rawValue, notification.closedReason.map { Int64($0) }])
        }
    }

    /// The notification shown with `id`, if it is one of ours and still kept: the
    /// one `server` showed when there is one, else the latest shown with that id
    /// (whose server then tells a forged signal from a real one).
    public func shownNotification(id: UInt32, server: String? = nil) throws -> ShownNotification? {
        try read { db in
            try Row.fetchOne(db, sql: """
                SELECT \(Self.shownColumns) FROM notification WHERE id = ?
                ORDER BY server = ? DESC, shown_at DESC, rowid DESC LIMIT 1
                """, arguments: [Int64(id), server ?? ""]).map(Self.shown)
        }
    }

    /// Forgets a notification the server closed: no action can come for it any more.
    public func forgetShown(id: UInt32) throws {
        try write { db in try db.execute(sql: "DELETE FROM notification WHERE id = ?", arguments: [Int64(id)]) }
    }

    /// The server that showed notification `id` closed it with `reason`. One
    /// that is not watched is forgotten (no action can come for it any more); a
    /// watched one is kept with the reason, acknowledged when the user dismissed
    /// it (reason 2). Any other reason (expired, closed by a call, undefined)
    /// leaves it unseen: it still escalates at its time.
    public func notificationClosed(id: UInt32, server: String, reason: UInt32) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM notification WHERE id = ? AND server = ? AND escalation IS NULL",
                           arguments: [Int64(id), server])
            try db.execute(sql: """
                UPDATE notification SET closed_reason = ?,
                    escalation = CASE WHEN ? = 2 AND escalation = 'watching' THEN 'acknowledged' ELSE escalation END
                WHERE id = ? AND server = ?
                """, arguments: [Int64(reason), Int64(reason), Int64(id), server])
        }
    }

    /// The user acted on notification `id` (an action, as `server` said): a watched one is acknowledged.
    public func notificationActedOn(id: UInt32, server: String) throws {
        try write { db in
            try db.execute(sql: "UPDATE notification SET escalation = 'acknowledged' WHERE id = ? AND server = ? AND escalation = 'watching'",
                           arguments: [Int64(id), server])
        }
    }

    /// Every notification still watched for escalation (neither acknowledged nor escalated), oldest first.
    public func watchedNotifications() throws -> [ShownNotification] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.shownColumns) FROM notification WHERE escalation = 'watching' ORDER BY shown_at, rowid
                """).map(Self.shown)
        }
    }

    /// Notification `id` of `server` has gone on to its escalate channels.
    public func markEscalated(id: UInt32, server: String?) throws {
        try write { db in
            try db.execute(sql: "UPDATE notification SET escalation = 'escalated' WHERE id = ? AND server = ? AND escalation = 'watching'",
                           arguments: [Int64(id), server ?? ""])
        }
    }

    /// Whether a notification shown at `since` or later is kept: `run` then listens from its start.
    public func hasShownNotifications(since: Int64 = .min) throws -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM notification WHERE shown_at >= ?)",
                              arguments: [since]) ?? false
        }
    }
}
