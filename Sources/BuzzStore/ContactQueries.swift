import BirthdayBuzz
import Foundation
import GRDB

extension BuzzDatabase {
    /// The write transaction of an import or a sync: decisions old enough are
    /// forgotten first, and SQLite gets the import's page cache for its length
    /// (`ImportSession.cacheKiB`, grown for a large store by
    /// `ImportSession.fitCache`, where the figures are). Other commands keep
    /// the small cache (`BuzzDatabase.cacheSize`).
    private func importTransaction<T>(now: Int64, _ body: (Database) throws -> T) throws -> T {
        try write { db in
            try db.execute(sql: "PRAGMA cache_size = \(ImportSession.cacheKiB)")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(BuzzDatabase.cacheSize)") }
            try BuzzDatabase.forgetOldDecisions(db, now: now)
            return try body(db)
        }
    }

    /// Imports several sources in one transaction: either all of it is written or none.
    ///
    /// `feed` is called once per source with a session to hand entries to.
    /// `labels` names sources as the user gave them (`list --json`'s `"source"`).
    public func importSources(_ sources: [String], labels: [String: String] = [:], prune: Bool, now: Int64,
                              includeByDefault: Bool,
                              feed: (String, ImportSession) throws -> Void) throws -> ImportSummary {
        try importTransaction(now: now) { db in
            for (source, label) in labels {
                try db.execute(sql: """
                    INSERT INTO source_state (id, label) VALUES (?, ?)
                    ON CONFLICT(id) DO UPDATE SET label = excluded.label
                    """, arguments: [source, label])
            }
            var total = ImportSummary()
            var sessions: [ImportSession] = []
            var seenAnywhere: Set<String> = []
            for source in sources {
                let session = try ImportSession(db: db, source: source, now: now, includeByDefault: includeByDefault)
                try feed(source, session)
                try session.finish()
                // Only --prune reads the union; one source's set is taken as is (no copy).
                if prune {
                    if seenAnywhere.isEmpty { seenAnywhere = session.seenIDs } else { seenAnywhere.formUnion(session.seenIDs) }
                }
                sessions.append(session)
            }
            // Prune only once every source is read: a card that moved from one
            // source to another in the same run keeps its contact and decisions.
            for session in sessions {
                if prune { try session.prune(keeping: seenAnywhere) }
                total += session.summary
            }
            // The sets of ids read (100k strings for a large file) are freed on
            // another thread, not on this one in front of the commit. A plain
            // thread, not a Dispatch queue: `buzz run` imports too, and one
            // libdispatch worker would wake it every second from then on.
            let idSets = sessions.map { $0.takeSeenIDs() } + [seenAnywhere]
            seenAnywhere = []
            Thread { withExtendedLifetime(idSets) {} }.start()
            return total
        }
    }

    /// Decisions of removed contacts are kept as long as the ledger keeps its rows (docs/design/reminders.md).
    static let rememberedDecisionLifetime: Int64 = 400 * 86_400

    static func forgetOldDecisions(_ db: Database, now: Int64) throws {
        try db.execute(sql: "DELETE FROM remembered_decision WHERE removed_at < ?",
                       arguments: [now - rememberedDecisionLifetime])
    }

    /// Brings one configured source up to date in its own transaction: `feed`
    /// hands the cards it read to the session and says how completely it read
    /// the source. A complete read prunes the contacts gone from it; an
    /// incomplete one prunes nothing; a list of changes removes the ids it
    /// names. A `feed` that throws writes nothing.
    public func syncSource(_ id: String, label: String, now: Int64, includeByDefault: Bool,
                           feed: (ImportSession) throws -> SourceOutcome) throws -> ImportSummary {
        try importTransaction(now: now) { db in
            let session = try ImportSession(db: db, source: id, now: now, includeByDefault: includeByDefault)
            let outcome = try feed(session)
            try session.finish()
            switch outcome.coverage {
            case .complete: try session.prune(keeping: session.seenIDs)
            case .incomplete: session.withholdPrune()
            case .changes(let removed):
                try session.remove(ids: removed)
                // What the source did not hand over is as it was: counted, as a full read would.
                try session.countUntouched()
            }
            try db.execute(sql: """
                INSERT INTO source_state (id, label, fingerprint, state, synced_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET label = excluded.label, fingerprint = excluded.fingerprint,
                    state = excluded.state, synced_at = excluded.synced_at
                """, arguments: [id, label, outcome.fingerprint, outcome.state, now])
            let summary = session.summary
            let ids = session.takeSeenIDs()
            Thread { withExtendedLifetime(ids) {} }.start()  // not Dispatch: see `import` above
            return summary
        }
    }

    /// What the store knows of a source since its last sync; nil before the first.
    /// Without `withState`, the type's own state (a CardDAV source's: a line per
    /// card) is left unread: what deciding whether to sync needs.
    public func sourceState(_ id: String, withState: Bool = true) throws -> SourceState? {
        try read { db in
            let state = withState ? "state" : "NULL"
            guard let row = try Row.fetchOne(db, sql: "SELECT label, fingerprint, \(state), synced_at FROM source_state WHERE id = ?",
                                             arguments: [id]) else { return nil }
            return SourceState(label: row[0], fingerprint: row[1], state: row[2], syncedAt: row[3])
        }
    }

    /// Every contact, ordered by id.
    public func allContacts() throws -> [Contact] {
        try read { db in
            var contacts: [Contact] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT \(ContactColumns.list) FROM contact ORDER BY id")
            while let row = try rows.next() { contacts.append(ContactColumns.contact(row)) }
            try Self.applyExtras(to: &contacts, db)
            return contacts
        }
    }

    /// What `planner` plans from: `plannableContacts` with the deceased when it
    /// plans memorials, and every included contact when a kind needs no date on
    /// the card (name days).
    public func plannableContacts(for planner: Planner) throws -> [PlanningContact] {
        try plannableContacts(deceased: planner.concernsTheDeceased, undated: planner.concernsEveryContact)
    }

    /// `plannableContacts(for:)` narrowed to the contacts with a date keyed in
    /// `keys` (and those whose dates have no key: other calendars, dates kept
    /// by hand); every one for nil.
    public func plannableContacts(for planner: Planner, within keys: DayKeyRanges?) throws -> [PlanningContact] {
        try plannableContacts(deceased: planner.concernsTheDeceased, undated: planner.concernsEveryContact, within: keys)
    }

    /// What `Planner.upcoming(now:…reading:)` reads: `plannableContacts(for:within:)`,
    /// and with `perKey`, of each date stream (the contacts whose birthday,
    /// anniversary or labelled date has one key) only the first `perKey` by id,
    /// in byte order, with the streams that had more. Contacts with settings of
    /// their own (`contact_extra`: offsets, time, a hand anniversary, a deceased
    /// mark) are left out of the streams and read whole, as are dates of death
    /// and the dates without a key (docs/design/reminders.md, "Reading a window").
    public func plannableContacts(for planner: Planner, within keys: DayKeyRanges?, perKey: Int?) throws -> WindowRead {
        let deceased = planner.concernsTheDeceased, undated = planner.concernsEveryContact
        guard let keys, let perKey, !undated else {
            return WindowRead(contacts: try plannableContacts(deceased: deceased, undated: undated, within: keys))
        }
        return try read { db in
            // Each stream reads the planning columns of its contacts itself (one
            // table row each: SQLite 3.40 does not cover an expression index),
            // with one statement per stream, prepared once and bound per key.
            let query = try PlanningQuery(db, deceased: deceased, undated: false)
            let streams = try Self.dateStreams.map { try db.makeStatement(sql: query.sql(from: $0.from, window: $0.window)) }
            var contacts: [PlanningContact] = []
            var cut: [CutStream] = []
            var seen: Set<String> = []
            for key in keys.keys {
                for stream in streams {
                    let found = try Self.plannableContacts(stream, arguments: [key, perKey], deceased: deceased)
                    if found.count == perKey, let last = found.last { cut.append(CutStream(key: key, lastID: last.id)) }
                    for contact in found where seen.insert(contact.id).inserted { contacts.append(contact) }
                }
            }
            let whole = try Self.plannableContacts(
                db.makeStatement(sql: query.sql(from: "contact", window: " AND id IN (\(Self.readWhole(within: keys, deceased: deceased)))")),
                arguments: [], deceased: deceased)
            for contact in whole where seen.insert(contact.id).inserted { contacts.append(contact) }
            try Self.applyPlanningExtras(to: &contacts, db)
            return WindowRead(contacts: contacts, cut: cut)
        }
    }

    /// What planning needs, and only that: included contacts with a date of some
    /// kind (a birthday, an anniversary, a labelled date; with `undated`, every
    /// included contact), with id, name, dates, categories and decision (no phones
    /// or emails), and their own settings, notes and gift ideas. The deceased are
    /// left out unless `deceased` (memorials), and then marked `isDeceased`.
    public func plannableContacts(deceased: Bool = false, undated: Bool = false, within keys: DayKeyRanges? = nil) throws -> [PlanningContact] {
        try read { db in
            // `undated` plans every contact: keys cannot narrow it.
            let window = keys.map { undated ? "" : " AND id IN (\(Self.candidates(within: $0, deceased: deceased)))" } ?? ""
            let query = try PlanningQuery(db, deceased: deceased, undated: undated)
            var contacts = try Self.plannableContacts(db.makeStatement(sql: query.sql(from: "contact", window: window)),
                                                      arguments: [], deceased: deceased)
            try Self.applyPlanningExtras(to: &contacts, db)
            return contacts
        }
    }

    /// The planning columns of the contacts `statement` (a `PlanningQuery`) finds.
    private static func plannableContacts(_ statement: Statement, arguments: StatementArguments,
                                          deceased: Bool) throws -> [PlanningContact] {
        var contacts: [PlanningContact] = []
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            var birthday: Birthday?
            if let manual: String = row[7] {
                birthday = Birthday(storedForm: manual)
            } else {
                birthday = ContactColumns.cardBirthday(month: row[2], day: row[3], year: row[4], calendar: row[5])
            }
            let categories: String = row[6]
            contacts.append(PlanningContact(
                id: row[0], name: row[1], firstName: row[9], birthday: birthday,
                categories: categories.isEmpty ? [] : categories.split(separator: "\n").map(String.init),
                includedAt: row[8], anniversary: Self.anniversary(row, 10)))
            if let dates: String = row[11] {
                contacts[contacts.count - 1].otherDates = ContactColumns.decodeDates(dates).map {
                    OccasionDate(kind: .labelledDate, label: $0.label, date: $0.date)
                }
            }
            if deceased, row[14] as Bool {
                contacts[contacts.count - 1].isDeceased = true
                if let death: String = row[13], let date = Birthday(storedFormWithCalendar: death) {
                    contacts[contacts.count - 1].otherDates.insert(OccasionDate(kind: .memorial, date: date), at: 0)
                }
            }
            if !row.hasNull(atIndex: 12) {
                contacts[contacts.count - 1].timeZone = (row[12] as String?).flatMap(ContactTimeZone.init(stored:))
            }
        }
        return contacts
    }

    /// The stored anniversary in column `index`, parsed from its bytes (a date is
    /// a small string: reading it allocates nothing).
    private static func anniversary(_ row: Row, _ index: Int) -> Birthday? {
        if row.hasNull(atIndex: index) { return nil }
        guard var text = row[index] as String? else { return nil }
        return text.withUTF8 { Birthday(storedFormBytes: UnsafeRawBufferPointer($0)) }
    }

    /// How many contacts have no birthday and are neither skipped nor deceased
    /// (whom `list --missing` lists): a digest's `missing_count`, one count
    /// instead of reading every contact.
    public func missingBirthdayCount() throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM contact
                WHERE NOT ((bday_month IS NOT NULL OR manual_bday IS NOT NULL)
                           AND manual_bday IS NOT '\(ContactColumns.clearedBirthday)')
                  AND decision IS NOT \(Decision.skip.rawValue) AND NOT \(ContactColumns.deceased)
                """) ?? 0
        }
    }

    /// The names of the contacts with these ids (those that exist).
    public func contactNames(ids: [String]) throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try read { db in
            let statement = try db.cachedStatement(sql: "SELECT name FROM contact WHERE id = ?")
            var names: [String: String] = [:]
            for id in Set(ids) {
                if let name = try String.fetchOne(statement, arguments: [id]) { names[id] = name }
            }
            return names
        }
    }

    /// Contacts whose id is `query`, else whose name contains it (case-insensitive).
    public func findContacts(_ query: String) throws -> [Contact] {
        try read { db in
            if let row = try Row.fetchOne(db, sql: "SELECT \(ContactColumns.list) FROM contact WHERE id = ?",
                                          arguments: [query]) {
                var one = [ContactColumns.contact(row)]
                try Self.applyExtras(to: &one, db)
                return one
            }
            let needle = ContactIdentity.normalizedName(query)
            var found: [Contact] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT \(ContactColumns.list) FROM contact ORDER BY name, id")
            while let row = try rows.next() {
                let normName: String = row["norm_name"]
                if normName.contains(needle) { found.append(ContactColumns.contact(row)) }
            }
            // An exact (normalized) name wins over partial matches.
            let exact = found.filter { ContactIdentity.normalizedName($0.name) == needle }
            var chosen = exact.count == 1 ? exact : found
            try Self.applyExtras(to: &chosen, db)
            return chosen
        }
    }

    /// Sets include/skip (nil: undecided) for contacts; records when they were included.
    public func setDecision(_ decision: Decision?, for ids: [String], now: Int64) throws {
        try write { db in
            for id in ids {
                try db.execute(sql: """
                    UPDATE contact SET decision = ?,
                        included_at = CASE WHEN ? = 1 AND (decision IS NULL OR decision != 1) THEN ? ELSE included_at END,
                        updated_at = ?
                    WHERE id = ?
                    """, arguments: [decision?.rawValue, decision?.rawValue, now, now, id])
            }
        }
    }

    /// Records "no birthday" by hand: the card's birthday is wrong. Kept across
    /// re-imports (import never writes `manual_bday`) until `setManualBirthday`.
    public func clearCardBirthday(for id: String, now: Int64) throws {
        try write { db in
            try db.execute(sql: "UPDATE contact SET manual_bday = ?, updated_at = ? WHERE id = ?",
                           arguments: [ContactColumns.clearedBirthday, now, id])
        }
    }

    /// Stores a hand-entered birthday (nil removes the hand entry, a recorded
    /// "no birthday" too). An undecided contact becomes included; a skipped one
    /// stays skipped.
    public func setManualBirthday(_ birthday: Birthday?, for id: String, now: Int64) throws {
        try write { db in
            if let birthday {
                try db.execute(sql: """
                    UPDATE contact SET manual_bday = ?,
                        decision = COALESCE(decision, 1),
                        included_at = CASE WHEN decision IS NULL THEN ? ELSE included_at END,
                        updated_at = ?
                    WHERE id = ?
                    """, arguments: [birthday.description, now, now, id])
            } else {
                try db.execute(sql: "UPDATE contact SET manual_bday = NULL, updated_at = ? WHERE id = ?",
                               arguments: [now, id])
            }
        }
    }
}

/// Mapping between `contact` rows and `Contact`.
enum ContactColumns {
    static let list = """
        id, COALESCE((SELECT label FROM source_state WHERE source_state.id = contact.source), source) AS source, \
        name, norm_name, first_name, has_uid, bday_month, bday_day, bday_year, bday_calendar, \
        bday_text, anniversary, phones, emails, categories, lang, decision, included_at, manual_bday, \
        last_request_date, request_channel, deathdate, dates, time_zone
        """

    /// SQL true for a deceased contact row: marked so by hand, or a date of death
    /// on its card that no `--no-deceased` overrides. Planning leaves these out:
    /// no birthday or anniversary reminders for the dead.
    ///
    /// A memorial date kept by hand counts as a date of death; one cleared by
    /// hand (`clear-date CONTACT memorial`) takes the card's away.
    static let deceased = deceased(handMemorials: true)

    /// `deceased`; without `handMemorials` (no memorial date kept by hand, which
    /// the caller has checked), the short form that reads one subquery per row
    /// instead of three: what planning over every contact pays.
    static func deceased(handMemorials: Bool) -> String {
        guard handMemorials else {
            return """
                (id IN (SELECT contact_id FROM contact_extra WHERE deceased = 1)
                 OR deathdate IS NOT NULL AND id NOT IN (SELECT contact_id FROM contact_extra WHERE deceased = 0))
                """
        }
        return """
            (id IN (SELECT contact_id FROM contact_extra WHERE deceased = 1)
             OR (deathdate IS NOT NULL AND id NOT IN (SELECT contact_id FROM contact_date WHERE kind = 'memorial')
                 OR id IN (SELECT contact_id FROM contact_date WHERE kind = 'memorial' AND value IS NOT NULL))
                AND id NOT IN (SELECT contact_id FROM contact_extra WHERE deceased = 0))
            """
    }

    /// The `dates` column: a line per labelled date, its stored form, a tab, its label.
    static func encodeDates(_ dates: [LabelledDate]) -> String {
        var text = ""
        for dated in dates {
            if !text.isEmpty { text += "\n" }
            text += dated.date.storedFormWithCalendar
            text += "\t"
            text += dated.label
        }
        return text
    }

    static func decodeDates(_ text: String) -> [LabelledDate] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let date = Birthday(storedFormWithCalendar: String(parts[0])) else { return nil }
            return LabelledDate(label: String(parts[1]), date: date)
        }
    }

    /// `manual_bday` when the user cleared the card's birthday: no birthday, whatever the card says.
    static let clearedBirthday = "none"

    /// The card's birthday from its columns (`bday_calendar` NULL = Gregorian).
    static func cardBirthday(month: Int?, day: Int?, year: Int?, calendar: String?) -> Birthday? {
        guard let month, let day else { return nil }
        return Birthday(month: month, day: day, year: year,
                        calendar: calendar.flatMap(BirthdayCalendar.init(rawValue:)) ?? .gregorian)
    }

    static func contact(_ row: Row) -> Contact {
        let id: String = row[0]
        let birthday = cardBirthday(month: row[6], day: row[7], year: row[8], calendar: row[9])
        let phones = (row[12] as String).split(separator: "\n").compactMap { line -> Phone? in
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return Phone(number: String(parts[2]), kind: Phone.Kind(rawValue: String(parts[0])) ?? .other,
                         preferred: parts[1] == "1")
        }
        let emails = (row[13] as String).split(separator: "\n").compactMap { line -> Email? in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return Email(address: String(parts[1]), preferred: parts[0] == "1")
        }
        let categories = (row[14] as String).split(separator: "\n").map(String.init)
        var card = ContactCard(
            id: id, hasUID: row[5], name: row[2], firstName: row[4], birthday: birthday, birthdayText: row[10],
            anniversary: (row[11] as String?).flatMap { Birthday(storedFormWithCalendar: $0) },
            phones: phones, emails: emails, categories: categories, language: row[15])
        if let death: String = row[21] {
            if let date = Birthday(storedFormWithCalendar: death) { card.deathDate = date } else { card.deathText = death }
        }
        if let dates: String = row[22] { card.labelledDates = decodeDates(dates) }
        card.timeZone = (row[23] as String?).flatMap(ContactTimeZone.init(stored:))
        return Contact(card: card, decision: (row[16] as Int?).flatMap(Decision.init(rawValue:)),
                       manualBirthday: (row[18] as String?).flatMap { Birthday(storedForm: $0) },
                       source: row[1], includedAt: row[17], lastRequestDate: row[19], requestChannel: row[20],
                       birthdayCleared: (row[18] as String?) == clearedBirthday)
    }
}

extension BuzzDatabase {
    /// How many asks went to a contact (the `n` of its next ask's event id is this + 1).
    public func askCount(for id: String) throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT ask_count FROM contact WHERE id = ?", arguments: [id]) ?? 0 }
    }

    /// Records an ask that went out (docs/design/asks-and-wishes.md): its date, the route, and the count.
    public func recordAsk(contactID: String, date: LocalDate, route: String, now: Int64) throws {
        try write { db in
            try db.execute(sql: """
                UPDATE contact SET last_request_date = ?, request_channel = ?, ask_count = ask_count + 1, updated_at = ?
                WHERE id = ?
                """, arguments: [date.description, route, now, contactID])
        }
    }
}

/// How completely a source was read (docs/design/sources.md: pruning that cannot lose decisions).
public enum SourceCoverage: Sendable, Equatable {
    /// Every card the source holds was read: contacts gone from it are removed.
    case complete
    /// Something could not be read (a file, a cut-off card, a server error
    /// halfway): nothing is removed. The reason is shown to the user.
    case incomplete(reason: String)
    /// Only changes were read (a CardDAV `sync-collection`): the ids named are
    /// removed, everything else stays.
    case changes(removed: [String])
}

/// What a source's read ends with: its coverage, and what to keep for the next sync.
public struct SourceOutcome: Sendable, Equatable {
    public var coverage: SourceCoverage
    /// A cheap summary of the source as read (file names, sizes, mtimes),
    /// taken before reading so that a change made while reading is seen next
    /// time; an equal one later means nothing changed.
    public var fingerprint: String?
    /// The type's own state (a CardDAV sync token, ETags…), opaque to the store.
    public var state: String?
    /// Entries the source left out on purpose, one line each (a member a
    /// server listed outside its book, an href listed twice, a card over the
    /// reply bound): reported and counted as skipped, without making the read
    /// incomplete.
    public var skipped: [String]

    public init(coverage: SourceCoverage, fingerprint: String? = nil, state: String? = nil, skipped: [String] = []) {
        self.coverage = coverage
        self.fingerprint = fingerprint
        self.state = state
        self.skipped = skipped
    }
}

/// A source as of its last sync (`source_state`).
public struct SourceState: Sendable, Equatable {
    public var label: String
    public var fingerprint: String?
    public var state: String?
    public var syncedAt: Int64?

    public init(label: String, fingerprint: String? = nil, state: String? = nil, syncedAt: Int64? = nil) {
        self.label = label
        self.fingerprint = fingerprint
        self.state = state
        self.syncedAt = syncedAt
    }
}

/// What planning reads of a contact, as SQL: included contacts with a date of
/// some kind (every included one with `undated`), the deceased only when
/// `deceased` (then marked), from `contact` or a join, narrowed by a window.
private struct PlanningQuery {
    let deceased: Bool
    let isDeceased: String
    let dated: String

    init(_ db: Database, deceased: Bool, undated: Bool) throws {
        self.deceased = deceased
        let handMemorials = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM contact_date WHERE kind = 'memorial')") ?? true
        isDeceased = ContactColumns.deceased(handMemorials: handMemorials)
        let handDates = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM contact_date WHERE value IS NOT NULL)") ?? true
        dated = undated ? "1" : """
            ((bday_month IS NOT NULL OR manual_bday IS NOT NULL)
              AND manual_bday IS NOT '\(ContactColumns.clearedBirthday)' OR anniversary IS NOT NULL OR dates IS NOT NULL
              OR id IN (SELECT contact_id FROM contact_extra WHERE manual_anniversary IS NOT NULL)
              \(handDates ? "OR id IN (SELECT contact_id FROM contact_date WHERE value IS NOT NULL)" : "")
              OR \(deceased ? "deathdate IS NOT NULL" : "0"))
            """
    }

    /// From `from` (`contact`, or `contact` joined to another table), with the
    /// window as SQL (`AND …`, and what may follow the WHERE clause).
    func sql(from: String, window: String) -> String {
        deceased ? """
            SELECT id, name, bday_month, bday_day, bday_year, bday_calendar, categories, manual_bday, included_at,
                   first_name, anniversary, dates, time_zone, deathdate, \(isDeceased)
            FROM \(from)
            WHERE decision = 1 AND \(dated)\(window)
            """ : """
            SELECT id, name, bday_month, bday_day, bday_year, bday_calendar, categories, manual_bday, included_at,
                   first_name, anniversary, dates, time_zone
            FROM \(from)
            WHERE decision = 1 AND \(dated) AND NOT \(isDeceased)\(window)
            """
    }
}
