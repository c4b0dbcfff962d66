import BirthdayBuzz
import Foundation
import GRDB

/// Counts printed by `import`.
public struct ImportSummary: Sendable, Equatable {
    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var removed = 0
    public var skipped = 0
    /// Group cards (`KIND:group`) left out: they are not people.
    public var groups = 0
    /// Sources `--prune` left as they were: something unreadable in them may be
    /// one of their contacts (a card without a readable UID, a file with no card).
    public var unpruned: [String] = []
    /// Contacts that came back and got their remembered decisions (docs/design/sources.md).
    public var restored = 0
    /// Ids that more than one card of a source carried (the last card wins), each once.
    public var duplicates: [String] = []

    public init() {}

    public static func += (lhs: inout ImportSummary, rhs: ImportSummary) {
        lhs.added += rhs.added
        lhs.updated += rhs.updated
        lhs.unchanged += rhs.unchanged
        lhs.removed += rhs.removed
        lhs.skipped += rhs.skipped
        lhs.groups += rhs.groups
        lhs.unpruned += rhs.unpruned
        lhs.restored += rhs.restored
        lhs.duplicates += rhs.duplicates
    }
}

/// Receives the cards of one source inside the import's write transaction.
public final class ImportSession {
    private let db: Database
    private let source: String
    private let now: Int64
    private let includeByDefault: Bool
    private var existing: [String: (source: String, hash: Int64)]
    /// UID-less contacts of this source, by normalized name, not yet matched in this import.
    private var unmatchedByName: [String: [String]] = [:]
    /// Ids of the cards written (or found unchanged) in this import.
    private var seen: Set<String> = []
    /// UIDs named by cards that could not be read: still in the source, so
    /// `--prune` keeps them, but nothing was written for them.
    private var skippedUIDs: Set<String> = []
    /// Something unreadable named no UID: `--prune` cannot tell which contact it
    /// was, so it leaves this source alone.
    private(set) var pruneWithheld = false
    /// UID-less cards whose id changed, matched by name at the end of the source.
    private var deferred: [(card: ContactCard, columns: CardColumns)] = []
    /// Ids with decisions remembered from an earlier removal (usually none or few).
    private var remembered: Set<String> = []
    /// Ids already reported as carried by more than one card.
    private var duplicateIDs: Set<String> = []
    /// Prepared once per session, on first use (looked up in GRDB's cache once, not per card).
    private var insertStatement: RawStatement?
    private var updateStatement: RawStatement?
    /// The labelled dates' keys (`contact_day`), written with the card.
    private var dayRows = DayRows()
    /// Cards written (or found unchanged) since the store's size was last
    /// looked at, and whether its cache was grown (`fitCache`).
    private var cardsSinceSizeCheck = 0
    private var cacheGrown = false
    public private(set) var summary = ImportSummary()

    init(db: Database, source: String, now: Int64, includeByDefault: Bool) throws {
        self.db = db
        self.source = source
        self.now = now
        self.includeByDefault = includeByDefault
        existing = [:]
    }

    /// Reads what the store holds (every contact's id, source and card hash),
    /// once, when the first card or removal comes: a sync that finds nothing
    /// changed never pays for it.
    private func load() throws {
        guard !loaded else { return }
        loaded = true
        let rows = try Row.fetchCursor(db, sql: "SELECT id, source, card_hash, has_uid, norm_name FROM contact")
        while let row = try rows.next() {
            let id: String = row[0]
            let rowSource: String = row[1]
            let hasUID: Bool = row[3]
            let normName: String = row[4]
            existing[id] = (rowSource, row[2])
            if rowSource == source, !hasUID { unmatchedByName[normName, default: []].append(id) }
        }
        seen.reserveCapacity(existing.count)
        remembered = try Set(String.fetchAll(db, sql: "SELECT id FROM remembered_decision"))
    }
    private var loaded = false

    /// Makes room for about `count` cards up front, so the set of ids read is
    /// not rehashed again and again while a large source streams in.
    public func expectCards(_ count: Int) {
        seen.reserveCapacity(count)
    }

    /// Adds one entry of the stream.
    public func add(_ entry: ImportEntry) throws {
        switch entry {
        case .skipped(let problem): skip(problem)
        case .card(let card, _): try add(card: card)
        }
    }

    /// Counts a card that could not be read.
    public func skip(_ problem: CardProblem) {
        summary.skipped += 1
        // A broken card whose UID is known still names a contact that is in
        // the source: `--prune` must not remove it (nor its decisions).
        if let uid = problem.uid { skippedUIDs.insert(uid) } else { pruneWithheld = true }
    }

    /// Adds one card: its column values are computed here, and the card is
    /// only read (not copied) unless it has to wait for the end of the source.
    public func add(card: borrowing ContactCard) throws {
        try add(card: card, columns: nil)
    }

    /// Adds one card whose column values the caller computed already (a
    /// source's reading thread does, so this writing thread, the slower of
    /// the two, does not); nil computes them here.
    public func add(card: borrowing ContactCard, columns: CardColumns?) throws {
        try load()
        if card.isGroup {
            try leaveOut(group: card.id)
            return
        }
        try add(card: card, columns: columns ?? CardColumns(card))
    }

    /// A group card is a list of people, not a person: it is not stored, so no
    /// list, ask or triage shows it. One that an older import stored as a
    /// contact is removed now.
    private func leaveOut(group id: String) throws {
        summary.groups += 1
        guard let info = existing[id], info.source == source, !seen.contains(id) else { return }
        try remove(id)
        summary.removed += 1
    }

    /// Removes one contact of this source, first keeping its decisions
    /// (include/skip, a hand-entered or cleared birthday, ask history) by id,
    /// so that a contact that comes back — restored, or moved to another
    /// source — gets them back (docs/design/sources.md).
    private func remove(_ id: String) throws {
        let remember = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO remembered_decision
                (id, decision, included_at, manual_bday, last_request_date, request_channel, ask_count, removed_at)
            SELECT id, decision, included_at, manual_bday, last_request_date, request_channel, ask_count, ?
            FROM contact
            WHERE id = ? AND source = ?
              AND (decision IS NOT NULL OR manual_bday IS NOT NULL OR ask_count > 0 OR last_request_date IS NOT NULL)
            """)
        try remember.execute(arguments: [now, id, source])
        if db.changesCount > 0 { remembered.insert(id) }
        try db.cachedStatement(sql: "DELETE FROM contact WHERE id = ? AND source = ?").execute(arguments: [id, source])
        existing[id] = nil
    }

    /// Removes the contacts a source said are gone (a CardDAV sync's removed
    /// hrefs), keeping their decisions; ids of other sources are left alone.
    public func remove(ids: [String]) throws {
        if !ids.isEmpty { try load() }
        for id in ids {
            guard let info = existing[id], info.source == source, !seen.contains(id) else { continue }
            try remove(id)
            summary.removed += 1
        }
    }

    /// Counts, as unchanged, this source's contacts that a read of changes
    /// only (a CardDAV sync-collection) did not hand over: they are as they were.
    public func countUntouched() throws {
        let held = try Int.fetchOne(db, sql: "SELECT count(*) FROM contact WHERE source = ?", arguments: [source]) ?? 0
        summary.unchanged += max(0, held - seen.count)
    }

    /// Counts entries the source left out on purpose (reported by the caller);
    /// unlike `skip(_:)`, they do not stop pruning.
    public func countSkipped(_ count: Int) {
        summary.skipped += count
    }

    /// Gives a contact that came back the decisions remembered for it.
    private func restoreRemembered(_ id: String) throws {
        try db.cachedStatement(sql: """
            UPDATE contact SET decision = COALESCE(r.decision, contact.decision),
                included_at = CASE WHEN r.decision IS NULL THEN contact.included_at ELSE r.included_at END,
                manual_bday = r.manual_bday, last_request_date = r.last_request_date,
                request_channel = r.request_channel, ask_count = r.ask_count
            FROM remembered_decision AS r
            WHERE contact.id = ?1 AND r.id = ?1
            """).execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM remembered_decision WHERE id = ?").execute(arguments: [id])
        remembered.remove(id)
        summary.restored += 1
    }

    private func add(card: borrowing ContactCard, columns: CardColumns) throws {
        if card.hasUID || existing[card.id] != nil || unmatchedByName[columns.normName] == nil {
            try upsert(card, columns, id: card.id)
        } else {
            // A UID-less card whose id changed (new email?): matched by name at the end.
            deferred.append((copy card, columns))
        }
    }

    /// Ids this source holds, as read so far (readable or not).
    var seenIDs: Set<String> { skippedUIDs.isEmpty ? seen : seen.union(skippedUIDs) }

    /// Hands over the ids read, once the session is done with them.
    func takeSeenIDs() -> Set<String> {
        let ids = seenIDs
        seen = []
        skippedUIDs = []
        return ids
    }

    /// Ends the source: resolves the deferred name matches.
    func finish() throws {
        func held(_ id: String) -> Bool { seen.contains(id) || skippedUIDs.contains(id) }
        for (card, columns) in deferred {
            var id = card.id
            let candidates = (unmatchedByName[columns.normName] ?? []).filter { !held($0) }
            if candidates.count == 1, existing[id] == nil, !held(id) {
                id = candidates[0]
            }
            try upsert(card, columns, id: id)
        }
        deferred.removeAll()
    }

    /// The source was not read completely: nothing of it is pruned.
    func withholdPrune() {
        pruneWithheld = true
        summary.unpruned.append(source)
    }

    /// Removes contacts of this source that no source of the import holds.
    func prune(keeping seenAnywhere: Set<String>) throws {
        guard !pruneWithheld else {
            summary.unpruned.append(source)
            return
        }
        try load()
        var gone: [String] = []
        for (id, info) in existing where info.source == source && !seenAnywhere.contains(id) { gone.append(id) }
        for id in gone { try remove(id) }
        summary.removed += gone.count
    }

    /// The import transaction's page cache (KiB, as `PRAGMA cache_size` takes
    /// it: negative), and the larger one a large store gets.
    ///
    /// A large import touches pages all over the id index: with 16 MiB a
    /// 100k-card import (a ~29 MB database then) spilled dirty pages to the WAL
    /// mid-transaction and wrote many of them again later (28.6k pwrites
    /// instead of 21.5k); 32 MiB held it all. With the planning window's
    /// indexes (migrations v12-v14) that database is ~40 MB and some pages
    /// spill again, but 48 MiB measured no faster (2026-11-28).
    static let cacheKiB = -32768
    static let largeStoreCacheKiB = -65536

    /// Gives a store that has grown past 64 MiB a 64 MiB cache for the rest of
    /// the transaction. Each card touches a page of the id index and of the
    /// planning indexes at a random place; once those indexes outgrow the
    /// cache, pages are spilled to the WAL and read back again and again. At
    /// a million cards (a 400 MB store) the import took 29.7 s and 8.5 s of
    /// system time with 32 MiB, 25.3 s and 5.0 s with 64 MiB, 25.4 s with 128
    /// MiB (peak RSS 195, 234 and 310 MB); at 100k cards (40 MB) the store
    /// stays under the threshold and the memory where it was. Looked at every
    /// 8,192 cards; the size is what SQLite counts, uncommitted pages included.
    private func fitCache() throws {
        cardsSinceSizeCheck += 1
        guard !cacheGrown, cardsSinceSizeCheck >= 8192 else { return }
        cardsSinceSizeCheck = 0
        let bytes = try Int.fetchOne(db, sql: "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()") ?? 0
        guard bytes > 64 << 20 else { return }
        try db.execute(sql: "PRAGMA cache_size = \(Self.largeStoreCacheKiB)")
        cacheGrown = true
    }

    private func upsert(_ card: borrowing ContactCard, _ encoded: CardColumns, id: String) throws {
        try fitCache()
        let alreadySeen = !seen.insert(id).inserted
        // Two cards with one UID in a source: reported once, the last one wins.
        if alreadySeen, duplicateIDs.insert(id).inserted { summary.duplicates.append(id) }
        // `existing` is the database before this import; a card whose id came
        // earlier in this import (a duplicate) updates the row written then.
        if alreadySeen || existing[id] != nil {
            if !alreadySeen, let previous = existing[id], previous.hash == encoded.hash, previous.source == source {
                summary.unchanged += 1
                return
            }
            if updateStatement == nil { updateStatement = try RawStatement(db, sql: """
                UPDATE contact SET source = ?, name = ?, norm_name = ?, first_name = ?, has_uid = ?,
                    bday_month = ?, bday_day = ?, bday_year = ?, bday_calendar = ?, bday_text = ?,
                    anniversary = ?, phones = ?, emails = ?, categories = ?, lang = ?, deathdate = ?, dates = ?, time_zone = ?,
                    card_hash = ?, updated_at = ?,
                    decision = CASE WHEN decision IS NULL AND ?1000 AND bday_month IS NULL AND ?1001 IS NOT NULL
                                    THEN 1 ELSE decision END,
                    included_at = CASE WHEN decision IS NULL AND ?1000 AND bday_month IS NULL AND ?1001 IS NOT NULL
                                       THEN ?20 ELSE included_at END
                WHERE id = ?21
                """) }
            // Bound through a local: one access to the stored property, not one per value.
            var update = updateStatement.take()!
            defer { updateStatement = update }
            encoded.bind(card, source: source, to: &update)
            update.bind(now)
            update.bind(id)
            update.bindAt(1000, includeByDefault)
            update.bindAt(1001, encoded.birthdayMonth.map(Int64.init))
            try update.execute()
            try dayRows.write(db, id: id, dates: card.labelledDates, replacing: true)
            if !alreadySeen { summary.updated += 1 }
        } else {
            let include = includeByDefault && card.birthday != nil
            if insertStatement == nil { insertStatement = try RawStatement(db, sql: """
                INSERT INTO contact (source, name, norm_name, first_name, has_uid, bday_month, bday_day,
                    bday_year, bday_calendar, bday_text, anniversary, phones, emails, categories, lang,
                    deathdate, dates, time_zone, card_hash, updated_at, id, decision, included_at, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """) }
            var insert = insertStatement.take()!
            defer { insertStatement = insert }
            encoded.bind(card, source: source, to: &insert)
            insert.bind(now)
            insert.bind(id)
            insert.bind(include ? Int64(1) : nil)
            insert.bind(include ? now : nil)
            insert.bind(now)
            try insert.execute()
            try dayRows.write(db, id: id, dates: card.labelledDates, replacing: false)
            summary.added += 1
            if !remembered.isEmpty, remembered.contains(id) { try restoreRemembered(id) }
        }
    }
}

/// A card's column values, and a hash of them to tell "unchanged" cheaply.
public struct CardColumns: Sendable {
    let normName: String
    let birthdayMonth: Int?
    let phones: String
    let emails: String
    let categories: String
    let anniversary: String?
    /// The date of death's stored form, else the card's text for it, else nil.
    let deathDate: String?
    /// The labelled dates (`ContactColumns.encodeDates`); nil when none.
    let dates: String?
    let hash: Int64

    public init(_ card: borrowing ContactCard) {
        normName = ContactIdentity.normalizedName(card.name)
        birthdayMonth = card.birthday?.month
        // Appended piece by piece: no temporary strings.
        var phones = ""
        for phone in card.phones {
            if !phones.isEmpty { phones += "\n" }
            phones += phone.kind.rawValue
            phones += phone.preferred ? "\t1\t" : "\t0\t"
            phones += phone.number
        }
        self.phones = phones
        var emails = ""
        for email in card.emails {
            if !emails.isEmpty { emails += "\n" }
            emails += email.preferred ? "1\t" : "0\t"
            emails += email.address
        }
        self.emails = emails
        categories = card.categories.joined(separator: "\n")
        anniversary = card.anniversary?.storedFormWithCalendar
        deathDate = card.deathDate?.storedFormWithCalendar ?? card.deathText
        dates = card.labelledDates.isEmpty ? nil : ContactColumns.encodeDates(card.labelledDates)
        var hasher = FNV1a()
        hasher.add(card.name)
        hasher.add(card.firstName)
        if let birthday = card.birthday {
            hasher.add(Int64(birthday.month * 100 + birthday.day))
            hasher.add(Int64(birthday.year ?? -1))
            hasher.add(birthday.calendar.rawValue)
        } else {
            hasher.add(Int64(-1))
        }
        hasher.add(card.birthdayText ?? "")
        hasher.add(anniversary ?? "")
        hasher.add(phones)
        hasher.add(emails)
        hasher.add(categories)
        hasher.add(card.language ?? "")
        hasher.add(card.hasUID ? "u" : "h")
        if let deathDate { hasher.add("d" + deathDate) }
        if let dates { hasher.add("l" + dates) }
        if let zone = card.timeZone { hasher.add("z" + zone.stored) }
        hash = hasher.value
    }

    /// Binds the 19 card columns, in the order the INSERT and UPDATE name them.
    func bind(_ card: borrowing ContactCard, source: String, to statement: inout RawStatement) {
        let birthday = card.birthday
        statement.bind(source)
        statement.bind(card.name)
        statement.bind(normName)
        statement.bind(card.firstName)
        statement.bind(card.hasUID)
        statement.bind(birthday?.month)
        statement.bind(birthday?.day)
        statement.bind(birthday?.year)
        statement.bind(birthday.flatMap { $0.calendar == .gregorian ? nil : $0.calendar.rawValue })
        statement.bind(card.birthdayText)
        statement.bind(anniversary)
        statement.bind(phones)
        statement.bind(emails)
        statement.bind(categories)
        statement.bind(card.language)
        statement.bind(deathDate)
        statement.bind(dates)
        statement.bind(card.timeZone?.stored)
        statement.bind(hash)
    }
}

/// 64-bit FNV-1a, for change detection only.
struct FNV1a {
    private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        var text = text
        state = text.withUTF8 { bytes in
            var state = self.state
            for byte in bytes {
                state ^= UInt64(byte)
                state &*= 0x100_0000_01b3
            }
            return state
        }
        state ^= 0xFF
        state &*= 0x100_0000_01b3
    }

    mutating func add(_ number: Int64) {
        var bits = UInt64(bitPattern: number)
        for _ in 0..<8 {
            state ^= bits & 0xFF
            state &*= 0x100_0000_01b3
            bits >>= 8
        }
    }

    var value: Int64 { Int64(bitPattern: state) }
}
