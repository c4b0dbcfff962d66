import BuzzTestKit
import Foundation
import Testing

/// `buzz import`: counts, bad cards, bad inputs, vdirs, prune, re-import (docs/design/identity.md, docs/design/command-line.md).
@Suite struct ImportCLITests {
    static let three = [
        VCard.card(uid: "urn:uuid:0001", name: "Ada Archer", bday: "1961-03-15", emails: ["ada@example.org"]),
        VCard.card(uid: "urn:uuid:0002", name: "Ben Baker", bday: "--0704"),
        VCard.card(uid: "urn:uuid:0003", name: "Cleo Carter", phones: ["+49 30 1234567"]),
    ]

    private func importing(_ sandbox: Sandbox, _ paths: [String], _ extra: [String] = [],
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> (BuzzResult, ImportCounts?) {
        let result = try await sandbox.run(["import"] + paths + extra + ["--now", "2027-01-15"], sourceLocation: sourceLocation)
        return (result, ImportCounts(output: result.stdout))
    }

    @Test func countsOnFirstSecondAndChangedImport() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("contacts.vcf", Self.three.joined())
        let (first, firstCounts) = try await importing(sandbox, [file])
        #expect(first.status == 0, "\(first)")
        #expect(firstCounts == ImportCounts(added: 3), "\(first)")
        #expect(first.stderr.isEmpty, "\(first)")

        let (second, secondCounts) = try await importing(sandbox, [file])
        #expect(second.status == 0)
        #expect(secondCounts == ImportCounts(unchanged: 3), "\(second)")

        try sandbox.write("contacts.vcf", Self.three[0]
                          + VCard.card(uid: "urn:uuid:0002", name: "Ben Baker", bday: "--0705")
                          + Self.three[2]
                          + VCard.card(uid: "urn:uuid:0004", name: "Dora Dale", bday: "2001-12-24"))
        let (third, thirdCounts) = try await importing(sandbox, [file])
        #expect(third.status == 0)
        #expect(thirdCounts == ImportCounts(added: 1, updated: 1, unchanged: 2), "\(third)")

        let all = try await sandbox.listAll()
        #expect(all.count == 4)
        #expect(all["urn:uuid:0002"]?["birthday"] == .string("--07-05"))
        #expect(all["urn:uuid:0001"]?["buzzed"] == .bool(true))
        #expect(all["urn:uuid:0003"]?["buzzed"] == .null)
        #expect(all["urn:uuid:0003"]?["section"] == .string("missing"))
        #expect(all["urn:uuid:0004"]?["age"] == .int(26))
    }

    @Test func impossibleBirthdayIsReportedAndTheContactKept() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("broken.vcf", VCard.card(uid: "good-1", name: "Gil Good", bday: "1980-04-01")
                                     + VCard.card(uid: "bad-2", name: "Boris Broken", bday: "1990-02-30")
                                     + VCard.card(uid: "bad-3", name: "Mia Month", bday: "1990-13-01"))
        let (result, counts) = try await importing(sandbox, [file])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(added: 3), "\(result)")
        let lines = result.stderrLines
        #expect(lines.count == 2, "\(result)")
        let first = try #require(lines.first)
        #expect(first.contains("broken.vcf"), "\(result)")
        #expect(first.contains("card 2"), "\(result)")
        #expect(first.contains("UID bad-2"), "\(result)")
        #expect(first.contains("1990-02-30"), "\(result)")
        #expect(lines.last?.contains("card 3") == true && lines.last?.contains("UID bad-3") == true, "\(result)")

        let all = try await sandbox.listAll()
        #expect(all.count == 3)
        for id in ["bad-2", "bad-3"] {
            #expect(all[id]?["birthday"] == .null)
            #expect(all[id]?["buzzed"] == .null, "no birthday: undecided")
            #expect(all[id]?["section"] == .string("missing"))
        }
        #expect(all["bad-2"]?["name"] == .string("Boris Broken"))
        #expect(all["good-1"]?["birthday"] == .string("1980-04-01"))
    }

    /// A BDAY after today (2090 typed for 1990) is reported and dropped: kept, it
    /// would never fire, and `set-birthday` refuses the same date.
    @Test func futureBirthdayIsReportedAndTheContactKeptWithout() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("future.vcf", VCard.card(uid: "typo", name: "Future Typo", bday: "2090-01-06")
                                     + VCard.card(uid: "fine", name: "Fine Year", bday: "1990-01-06"))
        let (result, counts) = try await importing(sandbox, [file])
        #expect(counts == ImportCounts(added: 2), "\(result)")
        #expect(result.stderrLines == [Substring(file + ": card 1 (UID typo): BDAY 2090-01-06 is in the future "
                                                   + "(today is 2027-01-15); kept without a birthday")], "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["typo"]?["birthday"] == .null && all["typo"]?["section"] == .string("missing"))
        #expect(all["fine"]?["birthday"] == .string("1990-01-06"))
    }

    @Test func truncatedCardDoesNotSwallowTheNextOne() async throws {
        let sandbox = try Sandbox()
        let truncated = "BEGIN:VCARD\nVERSION:3.0\nUID:cut-1\nFN:Tina Truncated\nBDAY:1975-05-05\n"
        let file = try sandbox.write("cut.vcf", truncated + VCard.card(uid: "whole-2", name: "Walt Whole", bday: "1970-07-07"))
        let (result, counts) = try await importing(sandbox, [file])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(added: 1, skipped: 1), "\(result)")
        #expect(result.stderr.contains("cut.vcf"), "\(result)")
        #expect(result.stderr.contains("card 1"), "\(result)")
        let all = try await sandbox.listAll()
        #expect(Set(all.keys) == ["whole-2"])
        #expect(all["whole-2"]?["birthday"] == .string("1970-07-07"))

        // A card cut off by the end of the input.
        let tail = try sandbox.write("tail.vcf", VCard.card(uid: "t-1", name: "Theo Tail", bday: "--0101") + truncated)
        let (tailResult, tailCounts) = try await importing(sandbox, [tail])
        #expect(tailResult.status == 0, "\(tailResult)")
        #expect(tailCounts == ImportCounts(added: 1, skipped: 1), "\(tailResult)")
        #expect(tailResult.stderr.contains("card 2"), "\(tailResult)")
    }

    @Test func nonVCardFileExitsTwoAndImportsNothing() async throws {
        let sandbox = try Sandbox()
        let good = try sandbox.write("good.vcf", Self.three.joined())
        let text = try sandbox.write("notes.txt", "Remember to buy milk.\nBEGIN:VCARD is not on the first line\n")
        for paths in [[text], [good, text], [text, good]] {
            let (result, counts) = try await importing(sandbox, paths)
            #expect(result.status == 2, "\(paths): \(result)")
            #expect(counts == nil, "\(result)")
            #expect(result.stderr.contains("notes.txt"), "\(result)")
            #expect(result.stderrLines.count == 1, "\(result)")
        }
        let all = try await sandbox.listAll()
        #expect(all.isEmpty, "nothing imported: \(all)")
    }

    @Test(arguments: ["binary", "empty-folder", "dev-null", "fifo", "folder-without-vcf"])
    func unusableInputExitsTwo(kind: String) async throws {
        let sandbox = try Sandbox()
        let path: String
        switch kind {
        case "binary":
            path = sandbox.root + "/photo.jpg"
            try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xDB])
                .write(to: URL(fileURLWithPath: path))
        case "empty-folder":
            path = sandbox.root + "/empty"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        case "dev-null":
            path = "/dev/null"
        case "fifo":
            path = sandbox.root + "/pipe.vcf"
            #expect(mkfifo(path, 0o600) == 0)
        default:
            path = sandbox.root + "/docs"
            try sandbox.write("docs/notes.txt", "BEGIN:VCARD\nFN:Not A Card File\nEND:VCARD\n")
        }
        let (result, counts) = try await importing(sandbox, [path])
        #expect(result.status == 2, "\(result)")
        #expect(counts == nil)
        #expect(result.stderr.contains(path.hasPrefix(sandbox.root) ? String(path.dropFirst(sandbox.root.count + 1)) : path),
                "\(result)")
    }

    @Test func missingPathExitsTwo() async throws {
        let sandbox = try Sandbox()
        let good = try sandbox.write("good.vcf", Self.three.joined())
        let missing = sandbox.root + "/no-such-file.vcf"
        for paths in [[missing], [good, missing]] {
            let (result, _) = try await importing(sandbox, paths)
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("no-such-file.vcf"), "\(result)")
        }
        #expect(try await sandbox.listAll().isEmpty)
    }

    @Test func vdirImportsEveryVCardFile() async throws {
        let sandbox = try Sandbox()
        for (index, card) in Self.three.enumerated() {
            try sandbox.write("vdir/\(index).vcf", card)
        }
        try sandbox.write("vdir/README.txt", "not a card\n")
        try sandbox.write("vdir/sub/nested.vcf", VCard.card(uid: "nested", name: "Ned Nested"))
        let (result, counts) = try await importing(sandbox, [sandbox.root + "/vdir"])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(added: 3), "\(result)")
        #expect(Set(try await sandbox.listAll().keys) == ["urn:uuid:0001", "urn:uuid:0002", "urn:uuid:0003"])
        let (again, againCounts) = try await importing(sandbox, [sandbox.root + "/vdir"])
        #expect(again.status == 0)
        #expect(againCounts == ImportCounts(unchanged: 3), "\(again)")
        // The folder is one source: a card file removed from it is pruned.
        try FileManager.default.removeItem(atPath: sandbox.root + "/vdir/1.vcf")
        let (pruned, prunedCounts) = try await importing(sandbox, [sandbox.root + "/vdir"], ["--prune"])
        #expect(pruned.status == 0)
        #expect(prunedCounts == ImportCounts(unchanged: 2, removed: 1), "\(pruned)")
        #expect(Set(try await sandbox.listAll().keys) == ["urn:uuid:0001", "urn:uuid:0003"])
    }

    /// A card file caught half-written by a sync (or emptied) may have held a
    /// contact: it is reported, and --prune leaves the source alone, so the
    /// contact and the user's decision survive until the file is whole again.
    @Test(arguments: ["BEGIN:VCA", "", "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ben Ba"])
    func pruneLeavesASourceWithAnUnreadableFileAlone(_ broken: String) async throws {
        let sandbox = try Sandbox()
        for (index, card) in Self.three.enumerated() {
            try sandbox.write("vdir/\(index).vcf", card)
        }
        let folder = sandbox.root + "/vdir"
        #expect(try await importing(sandbox, [folder]).1 == ImportCounts(added: 3))
        #expect(try await sandbox.run(["skip", "Ben Baker"]).status == 0)

        try sandbox.write("vdir/1.vcf", broken)
        let (result, counts) = try await importing(sandbox, [folder], ["--prune"])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(unchanged: 2, skipped: 1), "\(result)")
        #expect(result.stderr.contains("vdir/1.vcf: "), "\(result)")
        #expect(result.stderr.contains("vdir: not pruned"), "\(result)")
        let contacts = try await sandbox.listAll()
        #expect(contacts.count == 3)
        #expect(contacts["urn:uuid:0002"]?["buzzed"] == .bool(false), "the skip survives: \(contacts)")

        // Once the file is gone for good, --prune removes the contact.
        try FileManager.default.removeItem(atPath: folder + "/1.vcf")
        let (pruned, prunedCounts) = try await importing(sandbox, [folder], ["--prune"])
        #expect(prunedCounts == ImportCounts(unchanged: 2, removed: 1), "\(pruned)")
    }

    @Test func vdirSymlinkIsNotFollowed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("vdir/a.vcf", Self.three[0])
        let outside = try sandbox.write("outside/secret.vcf", VCard.card(uid: "outside", name: "Out Side", bday: "--0202"))
        try FileManager.default.createSymbolicLink(atPath: sandbox.root + "/vdir/link.vcf", withDestinationPath: outside)
        let (result, counts) = try await importing(sandbox, [sandbox.root + "/vdir"])
        #expect(result.status == 0, "\(result)")
        #expect(counts?.added == 1, "\(result)")
        #expect(Set(try await sandbox.listAll().keys) == ["urn:uuid:0001"])
    }

    @Test func pruneRemovesOnlyWhatLeftThisSource() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("a.vcf", Self.three.joined())
        let other = try sandbox.write("b.vcf", VCard.card(uid: "other-1", name: "Olly Other", bday: "--0909"))
        #expect(try await importing(sandbox, [file, other]).1 == ImportCounts(added: 4))

        try sandbox.write("a.vcf", Self.three[0] + Self.three[2])
        let (keep, keepCounts) = try await importing(sandbox, [file])
        #expect(keep.status == 0)
        #expect(keepCounts == ImportCounts(unchanged: 2), "without --prune nothing is removed: \(keep)")
        #expect(try await sandbox.listAll().count == 4)

        let (pruned, prunedCounts) = try await importing(sandbox, [file], ["--prune"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(prunedCounts == ImportCounts(unchanged: 2, removed: 1), "\(pruned)")
        #expect(Set(try await sandbox.listAll().keys) == ["urn:uuid:0001", "urn:uuid:0003", "other-1"])
    }

    @Test func reimportKeepsSkipAndHandEnteredBirthday() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("c.vcf", Self.three.joined())
        #expect(try await importing(sandbox, [file]).0.status == 0)
        #expect(try await sandbox.run(["skip", "Ada"]).status == 0)
        #expect(try await sandbox.run(["set-birthday", "Cleo", "1988-08-08", "--now", "2027-01-15"]).status == 0)
        #expect(try await sandbox.run(["set-birthday", "Ben", "1999-09-19", "--now", "2027-01-15"]).status == 0)

        // Every card changes (so each is updated, not left alone).
        try sandbox.write("c.vcf", [
            VCard.card(uid: "urn:uuid:0001", name: "Ada Archer", bday: "1961-03-16", emails: ["ada@example.net"]),
            VCard.card(uid: "urn:uuid:0002", name: "Ben Baker", bday: "1960-01-01"),
            VCard.card(uid: "urn:uuid:0003", name: "Cleo Carter", phones: ["+49 30 7654321"]),
        ].joined())
        let (result, counts) = try await importing(sandbox, [file])
        #expect(result.status == 0)
        #expect(counts == ImportCounts(updated: 3), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["urn:uuid:0001"]?["buzzed"] == .bool(false))
        #expect(all["urn:uuid:0001"]?["birthday"] == .string("1961-03-16"))
        #expect(all["urn:uuid:0002"]?["birthday"] == .string("1999-09-19"), "the hand-entered birthday wins")
        #expect(all["urn:uuid:0003"]?["birthday"] == .string("1988-08-08"))
        #expect(all["urn:uuid:0003"]?["buzzed"] == .bool(true))
    }

    @Test func uidLessCardWhoseEmailChangedKeepsItsIdentity() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("nouid.vcf", VCard.card(uid: nil, name: "Hana Hash", emails: ["hana@old.example"])
                                     + VCard.card(uid: nil, name: "Ivo Ink", bday: "1977-07-17", emails: ["ivo@example.org"]))
        #expect(try await importing(sandbox, [file]).1 == ImportCounts(added: 2))
        let before = try await sandbox.listAll()
        let hanaID = try #require(before.first { $0.value["name"] == .string("Hana Hash") }?.key)
        #expect(hanaID.hasPrefix("h-") && hanaID.count == 18, "\(hanaID)")
        #expect(try await sandbox.run(["skip", "hana"]).status == 0)

        try sandbox.write("nouid.vcf", VCard.card(uid: nil, name: "Hana  hash", emails: ["hana@new.example"])
                          + VCard.card(uid: nil, name: "Ivo Ink", bday: "1977-07-17", emails: ["ivo@example.org"]))
        let (result, counts) = try await importing(sandbox, [file], ["--prune"])
        #expect(counts == ImportCounts(updated: 1, unchanged: 1), "\(result)")
        let after = try await sandbox.listAll()
        #expect(after.count == 2)
        #expect(after[hanaID]?["buzzed"] == .bool(false), "the decision stays with the same id: \(after)")
    }

    @Test func crlfBomFoldedAndQuotedPrintableCardsAreRead() async throws {
        let sandbox = try Sandbox()
        let folded = "\u{FEFF}BEGIN:VCARD\r\nVERSION:3.0\r\nuid:fold-1\r\nfn:Jürgen\r\n  Müller\r\n"
            + "item1.bday:1965-04-15\r\nEND:VCARD\r\n"
        let quoted = "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:qp-2\r\n"
            + "FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Ren=C3=A9e=20Ro=\r\nux\r\nBDAY:19700101\r\nEND:VCARD\r\n"
        let file = try sandbox.write("old.vcf", folded + quoted)
        let (result, counts) = try await importing(sandbox, [file])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(added: 2), "\(result)")
        let all = try await sandbox.listAll()
        #expect(all["fold-1"]?["name"] == .string("Jürgen Müller"))
        #expect(all["fold-1"]?["birthday"] == .string("1965-04-15"))
        #expect(all["qp-2"]?["name"] == .string("Renée Roux"))
        #expect(all["qp-2"]?["birthday"] == .string("1970-01-01"))
    }

    /// Issue 10 point 15: group cards (`KIND:group`, Apple's
    /// `X-ADDRESSBOOKSERVER-KIND:group`) are not people: import leaves them out
    /// (counted), so no list, `--missing`, ask or triage shows them; one an
    /// older import stored as a person is removed when its source is read again.
    @Test func groupCardsAreLeftOut() async throws {
        let sandbox = try Sandbox()
        let person = VCard.card(uid: "p-1", name: "Paula Person")
        let file = try sandbox.write("book.vcf", person
                                     + VCard.card(uid: "g-1", name: "Family", extra: ["KIND:group", "MEMBER:urn:uuid:p-1"],
                                                  version: "4.0")
                                     + VCard.card(uid: "g-2", name: "Book Club", extra: ["X-ADDRESSBOOKSERVER-KIND:group"]))
        let (result, counts) = try await importing(sandbox, [file])
        #expect(result.status == 0, "\(result)")
        #expect(counts == ImportCounts(added: 1), "\(result)")
        #expect(result.stdout.contains("2 group card(s) left out"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(try await sandbox.listAll().keys.sorted() == ["p-1"])
        let missing = try await sandbox.run(["list", "--missing", "--all", "--json", "--now", "2027-01-15"])
        #expect(!missing.stdout.contains("Family") && !missing.stdout.contains("Book Club"), "\(missing)")
        let ask = try await sandbox.run(["ask", "Family", "--dry-run", "--now", "2027-01-15"])
        #expect(ask.status == 2, "\(ask)")
        #expect(ask.stderr.contains("no contact matches \"Family\""), "\(ask)")
        let triage = try await sandbox.run(["triage", "--now", "2027-01-15"], stdin: "q\n")
        #expect(triage.status == 0, "\(triage)")
        #expect(!triage.stdout.contains("Family") && !triage.stdout.contains("Book Club"), "\(triage)")

        // Stored as a person by an import before groups were told apart: removed on the next import.
        let old = try sandbox.write("old.vcf", VCard.card(uid: "g-3", name: "Neighbours"))
        #expect(try await importing(sandbox, [old]).1 == ImportCounts(added: 1))
        try sandbox.write("old.vcf", VCard.card(uid: "g-3", name: "Neighbours", extra: ["KIND:group"]))
        let (again, againCounts) = try await importing(sandbox, [old])
        #expect(againCounts == ImportCounts(removed: 1), "\(again)")
        #expect(try await sandbox.listAll()["g-3"] == nil)
    }

}

/// A broken card and a readable one with the same UID in one file.
@Suite struct BrokenThenWholeCardTests {
    @Test func theReadableCardIsAddedAfterABrokenOneWithItsUID() async throws {
        let sandbox = try Sandbox()
        let truncated = "BEGIN:VCARD\nVERSION:3.0\nUID:cut-1\nFN:Tina Truncated\nBDAY:1975-05-05\n"
        let file = try sandbox.write("again.vcf", truncated + VCard.card(uid: "cut-1", name: "Tina Whole", bday: "1975-05-05"))
        let first = try await sandbox.run(["import", file])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("1 added, 0 updated, 0 unchanged, 0 removed, 1 skipped"), "\(first)")
        let list = try await sandbox.run(["list", "--all"])
        #expect(list.stdout.contains("Tina Whole"), "\(list)")
        let again = try await sandbox.run(["import", file])
        #expect(again.stdout.contains("0 added, 0 updated, 1 unchanged, 0 removed, 1 skipped"), "\(again)")
    }
}
