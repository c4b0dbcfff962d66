import BirthdayBuzz
import BuzzTestKit
import BuzzStore
import Foundation
import Synchronization
import Testing
@testable import BuzzSources

/// What a source type can do is its own: write-back is a protocol a type adopts
/// (`BirthdayWriteBack`), asked for by the registry rather than by naming the
/// carddav type; and a carddav source reads its password by the rules the
/// channels share (`SecretReader`), without the CLI handing it a reader.
@Suite struct SourceWriteBackTests {
    /// `type = "memo"`: a source type that lives in this test only and writes birthdays back.
    struct MemoSource: BirthdayWriteBack, SourceType {
        static let typeName = "memo"
        static let written = Mutex<[String]>([])

        let id: String
        let label: String
        let writesBack: Bool
        var typeName: String { Self.typeName }

        static func options(from table: TableReader) throws -> Bool { try table.bool("write_back") ?? false }

        static func make(_ config: SourceConfig, options: Bool, context: SourceContext) throws -> any ContactSourceType {
            MemoSource(id: config.name, label: config.name, writesBack: options)
        }

        func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
                  emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
            SourceOutcome(coverage: .complete)
        }

        func writeBirthday(_ birthday: Birthday?, contactID: String, store: BuzzDatabase, now: Int64,
                           includeByDefault: Bool) throws {
            Self.written.withLock { $0.append("\(id)/\(contactID): \(birthday.map { "\($0)" } ?? "none")") }
        }
    }

    static func config(_ name: String, _ type: String, _ values: [String: ConfigTable.Value]) -> SourceConfig {
        SourceConfig(name: name, typeName: type,
                     options: ConfigTable(path: ["sources", name], values: values))
    }

    @Test func aTypeThatAdoptsWriteBackIsAskedForIt() throws {
        var registry = SourceRegistry()
        registry.register(MemoSource.self)
        let context = SourceContext(environment: [:], configDirectory: "/nonexistent")

        let memo = try #require(try registry.writeBack(Self.config("notes", "memo", ["write_back": .boolean(true)]), context: context))
        #expect(memo.label == "notes")
        let folder = TestFolders.temporary.path + "/buzz-wb-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try BuzzDatabase(directory: folder)
        try memo.writeBirthday(Birthday(month: 6, day: 7, year: 1990), contactID: "ann", store: store, now: 0, includeByDefault: true)
        #expect(MemoSource.written.withLock { $0 }.contains { $0.hasPrefix("notes/ann: ") })

        // The type adopts it, but this table does not ask for it; a vdir cannot write back at all.
        #expect(try registry.writeBack(Self.config("notes", "memo", [:]), context: context) == nil)
        #expect(try registry.writeBack(Self.config("cards", "vdir", ["path": .string("/nonexistent")]), context: context) == nil)
        // The carddav source adopts it, by its write_back key.
        let dav: [String: ConfigTable.Value] = ["url": .string("https://dav.example/"), "username": .string("u"),
                                               "password_env": .string("PW")]
        #expect(try registry.writeBack(Self.config("phone", "carddav", dav), context: context) == nil)
        let writer = try registry.writeBack(Self.config("phone", "carddav", dav.merging(["write_back": .boolean(true)]) { $1 }),
                                            context: context)
        #expect(writer is CardDAVSource)
    }

    /// No reader handed in: `password_command` runs by the channels' rules (it was
    /// "not available here" when only the CLI could reach the smtp channel's reader).
    @Test func aCarddavSourceRunsItsPasswordCommandItself() throws {
        func check(_ argv: [String]) -> String {
            let source = CardDAVSource(id: "phone", label: "phone",
                                       options: CardDAVSourceOptions(url: "https://127.0.0.1:9/", username: "u",
                                                                     password: .command(argv)),
                                       context: SourceContext(environment: ["PATH": "/usr/bin:/bin"], configDirectory: nil))
            do {
                _ = try source.check()
                return "checked"
            } catch {
                return "\(error)"
            }
        }
        #expect(check(["/bin/sh", "-c", "exit 3"]) == "password_command /bin/sh exited with status 3")
        #expect(check(["/bin/sh", "-c", "true"]) == "password_command /bin/sh printed nothing")
    }
}
