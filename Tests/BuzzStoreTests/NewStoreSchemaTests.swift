import BirthdayBuzz
import BuzzTestKit
import Foundation
import GRDB
@testable import BuzzStore
import Testing

/// A new store made after the first in a process gets the first one's schema read
/// back (`BuzzDatabase.migrate`): it must be what the migrations make.
@Suite struct NewStoreSchemaTests {
    static func schema(_ path: String) throws -> [[String?]] {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").map { row in
                [row["type"], row["name"], row["tbl_name"], row["sql"]]
            } + String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier").map { [$0] }
        }
    }

    @Test func aCopiedSchemaIsTheMigratedOne() throws {
        let dir = try TempDir()
        // The migrations alone, as GRDB runs them on an empty file.
        let migrated = dir.path + "/migrated.sqlite"
        try BuzzDatabase.migrator.migrate(try DatabaseQueue(path: migrated))
        let expected = try Self.schema(migrated)
        #expect(expected.contains { $0[1] == "contact" } && expected.contains { $0 == ["v14-anniversary-by-id"] })
        // Two new stores: the second (at least) gets the copy.
        let first = try BuzzDatabase(directory: dir.path + "/first")
        let second = try BuzzDatabase(directory: dir.path + "/second")
        #expect(try Self.schema(first.path) == expected)
        #expect(try Self.schema(second.path) == expected)
        // And works as one: a contact goes in and comes out.
        _ = try second.importSources(["cards"], prune: false, now: 1, includeByDefault: true) { _, session in
            try session.add(.card(ContactCard(id: "a", name: "Ada"), problems: []))
        }
        #expect(try second.allContacts().map(\.name) == ["Ada"])
    }
}
