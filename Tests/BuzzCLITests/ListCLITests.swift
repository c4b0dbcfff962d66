import BuzzTestKit
import Foundation
import Testing

/// `list`, `--now` and the Feb 29 acceptance scenario (docs/design/reminders.md, docs/design/command-line.md).
@Suite struct ListCLITests {
    /// A sandbox holding one included, year-less Feb 29 contact.
    private func leapling() async throws -> Sandbox {
        let sandbox = try Sandbox()
        let file = try sandbox.write("leap.vcf", VCard.card(uid: "urn:uuid:feb29-lea", name: "Lea Leapwood", bday: "--0229"))
        let result = try await sandbox.run(["import", file])
        #expect(result.status == 0, "\(result)")
        return sandbox
    }

    private func onlyRow(_ sandbox: Sandbox, _ arguments: [String]) async throws -> JSONRow {
        let rows = try await sandbox.jsonRows(arguments)
        #expect(rows.count == 1, "\(rows)")
        return try #require(rows.first)
    }

    @Test func feb29WithDefaultConfigIsCelebratedOnFeb28() async throws {
        let sandbox = try await leapling()
        let row = try await onlyRow(sandbox, ["list", "--json", "--now", "2027-02-20"])
        #expect(row.keys == ["contact_id", "name", "occasion", "birthday", "anniversary", "date", "next", "days_until",
                             "section", "age", "buzzed", "source", "birthday_note", "wished_today"])
        #expect(row["occasion"] == .string("birthday"))
        #expect(row["contact_id"] == .string("urn:uuid:feb29-lea"))
        #expect(row["name"] == .string("Lea Leapwood"))
        #expect(row["birthday"] == .string("--02-29"))
        #expect(row["next"] == .string("2027-02-28"))
        #expect(row["days_until"] == .int(8))
        #expect(row["section"] == .string("this_month"))
        #expect(row["age"] == .null)
        #expect(row["buzzed"] == .bool(true))
    }

    @Test func feb29WithMar1PolicyIsCelebratedOnMar1() async throws {
        let sandbox = try await leapling()
        try sandbox.writeConfig("[reminders]\nfeb29 = \"mar1\"\n")
        let row = try await onlyRow(sandbox, ["list", "--json", "--now", "2027-02-20"])
        #expect(row["birthday"] == .string("--02-29"))
        #expect(row["next"] == .string("2027-03-01"))
        #expect(row["days_until"] == .int(9))
        #expect(row["section"] == .string("this_month"))
        #expect(row["age"] == .null)
        #expect(row["buzzed"] == .bool(true))
    }

    @Test(arguments: ["", "[reminders]\nfeb29 = \"mar1\"\n", "[reminders]\nfeb29 = \"feb28\"\n"])
    func feb29InALeapYearIsFeb29WhateverThePolicy(config: String) async throws {
        let sandbox = try await leapling()
        if !config.isEmpty { try sandbox.writeConfig(config) }
        let row = try await onlyRow(sandbox, ["list", "--json", "--now", "2028-02-20"])
        #expect(row["next"] == .string("2028-02-29"))
        #expect(row["days_until"] == .int(9))
        #expect(row["age"] == .null)
    }

    @Test func ageSectionsAndOrder() async throws {
        let sandbox = try Sandbox()
        let cards = [
            VCard.card(uid: "today", name: "Tom Today", bday: "1990-06-10"),
            VCard.card(uid: "week", name: "Wendy Week", bday: "19850617"),
            VCard.card(uid: "month", name: "Mona Month", bday: "--07-10"),
            VCard.card(uid: "later", name: "Larry Later", bday: "2000-01-02"),
            VCard.card(uid: "none", name: "Nora None"),
        ].joined()
        let file = try sandbox.write("people.vcf", cards)
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["list", "--all", "--json", "--now", "2027-06-10T08:00"])
        #expect(rows.map { $0["contact_id"] } == [.string("today"), .string("week"), .string("month"),
                                                  .string("later"), .string("none")])
        #expect(rows.map { $0["section"] } == [.string("today"), .string("this_week"), .string("this_month"),
                                               .string("later"), .string("missing")])
        #expect(rows.map { $0["days_until"] } == [.int(0), .int(7), .int(30), .int(206), .null])
        #expect(rows.map { $0["age"] } == [.int(37), .int(42), .null, .int(28), .null])
        #expect(rows.map { $0["next"] } == [.string("2027-06-10"), .string("2027-06-17"), .string("2027-07-10"),
                                            .string("2028-01-02"), .null])
        #expect(rows.map { $0["buzzed"] } == [.bool(true), .bool(true), .bool(true), .bool(true), .null])

        // Without --all: only included contacts; --missing: only those without a birthday.
        let included = try await sandbox.jsonRows(["list", "--json", "--now", "2027-06-10T08:00"])
        #expect(included.compactMap { $0["contact_id"].string } == ["today", "week", "month", "later"])
        let missing = try await sandbox.jsonRows(["list", "--missing", "--json", "--now", "2027-06-10T08:00"])
        #expect(missing.compactMap { $0["contact_id"].string } == ["none"])
        let byName = try await sandbox.jsonRows(["list", "--all", "--sort", "name", "--json", "--now", "2027-06-10"])
        #expect(byName.compactMap { $0["name"].string } == ["Larry Later", "Mona Month", "Nora None", "Tom Today", "Wendy Week"])
    }

    @Test func jsonEscapesAwkwardNames() async throws {
        let sandbox = try Sandbox()
        let awkward = #"Zoë "Zee" O'Brien \ 李"#
        let card = "BEGIN:VCARD\nVERSION:3.0\nUID:awkward-1\nFN:" + awkward.replacingOccurrences(of: "\\", with: "\\\\")
            + "\nBDAY:1991-09-09\nEND:VCARD\n"
        let file = try sandbox.write("awkward.vcf", card)
        #expect(try await sandbox.run(["import", file]).status == 0)
        let row = try await onlyRow(sandbox, ["list", "--json", "--now", "2027-01-01"])
        #expect(row["name"] == .string(awkward))
        #expect(row["contact_id"] == .string("awkward-1"))
    }

    @Test func nowBeforeOrAfterTheCommandNameIsTheSame() async throws {
        let sandbox = try await leapling()
        let before = try await sandbox.run(["--now", "2027-02-20", "list", "--json"])
        let after = try await sandbox.run(["list", "--json", "--now", "2027-02-20"])
        #expect(before.status == 0 && after.status == 0, "\(before)\n\(after)")
        #expect(before.stdout == after.stdout)
        #expect(before.stdout.contains(#""next":"2027-02-28""#))
        let upcomingBefore = try await sandbox.run(["--now", "2027-02-20T10:00Z", "upcoming", "--json"])
        let upcomingAfter = try await sandbox.run(["upcoming", "--json", "--now", "2027-02-20T10:00Z"])
        #expect(upcomingBefore.status == 0, "\(upcomingBefore)")
        #expect(upcomingBefore.stdout == upcomingAfter.stdout)
        #expect(upcomingBefore.stdout.contains(#""id":"urn:uuid:feb29-lea/1/2027-02-28""#))
        // --data-dir after the command name works too.
        let dataAfter = try await sandbox.run(["list", "--json", "--now", "2027-02-20", "--data-dir", sandbox.dataDir])
        #expect(dataAfter.stdout == before.stdout)
    }

    @Test func nowWithAnOffsetIsConvertedToTheConfiguredZone() async throws {
        let sandbox = try await leapling()
        // 23:30 at -05:00 is already Feb 21 in UTC (the sandbox's zone).
        let row = try await onlyRow(sandbox, ["list", "--json", "--now", "2027-02-20T23:30-05:00"])
        #expect(row["days_until"] == .int(7))
        #expect(row["section"] == .string("this_week"))
        // In New York it is still Feb 20.
        try sandbox.writeConfig("[general]\ntimezone = \"America/New_York\"\n")
        let local = try await onlyRow(sandbox, ["list", "--json", "--now", "2027-02-20T23:30-05:00"])
        #expect(local["days_until"] == .int(8))
    }

    @Test(arguments: ["2027-02-30", "tomorrow", "2027-2-20", "20270220", "2027-02-20T25:00", "2027-02-20T09:60",
                      "2027-02-20T09:00+1", "2027-02-20T09:00:00ZZ", ""])
    func badNowExitsTwo(now: String) async throws {
        let sandbox = try await leapling()
        for arguments in [["--now", now, "list"], ["list", "--now", now]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("--now"), "\(result)")
        }
    }

    @Test(arguments: ["2027-02-20", "2027-02-20T09:05", "2027-02-20T09:05:30", "2027-02-20T09:05Z",
                      "2027-02-20T09:05:30+01:00", "2027-02-20T09:05-08:00"])
    func goodNowForms(now: String) async throws {
        let sandbox = try await leapling()
        let result = try await sandbox.run(["list", "--json", "--now", now])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains(#""next":"2027-02-28""#), "\(result)")
    }

    /// Issue 10 point 15: `list --json` carries the `VALUE=text` note the table
    /// shows (`note: circa 1800`), as `birthday_note`; null when a birthday counts.
    @Test func textBirthdayNoteIsInTheJSON() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("text.vcf", VCard.card(uid: "t-1", name: "Tex Text", extra: ["BDAY;VALUE=text:circa 1800"])
                                     + VCard.card(uid: "t-2", name: "Dora Date", bday: "1990-01-02"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let table = try await sandbox.run(["list", "--all", "--now", "2027-01-15"])
        #expect(table.stdout.contains("note: circa 1800"), "\(table)")
        let rows = try await sandbox.listAll()
        #expect(rows["t-1"]?["birthday_note"] == .string("circa 1800"))
        #expect(rows["t-2"]?["birthday_note"] == .null)
        let missing = try await sandbox.jsonRows(["list", "--missing", "--json", "--now", "2027-01-15"])
        #expect(missing.first?["birthday_note"] == .string("circa 1800"), "\(missing)")
        // With a birthday entered by hand the note no longer shows, in either form.
        #expect(try await sandbox.run(["set-birthday", "t-1", "1800-06-01"]).status == 0)
        #expect(try await sandbox.listAll()["t-1"]?["birthday_note"] == .null)
        #expect(try await !sandbox.run(["list", "--all", "--now", "2027-01-15"]).stdout.contains("circa"))
    }

}
