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

    /// An open of a store that is up to date skips the migrator (`user_version`
    /// says so): the number must be the migrator's, or a store would be taken
    /// as up to date while a migration is missing.
    @Test func theSchemaVersionCountsEveryMigration() throws {
        #expect(BuzzDatabase.schemaVersion == BuzzDatabase.migrator.migrations.count)
        let dir = try TempDir()
        let store = try BuzzDatabase(directory: dir.path + "/store")
        let version = try DatabaseQueue(path: store.path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(version == BuzzDatabase.schemaVersion)
    }

    /// A store an older buzz made (migrated part of the way, no `user_version`)
    /// is migrated the rest of the way on open, and then marked.
    @Test func anOlderStoreIsMigratedAndMarked() throws {
        let dir = try TempDir()
        let folder = dir.path + "/old"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: folder + "/buzz.sqlite")
        try BuzzDatabase.migrator.migrate(queue, upTo: "v5-notification-server")
        try queue.close()
        let store = try BuzzDatabase(directory: folder)
        #expect(try Self.schema(store.path).contains { $0 == ["v14-anniversary-by-id"] })
        let version = try DatabaseQueue(path: store.path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(version == BuzzDatabase.schemaVersion)
        // And works: a contact goes in (the tables of the later migrations are there).
        _ = try store.importSources(["cards"], prune: false, now: 1, includeByDefault: true) { _, session in
            try session.add(.card(ContactCard(id: "a", name: "Ada"), problems: []))
        }
        #expect(try store.allContacts().map(\.name) == ["Ada"])
    }
}
