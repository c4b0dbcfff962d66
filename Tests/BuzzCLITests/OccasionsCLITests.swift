import BuzzTestKit
import Foundation
import Testing

/// Anniversaries, `set`, `note`, `gift` and `show` from the command line (docs/design/occasions.md).
@Suite struct OccasionsCLITests {
    static let config = """
        [general]
        timezone = "Europe/Berlin"
        locale = "en"
        [reminders]
        offsets = [0]
        time = "08:15"
        channels = ["console"]
        [groups.family]
        offsets = [0, 1]
        """

    /// Ada (birthday + Apple anniversary, family), Bob (an anniversary only), Cy (a birthday only).
    static let cards = [
        VCard.card(uid: "u-ada", name: "Ada Lovelace", bday: "1990-03-15", categories: ["family"],
                   extra: ["item1.X-ABDATE:2015-06-20", "item1.X-ABLabel:_$!<Anniversary>!$_"]),
        VCard.card(uid: "u-bob", name: "Bob Only", extra: ["ANNIVERSARY:2010-07-01"]),
        VCard.card(uid: "u-cy", name: "Cy Young", bday: "1985-09-09"),
    ].joined()

    private func world() async throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config)
        let file = try sandbox.write("people.vcf", Self.cards)
        let imported = try await sandbox.run(["import", file, "--now", "2027-01-01"])
        #expect(imported.status == 0, "\(imported)")
        return (sandbox, file)
    }

    @Test func appleAnniversaryIsPlannedAtTheConfiguredTime() async throws {
        let (sandbox, _) = try await world()
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-06-01"])
        let anniversary = try #require(events.first { $0["occasion"] == .string("anniversary") }, "\(events)")
        #expect(anniversary["id"] == .string("u-ada/anniversary/0/2027-06-20"))
        #expect(anniversary["fire_at"] == .string("2027-06-20T08:15:00+02:00"))
        #expect(anniversary["offset_days"] == .int(0))
        // Bob's only date is an anniversary: undecided, so nothing planned for him.
        #expect(!events.contains { $0["contact_id"] == .string("u-bob") })
        #expect(events.filter { $0["occasion"] == .string("birthday") }.allSatisfy { ($0["id"].string ?? "").split(separator: "/").count == 3 })
        let text = try await sandbox.run(["upcoming", "--now", "2027-06-01"])
        #expect(text.stdout.contains("Ada Lovelace — on the day (2027-06-20, anniversary, 12 years)"), "\(text)")
    }

    @Test func listShowsOneLinePerOccasion() async throws {
        let (sandbox, _) = try await world()
        let rows = try await sandbox.jsonRows(["list", "--all", "--json", "--now", "2027-06-01"])
        let ada = rows.filter { $0["contact_id"] == .string("u-ada") }
        #expect(ada.map { $0["occasion"] } == [.string("anniversary"), .string("birthday")], "\(ada)")
        #expect(ada.first?["next"] == .string("2027-06-20"))
        #expect(ada.first?["age"] == .int(12))
        let bob = rows.filter { $0["contact_id"] == .string("u-bob") }
        #expect(Set(bob.compactMap { $0["occasion"].string }) == ["birthday", "anniversary"])
        #expect(bob.allSatisfy { $0["buzzed"] == .null }, "an anniversary alone leaves the contact undecided: \(bob)")
        #expect(rows.allSatisfy { $0["occasion"] == .string("birthday") || $0["occasion"] == .string("anniversary") })
        let table = try await sandbox.run(["list", "--now", "2027-06-01"])
        #expect(table.stdout.contains("Ada Lovelace (anniversary, 12 years)"), "\(table)")
        #expect(table.stdout.contains("Ada Lovelace (turning 38)"), "\(table)")
    }

    @Test func handAnniversariesSurviveReimport() async throws {
        let (sandbox, file) = try await world()
        #expect(try await sandbox.run(["set-anniversary", "cy", "2001-05-05", "--now", "2027-01-01"]).status == 0)
        let cleared = try await sandbox.run(["clear-anniversary", "ada"])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(try await sandbox.run(["set-anniversary", "bob", "2030-01-01", "--now", "2027-01-01"]).status == 2)
        #expect(try await sandbox.run(["clear-anniversary", "cy-nobody"]).status == 2)
        #expect(try await sandbox.run(["import", file, "--now", "2027-02-01"]).status == 0)
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--days", "400", "--limit", "100", "--now", "2027-02-01"])
        let anniversaries = events.filter { $0["occasion"] == .string("anniversary") }.compactMap { $0["id"].string }
        #expect(anniversaries == ["u-cy/anniversary/0/2027-05-05"], "\(anniversaries)")
        // Cleared again: the hand entry goes, the card's (none for Cy) applies.
        #expect(try await sandbox.run(["clear-anniversary", "cy"]).status == 0)
        #expect(try await sandbox.run(["clear-anniversary", "cy"]).status == 2)
        // set-anniversary on the undecided Bob includes him.
        #expect(try await sandbox.run(["set-anniversary", "bob", "--07-02"]).status == 0)
        let bob = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-06-01"]).filter { $0["contact_id"] == .string("u-bob") }
        #expect(bob.map { $0["id"] } == [.string("u-bob/anniversary/0/2027-07-02")], "\(bob)")
    }

    /// Acceptance: `set --offsets 0,7` on a contact beats its group's [0,1] and the global [0].
    @Test func contactOffsetsWinOverGroupAndConfig() async throws {
        let (sandbox, _) = try await world()
        func offsets(_ contact: String) async throws -> [Int] {
            try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
                .filter { $0["contact_id"] == .string(contact) && $0["occasion"] == .string("birthday") }
                .compactMap { $0["offset_days"].int }
        }
        #expect(try await offsets("u-ada") == [1, 0])  // the group's
        #expect(try await offsets("u-cy") == [0])       // the global [reminders]
        let set = try await sandbox.run(["set", "ada", "--offsets", "0,7", "--time", "07:00", "--channels", "console"])
        #expect(set.status == 0, "\(set)")
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
            .filter { $0["contact_id"] == .string("u-ada") && $0["occasion"] == .string("birthday") }
        #expect(events.map { $0["id"] } == [.string("u-ada/7/2027-03-15"), .string("u-ada/0/2027-03-15")])
        #expect(events.map { $0["fire_at"] } == [.string("2027-03-08T07:00:00+01:00"), .string("2027-03-15T07:00:00+01:00")])
        // Only the time is reset by --reset then set again: offsets go back to the group's.
        #expect(try await sandbox.run(["set", "ada", "--reset", "--time", "10:00"]).status == 0)
        let after = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
            .filter { $0["contact_id"] == .string("u-ada") && $0["occasion"] == .string("birthday") }
        #expect(after.map { $0["offset_days"] } == [.int(1), .int(0)])
        #expect(after.first?["fire_at"] == .string("2027-03-14T10:00:00+01:00"))
        for bad in [["--offsets", "0,400"], ["--offsets", "x"], ["--time", "25:00"], ["--channels", "nowhere"], []] {
            let result = try await sandbox.run(["set", "ada"] + bad)
            #expect(result.status == 2, "\(bad): \(result)")
            #expect(result.stderrLines.count == 1, "\(bad): \(result)")
        }
    }

    @Test func notesAndGiftIdeasSurviveReimport() async throws {
        let (sandbox, file) = try await world()
        #expect(try await sandbox.run(["gift", "ada", "a", "book", "on", "Go"]).status == 0)
        #expect(try await sandbox.run(["gift", "ada", "tickets"]).status == 0)
        #expect(try await sandbox.run(["gift", "ada", "flowers"]).status == 0)
        #expect(try await sandbox.run(["note", "ada", "likes tea"]).status == 0)
        #expect(try await sandbox.run(["import", file, "--prune"]).status == 0)
        #expect(try await sandbox.run(["gift", "ada", "--done", "2"]).status == 0)
        let out = try await sandbox.run(["gift", "ada", "--done", "3"])
        #expect(out.status == 2 && out.stderrLines.count == 1, "\(out)")
        #expect(try await sandbox.run(["gift", "ada"]).status == 2)
        #expect(try await sandbox.run(["gift", "ada", "x", "--done", "1"]).status == 2)
        let show = try await sandbox.run(["show", "ada"])
        #expect(show.stdout.contains("1. a book on Go\n    2. flowers"), "\(show)")
        #expect(show.stdout.contains("likes tea"), "\(show)")
    }

    /// Acceptance: `show --json` holds every field docs/design/occasions.md lists.
    @Test func showJSONHoldsEveryField() async throws {
        let (sandbox, _) = try await world()
        #expect(try await sandbox.run(["set", "ada", "--offsets", "0,7"]).status == 0)
        #expect(try await sandbox.run(["gift", "ada", "tickets"]).status == 0)
        #expect(try await sandbox.run(["note", "ada", "likes tea"]).status == 0)
        #expect(try await sandbox.run(["clear-birthday", "cy"]).status == 0)
        let tick = try await sandbox.run(["tick", "--now", "2027-03-08T07:00"])
        #expect(tick.status == 0, "\(tick)")
        #expect(try await sandbox.run(["tick", "--now", "2027-03-08T08:20"]).status == 0)
        let shown = try await sandbox.run(["show", "ada", "--json", "--now", "2027-03-09"])
        #expect(shown.status == 0, "\(shown)")
        let ada = try JSONRow.parseObject(shown.stdout)
        for key in ["contact_id", "name", "birthday", "birthday_from", "anniversary", "source", "buzzed", "settings",
                    "notes", "gift_ideas", "next", "history"] {
            #expect(ada.keys.contains(key), "\(key) missing: \(ada)")
        }
        #expect(ada["contact_id"] == .string("u-ada"))
        #expect(ada["name"] == .string("Ada Lovelace"))
        #expect(ada["birthday"] == .string("1990-03-15"))
        #expect(ada["birthday_from"] == .string("card"))
        #expect(ada["anniversary"] == .string("2015-06-20"))
        #expect(ada["source"].string?.hasSuffix("people.vcf") == true)
        #expect(ada["buzzed"] == .bool(true))
        let settings = try #require(ada.fields["settings"] as? [String: Any])
        #expect(settings["offsets"] as? [Int] == [0, 7])
        #expect(settings["offsets_from"] as? String == "contact")
        #expect(settings["time"] as? String == "08:15")
        #expect(settings["time_from"] as? String == "reminders")
        #expect(settings["channels"] as? [String] == ["console"])
        let notes = try #require(ada.fields["notes"] as? [[String: Any]])
        #expect(notes.first?["text"] as? String == "likes tea")
        let gifts = try #require(ada.fields["gift_ideas"] as? [[String: Any]])
        #expect(gifts.first?["text"] as? String == "tickets")
        #expect(gifts.first?["n"] as? Int == 1)
        let next = try #require(ada.fields["next"] as? [[String: Any]])
        #expect(next.first?["id"] as? String == "u-ada/0/2027-03-15", "\(next)")
        #expect(next.contains { $0["id"] as? String == "u-ada/anniversary/7/2027-06-20" }, "\(next)")
        let history = try #require(ada.fields["history"] as? [[String: Any]])
        #expect(history.count == 1, "\(history)")
        #expect(history.first?["id"] as? String == "u-ada/7/2027-03-15")
        #expect(history.first?["channel"] as? String == "console")
        #expect(history.first?["status"] as? String == "sent")
        #expect(history.first?["at"] as? String == "2027-03-08T08:20:00+01:00")

        let cy = try JSONRow.parseObject(try await sandbox.run(["show", "u-cy", "--json"]).stdout)
        #expect(cy["birthday_from"] == .string("cleared"))
        #expect(cy["birthday"] == .null)
        #expect(cy["anniversary"] == .null)
        let bob = try JSONRow.parseObject(try await sandbox.run(["show", "bob", "--json"]).stdout)
        #expect(bob["birthday_from"] == .null)
        #expect(bob["buzzed"] == .null)
        #expect(try await sandbox.run(["set-birthday", "bob", "1980-02-02"]).status == 0)
        let hand = try JSONRow.parseObject(try await sandbox.run(["show", "bob", "--json"]).stdout)
        #expect(hand["birthday_from"] == .string("hand"))
        #expect(try await sandbox.run(["show", "nobody"]).status == 2)
    }

    /// `set-date` / `clear-date` for the other kinds: labels made unique, the
    /// future only for labelled dates, a memorial marks the contact deceased, and
    /// mistakes exit 2 with a line that says what.
    @Test func setDateAndClearDateForEveryKind() async throws {
        let (sandbox, _) = try await world()
        func run(_ arguments: [String]) async throws -> (status: Int32, out: String) {
            let result = try await sandbox.run(arguments + ["--now", "2027-01-01"])
            return (result.status, result.stdout + result.stderr)
        }
        #expect(try await run(["set-date", "cy", "date", "2027-09-14", "--label", "Graduation"]).status == 0)
        let second = try await run(["set-date", "cy", "date", "2030-02-02", "--label", "Graduation"])
        #expect(second.status == 0 && second.out.contains("date \"Graduation 2\" set to 2030-02-02"), "\(second)")
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-01", "--days", "400"])
        let dates = events.filter { $0["occasion"] == .string("date") }
        #expect(dates.map { $0["id"] } == [.string("u-cy/date:Graduation/0/2027-09-14")], "\(dates)")
        #expect(dates.first?["label"] == .string("Graduation"))
        #expect(events.filter { $0["occasion"] != .string("date") }.allSatisfy { !$0.keys.contains("label") }, "\(events)")

        let future = try await run(["set-date", "cy", "memorial", "2030-01-01"])
        #expect(future.status == 2 && future.out.contains("is in the future"), "\(future)")
        let kind = try await run(["set-date", "cy", "graduation", "2020-01-01"])
        #expect(kind.status == 2 && kind.out.contains("is not an occasion kind"), "\(kind)")
        let label = try await run(["set-date", "cy", "memorial", "2020-01-01", "--label", "x"])
        #expect(label.status == 2, "\(label)")
        let nothing = try await run(["clear-date", "cy", "date", "--label", "Wedding"])
        #expect(nothing.status == 2 && nothing.out.contains("has no date \"Wedding\" to clear"), "\(nothing)")

        // A memorial date entered by hand: Cy is in memory, and asks refuse him.
        #expect(try await run(["set-date", "cy", "memorial", "2026-05-05"]).status == 0)
        let listed = try await run(["list", "--all"])
        #expect(listed.out.contains("In memory") && listed.out.contains("Cy Young  died 2026-05-05"), "\(listed)")
        #expect(try await run(["wish", "cy", "--dry-run"]).status == 2)
        // Cleared again: living, and the labelled date is back in the plan.
        #expect(try await run(["clear-date", "cy", "memorial"]).status == 0)
        #expect(try await run(["clear-date", "cy", "date", "--label", "Graduation"]).status == 0)
        let after = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-01", "--days", "400"])
        #expect(!after.contains { $0["occasion"] == .string("date") }, "the only Graduation is gone: \(after)")
        #expect(after.contains { $0["id"] == .string("u-cy/0/2027-09-09") })
    }
}
