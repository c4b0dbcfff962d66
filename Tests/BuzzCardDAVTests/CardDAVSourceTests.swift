import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import CurlSupport
import Foundation
import Synchronization
import Testing
@testable import BuzzSources

/// The carddav source end to end (docs/design/sources.md): `buzz sync`, `tick` and
/// `set-birthday` write-back against a real Radicale, no mock of the protocol.
@Suite(.enabled(if: RadicaleGate.allows, RadicaleGate.comment), .timeLimit(.minutes(3)))
struct CardDAVSourceTests {
    static let now = "2027-01-15"

    /// Contacts (ann, bob, cy) and Work (boss).
    static func seeded() async throws -> RadicaleServer {
        let server = try await RadicaleServer.start()
        try await server.makeBook("contacts", displayName: "Contacts")
        try await server.makeBook("work", displayName: "Work")
        for (uid, name) in [("ann", "Ann Lee"), ("bob", "Bob Ray"), ("cy", "Cy Diaz")] {
            try await server.putCard("contacts", "\(uid).vcf", card(uid, name))
        }
        try await server.putCard("work", "boss.vcf", card("boss", "The Boss"))
        try await server.clearRequests()
        return server
    }

    static func config(_ server: RadicaleServer, name: String = "phone", passwordVariable: String = "DAV_PASSWORD",
                       extra: String = "", more: String = "") -> String {
        "[general]\ntimezone = \"UTC\"\nlocale = \"en\"\n[reminders]\nchannels = [\"console\"]\n"
            + "[sources.\(name)]\ntype = \"carddav\"\nurl = \"\(server.url)/\"\nusername = \"\(server.user)\"\n"
            + "password_env = \"\(passwordVariable)\"\n" + extra + more
    }

    static func sandbox(_ server: RadicaleServer, extra: String = "", more: String = "") throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(config(server, extra: extra, more: more))
        return sandbox
    }

    static func run(_ sandbox: Sandbox, _ server: RadicaleServer, _ arguments: [String], password: String? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> BuzzResult {
        try await sandbox.run(arguments + ["--now", now], environment: ["DAV_PASSWORD": password ?? server.password],
                              sourceLocation: sourceLocation)
    }

    static func ids(_ sandbox: Sandbox) async throws -> Set<String> {
        Set(try await sandbox.listAll(now: now).keys)
    }

    @Test func firstSyncThenChangesThenAnEmptiedBookAndAMovedContactKeepsItsSkip() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server)

        var result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "phone: 4 added, 0 updated, 0 unchanged, 0 removed, 0 skipped\n", "\(result)")
        var all = try await sandbox.listAll(now: Self.now)
        #expect(Set(all.keys) == ["ann", "bob", "cy", "boss"])
        #expect(all["ann"]?["birthday"] == .string("1990-05-17"))
        #expect(all["ann"]?["source"] == .string("phone"))

        // Nothing changed: one sync-collection per book, nothing fetched, and the
        // four contacts counted unchanged (as a vdir or file source counts them).
        try await server.clearRequests()
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.stdout == "phone: 0 added, 0 updated, 4 unchanged, 0 removed, 0 skipped\n", "\(result)")
        let asked = try await server.requests().map(\.summary)
        #expect(asked.filter { $0.hasPrefix("REPORT") } == ["REPORT sync-collection 207", "REPORT sync-collection 207"], "\(asked)")

        // Add, change, delete on the server: the next sync fetches only what changed.
        try await server.putCard("contacts", "dee.vcf", card("dee", "Dee Wu"))
        try await server.putCard("contacts", "bob.vcf", card("bob", "Bob Ray", birthday: "1985-01-02"))
        try await server.deleteCard("contacts", "cy.vcf")
        try await server.clearRequests()
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.stdout == "phone: 1 added, 1 updated, 2 unchanged, 1 removed, 0 skipped\n", "\(result)")
        let multigets = try await server.requests().filter { $0.report == "addressbook-multiget" }
        #expect(multigets.count == 1)
        all = try await sandbox.listAll(now: Self.now)
        #expect(Set(all.keys) == ["ann", "bob", "dee", "boss"])
        #expect(all["bob"]?["birthday"] == .string("1985-01-02"))

        // The boss moves from Work to Contacts (deleted in one, added in the other): the skip stays.
        #expect(try await sandbox.run(["skip", "boss", "--now", Self.now]).status == 0)
        try await server.deleteCard("work", "boss.vcf")
        try await server.putCard("contacts", "boss.vcf", card("boss", "The Boss"))
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 0, "\(result)")
        all = try await sandbox.listAll(now: Self.now)
        #expect(all["boss"]?["buzzed"] == .bool(false), "\(all["boss"] as Any)")

        // Contacts emptied on the server: its contacts go (a complete answer prunes).
        for file in ["ann.vcf", "bob.vcf", "dee.vcf", "boss.vcf"] { try await server.deleteCard("contacts", file) }
        result = try await Self.run(sandbox, server, ["sync", "--json"])
        #expect(result.stdout.contains(#""removed":4"#), "\(result)")
        #expect(try await Self.ids(sandbox).isEmpty)

        // The boss comes back: still skipped (decisions are kept by identity).
        try await server.putCard("work", "boss.vcf", card("boss", "The Boss"))
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.stdout.contains("came back with their decisions"), "\(result)")
        all = try await sandbox.listAll(now: Self.now)
        #expect(all["boss"]?["buzzed"] == .bool(false))
    }

    @Test func aRefusedLoginAndAServerDownFailOnlyTheirSourceAndKeepItsContacts() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let files = try Sandbox()
        let path = files.root + "/local.vcf"
        try VCard.card(uid: "loc", name: "Lo Cal", bday: "1970-02-02").write(toFile: path, atomically: true, encoding: .utf8)
        let sandbox = try Self.sandbox(server, more: "[sources.local]\ntype = \"file\"\npath = \"\(path)\"\n")
        var result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 0, "\(result)")

        // A wrong password: one clear line naming the source and the username, exit 1, the file still synced.
        result = try await Self.run(sandbox, server, ["sync"], password: "wrong-password-123")
        #expect(result.status == 1, "\(result)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("phone:") })
        #expect(line.contains("refused the login for alice (401)") && line.contains("its contacts are kept"), "\(line)")
        #expect(!result.stdout.contains("wrong-password-123") && !result.stderr.contains("wrong-password-123"))
        #expect(result.stdout.contains("local: 0 added, 0 updated, 1 unchanged"), "\(result)")
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss", "loc"])

        // No password to read: that source only, one line.
        result = try await sandbox.run(["sync", "--now", Self.now])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("phone: not synced: password_env names DAV_PASSWORD, which is not set; its contacts are kept"),
                "\(result)")

        // The server down: temporary, contacts kept, exit 1.
        server.stop()
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("phone: not synced: cannot reach"), "\(result)")
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss", "loc"])
    }

    @Test func setBirthdayAndClearBirthdayWriteOnlyTheBDAYLineBack() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJD", count: 40) + "\r\n"
        let odd = "X-ODD;x-param=1:keep me \r\n  folded, as it was\r\n"
        let original = card("eve", "Eve Moss", birthday: "1991-01-01", extra: photo + odd)
        try await server.putCard("contacts", "eve.vcf", original)
        let sandbox = try Self.sandbox(server, extra: "write_back = true\n")
        #expect(try await Self.run(sandbox, server, ["sync"]).status == 0)
        // The server's own text (Radicale re-serializes what it is given): only its BDAY line may change.
        let served = String(decoding: try await server.request("GET", "/alice/contacts/eve.vcf").body, as: UTF8.self)
        #expect(served.contains("BDAY:1991-01-01\r\n") && served.contains("QUJDQUJD"))

        var result = try await Self.run(sandbox, server, ["set-birthday", "eve", "1992-03-04"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("written back to phone"), "\(result)")
        #expect(try await sandbox.listAll(now: Self.now)["eve"]?["birthday"] == .string("1992-03-04"))
        let written = try await server.request("GET", "/alice/contacts/eve.vcf")
        let text = String(decoding: written.body, as: UTF8.self)
        #expect(text == served.replacingOccurrences(of: "BDAY:1991-01-01", with: "BDAY:1992-03-04"), "\(text)")

        // The next sync does not fetch it again (its new ETag was kept).
        try await server.clearRequests()
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.stdout.hasPrefix("phone: 0 added, 0 updated"), "\(result)")
        #expect(try await server.requests().filter { $0.report == "addressbook-multiget" }.isEmpty)

        // clear-birthday removes the line on the server.
        result = try await Self.run(sandbox, server, ["clear-birthday", "eve"])
        #expect(result.status == 0, "\(result)")
        let cleared = String(decoding: try await server.request("GET", "/alice/contacts/eve.vcf").body, as: UTF8.self)
        #expect(cleared == served.replacingOccurrences(of: "BDAY:1991-01-01\r\n", with: ""), "\(cleared)")
        #expect(try await sandbox.listAll(now: Self.now)["eve"]?["birthday"] == .null)

        // The server down: the birthday is entered here all the same, and one line says it did not reach the server.
        server.stop()
        result = try await Self.run(sandbox, server, ["set-birthday", "eve", "1993-04-05"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("birthday set to 1993-04-05"), "\(result)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("kept here, but not written to the server: phone: cannot reach"),
                "\(result)")
        #expect(result.stderr.contains("run the command again to write it") && !result.stderr.contains("next sync"), "\(result)")
        #expect(try await sandbox.listAll(now: Self.now)["eve"]?["birthday"] == .string("1993-04-05"))
    }

    @Test func aCardChangedOnTheServerInBetweenIsFetchedAgainAndWritten() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server, extra: "write_back = true\n")
        #expect(try await Self.run(sandbox, server, ["sync"]).status == 0)

        let source = CardDAVSource(id: "phone", label: "phone",
                                   options: CardDAVSourceOptions(url: server.url + "/", username: server.user,
                                                                 password: .environment("DAV_PASSWORD"), writeBack: true),
                                   context: SourceContext(environment: ["DAV_PASSWORD": server.password], configDirectory: nil))
        let changed = card("ann", "Ann Lee-Park", birthday: "1990-05-17", extra: "NOTE:edited on the phone\r\n")
        let served = Mutex("")
        // For this server's books alone: other tests write back alongside.
        let books = server.url + "/"
        CardDAVSource.afterFetchForWrite.withLock { hooks in
            hooks[books] = { @Sendable in
                CardDAVSource.afterFetchForWrite.withLock { $0[books] = nil }  // once
                try await server.putCard("contacts", "ann.vcf", changed)
                let text = String(decoding: try await server.request("GET", "/alice/contacts/ann.vcf").body, as: UTF8.self)
                served.withLock { $0 = text }
            }
        }
        defer { CardDAVSource.afterFetchForWrite.withLock { $0[books] = nil } }
        let store = try BuzzDatabase(directory: sandbox.dataDir)
        try await server.clearRequests()
        try await onThreadOfItsOwn {
            try source.writeBirthday(Birthday(month: 6, day: 7, year: 1990), contactID: "ann", store: store,
                                     now: 1_800_000_000, includeByDefault: true)
        }
        let asked = try await server.requests().map(\.summary)
        // GET, (the phone's edit: PUT, GET), our PUT refused, GET again, PUT.
        #expect(asked.filter { $0.hasPrefix("PUT") || $0.hasPrefix("GET") }.suffix(3)
                == ["PUT /alice/contacts/ann.vcf 412", "GET /alice/contacts/ann.vcf 200", "PUT /alice/contacts/ann.vcf 201"], "\(asked)")
        let text = String(decoding: try await server.request("GET", "/alice/contacts/ann.vcf").body, as: UTF8.self)
        let edited = served.withLock { $0 }
        #expect(edited.contains("NOTE:edited on the phone"))
        #expect(text == edited.replacingOccurrences(of: "BDAY:1990-05-17", with: "BDAY:1990-06-07"), "\(text)")
    }

    /// An unchanged server costs the stored state nothing: the per-card lines
    /// (ETags, ids) are neither decoded nor written again. Shown with a state
    /// whose card lines no decoder would accept: it comes back as it went in,
    /// and nothing is emitted; a change on the server then needs them.
    @Test func anUnchangedSyncHandsBackTheStoredStateUnread() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server)
        #expect(try await Self.run(sandbox, server, ["sync"]).status == 0)
        let store = try BuzzDatabase(directory: sandbox.dataDir)
        let stored = try #require(try store.sourceState("phone")?.state)
        var lines = stored.split(separator: "\n", omittingEmptySubsequences: false)
        let firstCard = try #require(lines.firstIndex { $0.contains("\t") })
        lines[firstCard] = "not a card line"
        let mangled = lines.joined(separator: "\n")
        #expect(CardDAVState.decode(mangled) == nil && CardDAVState.decodeHead(mangled) != nil)

        let source = CardDAVSource(id: "phone", label: "phone",
                                   options: CardDAVSourceOptions(url: server.url + "/", username: server.user,
                                                                 password: .environment("DAV_PASSWORD")),
                                   context: SourceContext(environment: ["DAV_PASSWORD": server.password], configDirectory: nil))
        let emitted = Mutex(0)
        let outcome = try await onThreadOfItsOwn {
            try source.read(previousState: mangled, full: true, bytesRead: { _ in }) { _, _ in emitted.withLock { $0 += 1 } }
        }
        #expect(outcome.coverage == .changes(removed: []))
        #expect(outcome.state == mangled)
        #expect(emitted.withLock { $0 } == 0)

        // A changed card: the stored lines are read (here: found unreadable, so it starts over with everything).
        try await server.putCard("contacts", "bob.vcf", card("bob", "Bob Ray", birthday: "1985-01-02"))
        let next = try await onThreadOfItsOwn {
            try source.read(previousState: mangled, full: true, bytesRead: { _ in }) { _, _ in emitted.withLock { $0 += 1 } }
        }
        #expect(next.coverage == .complete)
        #expect(emitted.withLock { $0 } == 4)
    }

    /// `sync --full NAME` forgets the tokens and ETags: every book is listed
    /// and every card fetched again (no sync-collection from a token), and
    /// nothing that did not change counts as changed.
    @Test func syncFullListsAndFetchesEverythingAgain() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server)
        #expect(try await Self.run(sandbox, server, ["sync"]).status == 0)
        try await server.clearRequests()
        let result = try await Self.run(sandbox, server, ["sync", "--full", "phone"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "phone: 0 added, 0 updated, 4 unchanged, 0 removed, 0 skipped\n", "\(result)")
        let asked = try await server.requests()
        #expect(!asked.contains { $0.report == "sync-collection" }, "\(asked.map(\.summary))")
        #expect(asked.filter { $0.report == "addressbook-multiget" }.count == 2, "\(asked.map(\.summary))")
        #expect(asked.filter { $0.method == "PROPFIND" && $0.depth == "1" }.count >= 2, "\(asked.map(\.summary))")
        // Afterwards the tokens are back: an unchanged sync asks sync-collection again.
        try await server.clearRequests()
        #expect(try await Self.run(sandbox, server, ["sync"]).stdout == "phone: 0 added, 0 updated, 4 unchanged, 0 removed, 0 skipped\n")
        #expect(try await server.requests().filter { $0.report == "sync-collection" }.count == 2)
    }

    @Test func tickSyncsACardDAVSourceOnceItsIntervalHasPassed() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server, extra: "interval = \"1h\"\n")
        var result = try await sandbox.run(["tick", "--now", "2027-01-15T08:00"], environment: ["DAV_PASSWORD": server.password])
        #expect(result.status == 0, "\(result)")
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss"])

        try await server.putCard("contacts", "dee.vcf", card("dee", "Dee Wu"))
        try await server.clearRequests()
        // Within the hour: not asked.
        result = try await sandbox.run(["tick", "--now", "2027-01-15T08:30"], environment: ["DAV_PASSWORD": server.password])
        #expect(result.status == 0, "\(result)")
        #expect(try await server.requests().isEmpty)
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss"])
        // After it: synced.
        result = try await sandbox.run(["tick", "--now", "2027-01-15T09:01"], environment: ["DAV_PASSWORD": server.password])
        #expect(result.status == 0, "\(result)")
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss", "dee"])
    }

    /// `run` with a carddav source: it syncs at start, then sleeps until the
    /// interval (its "next wake" is the sync's time + interval) without a
    /// single wake-up in between: no Dispatch worker, no polling timer.
    @Test func runSyncsAtStartThenSleepsUntilTheInterval() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let sandbox = try Self.sandbox(server, extra: "interval = \"1h\"\n")
        let binary = try #require(BuzzBinary.path)
        let logPath = sandbox.root + "/run.log"
        #expect(FileManager.default.createFile(atPath: logPath, contents: nil))
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--data-dir", sandbox.dataDir, "run"]
        process.environment = sandbox.environment.merging(["DAV_PASSWORD": server.password]) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func text() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        let deadline = ContinuousClock.now + .seconds(20)
        while !text().contains("next wake"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(text().contains("synced phone: 4 added"), "\(text())")
        #expect(try await Self.ids(sandbox) == ["ann", "bob", "cy", "boss"])

        // Voluntary context switches per thread: a thread that ends (a start-up one,
        // late on a loaded machine) takes its count along, so threads are compared
        // one by one, and a thread that appears counts as waking.
        func wakeUps() -> [String: Int] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []
            var counts: [String: Int] = [:]
            for task in tasks {
                let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/status", encoding: .utf8)) ?? ""
                let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                counts[task] = line.flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
            }
            return counts
        }
        func woke(_ before: [String: Int], _ after: [String: Int]) -> Bool {
            after.contains { task, count in before[task].map { count > $0 } ?? true }
        }
        // The window starts once the counts have settled (two readings 100 ms apart agree:
        // the start-up's threads are done), polled, not waited out. The window itself is
        // the measurement: two seconds are enough to see libdispatch's once-a-second
        // monitor, or any polling timer.
        var before = wakeUps()
        let settleDeadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < settleDeadline {
            try await Task.sleep(for: .milliseconds(100))
            let now = wakeUps()
            if !woke(before, now) { break }
            before = now
        }
        #expect(before.values.reduce(0, +) > 0)  // the count is read at all
        try await Task.sleep(for: .seconds(2))
        #expect(!woke(before, wakeUps()), "buzz run woke while idle:\n\(text())")
        kill(process.processIdentifier, SIGTERM)
        // Polled, not waitUntilExit(): that would hold a thread of the test pool.
        let stopDeadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < stopDeadline { try await Task.sleep(for: .milliseconds(50)) }
        try log.close()
    }

    /// Over TLS with the server's own CA (`ca_file`); without it, one line about the certificate.
    @Test func overTLSWithCAFile() async throws {
        let server = try await RadicaleServer.start(tls: true)
        defer { server.stop() }
        try await server.makeBook("contacts", displayName: "Contacts")
        try await server.putCard("contacts", "ann.vcf", card("ann", "Ann Lee"))
        let caFile = try #require(server.caFile)
        let sandbox = try Self.sandbox(server)
        var result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("phone: not synced: the TLS certificate of \(server.url) is not trusted"), "\(result)")
        try sandbox.writeConfig(Self.config(server, extra: "ca_file = \"\(caFile)\"\n"))
        result = try await Self.run(sandbox, server, ["sync"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "phone: 1 added, 0 updated, 0 unchanged, 0 removed, 0 skipped\n", "\(result)")
    }
}
