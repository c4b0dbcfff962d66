import Foundation
import BirthdayBuzz
import GRDB

/// One birthday of the nearest day, for `buzz status` (docs/design/asks-and-wishes.md).
public struct NearestBirthday: Sendable, Equatable {
    public var contactID: String
    public var name: String
    public var occurrence: Occurrence
    public var daysUntil: Int
}

extension BuzzDatabase {
    /// The effective Gregorian month and day of a buzzed contact's birthday as
    /// `month * 100 + day` (the hand-entered one first, "none" = no birthday);
    /// NULL for a card birthday in another calendar (its day moves every year).
    /// `status_birthday` indexes it for included contacts, and the queries below
    /// repeat it word for word so SQLite uses that index.
    static let birthdayKey = """
        (CASE WHEN manual_bday IS NULL THEN (CASE WHEN bday_calendar IS NULL THEN bday_month * 100 + bday_day END) \
        WHEN manual_bday = '\(ContactColumns.clearedBirthday)' THEN NULL \
        ELSE CAST(substr(manual_bday, -5, 2) AS INTEGER) * 100 + CAST(substr(manual_bday, -2, 2) AS INTEGER) END)
        """

    /// The `v13-status-cover` schema: `status_birthday` again, now holding every
    /// column `nearestBirthdays` reads (and `deathdate`, which its deceased test
    /// reads), so that status reads a few index pages, not one table page per
    /// birthday of a busy day (at 100,000 contacts, ~500 pages: half of what a
    /// `status --waybar` process spent was page faults of SQLite's cache). The
    /// window of `upcoming` reads its birthday ids from it the same way.
    static func registerStatusCover(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v13-status-cover") { db in
            try db.execute(sql: """
                DROP INDEX status_birthday;
                CREATE INDEX status_birthday ON contact(\(birthdayKey), id, name, bday_year, manual_bday, deathdate)
                    WHERE decision = 1;
                """)
        }
    }

    static func registerStatusIndex(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v4-status-index") { db in
            try db.execute(sql: """
                CREATE INDEX status_birthday ON contact(\(birthdayKey)) WHERE decision = 1;
                CREATE INDEX status_other_calendar ON contact(bday_calendar)
                    WHERE decision = 1 AND bday_calendar IS NOT NULL AND manual_bday IS NULL;
                """)
        }
    }

    /// The buzzed contacts whose next birthday is the nearest one on or after
    /// `today` (all of them when several share the day), by name. Reads the index
    /// in key order from today's month and day, wrapping at the year's end, and
    /// stops at the first key that cannot be nearer: a handful of rows, not all.
    public func nearestBirthdays(today: LocalDate, feb29: Feb29Policy) throws -> [NearestBirthday] {
        try read { db in
            var best: [NearestBirthday] = []
            var bestDays = Int.max
            func consider(_ id: String, _ name: String, _ birthday: Birthday) {
                let next = birthday.nextOccurrence(onOrAfter: today, feb29: feb29)
                let days = today.days(until: next.date)
                if days < bestDays {
                    bestDays = days
                    best = []
                }
                if days == bestDays { best.append(NearestBirthday(contactID: id, name: name, occurrence: next, daysUntil: days)) }
            }
            // The nearest date a key can fall on: this year's (Feb 29 as Feb 28 in a
            // common year), else next year's. The real occurrence is never earlier.
            func lowerBound(_ key: Int) -> Int {
                let month = key / 100, day = key % 100
                for year in [today.year, today.year + 1] {
                    let fits = month == 2 && day == 29 && !LocalDate.isLeap(year) ? 28 : day
                    if let date = LocalDate(year: year, month: month, day: fits), date >= today { return today.days(until: date) }
                }
                return Int.max
            }
            // Mar 1 of a common year under "mar1" is a Feb 29 birthday's day.
            var startKey = today.month * 100 + today.day
            if startKey == 301, feb29 == .mar1, !LocalDate.isLeap(today.year) { startKey = 229 }
            let columns = "id, name, \(Self.birthdayKey) AS k, bday_year, manual_bday"
            // The comparison spelled out (not put together with Foundation's
            // `replacingOccurrences`, whose NSString bridging cost a bar's `status` ~0.4 ms).
            for (comparison, argument) in [(">=", startKey), ("<", startKey)] {
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT \(columns) FROM contact
                    WHERE decision = 1 AND NOT \(ContactColumns.deceased) AND \(Self.birthdayKey) IS NOT NULL AND \(Self.birthdayKey) \(comparison) ?
                    ORDER BY \(Self.birthdayKey)
                    """, arguments: [argument])
                var stopped = false
                while let row = try rows.next() {
                    let key: Int = row[2]
                    if lowerBound(key) > bestDays {
                        stopped = true
                        break
                    }
                    let birthday: Birthday?
                    if let manual: String = row[4] {
                        birthday = Birthday(storedForm: manual)
                    } else {
                        birthday = Birthday(month: key / 100, day: key % 100, year: row[3])
                    }
                    if let birthday { consider(row[0], row[1], birthday) }
                }
                if stopped { break }
            }
            // Birthdays in other calendars: few, read one by one.
            let others = try Row.fetchCursor(db, sql: """
                SELECT id, name, bday_month, bday_day, bday_year, bday_calendar FROM contact
                WHERE decision = 1 AND bday_calendar IS NOT NULL AND manual_bday IS NULL AND NOT \(ContactColumns.deceased)
                """)
            while let row = try others.next() {
                if let birthday = ContactColumns.cardBirthday(month: row[2], day: row[3], year: row[4], calendar: row[5]) {
                    consider(row[0], row[1], birthday)
                }
            }
            // By name (lowered once, not once per comparison: a busy day has
            // hundreds), then id, compared as UTF-8 bytes: the order of the
            // characters' code points, which is String's order for the composed
            // (NFC) names vCards carry, without its Unicode comparison (~5 % of
            // a `status` at 100,000 contacts).
            return best.map { entry -> ([UInt8], NearestBirthday) in
                var key = Array(entry.name.lowercased().utf8)
                key.append(0)
                key.append(contentsOf: entry.contactID.utf8)
                return (key, entry)
            }
            .sorted { $0.0.lexicographicallyPrecedes($1.0) }
            .map(\.1)
        }
    }
}
