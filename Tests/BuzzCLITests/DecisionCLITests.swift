import BuzzTestKit
import Foundation
import Testing

/// include / skip / set-birthday / clear-birthday, and CONTACT resolution (docs/design/identity.md, docs/design/command-line.md).
@Suite struct DecisionCLITests {
    /// Ann, Anna Bell and Dan Dane (all undecided: no birthdays), plus Gus with a card birthday (included).
    private func people() async throws -> Sandbox {
        let sandbox = try Sandbox()
        let file = try sandbox.write("people.vcf", [
            VCard.card(uid: "u-ann", name: "Ann"),
            VCard.card(uid: "u-anna", name: "Anna Bell"),
            VCard.card(uid: "u-dan", name: "Dan Dane"),
            VCard.card(uid: "u-gus", name: "Gus Grey", bday: "1950-10-10"),
        ].joined())
        let result = try await sandbox.run(["import", file])
        #expect(result.status == 0, "\(result)")
        return sandbox
    }

    @Test(arguments: [["include", "zelda"], ["skip", "zelda"], ["set-birthday", "zelda", "1990-01-01"],
                      ["clear-birthday", "zelda"], ["include", "ann", "zelda"]])
    func unknownContactExitsTwoAndChangesNothing(arguments: [String]) async throws {
        let sandbox = try await people()
        let before = try await sandbox.run(["list", "--all", "--json", "--now", "2027-01-15"])
        let result = try await sandbox.run(arguments)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("zelda"), "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        let after = try await sandbox.run(["list", "--all", "--json", "--now", "2027-01-15"])
        #expect(after.stdout == before.stdout)
    }

    @Test(arguments: ["include", "skip"])
    func ambiguousNameExitsTwoAndListsCandidates(command: String) async throws {
        let sandbox = try await people()
        let result = try await sandbox.run([command, "an"])
        #expect(result.status == 2, "\(result)")
        for candidate in ["Ann", "Anna Bell", "u-ann", "u-anna", "Dan Dane"] {
            #expect(result.stderr.contains(candidate), "\(candidate): \(result)")
        }
        #expect(!result.stderr.contains("Gus"), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["u-ann"]?["buzzed"] == .null)
        #expect(all["u-anna"]?["buzzed"] == .null)
    }

    @Test func exactFullNameWinsOverPartialMatches() async throws {
        let sandbox = try await people()
        let result = try await sandbox.run(["include", "ANN"])
        #expect(result.status == 0, "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["u-ann"]?["buzzed"] == .bool(true))
        #expect(all["u-anna"]?["buzzed"] == .null)
    }

    @Test func idAndPartialNameResolve() async throws {
        let sandbox = try await people()
        #expect(try await sandbox.run(["skip", "u-anna", "bell", "dAnE"]).status == 0)
        let all = try await sandbox.listAll()
        #expect(all["u-anna"]?["buzzed"] == .bool(false))
        #expect(all["u-dan"]?["buzzed"] == .bool(false))
        #expect(try await sandbox.run(["include", "anna bell"]).status == 0)
        #expect(try await sandbox.listAll()["u-anna"]?["buzzed"] == .bool(true))
        // Skipping an included contact stops its reminders.
        #expect(try await sandbox.run(["skip", "gus"]).status == 0)
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15"])
        #expect(upcoming.isEmpty, "\(upcoming)")
    }

    @Test(arguments: ["2027-06-02", "2099-01-01", "02-30", "2023-02-29", "13-01", "00-10", "1990-3-5",
                      "1990-04-31", "tomorrow", "0229", "12-32", "0000-02-30", "1900-02-30"])
    func impossibleOrFutureBirthdayExitsTwo(date: String) async throws {
        let sandbox = try await people()
        let result = try await sandbox.run(["set-birthday", "anna", date, "--now", "2027-06-01"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(date), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["u-anna"]?["birthday"] == .null)
        #expect(all["u-anna"]?["buzzed"] == .null)
    }

    @Test(arguments: [("02-29", "--02-29"), ("2027-06-01", "2027-06-01"), ("2024-02-29", "2024-02-29"), ("12-31", "--12-31"),
                      ("1604-04-12", "--04-12"), ("0000-02-29", "--02-29"), ("1897-06-01", "1897-06-01"),
                      ("1900-10-11", "--10-11")])
    func validBirthdayOnAnUndecidedContactIncludesIt(date: String, stored: String) async throws {
        let sandbox = try await people()
        let result = try await sandbox.run(["set-birthday", "anna", date, "--now", "2027-06-01"])
        #expect(result.status == 0, "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["u-anna"]?["birthday"] == .string(stored))
        #expect(all["u-anna"]?["buzzed"] == .bool(true))
    }

    @Test func dashDashMonthDayForm() async throws {
        let sandbox = try await people()
        // With the end-of-options marker the --MM-DD form is a value.
        let separated = try await sandbox.run(["set-birthday", "anna", "--", "--03-04"])
        #expect(separated.status == 0, "\(separated)")
        #expect(try await sandbox.listAll()["u-anna"]?["birthday"] == .string("--03-04"))
        // docs/design/command-line.md lists --MM-DD as a DATE form, so it must work as typed.
        let bare = try await sandbox.run(["set-birthday", "dan", "--05-06"])
        #expect(bare.status == 0, "set-birthday dan --05-06: \(bare)")
        #expect(try await sandbox.listAll()["u-dan"]?["birthday"] == .string("--05-06"))
    }

    @Test func birthdayOnASkippedContactKeepsItSkipped() async throws {
        let sandbox = try await people()
        #expect(try await sandbox.run(["skip", "dan"]).status == 0)
        let result = try await sandbox.run(["set-birthday", "dan", "02-29"])
        #expect(result.status == 0, "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["u-dan"]?["birthday"] == .string("--02-29"))
        #expect(all["u-dan"]?["buzzed"] == .bool(false))
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15"])
        #expect(!upcoming.contains { $0["contact_id"] == .string("u-dan") })
    }

    @Test func handEnteredBirthdayWinsAndClearRestoresTheCards() async throws {
        let sandbox = try await people()
        #expect(try await sandbox.run(["set-birthday", "gus", "1951-11-11"]).status == 0)
        var gus = try await sandbox.listAll()["u-gus"]
        #expect(gus?["birthday"] == .string("1951-11-11"))
        #expect(gus?["buzzed"] == .bool(true))
        let cleared = try await sandbox.run(["clear-birthday", "gus"])
        #expect(cleared.status == 0, "\(cleared)")
        gus = try await sandbox.listAll()["u-gus"]
        #expect(gus?["birthday"] == .string("1950-10-10"))
        #expect(gus?["buzzed"] == .bool(true))
        // Now the card's birthday is the one cleared (docs/design/identity.md).
        let again = try await sandbox.run(["clear-birthday", "gus"])
        #expect(again.status == 0, "\(again)")
        #expect(try await sandbox.listAll()["u-gus"]?["birthday"] == .null)
    }

    /// Issue 10 point 14: `clear-birthday` on a card's birthday records "no
    /// birthday" (the card's date is wrong), which survives re-import, also of a
    /// changed card; `set-birthday` then wins, and clearing that shows the card's again.
    @Test func clearingTheCardsBirthdayRecordsNoBirthdayAcrossReimport() async throws {
        let sandbox = try await people()
        let cleared = try await sandbox.run(["clear-birthday", "gus"])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(cleared.stdout.contains("1950-10-10"), "\(cleared)")
        func gus() async throws -> JSONRow? { try await sandbox.listAll()["u-gus"] }
        #expect(try await gus()?["birthday"] == .null)
        #expect(try await gus()?["section"] == .string("missing"))
        #expect(try await gus()?["buzzed"] == .bool(true), "the decision stays")
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-01-15", "--days", "400"])
        #expect(!upcoming.contains { $0["contact_id"] == .string("u-gus") }, "\(upcoming)")
        let missing = try await sandbox.jsonRows(["list", "--missing", "--json", "--now", "2027-01-15"])
        #expect(missing.contains { $0["contact_id"] == .string("u-gus") }, "\(missing)")
        // Twice is fine.
        #expect(try await sandbox.run(["clear-birthday", "gus"]).status == 0)

        // Re-import: the same card, then a changed one.
        let file = sandbox.root + "/people.vcf"
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await gus()?["birthday"] == .null)
        try sandbox.write("people.vcf", VCard.card(uid: "u-gus", name: "Gus Grey", bday: "1950-10-11"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        #expect(try await gus()?["birthday"] == .null)

        // A hand-entered birthday wins; clearing it shows the card's again.
        #expect(try await sandbox.run(["set-birthday", "gus", "1951-01-02"]).status == 0)
        #expect(try await gus()?["birthday"] == .string("1951-01-02"))
        #expect(try await sandbox.run(["clear-birthday", "gus"]).status == 0)
        #expect(try await gus()?["birthday"] == .string("1950-10-11"))
    }

    @Test func clearingWithNoBirthdayAtAllExitsTwo() async throws {
        let sandbox = try await people()
        let result = try await sandbox.run(["clear-birthday", "dan"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("Dan Dane has no birthday to clear"), "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
    }

    /// Issue 10 point 14: `set-birthday` takes every real past date import takes;
    /// a year more than 130 years back gets a note, not a refusal.
    @Test(arguments: ["0001-01-01", "1850-05-05", "1896-06-01"])
    func everyPastDateImportTakesIsTaken(date: String) async throws {
        let sandbox = try await people()
        let file = try sandbox.write("old.vcf", VCard.card(uid: "u-old", name: "Olga Old", bday: date))
        let imported = try await sandbox.run(["import", file, "--now", "2027-06-01"])
        #expect(imported.status == 0 && imported.stderr.isEmpty, "\(imported)")
        #expect(try await sandbox.listAll()["u-old"]?["birthday"] == .string(date))

        let result = try await sandbox.run(["set-birthday", "anna", date, "--now", "2027-06-01"])
        #expect(result.status == 0, "\(result)")
        #expect(try await sandbox.listAll()["u-anna"]?["birthday"] == .string(date))
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("note:") && result.stderr.contains("more than 130 years ago"), "\(result)")
    }

    /// Issue 10 point 14: a CONTACT argument that is an exact contact id means that
    /// contact, before any name match (here another contact is named exactly so).
    @Test(arguments: [["include", "ann"], ["skip", "ann"], ["set-birthday", "ann", "01-02"], ["clear-birthday", "ann"],
                      ["ask", "ann", "--dry-run"]])
    func exactIdWinsOverAName(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("ids.vcf", [
            VCard.card(uid: "ann", name: "Zed Zulu", bday: "1970-01-01"),
            VCard.card(uid: "u-2", name: "Ann"),
            VCard.card(uid: "u-3", name: "Annabel Ann"),
        ].joined())
        #expect(try await sandbox.run(["import", file]).status == 0)
        if arguments[0] == "ask" { #expect(try await sandbox.run(["clear-birthday", "ann"]).status == 0) }
        let before = try await sandbox.listAll()
        let result = try await sandbox.run(arguments)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Zed Zulu") || result.stderr.contains("Zed Zulu"), "\(result)")
        let after = try await sandbox.listAll()
        for id in ["u-2", "u-3"] {  // the contacts named Ann are untouched
            #expect(after[id]?["buzzed"] == before[id]?["buzzed"], "\(id)")
            #expect(after[id]?["birthday"] == before[id]?["birthday"], "\(id)")
        }
    }

    @Test func clearBirthdayLeavesAContactWithoutOneMissing() async throws {
        let sandbox = try await people()
        #expect(try await sandbox.run(["set-birthday", "ann", "1999-01-02"]).status == 0)
        #expect(try await sandbox.run(["clear-birthday", "ann"]).status == 0)
        let ann = try await sandbox.listAll()["u-ann"]
        #expect(ann?["birthday"] == .null)
        #expect(ann?["section"] == .string("missing"))
        #expect(ann?["buzzed"] == .bool(true), "set-birthday included it; clearing does not undo the decision")
    }
}

/// `triage` driven through piped stdin.
@Suite struct TriageCLITests {
    private func threeUndecided() async throws -> Sandbox {
        let sandbox = try Sandbox()
        let file = try sandbox.write("t.vcf", [
            VCard.card(uid: "t-1", name: "Cara Cole"),
            VCard.card(uid: "t-2", name: "Dirk Dale"),
            VCard.card(uid: "t-3", name: "Emma Eddy"),
            VCard.card(uid: "t-4", name: "Finn Fixed", bday: "1980-02-02"),  // included already: not triaged
        ].joined())
        #expect(try await sandbox.run(["import", file]).status == 0)
        return sandbox
    }

    @Test func includeSkipQuit() async throws {
        let sandbox = try await threeUndecided()
        let result = try await sandbox.run(["triage"], stdin: "i\ns\nq\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("[1/3]"), "\(result)")
        #expect(result.stdout.contains("[2/3]"), "\(result)")
        #expect(!result.stdout.contains("/4]"), "\(result)")
        #expect(!result.stdout.contains("Finn"), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["t-1"]?["buzzed"] == .bool(true))
        #expect(all["t-2"]?["buzzed"] == .bool(false))
        #expect(all["t-3"]?["buzzed"] == .null)
        #expect(all["t-4"]?["buzzed"] == .bool(true))
    }

    @Test func enterABirthday() async throws {
        let sandbox = try await threeUndecided()
        let result = try await sandbox.run(["triage", "--now", "2027-01-15"], stdin: "b\n1990-05-06\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("[1/3]"), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["t-1"]?["birthday"] == .string("1990-05-06"))
        #expect(all["t-1"]?["buzzed"] == .bool(true))
        #expect(all["t-1"]?["next"] == .string("2027-05-06"))
        #expect(all["t-2"]?["buzzed"] == .null)
    }

    @Test func badBirthdayIsAskedAgain() async throws {
        let sandbox = try await threeUndecided()
        // The date prompt repeats until a date comes (or an empty answer goes back to the menu).
        let result = try await sandbox.run(["triage", "--now", "2027-01-15"], stdin: "b\n02-30\n2099-01-01\n\nb\n--07-08\nn\ns\n")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.components(separatedBy: "try again").count == 3, "\(result)")
        #expect(!result.stdout.contains("answer i"), "no answer was taken for a menu choice: \(result)")
        let all = try await sandbox.listAll()
        #expect(all["t-1"]?["birthday"] == .string("--07-08"))
        #expect(all["t-1"]?["buzzed"] == .bool(true))
        #expect(all["t-2"]?["buzzed"] == .null, "n leaves it undecided")
        #expect(all["t-3"]?["buzzed"] == .bool(false))
    }

    @Test func endOfInputKeepsWhatWasDecided() async throws {
        let sandbox = try await threeUndecided()
        let result = try await sandbox.run(["triage"], stdin: "s\n")
        #expect(result.status == 0, "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["t-1"]?["buzzed"] == .bool(false))
        #expect(all["t-2"]?["buzzed"] == .null)
        // A second pass starts with what is still undecided.
        let second = try await sandbox.run(["triage"], stdin: "q\n")
        #expect(second.stdout.contains("[1/2] Dirk Dale"), "\(second)")
    }
}
