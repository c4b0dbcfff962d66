import BirthdayBuzz
import GRDB

/// The store's side of planning a window (docs/design/reminders.md, "Reading a
/// window"): every date a contact can be planned from is findable by its month
/// and day (`DayKeyRanges`' key), so `upcoming` reads the contacts near its
/// window instead of all of them.
///
/// - the card's birthday and the hand-entered one: `birthdayKey`, indexed since v4;
/// - the card's anniversary and date of death: expression indexes (`anniversaryKey`,
///   `deathKey`; -1 for a date in another calendar);
/// - the card's labelled dates: `contact_day`, one row per date, written by import
///   (-1 for another calendar) and dropped with the contact by a trigger;
/// - dates kept by hand (`contact_extra.manual_anniversary`, `contact_date`): few,
///   always read.
/// A key only has to find a superset: the planner decides on what it reads.
extension BuzzDatabase {
    /// `month * 100 + day` of a stored date (`YYYY-MM-DD`, `--MM-DD`), -1 for one
    /// with a calendar after it (its day moves every year). The queries repeat
    /// it word for word so that SQLite uses the index on it.
    static func storedDateKey(_ column: String) -> String {
        "(CASE WHEN instr(\(column), ' ') > 0 THEN -1 ELSE CAST(substr(\(column), -5, 2) AS INTEGER) * 100 + CAST(substr(\(column), -2, 2) AS INTEGER) END)"
    }

    static let anniversaryKey = storedDateKey("anniversary")
    static let deathKey = storedDateKey("deathdate")
    static let otherCalendarKey = -1

    /// The `v12-planning-window` schema: the two expression indexes and `contact_day`,
    /// filled from the labelled dates already stored.
    static func registerPlanningWindow(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v12-planning-window") { db in
            try db.execute(sql: """
                CREATE INDEX plan_anniversary ON contact(\(anniversaryKey)) WHERE decision = 1 AND anniversary IS NOT NULL;
                CREATE INDEX plan_deathdate ON contact(\(deathKey)) WHERE decision = 1 AND deathdate IS NOT NULL;
                CREATE TABLE contact_day (
                    contact_id TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    PRIMARY KEY (contact_id, day)
                ) WITHOUT ROWID;
                CREATE INDEX contact_day_by_day ON contact_day(day);
                CREATE TRIGGER contact_day_gone AFTER DELETE ON contact BEGIN
                    DELETE FROM contact_day WHERE contact_id = OLD.id;
                END;
                """)
            let rows = try Row.fetchCursor(db, sql: "SELECT id, dates FROM contact WHERE dates IS NOT NULL")
            var days = DayRows()
            while let row = try rows.next() {
                try days.write(db, id: row[0], dates: ContactColumns.decodeDates(row[1]), replacing: false)
            }
        }
    }

    /// The subquery of contact ids with a date keyed in `keys`, or whose dates
    /// have no key. With `deceased`, dates of death count too (memorials).
    static func candidates(within keys: DayKeyRanges, deceased: Bool) -> String {
        var parts: [String] = []
        for range in keys.ranges {
            let between = "BETWEEN \(range.lowerBound) AND \(range.upperBound)"
            parts.append("SELECT id FROM contact WHERE decision = 1 AND \(birthdayKey) \(between)")
            parts.append("SELECT id FROM contact WHERE decision = 1 AND anniversary IS NOT NULL AND \(anniversaryKey) \(between)")
            parts.append("SELECT contact_id FROM contact_day WHERE day \(between)")
            if deceased { parts.append(deathDates(between)) }
        }
        return (parts + keyless(deceased: deceased)).joined(separator: " UNION ALL ")
    }

    /// The included contacts with a date of death keyed `condition` (`BETWEEN …`).
    private static func deathDates(_ condition: String) -> String {
        "SELECT id FROM contact WHERE decision = 1 AND deathdate IS NOT NULL AND \(deathKey) \(condition)"
    }

    /// Card birthdays in another calendar (their own index since v4), and the
    /// other dates without a key: always candidates.
    private static func keyless(deceased: Bool) -> [String] {
        var parts = ["SELECT id FROM contact WHERE decision = 1 AND bday_calendar IS NOT NULL AND manual_bday IS NULL"]
        parts.append("SELECT id FROM contact WHERE decision = 1 AND anniversary IS NOT NULL AND \(anniversaryKey) = \(otherCalendarKey)")
        parts.append("SELECT contact_id FROM contact_day WHERE day = \(otherCalendarKey)")
        if deceased {
            parts.append("SELECT id FROM contact WHERE decision = 1 AND deathdate IS NOT NULL AND \(deathKey) = \(otherCalendarKey)")
        }
        parts.append("SELECT contact_id FROM contact_extra WHERE manual_anniversary IS NOT NULL")
        parts.append("SELECT contact_id FROM contact_date WHERE value IS NOT NULL")
        return parts
    }

    /// One date stream: the contacts with a date of one kind keyed `?`, the
    /// first `?` by id (`window` follows `plannableContacts`' WHERE): the
    /// birthdays (`status_birthday` holds key and id), the anniversaries
    /// (`plan_anniversary`, key and id since v14) and the labelled dates
    /// (`contact_day_by_day` holds day and contact id). Contacts with a
    /// `contact_extra` row are not in the streams (`readWhole`).
    static let dateStreams: [(from: String, window: String)] = [
        ("contact", " AND \(birthdayKey) = ? AND id \(notReadWhole) ORDER BY id LIMIT ?"),
        ("contact", " AND anniversary IS NOT NULL AND \(anniversaryKey) = ? AND id \(notReadWhole) ORDER BY id LIMIT ?"),
        ("contact_day JOIN contact ON contact.id = contact_day.contact_id",
         " AND contact_day.day = ? AND contact_day.contact_id \(notReadWhole) ORDER BY contact_day.contact_id LIMIT ?"),
    ]

    /// Contacts with settings of their own are read whole (`readWhole`), not in the streams.
    private static let notReadWhole = "NOT IN (SELECT contact_id FROM contact_extra)"

    /// Beside the date streams of a window: its dates of death (memorials: few),
    /// the dates without a key, and every contact with settings of its own.
    static func readWhole(within keys: DayKeyRanges, deceased: Bool) -> String {
        var parts: [String] = []
        if deceased {
            for range in keys.ranges { parts.append(deathDates("BETWEEN \(range.lowerBound) AND \(range.upperBound)")) }
        }
        parts.append("SELECT contact_id FROM contact_extra")
        return (parts + keyless(deceased: deceased)).joined(separator: " UNION ALL ")
    }

    /// The `v14-anniversary-by-id` schema: `plan_anniversary` holds the contact id
    /// after the key, so a stream of one key is read in id order from the index.
    static func registerAnniversaryByID(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v14-anniversary-by-id") { db in
            try db.execute(sql: """
                DROP INDEX plan_anniversary;
                CREATE INDEX plan_anniversary ON contact(\(anniversaryKey), id) WHERE decision = 1 AND anniversary IS NOT NULL;
                """)
        }
    }

    /// Whether `planner` has any contact to plan from.
    public func hasPlannableContacts(for planner: Planner) throws -> Bool {
        !(try plannableContacts(for: planner)).isEmpty
    }

    /// The largest offset a contact set for itself (`buzz set --offsets`), 0 when none did.
    public func largestOwnOffset() throws -> Int {
        try read { db in
            var largest = 0
            let rows = try String.fetchCursor(db, sql: "SELECT offsets FROM contact_extra WHERE offsets IS NOT NULL")
            while let offsets = try rows.next() {
                for part in offsets.split(separator: ",") { if let day = Int(part), day > largest { largest = day } }
            }
            return largest
        }
    }
}

/// Writes a contact's `contact_day` rows (the keys of its labelled dates).
struct DayRows {
    private var insert: RawStatement?
    private var delete: RawStatement?

    /// `replacing`: the contact may have rows already (an update), dropped first.
    mutating func write(_ db: Database, id: String, dates: [LabelledDate], replacing: Bool) throws {
        if replacing {
            if delete == nil { delete = try RawStatement(db, sql: "DELETE FROM contact_day WHERE contact_id = ?") }
            delete!.bind(id)
            try delete!.execute()
        }
        guard !dates.isEmpty else { return }
        if insert == nil { insert = try RawStatement(db, sql: "INSERT OR IGNORE INTO contact_day (contact_id, day) VALUES (?, ?)") }
        for dated in dates {
            insert!.bind(id)
            insert!.bind(Int64(DayKeyRanges.key(of: dated.date) ?? BuzzDatabase.otherCalendarKey))
            try insert!.execute()
        }
    }
}
