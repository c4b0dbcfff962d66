import BuzzTestKit
import Foundation
import Testing

/// `upcoming --json` over 100 generated contacts, checked against an
/// independent computation with Foundation's calendar in Europe/Berlin.
@Suite struct UpcomingCLITests {
    struct Person {
        var id: String
        var name: String
        var month: Int
        var day: Int
        var bday: String
    }

    struct Expected {
        var id: String
        var contactID: String
        var name: String
        var occurrence: String
        var offset: Int
        var fireAt: Date
    }

    static let zone = "Europe/Berlin"

    static var berlin: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone) ?? TimeZone(secondsFromGMT: 3_600)!
        return calendar
    }

    /// 100 people whose birthdays are spread over the year (every 3–4 days),
    /// in three BDAY forms, a third of them without a year.
    static let people: [Person] = {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(secondsFromGMT: 0)!
        let start = utc.date(from: DateComponents(year: 2027, month: 1, day: 1, hour: 12))!
        return (0..<100).map { index in
            let date = utc.date(byAdding: .day, value: index * 365 / 100, to: start)!
            let parts = utc.dateComponents([.month, .day], from: date)
            let month = parts.month!, day = parts.day!
            let year = 1940 + index % 70
            let md = String(format: "%02d%02d", month, day)
            let bday: String
            switch index % 3 {
            case 0: bday = "--" + md
            case 1: bday = String(format: "%04d-%02d-%02d", year, month, day)
            default: bday = String(format: "%04d", year) + md
            }
            return Person(id: String(format: "gen-%03d", index), name: "Person \(index) Generated",
                          month: month, day: day, bday: bday)
        }
    }()

    static var vcf: String {
        people.map { VCard.card(uid: $0.id, name: $0.name, bday: $0.bday, lineEnding: "\r\n") }.joined()
    }

    /// A Berlin wall-clock time as an instant.
    static func berlinTime(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        berlin.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    }

    /// Every contact's next reminder per offset after `now`, nearest first (ties by id, offset).
    static func expectedEvents(after now: Date, offsets: [Int] = [0, 1]) -> [Expected] {
        let calendar = berlin
        var events: [Expected] = []
        for person in people {
            for offset in offsets {
                for year in 2027...2029 {
                    let occurrence = berlinTime(year, person.month, person.day, 12)
                    let fireDay = calendar.date(byAdding: .day, value: -offset, to: occurrence)!
                    var parts = calendar.dateComponents([.year, .month, .day], from: fireDay)
                    parts.hour = 9
                    parts.minute = 0
                    let fire = calendar.date(from: parts)!
                    guard fire > now else { continue }
                    let date = String(format: "%04d-%02d-%02d", year, person.month, person.day)
                    events.append(Expected(id: "\(person.id)/\(offset)/\(date)", contactID: person.id, name: person.name,
                                           occurrence: date, offset: offset, fireAt: fire))
                    break
                }
            }
        }
        return events.sorted {
            ($0.fireAt, $0.contactID, $0.offset) < ($1.fireAt, $1.contactID, $1.offset)
        }
    }

    private func sandbox(config: String = "") async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"\(UpcomingCLITests.zone)\"\n" + config)
        let file = try sandbox.write("generated.vcf", UpcomingCLITests.vcf)
        let result = try await sandbox.run(["import", file])
        #expect(result.status == 0, "\(result)")
        #expect(ImportCounts(output: result.stdout) == ImportCounts(added: 100))
        return sandbox
    }

    /// Checks every event's fields against the expected list, in order.
    private func check(_ rows: [JSONRow], against expected: [Expected], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(rows.count == expected.count, sourceLocation: sourceLocation)
        let parser = ISO8601DateFormatter()
        var previous: Date?
        for (row, want) in zip(rows, expected) {
            #expect(row.keys == ["id", "contact_id", "name", "occasion", "occurrence", "offset_days", "fire_at", "channels"],
                    sourceLocation: sourceLocation)
            #expect(row["id"] == .string(want.id), sourceLocation: sourceLocation)
            #expect(row["contact_id"] == .string(want.contactID), sourceLocation: sourceLocation)
            #expect(row["name"] == .string(want.name), sourceLocation: sourceLocation)
            #expect(row["occurrence"] == .string(want.occurrence), sourceLocation: sourceLocation)
            #expect(row["offset_days"] == .int(want.offset), sourceLocation: sourceLocation)
            #expect(row["channels"] == .array([.string("console")]), sourceLocation: sourceLocation)
            // The id is <contact_id>/<offset>/<occurrence>.
            if let contact = row["contact_id"].string, let offset = row["offset_days"].int,
               let occurrence = row["occurrence"].string {
                #expect(row["id"] == .string("\(contact)/\(offset)/\(occurrence)"), sourceLocation: sourceLocation)
            }
            guard let text = row["fire_at"].string, let fire = parser.date(from: text) else {
                Issue.record("fire_at is not ISO 8601: \(row["fire_at"])", sourceLocation: sourceLocation)
                continue
            }
            #expect(text.hasSuffix("+01:00") || text.hasSuffix("+02:00"), "\(text)", sourceLocation: sourceLocation)
            #expect(text.contains("T09:00:00"), "\(text)", sourceLocation: sourceLocation)
            #expect(fire == want.fireAt, "\(text)", sourceLocation: sourceLocation)
            if let previous { #expect(previous <= fire, "not sorted at \(text)", sourceLocation: sourceLocation) }
            previous = fire
        }
    }

    static let now = "2027-01-01T12:00"
    static var nowInstant: Date { berlinTime(2027, 1, 1, 12) }

    @Test func defaultCeilingIs64NearestFirst() async throws {
        let sandbox = try await sandbox()
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", Self.now])
        let expected = Self.expectedEvents(after: Self.nowInstant)
        #expect(expected.count == 200)
        #expect(rows.count == 64)
        check(rows, against: Array(expected.prefix(64)))
    }

    @Test func maxPendingLimitsTheLookAhead() async throws {
        let sandbox = try await sandbox(config: "\n[reminders]\nmax_pending = 10\n")
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", Self.now])
        #expect(rows.count == 10)
        check(rows, against: Array(Self.expectedEvents(after: Self.nowInstant).prefix(10)))
    }

    @Test func limitMayExceedTheCeiling() async throws {
        let sandbox = try await sandbox(config: "\n[reminders]\nmax_pending = 10\n")
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--limit", "100", "--now", Self.now])
        #expect(rows.count == 100)
        check(rows, against: Array(Self.expectedEvents(after: Self.nowInstant).prefix(100)))
        // 100 events reach past the spring-forward night: summer time shows.
        #expect(rows.contains { $0["fire_at"].string?.hasSuffix("+02:00") == true })
        #expect(rows.contains { $0["fire_at"].string?.hasSuffix("+01:00") == true })
        let all = try await sandbox.jsonRows(["upcoming", "--json", "--limit", "1000", "--now", Self.now])
        #expect(all.count == 200)
    }

    @Test(arguments: [7, 0, 30])
    func daysStopsAtTheEndOfTheLocalDay(days: Int) async throws {
        let sandbox = try await sandbox()
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--days", String(days), "--now", Self.now])
        let end = Self.berlin.date(byAdding: .day, value: days + 1, to: Self.berlinTime(2027, 1, 1, 0))!
        let expected = Self.expectedEvents(after: Self.nowInstant).filter { $0.fireAt < end }
        if days == 7 { #expect(expected.count >= 3) }
        check(rows, against: expected)
    }

    @Test func daysZeroBeforeTheReminderTimeShowsToday() async throws {
        let sandbox = try await sandbox()
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--days", "0", "--now", "2027-01-01T08:59"])
        #expect(rows.map { $0["id"] } == [.string("gen-000/0/2027-01-01")])
        let after = try await sandbox.jsonRows(["upcoming", "--json", "--days", "0", "--now", "2027-01-01T09:00"])
        #expect(after.isEmpty, "an event firing exactly at now is not upcoming: \(after)")
    }

    @Test func groupsOverrideOffsets() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"

            [reminders]
            offsets = [0]

            [groups.family]
            offsets = [7, 1]
            """)
        let file = try sandbox.write("g.vcf", VCard.card(uid: "fam", name: "Fay Family", bday: "--0320", categories: ["Family"])
                                    + VCard.card(uid: "oth", name: "Otto Other", bday: "--0320", categories: ["Work"]))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
        #expect(rows.map { $0["id"] } == [.string("fam/7/2027-03-20"), .string("fam/1/2027-03-20"), .string("oth/0/2027-03-20")])
        #expect(rows.map { $0["fire_at"] } == [.string("2027-03-13T09:00:00+00:00"), .string("2027-03-19T09:00:00+00:00"),
                                               .string("2027-03-20T09:00:00+00:00")])
    }

    @Test func onlyIncludedContactsAreUpcoming() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("s.vcf", VCard.card(uid: "a", name: "Abe Able", bday: "--0105")
                                    + VCard.card(uid: "b", name: "Bea Bold", bday: "--0106"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await sandbox.run(["skip", "Abe"]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-01"])
        #expect(rows.compactMap { $0["contact_id"].string } == ["b", "b"])
        #expect(rows.map { $0["channels"] } == [.array([.string("console")]), .array([.string("console")])])
    }

    @Test func tiesAreOrderedByContactIDThenOffset() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("tie.vcf", VCard.card(uid: "b-2", name: "Bo Two", bday: "--0410")
                                    + VCard.card(uid: "a-1", name: "Al One", bday: "1980-04-10")
                                    + VCard.card(uid: "c-3", name: "Cy Three", bday: "--0411"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-04-01"])
        #expect(rows.map { $0["id"] } == [
            .string("a-1/1/2027-04-10"), .string("b-2/1/2027-04-10"),
            .string("a-1/0/2027-04-10"), .string("b-2/0/2027-04-10"), .string("c-3/1/2027-04-11"),
            .string("c-3/0/2027-04-11"),
        ])
    }

    @Test func slashAndPercentInAContactIDArePercentEncodedInTheEventID() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("slash.vcf", VCard.card(uid: "urn:uuid:a/b%c", name: "Sol Slash", bday: "--0305"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
        #expect(rows.map { $0["id"] } == [.string("urn:uuid:a%2Fb%25c/1/2027-03-05"), .string("urn:uuid:a%2Fb%25c/0/2027-03-05")])
        #expect(rows.map { $0["contact_id"] } == [.string("urn:uuid:a/b%c"), .string("urn:uuid:a/b%c")])
    }

    @Test func fireTimesInADSTGapAndOverlap() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"Europe/Berlin\"\n\n[reminders]\ntime = \"02:30\"\noffsets = [0]\n")
        let file = try sandbox.write("dst.vcf", VCard.card(uid: "spring", name: "Sprung Forward", bday: "--0328")
                                    + VCard.card(uid: "fall", name: "Fell Back", bday: "--1031"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-01"])
        // 02:30 does not exist on 2027-03-28 in Berlin: read with the offset before the gap (03:30 CEST).
        // 02:30 happens twice on 2027-10-31: the first instant (CEST).
        #expect(rows.map { $0["fire_at"] } == [.string("2027-03-28T03:30:00+02:00"), .string("2027-10-31T02:30:00+02:00")])
        // --now inside the gap is read the same way: 02:45 is 03:45 CEST, after the spring reminder.
        let later = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-28T02:45"])
        #expect(later.map { $0["id"] } == [.string("fall/0/2027-10-31"), .string("spring/0/2028-03-28")])
    }

    @Test(arguments: [["--days", "-1"], ["--limit", "0"], ["--limit", "x"]])
    func badUpcomingOptionsExitTwo(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["upcoming"] + arguments)
        #expect(result.status == 2, "\(result)")
    }
}
