import BirthdayBuzz
import BuzzDaemon
import BuzzTestKit
import Foundation
import Logging
import Testing
@testable import BuzzCommands

/// `[digests.NAME]` through `buzz tick`, `buzz digest`, `buzz upcoming` and the
/// daemon's loop, delivered to the real HTTP sink; time is `--now` or a `VirtualClock`.
@Suite(.timeLimit(.minutes(3)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct DigestCommandTests {
    /// A weekly digest on Mondays at 08:00 UTC, 14 days ahead, to two webhook channels;
    /// contacts around the 2027/2028 year end (Monday 2027-12-27 lists Dec 27 … Jan 9).
    static func world(sink: URL, digest: String = "") async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["console"]
            [digests.weekly]
            every = "week"
            on = "monday"
            time = "08:00"
            channels = ["hook", "hook2"]
            \(digest)
            [channels.hook]
            type = "webhook"
            url = "\(sink.absoluteString)/one"
            timeout = "5s"
            [channels.hook2]
            type = "webhook"
            url = "\(sink.absoluteString)/two"
            timeout = "5s"
            """)
        chmod(sandbox.configPath, 0o600)
        let cards = VCard.card(uid: "u1", name: "Cleo Year-End", bday: "1990-12-31")
            + VCard.card(uid: "u2", name: "Bea Last-Day", bday: "1985-01-09")
            + VCard.card(uid: "u3", name: "Dan Too-Late", bday: "1985-01-10")
            + "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u4\r\nFN:No Date\r\nEND:VCARD\r\n"
        let file = try sandbox.write("contacts.vcf", cards)
        #expect(try await sandbox.run(["import", file, "--now", "2027-12-01"]).status == 0)
        // The first pass, a day before: the data dir's epoch and watermark are set.
        let first = try await sandbox.run(["tick", "--now", "2027-12-26T12:00Z"])
        #expect(first.status == 0, "\(first)")
        return sandbox
    }

    static func keys(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().compactMap { $0.headers["Idempotency-Key"] }
    }

    @Test func aWeeklyDigestGoesOutOncePerWeekAndChannelHoweverManyTicks() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        for now in ["2027-12-27T07:59Z", "2027-12-27T08:00Z", "2027-12-27T08:05Z", "2027-12-27T18:00Z", "2027-12-28T08:00Z",
                    "2028-01-03T08:00Z", "2028-01-03T08:01Z"] {
            let tick = try await sandbox.run(["tick", "--now", now])
            // Off from Dec 28 to Jan 3: Cleo's two reminders were missed, and that pass says so (exit 1, a notice).
            #expect(tick.status == (now == "2028-01-03T08:00Z" ? 1 : 0), "\(now): \(tick)")
        }
        let requests = try await sink.requests()
        #expect(requests.map(\.path) == ["/one", "/two", "/one", "/two"])
        #expect(try await Self.keys(sink) == ["%digest/weekly/2027-12-27", "%digest/weekly/2027-12-27",
                                              "%digest/weekly/2028-01-03", "%digest/weekly/2028-01-03"])
        let body = try #require(requests.first?.bodyJSON() as? [String: Any])
        #expect(body["event"] as? String == "digest")
        #expect(body["title"] as? String == "Coming up: 2 birthdays in the next 14 days")
        let text = try #require(body["body"] as? String)
        #expect(text.contains("Friday, December 31: Cleo Year-End turns 37"), "\(text)")
        #expect(text.contains("Sunday, January 9: Bea Last-Day turns 43"), "\(text)")
        #expect(!text.contains("Dan Too-Late"))
        #expect(text.contains("Contacts without a birthday: 1"))
        let outbox = try await sandbox.run(["outbox", "--json"])
        // Four digests, and the notice of Cleo's two missed reminders (one row each, on the console).
        #expect(outbox.stdout.components(separatedBy: "\"status\":\"sent\"").count == 7, "\(outbox)")
    }

    @Test func oneTooLateIsRecordedMissedAndNotSent() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        // Off from Sunday noon until Monday 20:01: 12 h 1 min late, catch_up is 12 h.
        let tick = try await sandbox.run(["tick", "--now", "2027-12-27T20:01Z", "--json"])
        #expect(tick.status == 0, "\(tick)")  // a missed digest is not a problem
        #expect(tick.stdout.contains("\"missed\":2"), "\(tick)")
        #expect(try await sink.requests().isEmpty)
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.components(separatedBy: "\"status\":\"missed\"").count == 3, "\(outbox)")
        // Nor is it sent by a later tick.
        #expect(try await sandbox.run(["tick", "--now", "2027-12-27T21:00Z"]).status == 0)
        #expect(try await sink.requests().isEmpty)
    }

    @Test func dryRunsPrintTheDigestAndRecordNothing() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        let dry = try await sandbox.run(["digest", "weekly", "--dry-run", "--now", "2027-12-27T10:00Z"])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("would send hook, hook2: Coming up: 2 birthdays in the next 14 days"), "\(dry)")
        #expect(dry.stdout.contains("Cleo Year-End turns 37"))
        let tickDry = try await sandbox.run(["tick", "--dry-run", "--now", "2027-12-27T08:00Z"])
        // Per message: channel, the digest's name, "digest", its date and its rendered title.
        #expect(tickDry.stdout.contains("would send hook         weekly, digest 2027-12-27: \"Coming up: 2 birthdays in the next 14 days\" (%digest/weekly/2027-12-27)"),
                "\(tickDry)")
        #expect(try await sink.requests().isEmpty)
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(!outbox.stdout.contains("digest"), "\(outbox)")
        // Nothing was recorded: the scheduled one still goes out.
        #expect(try await sandbox.run(["tick", "--now", "2027-12-27T08:00Z"]).status == 0)
        #expect(try await Self.keys(sink) == ["%digest/weekly/2027-12-27", "%digest/weekly/2027-12-27"])
    }

    @Test func sentByHandUnderManualNumbersLeavingTheScheduledOne() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        let first = try await sandbox.run(["digest", "weekly", "--now", "2027-12-27T07:00Z"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("sent       hook         %digest/weekly/manual/1"), "\(first)")
        #expect(try await sandbox.run(["digest", "weekly", "--now", "2027-12-27T07:10Z"]).status == 0)
        #expect(try await sandbox.run(["tick", "--now", "2027-12-27T08:00Z"]).status == 0)
        #expect(try await Self.keys(sink) == ["%digest/weekly/manual/1", "%digest/weekly/manual/1",
                                              "%digest/weekly/manual/2", "%digest/weekly/manual/2",
                                              "%digest/weekly/2027-12-27", "%digest/weekly/2027-12-27"])
        let unknown = try await sandbox.run(["digest", "monthly", "--now", "2027-12-27T07:00Z"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no digest named \"monthly\""), "\(unknown)")
        #expect(unknown.stderr.contains("(configured: weekly)"), "\(unknown)")
    }

    @Test func upcomingListsTheNextDigest() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-12-26T12:00Z", "--limit", "2"])
        #expect(rows.first?["id"] == .string("%digest/weekly/2027-12-27"), "\(rows)")
        #expect(rows.first?["occasion"] == .string("digest"))
        #expect(rows.first?["contact_id"] == .null)
        #expect(rows.first?["name"] == .string("weekly"))
        #expect(rows.first?["fire_at"] == .string("2027-12-27T08:00:00+00:00"))
        #expect(rows.last?["occasion"] == .string("birthday"))
        let text = try await sandbox.run(["upcoming", "--now", "2027-12-26T12:00Z", "--days", "14"])
        #expect(text.stdout.contains("2027-12-27T08:00:00+00:00  digest weekly (2027-12-27) → hook, hook2"), "\(text)")
        #expect(text.stdout.contains("digest weekly (2028-01-03)"), "\(text)")
        // Sent: not listed again; the next one is.
        #expect(try await sandbox.run(["tick", "--now", "2027-12-27T08:00Z"]).status == 0)
        let after = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-12-27T07:00Z"])
        #expect(!after.contains { $0["id"] == .string("%digest/weekly/2027-12-27") }, "\(after)")
        #expect(after.contains { $0["id"] == .string("%digest/weekly/2028-01-03") }, "\(after)")
    }

    /// `buzz run` sleeps until the digest's time (no reminder is nearer), sends it,
    /// then sleeps until the next week's.
    @Test func theDaemonWakesAtTheDigestTime() async throws {
        let sink = HTTPSink()
        let sandbox = try await Self.world(sink: try await sink.start())
        let monday = try #require(PinnedNow("2027-12-27T08:00Z")).instant(in: WallClock(timeZone: TimeZone(identifier: "UTC")!))
        let clock = VirtualClock(now: monday - 3_600)
        let daemon = try DaemonLoopTests.daemon(sandbox, clock: clock)
        let running = Task { try await daemon.run() }
        #expect(await clock.nextWait() == monday)
        #expect(try await sink.requests().isEmpty)
        clock.advance(to: monday)
        // Cleo's day-before reminder (Dec 30, 09:00 UTC) is the next wake after the digest.
        let next = await clock.nextWait()
        #expect(next == monday + 3 * 86_400 + 3_600, "\(String(describing: next))")
        #expect(try await Self.keys(sink) == ["%digest/weekly/2027-12-27", "%digest/weekly/2027-12-27"])
        daemon.requests.requestStop()
        clock.wake()
        try await running.value
        daemon.pidFile.release()
        #expect(clock.waits.first == monday, "\(clock.waits)")
    }
}
