import BirthdayBuzz
import Foundation
import GRDB

/// What the user keeps about a contact besides include/skip and the birthday
/// (docs/design/occasions.md): a hand-entered or cleared anniversary, the contact's own
/// reminder settings, notes and gift ideas. Kept by contact id in tables of
/// their own, which import never writes, so all of it survives re-import and
/// a contact that leaves a source and comes back.
public struct ContactExtras: Sendable, Equatable {
    /// `set-anniversary`; wins over the card's.
    public var manualAnniversary: Birthday?
    /// `clear-anniversary` on the card's anniversary.
    public var anniversaryCleared = false
    public var settings: ContactSettings?
    /// `set --deceased` (true) / `--no-deceased` (false); nil when not marked by hand.
    public var deceasedMark: Bool?

    public init(manualAnniversary: Birthday? = nil, anniversaryCleared: Bool = false, settings: ContactSettings? = nil,
                deceasedMark: Bool? = nil) {
        self.manualAnniversary = manualAnniversary
        self.anniversaryCleared = anniversaryCleared
        self.settings = settings
        self.deceasedMark = deceasedMark
    }
}

/// A note or a gift idea (`buzz note`, `buzz gift`).
public struct ContactNote: Sendable, Equatable {
    public enum Kind: String, Sendable { case note, gift }
    /// The row id (stable; `show` numbers open gift ideas 1, 2, … instead).
    public var id: Int64
    public var kind: Kind
    public var text: String
    /// Seconds since 1970.
    public var createdAt: Int64
    /// When a gift idea was marked done; nil while open.
    public var doneAt: Int64?
}

extension BuzzDatabase {
    /// The `v3-occasions` schema: tables keyed by contact id, apart from `contact`.
    static func registerOccasions(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v3-occasions") { db in
            try db.execute(sql: """
                CREATE TABLE contact_extra (
                    contact_id TEXT PRIMARY KEY NOT NULL,
                    manual_anniversary TEXT,
                    offsets TEXT,
                    time INTEGER,
                    channels TEXT,
                    updated_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE contact_note (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    contact_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind = 'note' OR kind = 'gift'),
                    text TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    done_at INTEGER
                );
                CREATE INDEX contact_note_contact ON contact_note(contact_id, id);
                """)
        }
    }

    /// The `v9-departed` schema: the card's date of death (`contact.deathdate`: a
    /// date's stored form, or the card's text when it is not a date; NULL when the
    /// card has none — import writes it) and the hand mark (`contact_extra.deceased`:
    /// 1 deceased, 0 living, NULL unmarked — import never writes it).
    static func registerDeparted(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v9-departed") { db in
            try db.execute(sql: """
                ALTER TABLE contact ADD COLUMN deathdate TEXT;
                ALTER TABLE contact_extra ADD COLUMN deceased INTEGER CHECK (deceased IN (0, 1));
                """)
        }
    }

    /// The `v10-occasion-dates` schema: the card's labelled dates (`contact.dates`,
    /// written by import: `ContactColumns.encodeDates`, NULL when none) and the
    /// dates of the other kinds kept by hand (`contact_date`: one row per contact,
    /// kind and label — '' for kinds without labels —, `value` the stored form, or
    /// NULL for "cleared by hand"; import never writes it).
    static func registerOccasionDates(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v10-occasion-dates") { db in
            try db.execute(sql: """
                ALTER TABLE contact ADD COLUMN dates TEXT;
                CREATE TABLE contact_date (
                    contact_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    label TEXT NOT NULL DEFAULT '',
                    value TEXT,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (contact_id, kind, label)
                ) WITHOUT ROWID;
                """)
        }
    }

    /// Every contact's hand-kept dates of the other kinds, by contact id.
    static func handDates(_ db: Database) throws -> [String: [HandDate]] {
        var result: [String: [HandDate]] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT contact_id, kind, label, value FROM contact_date ORDER BY contact_id, kind, label")
        while let row = try rows.next() {
            guard let kind = OccasionKind.named(row[1]) else { continue }
            let label: String = row[2]
            let value: String? = row[3]
            result[row[0], default: []].append(HandDate(kind: kind, label: label.isEmpty ? nil : label,
                                                        date: value.flatMap { Birthday(storedFormWithCalendar: $0) }))
        }
        return result
    }

    /// Keeps a date of `kind` by hand (nil: cleared, "the card's is wrong"); a
    /// labelled date by its label. An undecided contact becomes included, as with
    /// `setManualBirthday`.
    public func setHandDate(_ kind: OccasionKind, label: String?, _ date: Birthday?, for id: String, now: Int64) throws {
        try write { db in
            try db.execute(sql: """
                INSERT INTO contact_date (contact_id, kind, label, value, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(contact_id, kind, label) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """, arguments: [id, kind.name, label ?? "", date?.storedFormWithCalendar, now])
            guard date != nil, !kind.isForTheDeceased else { return }
            try db.execute(sql: """
                UPDATE contact SET decision = COALESCE(decision, 1),
                    included_at = CASE WHEN decision IS NULL THEN ? ELSE included_at END, updated_at = ?
                WHERE id = ?
                """, arguments: [now, now, id])
        }
    }

    /// Forgets a hand-kept date of `kind` (entered or cleared): the card's counts again.
    public func removeHandDate(_ kind: OccasionKind, label: String?, for id: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM contact_date WHERE contact_id = ? AND kind = ? AND label = ?",
                           arguments: [id, kind.name, label ?? ""])
        }
    }

    /// `manual_anniversary` when the user cleared the card's anniversary.
    static let clearedAnniversary = "none"

    /// Every contact's extras, by contact id (usually a handful of rows).
    static func extras(_ db: Database) throws -> [String: ContactExtras] {
        var result: [String: ContactExtras] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT contact_id, manual_anniversary, offsets, time, channels, deceased FROM contact_extra")
        while let row = try rows.next() {
            let manual: String? = row[1]
            var settings = ContactSettings()
            if let offsets: String = row[2] { settings.offsets = offsets.split(separator: ",").compactMap { Int($0) } }
            settings.time = row[3]
            if let channels: String = row[4] { settings.channels = channels.split(separator: "\n").map(String.init) }
            result[row[0]] = ContactExtras(
                manualAnniversary: manual.flatMap { Birthday(storedFormWithCalendar: $0) },
                anniversaryCleared: manual == clearedAnniversary,
                settings: settings.isEmpty ? nil : settings,
                deceasedMark: (row[5] as Int?).map { $0 == 1 })
        }
        return result
    }

    /// Open gift ideas and notes, by contact id, oldest first.
    static func openNotes(_ db: Database) throws -> [String: (gifts: [String], notes: [String])] {
        var result: [String: (gifts: [String], notes: [String])] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT contact_id, kind, text FROM contact_note WHERE done_at IS NULL ORDER BY id")
        while let row = try rows.next() {
            let kind: String = row[1]
            let text: String = row[2]
            if kind == "gift" { result[row[0], default: ([], [])].gifts.append(text) } else {
                result[row[0], default: ([], [])].notes.append(text)
            }
        }
        return result
    }

    /// Puts the extras into full contacts (list, show, resolve).
    static func applyExtras(to contacts: inout [Contact], _ db: Database) throws {
        let extras = try extras(db)
        let hand = try handDates(db)
        if !hand.isEmpty {
            for index in contacts.indices {
                if let dates = hand[contacts[index].id] { contacts[index].handDates = dates }
            }
        }
        guard !extras.isEmpty else { return }
        for index in contacts.indices {
            guard let extra = extras[contacts[index].id] else { continue }
            contacts[index].manualAnniversary = extra.manualAnniversary
            contacts[index].anniversaryCleared = extra.anniversaryCleared
            contacts[index].settings = extra.settings
            contacts[index].deceasedMark = extra.deceasedMark
        }
    }

    /// Contacts with an anniversary (their own or by hand) to be planned
    /// although they have no birthday; the extras of planned contacts.
    static func applyPlanningExtras(to contacts: inout [PlanningContact], _ db: Database) throws {
        let extras = try extras(db)
        let notes = try openNotes(db)
        let hand = try handDates(db)
        guard !extras.isEmpty || !notes.isEmpty || !hand.isEmpty else { return }
        for index in contacts.indices {
            let id = contacts[index].id
            if let dates = hand[id] {
                contacts[index].otherDates = HandDate.resolve(card: contacts[index].otherDates, hand: dates)
            }
            if let extra = extras[id] {
                if let manual = extra.manualAnniversary {
                    contacts[index].anniversary = manual
                } else if extra.anniversaryCleared {
                    contacts[index].anniversary = nil
                }
                contacts[index].settings = extra.settings
            }
            if let kept = notes[id] {
                contacts[index].giftIdeas = kept.gifts
                contacts[index].notes = kept.notes
            }
        }
    }

    /// Sets columns of a contact's `contact_extra` row (made when missing, dropped
    /// when nothing is left in it), and runs `also` in the same transaction.
    private func updateExtra(_ id: String, now: Int64, _ assignment: String, _ arguments: StatementArguments,
                             also: ((Database) throws -> Void)? = nil) throws {
        try write { db in
            try also?(db)
            try db.execute(sql: "INSERT INTO contact_extra (contact_id, updated_at) VALUES (?, ?) ON CONFLICT(contact_id) DO NOTHING",
                           arguments: [id, now])
            try db.execute(sql: "UPDATE contact_extra SET \(assignment), updated_at = ? WHERE contact_id = ?",
                           arguments: arguments + [now, id])
            try db.execute(sql: """
                DELETE FROM contact_extra WHERE contact_id = ? AND manual_anniversary IS NULL AND offsets IS NULL
                    AND time IS NULL AND channels IS NULL AND deceased IS NULL
                """, arguments: [id])
        }
    }

    /// Stores a hand-entered anniversary (nil removes the hand entry, a recorded
    /// "no anniversary" too). An undecided contact becomes included, as with
    /// `setManualBirthday`; a skipped one stays skipped.
    public func setManualAnniversary(_ anniversary: Birthday?, for id: String, now: Int64) throws {
        try updateExtra(id, now: now, "manual_anniversary = ?", [anniversary?.storedFormWithCalendar]) { db in
            guard anniversary != nil else { return }
            try db.execute(sql: """
                UPDATE contact SET decision = COALESCE(decision, 1),
                    included_at = CASE WHEN decision IS NULL THEN ? ELSE included_at END, updated_at = ?
                WHERE id = ?
                """, arguments: [now, now, id])
        }
    }

    /// Records "no anniversary" by hand: the card's is wrong. Kept across re-imports.
    public func clearCardAnniversary(for id: String, now: Int64) throws {
        try updateExtra(id, now: now, "manual_anniversary = ?", [Self.clearedAnniversary])
    }

    /// The contact's own reminder settings; nil (or empty) removes them all (`set --reset`).
    public func setContactSettings(_ settings: ContactSettings?, for id: String, now: Int64) throws {
        let settings = settings ?? ContactSettings()
        try updateExtra(id, now: now, "offsets = ?, time = ?, channels = ?", [
            settings.offsets.map { $0.map(String.init).joined(separator: ",") },
            settings.time,
            settings.channels.map { $0.joined(separator: "\n") },
        ])
    }

    /// Marks a contact deceased (true) or living (false) by hand, or removes the
    /// mark (nil: the card's date of death decides again).
    public func setDeceased(_ mark: Bool?, for id: String, now: Int64) throws {
        try updateExtra(id, now: now, "deceased = ?", [mark.map { $0 ? 1 : 0 }])
    }

    /// Adds a note or a gift idea.
    public func addNote(_ kind: ContactNote.Kind, _ text: String, for id: String, now: Int64) throws {
        try write { db in
            try db.execute(sql: "INSERT INTO contact_note (contact_id, kind, text, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [id, kind.rawValue, text, now])
        }
    }

    /// A contact's notes and gift ideas (done ones too), oldest first.
    public func notes(for id: String) throws -> [ContactNote] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, kind, text, created_at, done_at FROM contact_note WHERE contact_id = ? ORDER BY id
                """, arguments: [id]).map { row in
                ContactNote(id: row[0], kind: ContactNote.Kind(rawValue: row[1]) ?? .note, text: row[2],
                            createdAt: row[3], doneAt: row[4])
            }
        }
    }

    /// Marks a gift idea done (it leaves the open list and the reminders).
    public func markGiftDone(noteID: Int64, now: Int64) throws {
        try write { db in
            try db.execute(sql: "UPDATE contact_note SET done_at = ? WHERE id = ? AND kind = 'gift'", arguments: [now, noteID])
        }
    }
}
