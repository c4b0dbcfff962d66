import BirthdayBuzz
import GRDB

extension BuzzDatabase {
    /// The `v11-contact-time-zone` schema: the card's `TZ` (`contact.time_zone`,
    /// an IANA name or `±HH:MM`, NULL when the card names none). A column of the
    /// card like the others: import rewrites it, it is in the card's hash.
    /// Self-contained, so it can be registered after any other migration.
    static func registerContactTimeZone(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v11-contact-time-zone") { db in
            try db.execute(sql: "ALTER TABLE contact ADD COLUMN time_zone TEXT")
        }
    }
}

extension BuzzDatabase {
    /// The contact with exactly this id (with the user's decisions), or nil: a
    /// scheduled wish looks up its contact as it is at send time.
    public func contact(id: String) throws -> Contact? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(ContactColumns.list) FROM contact WHERE id = ?",
                                             arguments: [id]) else { return nil }
            var one = [ContactColumns.contact(row)]
            try Self.applyExtras(to: &one, db)
            return one.first
        }
    }
}
