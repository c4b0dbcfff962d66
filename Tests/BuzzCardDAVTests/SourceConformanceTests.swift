import BirthdayBuzz
import BuzzSources
import BuzzStore
import BuzzTestKit
import Foundation
import Synchronization
import Testing

/// The source conformance table: every standard source type, read through the
/// library (`SourceSync` into a `BuzzDatabase`) as `sync`, `tick` and `run`
/// read it. A new source type is one more row, with a fixture that can change,
/// break and repair what the source holds.
enum SourceCases {
    static let all: [SourceConformance.Case] = [
        SourceConformance.Case("vdir") { try SourceFixtures.Vdir() },
        SourceConformance.Case("file") { try SourceFixtures.File() },
        SourceConformance.Case("carddav") { try await SourceFixtures.CardDAV.start() },
    ]
}

@Suite(.timeLimit(.minutes(1))) struct SourceConformanceTests {
    @Test(arguments: SourceCases.all)
    func firstReadChangeDeleteAndAFailedReadPrunesNothing(_ row: SourceConformance.Case) async throws {
        if row.name == "carddav", !RadicaleGate.allows {
            // A missing Radicale skips only this row, and says so (BUZZ_REQUIRE_SERVERS=1 runs it, and fails).
            print("SourceConformanceTests: carddav skipped: \(RadicaleGate.comment)")
            return
        }
        let fixture = try await row.start()
        do {
            try await SourceConformance.checkLifecycle(row, fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }
}

enum SourceFixtures {
    static let name = "conformance"

    /// A store in a fresh folder, and the source named `conformance` built from
    /// its options table as `buzz` builds it (the config loader checks the
    /// options, the registry makes the reader).
    class Base {
        let root: String
        let store: BuzzDatabase
        private let clock = Mutex<Int64>(1_800_000_000)

        init(root: String) throws {
            self.root = root
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            store = try BuzzDatabase(directory: root + "/data")
        }

        static func makeRoot() -> String {
            TestFolders.temporary.appendingPathComponent("buzz-source-conformance-" + UUID().uuidString).path
        }

        static func source(_ typeName: String, _ options: String, environment: [String: String] = [:]) throws -> any ContactSourceType {
            let registry = SourceRegistry()
            let config = try BuzzConfig(toml: "[sources.\(name)]\ntype = \"\(typeName)\"\n\(options)\n", file: "config.toml",
                                        environment: environment, systemTimeZone: TimeZone(identifier: "UTC")!,
                                        types: ConfigTypes(channels: [], sources: registry.configTypes))
            let table = try #require(config.sources.first { $0.name == name })
            return try registry.make(table, context: SourceContext(environment: environment, configDirectory: nil))
        }

        func sync(_ source: any ContactSourceType) throws -> SourceConformance.SyncResult {
            let now = clock.withLock { now in
                now += 60
                return now
            }
            let report = try SourceSync(store: store, now: now, includeByDefault: true).sync(source)
            return SourceConformance.SyncResult(failed: report.status == .failed, pruned: report.pruned,
                                                added: report.summary.added, updated: report.summary.updated,
                                                removed: report.summary.removed, reason: report.reason)
        }

        func contacts() throws -> [SourceConformance.Seen] {
            try store.allContacts().map(SourceConformance.Seen.init)
        }

        func removeFiles() {
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    /// `type = "vdir"`: one `.vcf` file per card in a folder.
    final class Vdir: Base, SourceConformanceFixture {
        var folder: String { root + "/book" }
        let source: any ContactSourceType

        init() throws {
            let root = Base.makeRoot()
            source = try Base.source("vdir", "path = \"\(root)/book\"")
            try super.init(root: root)
            try FileManager.default.createDirectory(atPath: root + "/book", withIntermediateDirectories: true)
        }

        var failures: [String] {
            // As root, a folder or file without read permission is still readable: those need another user.
            ["the folder is gone", "a card file is empty (a writer halfway)", "a card file is cut off in its card"]
                + (getuid() == 0 ? [] : ["the folder cannot be read (mode 000)", "a card file cannot be read (mode 000)"])
        }

        func write(_ cards: [String: String]) async throws {
            let manager = FileManager.default
            for file in try manager.contentsOfDirectory(atPath: folder) where !cards.keys.contains(where: { "\($0).vcf" == file }) {
                try manager.removeItem(atPath: folder + "/" + file)
            }
            for (uid, text) in cards {
                let path = folder + "/\(uid).vcf"
                if (try? String(contentsOfFile: path, encoding: .utf8)) != text {
                    try text.write(toFile: path, atomically: true, encoding: .utf8)
                }
            }
        }

        func breakSource(_ failure: String) async throws {
            switch failure {
            case "the folder is gone": try FileManager.default.moveItem(atPath: folder, toPath: folder + ".away")
            case "a card file is empty (a writer halfway)": try "".write(toFile: folder + "/conf-zed.vcf", atomically: false, encoding: .utf8)
            case "a card file is cut off in its card":
                try "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:conf-ada\r\nFN:Ada".write(toFile: folder + "/conf-ada.vcf", atomically: false,
                                                                                   encoding: .utf8)
            case "the folder cannot be read (mode 000)": chmod(folder, 0)
            case "a card file cannot be read (mode 000)": chmod(folder + "/conf-ada.vcf", 0)
            default: Issue.record("no such failure: \(failure)")
            }
        }

        func repair(_ failure: String) async throws {
            switch failure {
            case "the folder is gone": try FileManager.default.moveItem(atPath: folder + ".away", toPath: folder)
            case "a card file is empty (a writer halfway)": try FileManager.default.removeItem(atPath: folder + "/conf-zed.vcf")
            case "a card file is cut off in its card":
                try SourceConformance.card("conf-ada", "Ada Lovelace", birthday: "1990-03-15")
                    .write(toFile: folder + "/conf-ada.vcf", atomically: true, encoding: .utf8)
            case "the folder cannot be read (mode 000)": chmod(folder, 0o700)
            case "a card file cannot be read (mode 000)": chmod(folder + "/conf-ada.vcf", 0o600)
            default: Issue.record("no such failure: \(failure)")
            }
        }

        func sync() async throws -> SourceConformance.SyncResult {
            // The fixture is used by one test at a time; the thread only borrows it.
            nonisolated(unsafe) let fixture = self
            let source = source
            return try await onThreadOfItsOwn { try fixture.sync(source) }
        }

        func stop() async { removeFiles() }
    }

    /// `type = "file"`: every card in one `.vcf` file.
    final class File: Base, SourceConformanceFixture {
        var path: String { root + "/contacts.vcf" }
        let source: any ContactSourceType
        private let written = Mutex("")

        init() throws {
            let root = Base.makeRoot()
            source = try Base.source("file", "path = \"\(root)/contacts.vcf\"")
            try super.init(root: root)
        }

        let failures = ["the file is gone", "the file is empty (a writer halfway)", "the file is cut off in a card"]

        func write(_ cards: [String: String]) async throws {
            let text = cards.keys.sorted().compactMap { cards[$0] }.joined()
            written.withLock { $0 = text }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        func breakSource(_ failure: String) async throws {
            switch failure {
            case "the file is gone": try FileManager.default.removeItem(atPath: path)
            case "the file is empty (a writer halfway)": try "".write(toFile: path, atomically: false, encoding: .utf8)
            case "the file is cut off in a card":
                let text = written.withLock { $0 } + "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:conf-zed\r\nFN:Zed"
                try text.write(toFile: path, atomically: false, encoding: .utf8)
            default: Issue.record("no such failure: \(failure)")
            }
        }

        func repair(_ failure: String) async throws {
            try written.withLock { $0 }.write(toFile: path, atomically: true, encoding: .utf8)
        }

        func sync() async throws -> SourceConformance.SyncResult {
            // The fixture is used by one test at a time; the thread only borrows it.
            nonisolated(unsafe) let fixture = self
            let source = source
            return try await onThreadOfItsOwn { try fixture.sync(source) }
        }

        func stop() async { removeFiles() }
    }

    /// `type = "carddav"`: one address book on a real Radicale.
    final class CardDAV: Base, SourceConformanceFixture {
        let server: RadicaleServer
        let source: any ContactSourceType
        /// The same source (same name, so the same stored state) at a port nothing listens on.
        let down: any ContactSourceType
        private let state = Mutex<(cards: [String: String], serverDown: Bool)>(([:], false))

        static func start() async throws -> CardDAV {
            let server = try await RadicaleServer.start()
            do {
                try await server.makeBook("contacts", displayName: "Contacts")
                return try CardDAV(server: server)
            } catch {
                server.stop()
                throw error
            }
        }

        private init(server: RadicaleServer) throws {
            self.server = server
            let environment = ["DAV_PASSWORD": server.password]
            let options = { (url: String) in
                "url = \"\(url)\"\nusername = \"\(server.user)\"\npassword_env = \"DAV_PASSWORD\"\ntimeout = \"5s\""
            }
            source = try Base.source("carddav", options(server.url + "/"), environment: environment)
            // Nothing listens on the discard port (as SyncRetryTests assumes).
            down = try Base.source("carddav", options("http://127.0.0.1:9/"), environment: environment)
            try super.init(root: Base.makeRoot())
        }

        let failures = ["the server refuses connections", "HTTP 500 to every request", "HTTP 500 to the multiget (mid-sync)"]

        func write(_ cards: [String: String]) async throws {
            let old = state.withLock { $0.cards }
            for uid in old.keys where cards[uid] == nil { try await server.deleteCard("contacts", "\(uid).vcf") }
            for (uid, text) in cards where old[uid] != text { try await server.putCard("contacts", "\(uid).vcf", text) }
            state.withLock { $0.cards = cards }
        }

        func breakSource(_ failure: String) async throws {
            switch failure {
            case "the server refuses connections": state.withLock { $0.serverDown = true }
            case "HTTP 500 to every request": try await server.fail(status: 500)
            case "HTTP 500 to the multiget (mid-sync)": try await server.fail(status: 500, report: "addressbook-multiget")
            default: Issue.record("no such failure: \(failure)")
            }
        }

        func repair(_ failure: String) async throws {
            state.withLock { $0.serverDown = false }
            try await server.answerNormally()
        }

        func sync() async throws -> SourceConformance.SyncResult {
            let source = state.withLock { $0.serverDown } ? down : self.source
            nonisolated(unsafe) let fixture = self
            return try await onThreadOfItsOwn { try fixture.sync(source) }
        }

        func stop() async {
            server.stop()
            removeFiles()
        }
    }
}
