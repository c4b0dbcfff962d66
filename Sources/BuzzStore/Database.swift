import BirthdayBuzz
import BuzzSystem
import Foundation
import GRDB
import Synchronization

/// A store failure a user can act on (the data dir cannot be created, the
/// database is locked or corrupt). Shown as one line.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// BirthdayBuzz's state: one SQLite file (WAL) in the data dir, created 0700/0600.
///
/// Holds contacts with the user's decisions, hand-entered birthdays and ask
/// history, the delivery ledger, and small key/value state (the dispatch watermark).
public final class BuzzDatabase: Sendable {
    /// SQLite's page cache for most commands, in KiB (negative, as the pragma
    /// takes it): 512 KiB. The commands are short and read most pages once:
    /// every page the cache holds is memory the process touches for the first
    /// time (a page fault each), which cost `upcoming` at 100,000 contacts ~500
    /// faults with the 2 MB default. Import and sync raise it while they write.
    static let cacheSize = -512

    public let directory: String
    public let path: String
    let queue: DatabaseQueue

    /// Opens (creating if needed) `<directory>/buzz.sqlite` and migrates it.
    public init(directory: String) throws {
        self.directory = directory
        // Joined by hand: NSString's path methods cost their bridging on every open.
        path = directory.isEmpty ? "buzz.sqlite" : directory.hasSuffix("/") ? directory + "buzz.sqlite" : directory + "/buzz.sqlite"
        try BuzzDatabase.prepareDirectory(directory)
        // Create the file 0600 before SQLite does (SQLite gives -wal/-shm the same mode).
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError("\(path): cannot open the database: \(SystemError("open").reason)")
        }
        close(fd)
        var configuration = Configuration()
        // WAL, set once: SQLite keeps the mode in the file. GRDB's `.wal` would
        // also make sure of a non-empty -wal file on every open (for its
        // DatabasePool; we use a queue), which is a write transaction each time
        // the last connection had checkpointed it away: every `buzz status` of a
        // status bar wrote to the store.
        configuration.journalMode = .default
        configuration.busyMode = .timeout(10)
        let file = path
        configuration.prepareDatabase { db in
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw StoreError("\(file): cannot switch the database to WAL mode")
                }
            }
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = \(BuzzDatabase.cacheSize)")
        }
        // Ten commands started at once on a data dir that does not exist yet all
        // find the schema missing and race to create it ("table contact already
        // exists", "UNIQUE constraint failed: grdb_migrations"). An exclusive
        // flock on the data dir itself, held while opening and migrating,
        // serializes them: the first migrates, the others find it done. A lock
        // on the folder (not on buzz.sqlite) cannot disturb SQLite's own POSIX
        // locks, which closing another descriptor of the database would drop.
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            throw StoreError("\(directory): cannot open the data dir: \(SystemError("open").reason)")
        }
        defer { close(folder) }
        while flock(folder, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw StoreError("\(directory): cannot lock the data dir: \(SystemError("flock").reason)")
            }
        }
        defer { flock(folder, LOCK_UN) }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try BuzzDatabase.migrate(queue)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
            throw StoreError("\(path) is corrupt: \(error.message ?? "database error \(error.resultCode)"); "
                             + "restore a backup, or move it aside and import again (decisions and the ledger are in it)")
        } catch let error as DatabaseError {
            throw StoreError("\(path): \(error.message ?? "database error \(error.resultCode)")")
        }
    }

    private static func prepareDirectory(_ directory: String) throws {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError("\(directory): the data dir is not a directory")
            }
            return
        }
        if let problem = creationProblem(directory) {
            throw StoreError("\(directory): cannot create the data dir (\(problem))")
        }
        // mkdir -p, each new folder 0700; the system's reason when one cannot be made.
        var made = ""
        for part in directory.split(separator: "/", omittingEmptySubsequences: true) {
            made += (made.isEmpty && !directory.hasPrefix("/") ? "" : "/") + part
            if mkdir(made, 0o700) != 0, errno != EEXIST {
                throw StoreError("\(directory): cannot create the data dir (\(made): \(SystemError("mkdir").reason))")
            }
        }
    }

    /// Why `directory` (which does not exist) could not be created, or nil: the
    /// nearest existing folder above it must be a folder this user can write.
    /// `doctor` asks this without creating anything.
    public static func creationProblem(_ directory: String) -> String? {
        var parent = parentFolder(of: directory)
        var info = stat()
        while !parent.isEmpty, stat(parent, &info) != 0 {
            guard errno == ENOENT || errno == ENOTDIR else { return "\(parent): \(SystemError("stat").reason)" }
            let up = parentFolder(of: parent)
            if up == parent { break }
            parent = up
        }
        if parent.isEmpty { parent = "." ; _ = stat(parent, &info) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(parent) is not a folder" }
        guard access(parent, W_OK | X_OK) == 0 else { return "\(parent): \(SystemError("access").reason)" }
        return nil
    }

    /// The folder that holds `path` ("" for a bare relative name, "/" at the root).
    ///
    /// Not `NSString.deletingLastPathComponent`: swift-corelibs-foundation traps
    /// (SIGILL) on a one-letter relative path such as "d" or "x/y".
    public static func parentFolder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return String(parent)
    }

    /// Migrates the store. A process that makes more than one new store (the test
    /// suite makes hundreds; a command, one at most) migrates the first and gives
    /// the others the schema that one ended with, read back from `sqlite_master`,
    /// with every migration marked applied: the same tables, indexes and text, in
    /// one transaction instead of the migrations' many (a new store cost 29 ms of
    /// CPU in a debug build, a copied schema about a tenth). The migrator then finds
    /// nothing left to do.
    static func migrate(_ queue: DatabaseQueue) throws {
        if try queue.inDatabase({ db in try Int.fetchOne(db, sql: "PRAGMA user_version") }) == schemaVersion { return }
        let migrator = self.migrator
        let isNew = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 }
        if isNew, let schema = newStoreSchema.withLock({ $0 }) {
            try queue.write { db in
                for statement in schema { try db.execute(sql: statement) }
                for identifier in migrator.migrations {
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
                }
            }
        }
        try migrator.migrate(queue)
        try queue.inDatabase { db in try db.execute(sql: "PRAGMA user_version = \(schemaVersion)") }
        guard isNew else { return }
        let schema = try queue.read(schemaStatements)
        newStoreSchema.withLock { known in known = known ?? schema }
    }

    /// How many migrations `migrator` has, kept in the file's `user_version`
    /// once they are all applied: opening a store that is up to date reads one
    /// pragma instead of running GRDB's migrator (reading the applied set,
    /// comparing, its statements), ~0.3 ms of every `status` a bar starts. A
    /// store of another version (older, or migrated further by a newer buzz)
    /// goes through the migrator, which decides as before. `NewStoreSchemaTests`
    /// checks the number against `migrator`.
    static let schemaVersion = 16

    /// The statements that make a store's schema again: its tables, then indexes,
    /// views and triggers, each in the order it was made (SQLite's own objects,
    /// such as `sqlite_sequence` and the indexes of UNIQUE constraints, come with them).
    static func schemaStatements(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
            SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid
            """)
    }

    /// The schema of the first store this process migrated from nothing (`migrate`).
    private static let newStoreSchema = Mutex<[String]?>(nil)

    /// Schema migrations, from day one. Never edit a shipped migration: add one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE contact (
                    id TEXT PRIMARY KEY NOT NULL,
                    source TEXT NOT NULL,
                    name TEXT NOT NULL,
                    norm_name TEXT NOT NULL,
                    first_name TEXT NOT NULL,
                    has_uid INTEGER NOT NULL,
                    bday_month INTEGER,
                    bday_day INTEGER,
                    bday_year INTEGER,
                    bday_calendar TEXT,
                    bday_text TEXT,
                    anniversary TEXT,
                    phones TEXT NOT NULL DEFAULT '',
                    emails TEXT NOT NULL DEFAULT '',
                    categories TEXT NOT NULL DEFAULT '',
                    lang TEXT,
                    card_hash INTEGER NOT NULL,
                    decision INTEGER CHECK (decision IN (0, 1)),
                    included_at INTEGER,
                    manual_bday TEXT,
                    last_request_date TEXT,
                    request_channel TEXT,
                    ask_count INTEGER NOT NULL DEFAULT 0,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE delivery (
                    event_id TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    contact_id TEXT NOT NULL,
                    kind TEXT NOT NULL DEFAULT 'reminder' CHECK (kind IN ('reminder', 'ask')),
                    state TEXT NOT NULL CHECK (state IN
                        ('pending', 'sending', 'sent', 'retrying', 'failed', 'missed', 'skipped')),
                    fire_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    next_attempt_at INTEGER,
                    sent_at INTEGER,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (event_id, channel)
                ) WITHOUT ROWID;
                CREATE INDEX delivery_state ON delivery(state, next_attempt_at);
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        }
        // v2, for the delivery loop's one commit per send:
        // - the state CHECK as ORed comparisons: SQLite evaluates `state IN (seven
        //   constants)` by building a scratch b-tree on every write (~12% of a
        //   tick's CPU); the comparisons check the same states with none;
        // - no index on state: every send moves a row pending → sending → sent, and
        //   the index put two more pages in each commit (~15% of a tick's CPU). What
        //   reads by state (the unfinished rows once per pass, `outbox`) scans the
        //   table instead, which rows older than 400 days leave (a few ms for 50,000).
        // SQLite cannot change a CHECK in place, so the table is rebuilt
        // (sqlite.org/lang_altertable.html, "other kinds of table schema changes").
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE delivery_v2 (
                    event_id TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    contact_id TEXT NOT NULL,
                    kind TEXT NOT NULL DEFAULT 'reminder' CHECK (kind IN ('reminder', 'ask')),
                    state TEXT NOT NULL CHECK (state = 'pending' OR state = 'sending' OR state = 'sent'
                        OR state = 'retrying' OR state = 'failed' OR state = 'missed' OR state = 'skipped'),
                    fire_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    next_attempt_at INTEGER,
                    sent_at INTEGER,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (event_id, channel)
                ) WITHOUT ROWID;
                INSERT INTO delivery_v2 (event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                                         next_attempt_at, sent_at, created_at, updated_at)
                    SELECT event_id, channel, contact_id, kind, state, fire_at, attempts, last_error,
                           next_attempt_at, sent_at, created_at, updated_at FROM delivery;
                DROP TABLE delivery;
                ALTER TABLE delivery_v2 RENAME TO delivery;
                """)
        }
        // v3-sources (docs/design/sources.md): what each source was when last read (its
        // shown name, a fingerprint of its files, a type's own state such as a
        // CardDAV sync token), and the decisions of contacts that left a source,
        // kept by contact id so one that comes back gets them back.
        migrator.registerMigration("v3-sources") { db in
            try db.execute(sql: """
                CREATE TABLE source_state (
                    id TEXT PRIMARY KEY NOT NULL,
                    label TEXT NOT NULL,
                    fingerprint TEXT,
                    state TEXT,
                    synced_at INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE remembered_decision (
                    id TEXT PRIMARY KEY NOT NULL,
                    decision INTEGER,
                    included_at INTEGER,
                    manual_bday TEXT,
                    last_request_date TEXT,
                    request_channel TEXT,
                    ask_count INTEGER NOT NULL DEFAULT 0,
                    removed_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        registerOccasions(&migrator)
        registerStatusIndex(&migrator)
        registerNotifications(&migrator)
        SQLiteLedger.registerLedgerKinds(&migrator)
        registerNotificationEscalation(&migrator)
        SQLiteLedger.registerProblemIndex(&migrator)
        registerDeparted(&migrator)
        registerOccasionDates(&migrator)
        registerContactTimeZone(&migrator)
        registerPlanningWindow(&migrator)
        registerStatusCover(&migrator)
        registerAnniversaryByID(&migrator)
        return migrator
    }

    /// Runs `body` in one write transaction, turning database errors into `StoreError`.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.write(body)
        } catch let error as DatabaseError {
            throw StoreError("\(path): \(error.message ?? "database error \(error.resultCode)")")
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch let error as DatabaseError {
            throw StoreError("\(path): \(error.message ?? "database error \(error.resultCode)")")
        }
    }

    /// What SQLite's `PRAGMA quick_check` finds wrong with the file (empty when
    /// nothing): a corrupt page, a broken index. `doctor` asks; nothing else pays for it.
    public func quickCheck() throws -> [String] {
        try read { db in
            let lines = try String.fetchAll(db, sql: "PRAGMA quick_check")
            return lines == ["ok"] ? [] : lines
        }
    }

    /// A small persistent value (e.g. the dispatch watermark).
    public func meta(_ key: String) throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) }
    }

    public func setMeta(_ key: String, _ value: String) throws {
        try write { db in
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        }
    }

    public func removeMeta(_ key: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [key]) }
    }
}
