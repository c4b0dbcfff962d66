import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing

/// `buzz export ics` (docs/design/asks-and-wishes.md), read back by a real iCalendar library:
/// Python's `icalendar` expanded by `recurring_ical_events` (Debian's
/// python3-icalendar and python3-recurring-ical-events; `scripts/deps.sh test`).
@Suite struct ExportCLITests {
    static let python = "/usr/bin/python3"

    /// Whether the two Python modules are there (required with BUZZ_REQUIRE_SERVERS=1).
    static let canParse: Bool = {
        if ProcessInfo.processInfo.environment["BUZZ_REQUIRE_SERVERS"] == "1" { return true }
        return (try? runPython(["-c", "import icalendar, recurring_ical_events"]).status) == 0
    }()

    /// The next `count` occurrences on or after START per UID (single events
    /// of one contact share a UID up to their `-YYYYMMDD` tail).
    static let expand = """
        import datetime, json, re, sys
        import icalendar, recurring_ical_events
        cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
        start = datetime.date.fromisoformat(sys.argv[2])
        out = {}
        for event in recurring_ical_events.of(cal).between(start, start + datetime.timedelta(days=366 * 8)):
            uid = re.sub(r'-[0-9]{8}@', '@', str(event['UID']))
            day = event['DTSTART'].dt
            assert not isinstance(day, datetime.datetime), 'not an all-day event'
            out.setdefault(uid, []).append(day.isoformat())
        print(json.dumps({uid: sorted(days)[:5] for uid, days in out.items()}))
        """

    static func runPython(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    private func people(_ sandbox: Sandbox) async throws {
        let cards = [
            VCard.card(uid: "ana", name: "Ana Lima", bday: "1990-03-15", extra: ["ANNIVERSARY:20150620"]),
            VCard.card(uid: "bo", name: "Bo Yearless", bday: "--07-04"),
            VCard.card(uid: "cy", name: "Cy Leap", bday: "1996-02-29"),
            VCard.card(uid: "di", name: "Di Leap", bday: "--02-29"),
            VCard.card(uid: "eve", name: "Eve New Year", bday: "2001-01-01"),
            VCard.card(uid: "hava", name: "Hava Hebrew", extra: ["BDAY;CALSCALE=hebrew:19900315"]),
            VCard.card(uid: "sam", name: "Sam Skipped", bday: "1980-05-05"),
        ].joined()
        let file = try sandbox.write("people.vcf", cards)
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await sandbox.run(["skip", "sam"]).status == 0)
    }

    /// The next five dates per contact and occasion as `buzz list` gives them,
    /// asking again the day after each one (the list in process: `LibraryList`).
    private func listDates(_ sandbox: Sandbox, from start: LocalDate) async throws -> [String: [String]] {
        var dates: [String: [String]] = [:]
        var askFrom: [String: LocalDate] = [:]  // UID → the day after its last date
        for round in 0..<5 {
            let days: Set<LocalDate> = round == 0 ? [start] : Set(askFrom.values)
            for day in days.sorted() {
                let rows = try LibraryList.entries(sandbox, now: day.description)
                for row in rows {
                    let id = row.contact.id, occasion = row.occasion.rawValue
                    guard let next = row.next?.date.description else { continue }
                    let key = ICalendarExport.uid(contactID: id, occasion: OccasionKind.named(occasion).map { Occasion($0) } ?? .birthday)
                    guard round == 0 || askFrom[key] == day, dates[key, default: []].count == round else { continue }
                    dates[key, default: []].append(next)
                    if let date = Birthday(storedForm: next)?.dateOfBirth { askFrom[key] = date.adding(days: 1) }
                }
            }
        }
        return dates
    }

    @Test(.enabled(if: canParse, "needs python3-icalendar and python3-recurring-ical-events"),
          arguments: ["feb28", "mar1"])
    func nextFiveOccurrencesMatchTheList(feb29: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nfeb29 = \"\(feb29)\"\n")
        try await people(sandbox)
        let now = "2026-11-24"
        let output = sandbox.root + "/out/birthdays.ics"
        try FileManager.default.createDirectory(atPath: sandbox.root + "/out", withIntermediateDirectories: true)
        let exported = try await sandbox.run(["export", "ics", "--output", output, "--now", now])
        #expect(exported.status == 0 && exported.stdout.isEmpty && exported.stderr.isEmpty, "\(exported)")
        let parsed = try Self.runPython(["-c", Self.expand, output, now])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let calendar = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: [String]])
        let listed = try await listDates(sandbox, from: LocalDate(year: 2026, month: 11, day: 24)!)
        #expect(listed.count == 7, "six buzzed contacts and one anniversary: \(listed)")
        #expect(calendar == listed)
        // Feb 29 in the leap year, the policy's day in common years.
        let leapling = ICalendarExport.uid(contactID: "di", occasion: .birthday)
        let common = feb29 == "feb28" ? "02-28" : "03-01"
        #expect(calendar[leapling] == ["2027-\(common)", "2028-02-29", "2029-\(common)", "2030-\(common)", "2031-\(common)"])
        // The skipped contact is not in the calendar.
        #expect(calendar[ICalendarExport.uid(contactID: "sam", occasion: .birthday)] == nil)
        // Standard output holds the same calendar as the file, but for DTSTAMP.
        let printed = try await sandbox.run(["export", "ics", "--now", now])
        #expect(printed.status == 0)
        #expect(printed.stdout == (try String(contentsOfFile: output, encoding: .utf8)))
    }

    @Test func exportSectionIsCheckedAndUnwritableOutputIsOneLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[export]\nics = 3\n")
        let bad = try await sandbox.run(["export", "ics"])
        #expect(bad.status == 2 && bad.stderrLines.count == 1 && bad.stderr.contains("export.ics"), "\(bad)")
        try sandbox.writeConfig("[export]\nics = \"x.ics\"\nfile = 1\n")
        #expect(try await sandbox.run(["export", "ics"]).status == 2)
        try sandbox.writeConfig("")
        let blocker = try sandbox.write("blocker", "")
        let unwritable = try await sandbox.run(["export", "ics", "--output", blocker + "/x.ics"])
        #expect(unwritable.status == 1 && unwritable.stderrLines.count == 1, "\(unwritable)")
    }

    /// `--output` names a file in a folder that exists: a one-letter relative name
    /// works (it crashed in Foundation's path code), a missing folder is not made
    /// (a typo creates nothing), a folder or a file in the way says so.
    @Test func outputPathsSayWhatIsWrong() async throws {
        let sandbox = try Sandbox()
        let plain = try await sandbox.run(["export", "ics", "-o", "x"])
        #expect(plain.status == 0 && FileManager.default.fileExists(atPath: sandbox.root + "/x"), "\(plain)")
        let missing = try await sandbox.run(["export", "ics", "-o", "nope/x.ics"])
        #expect(missing.status == 1 && missing.stderr == "buzz: nope/x.ics: cannot write the calendar (nope: No such file or directory)\n",
                "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root + "/nope"))
        let folder = try await sandbox.run(["export", "ics", "-o", sandbox.root])
        #expect(folder.status == 1 && folder.stderr.contains("it is a folder"), "\(folder)")
        let file = try sandbox.write("plain", "")
        let underFile = try await sandbox.run(["export", "ics", "-o", file + "/x.ics"])
        #expect(underFile.status == 1 && underFile.stderr.contains("\(file) is not a folder"), "\(underFile)")
    }
}
