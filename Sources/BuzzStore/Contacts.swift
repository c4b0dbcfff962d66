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

    public init() {}

    public static func += (lhs: inout ImportSummary, rhs: ImportSummary) {
        lhs.added += rhs.added
        lhs.updated += rhs.updated
        lhs.unchanged += rhs.unchanged
        lhs.removed += rhs.removed
        lhs.skipped += rhs.skipped
    }
}

/// Receives the cards of one source inside the import's write transaction.
public final class ImportSession {
    private let db: Database
    private let source: String
    private let now: Int64
    private let includeByDefault: Bool
    private var existing: [String: (source: String, hash: Int64, hasUID: Bool, normName: String)]
    /// UID-less contacts of this source, by normalized name, not yet matched in this import.
    private var unmatchedByName: [String: [String]] = [:]
    private var seen: Set<String> = []
    private var deferred: [ContactCard] = []
    public private(set) var summary = ImportSummary()

    init(db: Database, source: String, now: Int64, includeByDefault: Bool) throws {
        self.db = db
        self.source = source
        self.now = now
        self.includeByDefault = includeByDefault
        existing = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT id, source, card_hash, has_uid, norm_name FROM contact")
        while let row = try rows.next() {
            let id: String = row[0]
            let rowSource: String = row[1]
            let hasUID: Bool = row[3]
            let normName: String = row[4]
            existing[id] = (rowSource, row[2], hasUID, normName)
            if rowSource == source, !hasUID { unmatchedByName[normName, default: []].append(id) }
        }
    }

    /// Adds one entry of the stream.
    public func add(_ entry: ImportEntry) throws {
        switch entry {
        case .skipped:
            summary.skipped += 1
        case .card(let card, _):
            if card.hasUID || existing[card.id] != nil || unmatchedByName[ContactIdentity.normalizedName(card.name)] == nil {
                try upsert(card)
            } else {
                // A UID-less card whose id changed (new email?): matched by name at the end.
                deferred.append(card)
            }
        }
    }

    /// Ends the source: resolves name matches and prunes when asked.
    func finish(prune: Bool) throws {
        for var card in deferred {
            let name = ContactIdentity.normalizedName(card.name)
            let candidates = (unmatchedByName[name] ?? []).filter { !seen.contains($0) }
            if candidates.count == 1, existing[card.id] == nil, !seen.contains(card.id) {
                card.id = candidates[0]
            }
            try upsert(card)
        }
        deferred.removeAll()
        if prune {
            var gone: [String] = []
            for (id, info) in existing where info.source == source && !seen.contains(id) { gone.append(id) }
            let statement = try db.cachedStatement(sql: "DELETE FROM contact WHERE id = ?")
            for id in gone {
                try statement.execute(arguments: [id])
                existing[id] = nil
            }
            summary.removed += gone.count
        }
    }

    private func upsert(_ card: ContactCard) throws {
        let encoded = EncodedCard(card, source: source)
        let alreadySeen = !seen.insert(card.id).inserted
        if let previous = existing[card.id] {
            if previous.hash == encoded.hash, previous.source == source {
                if !alreadySeen { summary.unchanged += 1 }
                return
            }
            try db.cachedStatement(sql: """
                UPDATE contact SET source = ?, name = ?, norm_name = ?, first_name = ?, has_uid = ?,
                    bday_month = ?, bday_day = ?, bday_year = ?, bday_calendar = ?, bday_text = ?,
                    anniversary = ?, phones = ?, emails = ?, categories = ?, lang = ?, card_hash = ?,
                    updated_at = ?,
                    decision = CASE WHEN decision IS NULL AND ? AND bday_month IS NULL AND ? IS NOT NULL
                                    THEN 1 ELSE decision END,
                    included_at = CASE WHEN decision IS NULL AND ? AND bday_month IS NULL AND ? IS NOT NULL
                                       THEN ? ELSE included_at END
                WHERE id = ?
                """).execute(arguments: encoded.arguments + [now, includeByDefault, encoded.birthdayMonth,
                                                              includeByDefault, encoded.birthdayMonth, now, card.id])
            existing[card.id] = (source, encoded.hash, card.hasUID, encoded.normName)
            if !alreadySeen { summary.updated += 1 }
        } else {
            let include = includeByDefault && card.birthday != nil
            try db.cachedStatement(sql: """
                INSERT INTO contact (source, name, norm_name, first_name, has_uid, bday_month, bday_day,
                    bday_year, bday_calendar, bday_text, anniversary, phones, emails, categories, lang,
                    card_hash, updated_at, id, decision, included_at, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: encoded.arguments + [now, card.id, include ? 1 : nil,
                                                              include ? now : nil, now])
            existing[card.id] = (source, encoded.hash, card.hasUID, encoded.normName)
            summary.added += 1
        }
    }
}

/// A card's column values, and a hash of them to tell "unchanged" cheaply.
struct EncodedCard {
    var arguments: StatementArguments
    var hash: Int64
    var normName: String
    var birthdayMonth: Int?

    init(_ card: ContactCard, source: String) {
        normName = ContactIdentity.normalizedName(card.name)
        let birthday = card.birthday
        birthdayMonth = birthday?.month
        let phones = card.phones.map { "\($0.kind.rawValue)\t\($0.preferred ? 1 : 0)\t\($0.number)" }.joined(separator: "\n")
        let emails = card.emails.map { "\($0.preferred ? 1 : 0)\t\($0.address)" }.joined(separator: "\n")
        let categories = card.categories.joined(separator: "\n")
        let anniversary = card.anniversary?.description
        var hasher = FNV1a()
        for field in [card.name, card.firstName, birthday?.description ?? "", birthday?.calendar.rawValue ?? "",
                      card.birthdayText ?? "", anniversary ?? "", phones, emails, categories, card.language ?? "",
                      card.hasUID ? "u" : "h"] {
            hasher.add(field)
        }
        hash = hasher.value
        arguments = [source, card.name, normName, card.firstName, card.hasUID, birthday?.month, birthday?.day, birthday?.year,
                     birthday.map { $0.calendar == .gregorian ? nil : $0.calendar.rawValue } ?? nil,
                     card.birthdayText, anniversary, phones, emails, categories, card.language, hash]
    }
}

/// 64-bit FNV-1a, for change detection only.
struct FNV1a {
    private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 {
            state ^= UInt64(byte)
            state &*= 0x100_0000_01b3
        }
        state ^= 0xFF
        state &*= 0x100_0000_01b3
    }

    var value: Int64 { Int64(bitPattern: state) }
}
