import BuzzTestKit
import Foundation
import Testing

/// Contacts who have died: a card's `DEATHDATE` / `X-DEATHDATE`, or `set --deceased`
/// by hand. They get no reminders, asks or wishes, and `list --all` shows them
/// under "In memory".
@Suite struct DepartedCLITests {
    static let config = """
        [general]
        timezone = "Europe/Berlin"
        locale = "en"
        [reminders]
        offsets = [0]
        time = "08:15"
        channels = ["console"]
        [ask]
        order = ["share"]
        """

    /// Dana (vCard 4 DEATHDATE), Fox (living on the card, marked by hand later), Lou
    /// (living), all born on Feb 23 with an anniversary; Walter (X-DEATHDATE, no
    /// birthday) and Mia (no birthday, living). `extra` goes on every card, so a
    /// second import with another value updates each row.
    static func cards(extra: String) -> String {
        [
            VCard.card(uid: "u-dana", name: "Dana Scully", bday: "1964-02-23", emails: ["dana@example.org"],
                       extra: ["DEATHDATE:2024-01-03", "ANNIVERSARY:2000-05-05", extra], version: "4.0"),
            VCard.card(uid: "u-fox", name: "Fox Mulder", bday: "1961-02-23", emails: ["fox@example.org"],
                       extra: ["ANNIVERSARY:2001-05-05", extra]),
            VCard.card(uid: "u-lou", name: "Lou Living", bday: "1970-02-23", emails: ["lou@example.org"],
                       extra: ["ANNIVERSARY:2002-05-05", extra]),
            VCard.card(uid: "u-walter", name: "Walter Skinner", emails: ["walter@example.org"],
                       extra: ["X-DEATHDATE;VALUE=text:winter 2025", extra]),
            VCard.card(uid: "u-mia", name: "Mia Missing", emails: ["mia@example.org"], extra: [extra]),
        ].joined()
    }

    /// Imported, Fox marked by hand, then imported again with every card changed:
    /// both the card's date of death and the hand mark must survive that.
    private func world() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config)
        let file = try sandbox.write("people.vcf", Self.cards(extra: "NOTE:first"))
        let first = try await sandbox.run(["import", file, "--now", "2027-01-01"])
        #expect(first.status == 0, "\(first)")
        let marked = try await sandbox.run(["set", "fox", "--deceased"])
        #expect(marked.status == 0, "\(marked)")
        #expect(marked.stdout.contains("Fox Mulder: in memory (deceased)"), "\(marked)")
        try sandbox.write("people.vcf", Self.cards(extra: "TEL;TYPE=HOME:+1 555 0100"))
        let again = try await sandbox.run(["import", file, "--now", "2027-01-02"])
        #expect(again.status == 0, "\(again)")
        #expect(ImportCounts(output: again.stdout)?.updated == 5, "\(again)")
        // Walter and Mia have no birthday: undecided; include them so only death keeps them out.
        #expect(try await sandbox.run(["include", "u-walter", "u-mia"]).status == 0)
        return sandbox
    }

    @Test func theDeadAreNotPlannedAndNothingIsSent() async throws {
        let sandbox = try await world()
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15", "--days", "400"])
        let ids = events.compactMap { $0["id"].string }
        #expect(ids.contains("u-lou/0/2027-02-23"), "\(ids)")
        #expect(ids.contains("u-lou/anniversary/0/2027-05-05"), "\(ids)")
        #expect(!ids.contains { $0.hasPrefix("u-dana/") || $0.hasPrefix("u-fox/") }, "\(ids)")

        // The status bar's "today" names only the living (all three were born on Feb 23).
        let status = try JSONRow.parseObject(try await sandbox.run(["status", "--json", "--now", "2027-02-23T08:00"]).stdout)
        #expect(status.fields["today"] as? [String] == ["Lou Living"], "\(status)")
        let before = try JSONRow.parseObject(try await sandbox.run(["status", "--json", "--now", "2027-02-20T08:00"]).stdout)
        #expect((before.fields["next"] as? [String: Any])?["name"] as? String == "Lou Living", "\(before)")

        // Nor does a calendar subscribed to the export remind of their birthdays.
        let ics = try await sandbox.run(["export", "ics", "--now", "2027-01-15"])
        #expect(ics.status == 0 && ics.stdout.contains("Lou Living"), "\(ics)")
        #expect(!ics.stdout.contains("Dana") && !ics.stdout.contains("Fox"), "\(ics)")

        let tick = try await sandbox.run(["tick", "--now", "2027-02-23T08:20"])
        #expect(tick.status == 0, "\(tick)")
        for id in ["u-dana", "u-fox"] {
            let shown = try JSONRow.parseObject(try await sandbox.run(["show", id, "--json"]).stdout)
            #expect(shown["deceased"] == .bool(true), "\(shown)")
            #expect((shown.fields["history"] as? [Any])?.isEmpty == true, "\(id): \(shown)")
            #expect((shown.fields["next"] as? [Any])?.isEmpty == true, "\(id): \(shown)")
        }
        let lou = try JSONRow.parseObject(try await sandbox.run(["show", "u-lou", "--json"]).stdout)
        #expect((lou.fields["history"] as? [[String: Any]])?.first?["status"] as? String == "sent", "\(lou)")

        let dana = try JSONRow.parseObject(try await sandbox.run(["show", "u-dana", "--json"]).stdout)
        #expect(dana["deceased_from"] == .string("card"))
        #expect(dana["death_date"] == .string("2024-01-03"))
        let fox = try JSONRow.parseObject(try await sandbox.run(["show", "u-fox", "--json"]).stdout)
        #expect(fox["deceased_from"] == .string("hand"))
        let table = try await sandbox.run(["show", "dana"])
        #expect(table.stdout.contains("in memory:    deceased (card, died 2024-01-03)"), "\(table)")
    }

    @Test(arguments: ["ask", "wish"])
    func askAndWishRefuseTheDeadWithOneLine(command: String) async throws {
        let sandbox = try await world()
        for (query, name) in [("dana", "Dana Scully"), ("fox", "Fox Mulder"), ("walter", "Walter Skinner")] {
            let result = try await sandbox.run([command, query, "--now", "2027-02-23T09:00"])
            #expect(result.status == 2, "\(command) \(query): \(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
            #expect(result.stderr.contains("\(name): in memory (deceased); no \(command) is sent"), "\(result)")
            #expect(!result.stdout.contains("example.org"), "\(result)")
        }
    }

    @Test func missingLeavesOutTheDeadAndAllShowsThemInMemory() async throws {
        let sandbox = try await world()
        let missing = try await sandbox.jsonRows(["list", "--missing", "--json", "--now", "2027-01-15"])
        #expect(missing.compactMap { $0["contact_id"].string } == ["u-mia"])
        let ask = try await sandbox.run(["ask", "--missing", "--dry-run", "--now", "2027-01-15"])
        #expect(ask.status == 0, "\(ask)")
        #expect(ask.stdout.contains("Mia") && !ask.stdout.contains("Walter"), "\(ask)")

        let all = try await sandbox.jsonRows(["list", "--all", "--json", "--now", "2027-01-15"])
        let inMemory = all.filter { $0["section"] == .string("in_memory") }.compactMap { $0["contact_id"].string }
        #expect(inMemory == ["u-dana", "u-fox", "u-walter"], "\(all)")
        // One row each, and no birthday or anniversary rows for them elsewhere.
        #expect(all.filter { ["u-dana", "u-fox", "u-walter"].contains($0["contact_id"].string ?? "") }.count == 3, "\(all)")
        let table = try await sandbox.run(["list", "--all", "--now", "2027-01-15"])
        let lines = table.stdout.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex(of: "In memory"), "\(table)")
        #expect(lines[(heading + 1)...].contains { $0.contains("Dana Scully") && $0.contains("died 2024-01-03") }, "\(table)")
        #expect(lines[(heading + 1)...].contains { $0.contains("Walter Skinner") && $0.contains("died winter 2025") }, "\(table)")
        #expect(!lines[..<heading].contains { $0.contains("Dana") || $0.contains("Fox") }, "\(table)")
        let plain = try await sandbox.run(["list", "--now", "2027-01-15"])
        #expect(!plain.stdout.contains("Dana") && !plain.stdout.contains("In memory"), "\(plain)")
    }

    /// `--no-deceased` marks a contact living: it wins over the card's date of
    /// death, and `set` without a flag name changes nothing about it.
    @Test func noDeceasedWinsOverTheCard() async throws {
        let sandbox = try await world()
        let living = try await sandbox.run(["set", "dana", "--no-deceased"])
        #expect(living.status == 0, "\(living)")
        #expect(living.stdout.contains("Dana Scully: living"), "\(living)")
        let events = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15", "--days", "60"])
        #expect(events.contains { $0["id"] == .string("u-dana/0/2027-02-23") }, "\(events)")
        #expect(!events.contains { $0["id"].string?.hasPrefix("u-fox/") == true }, "\(events)")
        #expect(try await sandbox.run(["set", "fox", "--no-deceased"]).status == 0)
        let after = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15", "--days", "60"])
        #expect(after.contains { $0["id"] == .string("u-fox/0/2027-02-23") }, "\(after)")
    }
}
