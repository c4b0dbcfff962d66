import BuzzTestKit
import Foundation
import Testing

/// `buzz wish CONTACT --at HH:MM`: a wish sent by `tick` at a time of the
/// contact's own day, through a real HTTP SMS gateway on 127.0.0.1.
@Suite(.timeLimit(.minutes(2))) struct ScheduledWishTests {
    static func cards(_ sandbox: Sandbox) async throws {
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "aiko", name: "Aiko Tanaka", bday: "1990-03-15", phones: ["+81 90 1234 5678"],
                       extra: ["TZ:Asia/Tokyo"], version: "4.0"),
            VCard.card(uid: "ben", name: "Ben Ortiz", bday: "--03-15", phones: ["+1 555 0100 77"],
                       extra: ["TZ;VALUE=utc-offset:-0500"]),
        ])
    }

    static func historyStates(_ sandbox: Sandbox, _ contact: String) async throws -> [String] {
        let show = try await sandbox.run(["show", contact, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        return (object["history"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "wish" }
            .map { "\($0["id"] ?? "") \($0["status"] ?? "")" }
    }

    /// Acceptance: a contact in Asia/Tokyo wished `--at 09:00` gets exactly one
    /// message at 00:00Z on the birthday through the sms route; a second tick sends
    /// nothing; one that nothing sent is recorded `missed` once their day has ended.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func tokyoWishGoesAtMidnightUTCOnceAndALateOneIsMissed() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try AskCommandTests.world(smsURL: base)
        try await Self.cards(sandbox)
        let now = "2027-03-10T12:00Z"

        let scheduled = try await sandbox.run(["wish", "Aiko", "--at", "09:00", "--now", now])
        #expect(scheduled.status == 0, "\(scheduled)")
        #expect(scheduled.stdout.contains("wish scheduled on 2027-03-15 at 09:00 Asia/Tokyo (2027-03-15T00:00:00+00:00 your time) via gateway"),
                "\(scheduled)")
        // Listed by upcoming (and its JSON) and by show.
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", now])
        let wish = try #require(upcoming.first { $0["occasion"] == .string("wish") })
        #expect(wish["id"] == .string("aiko/wish/2027-03-15"))
        #expect(wish["fire_at"] == .string("2027-03-15T00:00:00+00:00"))
        #expect(wish["channels"] == .array([.string("gateway")]))
        let show = try await sandbox.run(["show", "Aiko", "--json", "--now", now])
        #expect(show.stdout.contains("\"time_zone\":\"Asia/Tokyo\""), "\(show)")
        #expect(show.stdout.contains("\"occasion\":\"wish\""), "\(show)")
        let shown = try await sandbox.run(["show", "Aiko", "--now", now])
        #expect(shown.stdout.contains("wish scheduled on 2027-03-15 at 09:00 Asia/Tokyo"), "\(shown)")

        // While it is scheduled, a plain `wish` sends nothing and says when it goes.
        let plain = try await sandbox.run(["wish", "Aiko", "--now", now])
        #expect(plain.status == 0 && plain.stdout.contains("a wish is scheduled on 2027-03-15"), "\(plain)")

        // Ben (UTC-05:00) at 23:30 his time: 04:30Z on the 16th; nothing runs until his day has ended.
        #expect(try await sandbox.run(["wish", "Ben", "--at", "23:30", "--now", now]).status == 0)

        #expect(try await LibraryTick.run(sandbox, now: "2027-03-14T23:59:59Z").status == 0)
        #expect(try await sink.requests().isEmpty)
        let tick = try await LibraryTick.run(sandbox, now: "2027-03-15T00:00Z", json: true)
        #expect(tick.status == 0, "\(tick)")
        let requests = try await sink.requests()
        #expect(requests.count == 1)
        #expect(requests.first?.bodyText?.hasPrefix("to=%2B819012345678&message=") == true, "\(requests)")
        #expect(requests.first?.headers["Idempotency-Key"] == "aiko/wish/2027-03-15")
        // A second tick sends nothing.
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-15T00:05Z").status == 0)
        #expect(try await sink.requests().count == 1)
        #expect(try await Self.historyStates(sandbox, "Aiko") == ["aiko/wish/2027-03-15 sent"])

        // Ben's day ended at 2027-03-16T05:00Z, half an hour after his wish's time (within
        // catch_up) with nothing run since: missed, never sent after his day.
        // (Status 1: the birthday reminders of the 15th were missed too, a problem.)
        let late = try await LibraryTick.run(sandbox, now: "2027-03-16T05:00:01Z", json: true)
        #expect(late.stdout.contains("{\"id\":\"ben/wish/2027-03-15\",\"channel\":\"gateway\",\"status\":\"missed\","
                                     + "\"error\":\"its day ended before it could be sent\""), "\(late)")
        #expect(try await sink.requests().count == 1)
        #expect(try await Self.historyStates(sandbox, "Ben") == ["ben/wish/2027-03-15 missed"])
    }

    /// `--cancel` removes it; `--force` sends now and cancels the scheduled one;
    /// share and compose routes, `--via share` and the deceased are refused (status 2).
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func cancelForceAndRefusals() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try AskCommandTests.world(smsURL: base)
        try await Self.cards(sandbox)
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "gone", name: "Greta Gone", bday: "1930-05-01", phones: ["+49 170 5555555"],
                       extra: ["DEATHDATE:2024-01-03"], version: "4.0"),
        ])
        let now = "2027-03-10T12:00Z"
        #expect(try await sandbox.run(["wish", "Aiko", "--at", "09:00", "--now", now]).status == 0)
        let cancelled = try await sandbox.run(["wish", "Aiko", "--cancel", "--now", now])
        #expect(cancelled.status == 0 && cancelled.stdout.contains("cancelled the wish"), "\(cancelled)")
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", now])
        #expect(!upcoming.contains { $0["occasion"] == .string("wish") })
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-15T00:00Z").status == 0)
        #expect(try await sink.requests().isEmpty)

        // --force: sent now (two days late, a belated wish for 2027), and the one scheduled
        // for next year's birthday is cancelled: it does not go at its time.
        let nextYear = try await sandbox.run(["wish", "Ben", "--at", "10:00", "--now", "2027-03-17T12:00Z"])
        #expect(nextYear.stdout.contains("on 2028-03-15 at 10:00 UTC-05:00"), "\(nextYear)")
        let forced = try await sandbox.run(["wish", "Ben", "--force", "--now", "2027-03-17T12:05Z"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try await DaemonLoopTests.keys(sink) == ["ben/wish/2027-03-15"])
        _ = try await LibraryTick.run(sandbox, now: "2028-03-15T15:00Z")
        #expect(try await DaemonLoopTests.keys(sink) == ["ben/wish/2027-03-15"])
        #expect(try await Self.historyStates(sandbox, "Ben").contains("ben/wish/2028-03-15 skipped"))

        // Refused at once with one line: share (--via), the dead, a bad time.
        let share = try await sandbox.run(["wish", "Aiko", "--at", "09:00", "--via", "share", "--now", now])
        #expect(share.status == 2 && share.stderr.contains("cannot be scheduled"), "\(share)")
        let dead = try await sandbox.run(["wish", "Greta", "--at", "09:00", "--now", now])
        #expect(dead.status == 2 && dead.stderrLines.count == 1 && dead.stderr.contains("deceased"), "\(dead)")
        let badTime = try await sandbox.run(["wish", "Aiko", "--at", "25:00", "--now", now])
        #expect(badTime.status == 2, "\(badTime)")

        // Marked deceased after it was scheduled: no longer listed, and closed unsent at its time.
        #expect(try await sandbox.run(["wish", "Aiko", "--at", "09:00", "--now", "2027-03-16T00:00Z"]).status == 0)
        #expect(try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-16T00:00Z"]).contains { $0["occasion"] == .string("wish") })
        #expect(try await sandbox.run(["set", "Aiko", "--deceased"]).status == 0)
        #expect(!(try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-16T00:00Z"]).contains { $0["occasion"] == .string("wish") }))
        _ = try await LibraryTick.run(sandbox, now: "2028-03-15T00:00Z")
        #expect(try await sink.requests().count == 1)
        #expect(try await Self.historyStates(sandbox, "Aiko").first == "aiko/wish/2028-03-15 skipped")
    }

    /// Without an sms channel the route is share: it needs the user, so it cannot be scheduled.
    @Test func shareRouteIsRefusedAtSchedulingTime() async throws {
        let sandbox = try AskCommandTests.world()
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "bo", name: "Bo Berg", bday: "--06-01", phones: ["+1 555 0100 22"]),
        ])
        let refused = try await sandbox.run(["wish", "Bo", "--at", "09:00", "--now", "2027-05-20"])
        #expect(refused.status == 2 && refused.stderrLines.count == 1, "\(refused)")
        #expect(refused.stderr.contains("by share needs you to send it, so it cannot be scheduled"), "\(refused)")
        #expect(try await sandbox.run(["outbox", "--json"]).stdout.contains("bo/wish") == false)
    }

    /// The card's TZ is kept through import (and re-import when it changes), shown
    /// by show, and the day-of reminder `tick` sends says when their day starts.
    @Test func theirTimeZoneIsKeptShownAndInTheDayOfReminder() async throws {
        let sandbox = try AskCommandTests.world()
        try await Self.cards(sandbox)
        let show = try await sandbox.run(["show", "Ben", "--json"])
        #expect(show.stdout.contains("\"time_zone\":\"UTC-05:00\""), "\(show)")
        #expect(try await sandbox.run(["show", "Aiko"]).stdout.contains("time zone:    Asia/Tokyo"))
        // The console channel prints the reminder on tick's own output: the binary.
        let tick = try await sandbox.run(["tick", "--now", "2027-03-15T09:00Z"])
        #expect(tick.status == 0, "\(tick)")
        let output = tick.stdout + tick.stderr
        #expect(output.contains("Aiko's birthday began yesterday at 15:00 your time (it is 18:00 there now)."), "\(tick)")
        #expect(output.contains("Ben's birthday starts at 05:00 your time (it is 04:00 there now)."), "\(tick)")

        // A moved contact: the new TZ replaces the old on re-import; a card without one clears it.
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "aiko", name: "Aiko Tanaka", bday: "1990-03-15", phones: ["+81 90 1234 5678"],
                       extra: ["TZ;VALUE=text:Europe/Paris"], version: "4.0"),
            VCard.card(uid: "ben", name: "Ben Ortiz", bday: "--03-15", phones: ["+1 555 0100 77"]),
        ])
        #expect(try await sandbox.run(["show", "Aiko", "--json"]).stdout.contains("\"time_zone\":\"Europe/Paris\""))
        #expect(try await sandbox.run(["show", "Ben", "--json"]).stdout.contains("\"time_zone\":null"))
    }

    /// A TZ that names no zone this system knows is ignored: the card is imported
    /// as ever, with no warning; only a debug log (BUZZ_LOG_LEVEL=debug) tells of it.
    @Test func anUnknownTimeZoneIsIgnoredWithADebugLine() async throws {
        let sandbox = try AskCommandTests.world()
        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "mars", name: "Mara Red", bday: "1990-03-15",
                                                                extra: ["TZ:Mars/Olympus_Mons"], version: "4.0"))
        let quiet = try await sandbox.run(["import", file])
        #expect(quiet.status == 0 && !quiet.stderr.contains("TZ"), "\(quiet)")
        let debug = try await sandbox.run(["import", file], environment: ["BUZZ_LOG_LEVEL": "debug"])
        #expect(debug.status == 0, "\(debug)")
        #expect(debug.stderr.contains("UID mars: TZ \"Mars/Olympus_Mons\" is not a time zone this system knows; ignored"), "\(debug)")
        let show = try await sandbox.run(["show", "Mara", "--json"])
        #expect(show.stdout.contains("\"time_zone\":null") && show.stdout.contains("\"birthday\":\"1990-03-15\""), "\(show)")
    }
}
