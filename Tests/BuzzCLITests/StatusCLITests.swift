import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing

/// `buzz status` (docs/design/asks-and-wishes.md): today's birthdays, else the next one, read
/// through the store's birthday index; checked against `buzz list`.
@Suite struct StatusCLITests {
    private func people(_ sandbox: Sandbox) async throws {
        let cards = [
            VCard.card(uid: "ana", name: "Ana Lima", bday: "1990-03-15"),
            VCard.card(uid: "amy", name: "Amy March", bday: "--03-15"),
            VCard.card(uid: "bo", name: "Bo Yearless", bday: "--07-04"),
            VCard.card(uid: "cy", name: "Cy Leap", bday: "1996-02-29"),
            VCard.card(uid: "dan", name: "Dan Dec", bday: "1970-12-31"),
            VCard.card(uid: "eve", name: "Eve New Year", bday: "2001-01-01"),
            VCard.card(uid: "hava", name: "Hava Hebrew", extra: ["BDAY;CALSCALE=hebrew:19900420"]),
            VCard.card(uid: "sam", name: "Sam Skipped", bday: "1980-03-14"),
            VCard.card(uid: "max", name: "Max Manual", bday: "1980-09-09"),
            VCard.card(uid: "cleo", name: "Cleo Cleared", bday: "1980-03-13"),
            VCard.card(uid: "nia", name: "Nia Nobday"),
        ].joined()
        let file = try sandbox.write("people.vcf", cards)
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await sandbox.run(["skip", "sam"]).status == 0)
        #expect(try await sandbox.run(["set-birthday", "max", "1980-06-01"]).status == 0)
        #expect(try await sandbox.run(["clear-birthday", "cleo"]).status == 0)
    }

    private func status(_ sandbox: Sandbox, _ now: String) async throws -> [String: Any] {
        let result = try await sandbox.run(["status", "--json", "--now", now])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test(arguments: ["feb28", "mar1"])
    func agreesWithTheList(feb29: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nfeb29 = \"\(feb29)\"\n")
        try await people(sandbox)
        let days = ["2027-01-01", "2027-02-27", "2027-02-28", "2027-03-01", "2027-03-13", "2027-03-14", "2027-03-15",
                    "2027-04-20", "2027-06-01", "2027-07-05", "2027-12-31", "2028-02-28", "2028-02-29", "2028-03-01"]
        for day in days {
            // The list, in process (what `buzz list --json --now DAY` prints); `status` through the binary.
            let rows = try LibraryList.entries(sandbox, now: day)
                .filter { $0.occasion == .birthday && $0.daysUntil != nil }
            func name(_ row: ListEntry) -> String { row.contact.name }
            func until(_ row: ListEntry) -> Int { row.daysUntil ?? -1 }
            let expectedToday = rows.filter { until($0) == 0 }.map(name).sorted()
            let later = rows.filter { until($0) > 0 }
            let nearest = later.map(until).min()
            let answer = try await status(sandbox, day)
            #expect((answer["today"] as? [String])?.sorted() == expectedToday, "\(day): \(answer)")
            let next = answer["next"] as? [String: Any]
            #expect(next?["days_until"] as? Int == nearest, "\(day): \(answer)")
            let candidates = later.filter { until($0) == nearest }.map(name)
            #expect(candidates.contains(next?["name"] as? String ?? "?"), "\(day): \(answer) vs \(candidates)")
        }
    }

    @Test func waybarClassesAndPlainLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n")
        let empty = try await sandbox.run(["status", "--waybar"])
        #expect(empty.status == 0, "\(empty)")
        let none = try JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [String: String]
        #expect(none?["class"] == "none" && none?["text"] == "", "\(empty)")
        #expect(try await status(sandbox, "2027-01-01")["next"] is NSNull)
        try await people(sandbox)
        func waybar(_ now: String) async throws -> [String: String] {
            let result = try await sandbox.run(["status", "--waybar", "--now", now])
            #expect(result.status == 0 && result.stdout.split(separator: "\n").count == 1, "\(result)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String])
        }
        let today = try await waybar("2027-03-15T10:00")
        #expect(today["class"] == "today" && today["text"] == "🎂 Amy March, Ana Lima", "\(today)")
        #expect(today["tooltip"]?.contains("Ana Lima (37)") == true, "\(today)")
        #expect(try await waybar("2027-03-10")["class"] == "soon")
        #expect(try await waybar("2027-03-16")["class"] == "none")
        let plain = try await sandbox.run(["status", "--now", "2027-03-12"])
        #expect(plain.stdout == "Next: Amy March, Ana Lima (37) in 3 days (2027-03-15)\n", "\(plain)")
        let both = try await sandbox.run(["status", "--json", "--waybar"])
        #expect(both.status == 2 && both.stderrLines.count == 1, "\(both)")
    }
    /// waybar reads `text` and `tooltip` as Pango markup: `&`, `<`, `>` and
    /// quotes in names are escaped there, and only there (`--json` is JSON, and
    /// the plain line is text).
    @Test func waybarEscapesNamesForPango() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n")
        let cards = [
            VCard.card(uid: "tj", name: "Tom & Jerry", bday: "1990-03-15"),
            VCard.card(uid: "big", name: "<span size=\"50000\">Big</span>", bday: "1991-03-15"),
            VCard.card(uid: "ob", name: "Kate O'Brien", bday: "1992-03-20"),
        ].joined()
        let file = try sandbox.write("people.vcf", cards)
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await sandbox.run(["include", "tj", "big", "ob"]).status == 0)

        let result = try await sandbox.run(["status", "--waybar", "--now", "2027-03-15T10:00"])
        #expect(result.status == 0, "\(result)")
        let waybar = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String])
        #expect(waybar["text"] == "🎂 &lt;span size=&quot;50000&quot;&gt;Big&lt;/span&gt;, Tom &amp; Jerry", "\(waybar)")
        #expect(waybar["tooltip"] == "Today: &lt;span size=&quot;50000&quot;&gt;Big&lt;/span&gt; (36), Tom &amp; Jerry (37)\n"
                + "Next: Kate O&#39;Brien (35), in 5 days (2027-03-20)", "\(waybar)")

        let json = try await sandbox.run(["status", "--json", "--now", "2027-03-15T10:00"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((object["today"] as? [String])?.sorted() == ["<span size=\"50000\">Big</span>", "Tom & Jerry"], "\(json)")
        #expect((object["next"] as? [String: Any])?["name"] as? String == "Kate O'Brien", "\(json)")
        let plain = try await sandbox.run(["status", "--now", "2027-03-15T10:00"])
        #expect(plain.stdout.contains("Tom & Jerry (37)") && plain.stdout.contains("<span size=\"50000\">Big</span>"), "\(plain)")
    }

    /// Today's names come in the order of their lowered letters' code points
    /// (accented letters after z, as String's order puts them), then by id
    /// for two of one name.
    @Test func todaysNamesAreInOrder() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n")
        let names = [("b1", "bob"), ("a2", "Álvaro"), ("a1", "alice"), ("z1", "Zoë"), ("e1", "Émile"),
                     ("n2", "Ann"), ("n1", "ann"), ("n3", "Anna")]
        let cards = names.map { VCard.card(uid: $0.0, name: $0.1, bday: "1990-03-15") }.joined()
        let file = try sandbox.write("people.vcf", cards)
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await sandbox.run(["include"] + names.map(\.0)).status == 0)
        let answer = try await status(sandbox, "2027-03-15T10:00")
        #expect(answer["today"] as? [String] == ["alice", "ann", "Ann", "Anna", "bob", "Zoë", "Álvaro", "Émile"], "\(answer)")
    }
}
