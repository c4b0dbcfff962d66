import BuzzTestKit
import Foundation
import Testing

/// `buzz sync`, and `tick` syncing first: configured sources read whole,
/// pruned only when read completely, decisions kept across a removal (docs/design/sources.md).
@Suite struct SyncCLITests {
    static let now = "2027-01-15"

    static func config(_ sources: String) -> String {
        "[general]\ntimezone = \"UTC\"\nlocale = \"en\"\n[reminders]\nchannels = [\"console\"]\n" + sources
    }

    static func vdir(_ name: String, _ path: String, recursive: Bool = false) -> String {
        "[sources.\(name)]\ntype = \"vdir\"\npath = \"\(path)\"\n" + (recursive ? "recursive = true\n" : "")
    }

    static func file(_ name: String, _ path: String) -> String {
        "[sources.\(name)]\ntype = \"file\"\npath = \"\(path)\"\n"
    }

    /// `sync --json` parsed: the per-source objects, by name.
    static func syncJSON(_ sandbox: Sandbox, _ extra: [String] = [], status: Int32 = 0,
                         sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: [String: Any]] {
        let result = try await sandbox.run(["sync", "--json", "--now", now] + extra, sourceLocation: sourceLocation)
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                  "\(result)", sourceLocation: sourceLocation)
        let sources = try #require(object["sources"] as? [[String: Any]], sourceLocation: sourceLocation)
        var byName: [String: [String: Any]] = [:]
        for source in sources { byName[source["name"] as? String ?? "?"] = source }
        return byName
    }

    @Test func recursiveVdirReadsEveryBookAndTheRootAndJSONHasItsShape() async throws {
        let sandbox = try Sandbox()
        let root = sandbox.root + "/contacts"
        _ = try sandbox.write("contacts/personal/a.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        _ = try sandbox.write("contacts/work/b.vcf", VCard.card(uid: "b", name: "Ben Baker", bday: "--0704"))
        _ = try sandbox.write("contacts/c.vcf", VCard.card(uid: "c", name: "Cleo Carter"))
        _ = try sandbox.write("contacts/.Radicale.cache/x.vcf", VCard.card(uid: "hidden", name: "Hidden"))
        _ = try sandbox.write("cards.vcf", VCard.card(uid: "d", name: "Dora Dale", bday: "2001-12-24"))
        try sandbox.writeConfig(Self.config(Self.vdir("home", root, recursive: true) + Self.file("old", sandbox.root + "/cards.vcf")))

        let sources = try await Self.syncJSON(sandbox)
        #expect(Set(sources.keys) == ["home", "old"])
        let home = try #require(sources["home"])
        // The documented shape (docs/json.md, "sync"): every key, always.
        #expect(Set(home.keys) == ["name", "type", "status", "added", "updated", "unchanged", "removed", "skipped",
                                   "groups", "restored", "duplicates", "pruned", "reason"], "\(home)")
        #expect(home["type"] as? String == "vdir")
        #expect(home["status"] as? String == "synced")
        #expect(home["added"] as? Int == 3)
        #expect(home["pruned"] as? Bool == true)
        #expect(home["reason"] is NSNull)
        #expect(sources["old"]?["type"] as? String == "file")
        #expect(sources["old"]?["added"] as? Int == 1)

        let all = try await sandbox.listAll()
        #expect(Set(all.keys) == ["a", "b", "c", "d"])
        #expect(all["a"]?["source"] == .string("home"))
        #expect(all["d"]?["source"] == .string("old"))

        let again = try await sandbox.run(["sync", "home", "--now", Self.now])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout == "home: 0 added, 0 updated, 3 unchanged, 0 removed, 0 skipped\n", "\(again)")
    }

    @Test func doctorChecksEverySourceWithoutReadingIt() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("contacts/a.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        _ = try sandbox.write("contacts/b.vcf", VCard.card(uid: "b", name: "Ben Baker"))
        try sandbox.writeConfig(Self.config(Self.vdir("home", sandbox.root + "/contacts") + Self.file("old", sandbox.root + "/gone.vcf")))
        #expect(try await sandbox.run(["sync", "home", "--now", Self.now]).status == 0)

        let doctor = try await sandbox.run(["doctor", "--now", Self.now])
        #expect(doctor.status == 1, "\(doctor)")
        let lines = doctor.stdout.split(separator: "\n").map(String.init)
        let home = try #require(lines.first { $0.contains("source home") }, "\(doctor)")
        #expect(home.hasPrefix("ok    source home (vdir): \(sandbox.root)/contacts: 2 .vcf files; last synced 2027-01-15T"), "\(home)")
        #expect(lines.contains("FAIL  source old (file): \(sandbox.root)/gone.vcf: No such file or directory"), "\(doctor)")
        // doctor reads no cards: nothing new in the store.
        #expect(try await sandbox.listAll().count == 2)
    }

    @Test func oneOffImportShowsThePathAsGiven() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("x/cards.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        #expect(try await sandbox.run(["import", "x/cards.vcf", "--now", Self.now]).status == 0)
        #expect(try await sandbox.listAll()["a"]?["source"] == .string("x/cards.vcf"))
    }

    @Test func decisionsSurviveRemovalAndComeBackWithTheContact() async throws {
        let sandbox = try Sandbox()
        let root = sandbox.root + "/contacts"
        let ada = VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15")
        let ben = VCard.card(uid: "b", name: "Ben Baker", bday: "1970-07-04")
        let cleo = VCard.card(uid: "c", name: "Cleo Carter")
        _ = try sandbox.write("contacts/personal/a.vcf", ada)
        _ = try sandbox.write("contacts/personal/b.vcf", ben)
        _ = try sandbox.write("contacts/personal/c.vcf", cleo)
        try sandbox.writeConfig(Self.config(Self.vdir("home", root, recursive: true)))
        #expect(try await sandbox.run(["sync", "--now", Self.now]).status == 0)
        #expect(try await sandbox.run(["skip", "Ada", "--now", Self.now]).status == 0)
        #expect(try await sandbox.run(["clear-birthday", "Ben", "--now", Self.now]).status == 0)
        #expect(try await sandbox.run(["set-birthday", "Cleo", "1980-02-02", "--now", Self.now]).status == 0)

        // All three leave the source (deleted on the phone): removed.
        for name in ["a", "b", "c"] { try FileManager.default.removeItem(atPath: root + "/personal/\(name).vcf") }
        let gone = try await Self.syncJSON(sandbox)
        #expect(gone["home"]?["removed"] as? Int == 3)
        #expect(try await sandbox.listAll().isEmpty)

        // They come back, moved to another address book: every decision with them.
        _ = try sandbox.write("contacts/restored/a.vcf", ada)
        _ = try sandbox.write("contacts/restored/b.vcf", ben)
        _ = try sandbox.write("contacts/restored/c.vcf", cleo)
        let back = try await Self.syncJSON(sandbox)
        #expect(back["home"]?["added"] as? Int == 3)
        #expect(back["home"]?["restored"] as? Int == 3)
        let all = try await sandbox.listAll()
        #expect(all["a"]?["buzzed"] == .bool(false), "skip kept: \(all)")
        #expect(all["b"]?["birthday"] == .null, "cleared birthday kept: \(all)")
        #expect(all["c"]?["birthday"] == .string("1980-02-02"), "hand-entered birthday kept: \(all)")
        #expect(all["c"]?["buzzed"] == .bool(true))
    }

    @Test func anIncompleteReadPrunesNothing() async throws {
        let sandbox = try Sandbox()
        let root = sandbox.root + "/contacts"
        _ = try sandbox.write("contacts/a.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        _ = try sandbox.write("contacts/b.vcf", VCard.card(uid: "b", name: "Ben Baker", bday: "1970-07-04"))
        try sandbox.writeConfig(Self.config(Self.vdir("home", root)))
        #expect(try await sandbox.run(["sync", "--now", Self.now]).status == 0)
        #expect(try await sandbox.run(["skip", "Ben", "--now", Self.now]).status == 0)

        // b.vcf is being rewritten by a sync and is cut off before its UID: it
        // may still be Ben, so nobody is removed.
        _ = try sandbox.write("contacts/b.vcf", "BEGIN:VCARD\nVERSION:3.0\nFN:Ben")
        let cut = try await Self.syncJSON(sandbox)
        #expect(cut["home"]?["removed"] as? Int == 0, "\(cut)")
        #expect(cut["home"]?["pruned"] as? Bool == false, "\(cut)")
        #expect((cut["home"]?["reason"] as? String)?.contains("nothing pruned") == true, "\(cut)")
        #expect(try await sandbox.listAll()["b"]?["buzzed"] == .bool(false))

        // A source that cannot be read at all (the folder is gone): exit 1, nothing removed.
        try FileManager.default.moveItem(atPath: root, toPath: root + ".moved")
        let missing = try await Self.syncJSON(sandbox, status: 1)
        #expect(missing["home"]?["status"] as? String == "failed", "\(missing)")
        #expect((missing["home"]?["reason"] as? String)?.contains("No such file") == true, "\(missing)")
        #expect(try await sandbox.listAll().count == 2)

        // Read completely again, without Ben: he is removed.
        try FileManager.default.moveItem(atPath: root + ".moved", toPath: root)
        try FileManager.default.removeItem(atPath: root + "/b.vcf")
        let complete = try await Self.syncJSON(sandbox)
        #expect(complete["home"]?["removed"] as? Int == 1, "\(complete)")
        #expect(Set(try await sandbox.listAll().keys) == ["a"])
    }

    @Test func twoCardsWithOneUIDAreReportedOnceAndTheLastWins() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("cards.vcf", VCard.card(uid: "a", name: "Ada First", bday: "1961-03-15")
                              + VCard.card(uid: "a", name: "Ada Second", bday: "1961-03-16")
                              + VCard.card(uid: "a", name: "Ada Third", bday: "1961-03-17"))
        try sandbox.writeConfig(Self.config(Self.file("cards", sandbox.root + "/cards.vcf")))
        let result = try await sandbox.run(["sync", "--now", Self.now])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines == ["cards: more than one card has the id a (one UID, or the same name and email without one); the last one is kept"], "\(result)")
        #expect(try await sandbox.listAll()["a"]?["birthday"] == .string("1961-03-17"))
    }

    @Test func configErrorsAndUnknownNamesExitTwo() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config("[sources.home]\ntype = \"vdir\"\npath = \"/x\"\nrecursiv = true\n"))
        let unknownKey = try await sandbox.run(["sync"])
        #expect(unknownKey.status == 2)
        #expect(unknownKey.stderr.contains("config.toml:9:1: sources.home.recursiv: unknown key"), "\(unknownKey)")

        try sandbox.writeConfig(Self.config("[sources.home]\ntype = \"ftp\"\npath = \"/x\"\n"))
        let unknownType = try await sandbox.run(["sync"])
        #expect(unknownType.status == 2)
        #expect(unknownType.stderr.contains("config.toml:7:1: sources.home.type: unknown source type \"ftp\""), "\(unknownType)")

        try sandbox.writeConfig(Self.config("[sources.home]\ntype = \"file\"\n"))
        let noPath = try await sandbox.run(["sync"])
        #expect(noPath.status == 2)
        #expect(noPath.stderr.contains("sources.home.path: missing"), "\(noPath)")

        try sandbox.writeConfig(Self.config(Self.vdir("home", sandbox.root)))
        let unknownName = try await sandbox.run(["sync", "work"])
        #expect(unknownName.status == 2)
        #expect(unknownName.stderr == "buzz: no source named \"work\" (configured: home)\n", "\(unknownName)")
    }

    @Test func tickSyncsAChangedFileFirstUnlessNoSync() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("cards.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        try sandbox.writeConfig(Self.config(Self.file("cards", file)))
        #expect(try await sandbox.run(["sync", "--now", Self.now]).status == 0)

        // A birthday today, entered on the phone: the next tick reads it and reminds.
        let today = VCard.card(uid: "t", name: "Tara Today", bday: "1990-01-15")
        _ = try sandbox.write("cards.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15") + today)
        let noSync = try await sandbox.run(["tick", "--no-sync", "--now", "2027-01-15T09:00"])
        #expect(noSync.status == 0, "\(noSync)")
        #expect(noSync.stdout.contains("0 due"), "\(noSync)")
        #expect(try await sandbox.listAll()["t"] == nil)

        let tick = try await sandbox.run(["tick", "--now", "2027-01-15T09:00"])
        #expect(tick.status == 0, "\(tick)")
        #expect(tick.stderr.contains("sync cards: 1 added"), "\(tick)")
        #expect(tick.stdout.contains("1 due, 1 sent"), "\(tick)")
        #expect(try await sandbox.listAll()["t"] != nil)

        // Unchanged since: not read again.
        let quiet = try await sandbox.run(["tick", "--now", "2027-01-15T09:05"])
        #expect(quiet.status == 0, "\(quiet)")
        #expect(quiet.stderr.isEmpty, "\(quiet)")
    }

    @Test func tickReadsOnlyTheChangedFilesOfAVdir() async throws {
        let sandbox = try Sandbox()
        let root = sandbox.root + "/contacts"
        _ = try sandbox.write("contacts/a.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-15"))
        _ = try sandbox.write("contacts/b.vcf", VCard.card(uid: "b", name: "Ben Baker", bday: "1970-07-04"))
        _ = try sandbox.write("contacts/c.vcf", VCard.card(uid: "c", name: "Cleo Carter", bday: "1980-08-08"))
        try sandbox.writeConfig(Self.config(Self.vdir("home", root)))
        #expect(try await sandbox.run(["sync", "--now", Self.now]).status == 0)
        #expect(try await sandbox.run(["skip", "Cleo", "--now", Self.now]).status == 0)

        // One card changed, one deleted: only the changed file is read, the deleted one's contact goes
        // (Cleo's, not read, counts as unchanged, as a whole read would count her).
        _ = try sandbox.write("contacts/a.vcf", VCard.card(uid: "a", name: "Ada Archer", bday: "1961-03-16"))
        try FileManager.default.removeItem(atPath: root + "/b.vcf")
        let tick = try await sandbox.run(["tick", "--now", "2027-01-15T09:00"])
        #expect(tick.status == 0, "\(tick)")
        #expect(tick.stderr.contains("sync home: 0 added, 1 updated, 1 unchanged, 1 removed"), "\(tick)")
        var all = try await sandbox.listAll()
        #expect(Set(all.keys) == ["a", "c"])
        #expect(all["a"]?["birthday"] == .string("1961-03-16"))

        // Cleo's file cut off mid-write: she stays (skipped), and comes back whole next time.
        _ = try sandbox.write("contacts/c.vcf", "BEGIN:VCARD\nVERSION:3.0\nFN:Cleo")
        let cut = try await sandbox.run(["tick", "--now", "2027-01-15T09:01"])
        #expect(cut.stderr.contains("0 removed, 1 skipped"), "\(cut)")
        #expect(try await sandbox.listAll()["c"]?["buzzed"] == .bool(false))
        _ = try sandbox.write("contacts/c.vcf", VCard.card(uid: "c", name: "Cleo Carter", bday: "1980-08-09"))
        let whole = try await sandbox.run(["tick", "--now", "2027-01-15T09:02"])
        #expect(whole.stderr.contains("sync home: 0 added, 1 updated, 1 unchanged, 0 removed, 0 skipped"), "\(whole)")
        all = try await sandbox.listAll()
        #expect(all["c"]?["birthday"] == .string("1980-08-09"))
        #expect(all["c"]?["buzzed"] == .bool(false), "the skip is kept")

        // The cut-off file deleted for good now: Cleo goes (her skip remembered), and an explicit sync reads all.
        try FileManager.default.removeItem(atPath: root + "/c.vcf")
        #expect(try await sandbox.run(["tick", "--now", "2027-01-15T09:03"]).stderr.contains("1 removed"))
        let full = try await sandbox.run(["sync", "--now", Self.now])
        #expect(full.stdout == "home: 0 added, 0 updated, 1 unchanged, 0 removed, 0 skipped\n", "\(full)")
    }
}
