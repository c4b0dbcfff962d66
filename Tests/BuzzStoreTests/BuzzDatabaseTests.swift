import BirthdayBuzz
import BuzzTestKit
import BuzzStore
import Foundation
import Testing

/// A temporary data dir, removed when the test ends.
final class TempDir: Sendable {
    let path: String

    init() throws {
        path = TestFolders.temporary.standardizedFileURL.path + "/buzz-store-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Fixture helpers.
enum Fixture {
    static func birthday(_ text: String) throws -> Birthday {
        try #require(Birthday(storedForm: text), "fixture birthday \(text)")
    }

    static func card(_ id: String, _ name: String, bday: Birthday? = nil, emails: [String] = [],
                     phones: [Phone] = [], categories: [String] = [], language: String? = nil) -> ContactCard {
        ContactCard(id: id, hasUID: true, name: name, birthday: bday, phones: phones,
                    emails: emails.map { Email(address: $0) }, categories: categories, language: language)
    }

    /// A card without a UID: its id derived as docs/design/identity.md says.
    static func uidless(_ name: String, email: String?, phone: String? = nil, bday: Birthday? = nil) -> ContactCard {
        let id = ContactIdentity.derivedID(name: name, firstEmail: email, firstPhone: phone)
        return ContactCard(id: id, hasUID: false, name: name, birthday: bday,
                           phones: phone.map { [Phone(number: $0, kind: .cell)] } ?? [],
                           emails: email.map { [Email(address: $0)] } ?? [])
    }

    static func summary(added: Int = 0, updated: Int = 0, unchanged: Int = 0, removed: Int = 0,
                        skipped: Int = 0) -> ImportSummary {
        var summary = ImportSummary()
        summary.added = added
        summary.updated = updated
        summary.unchanged = unchanged
        summary.removed = removed
        summary.skipped = skipped
        return summary
    }
}

extension BuzzDatabase {
    /// Imports one source's cards (and skipped entries) in one session.
    @discardableResult
    func load(_ source: String, _ cards: [ContactCard], skipped: Int = 0, prune: Bool = false,
              includeByDefault: Bool = true, now: Int64 = 1_800_000_000) throws -> ImportSummary {
        try importSources([source], prune: prune, now: now, includeByDefault: includeByDefault) { _, session in
            for card in cards { try session.add(.card(card, problems: [])) }
            for index in 0..<skipped {
                try session.add(.skipped(CardProblem(cardNumber: index + 1, message: "truncated")))
            }
        }
    }

    func contact(_ id: String) throws -> Contact? {
        try allContacts().first { $0.id == id }
    }
}

@Suite struct BuzzDatabaseTests {
    let dir: TempDir
    let db: BuzzDatabase

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
    }

    @Test func firstImportAddsAndIncludesOnlyContactsWithABirthday() throws {
        let summary = try db.load("/src/a.vcf", [
            Fixture.card("a", "Ada Archer", bday: try Fixture.birthday("1961-03-15")),
            Fixture.card("b", "Ben Baker", bday: try Fixture.birthday("--07-04")),
            Fixture.card("c", "Cleo Carter"),
        ], skipped: 2, now: 1_700_000_000)
        #expect(summary == Fixture.summary(added: 3, skipped: 2))
        let contacts = try db.allContacts()
        #expect(contacts.map(\.id) == ["a", "b", "c"])
        #expect(contacts.map(\.decision) == [.include, .include, nil])
        #expect(contacts.map(\.includedAt) == [1_700_000_000, 1_700_000_000, nil])
        #expect(contacts.allSatisfy { $0.source == "/src/a.vcf" })
        #expect(contacts[0].birthday == (try Fixture.birthday("1961-03-15")))
    }

    @Test func includeByDefaultFalseLeavesEveryoneUndecided() throws {
        try db.load("s", [Fixture.card("a", "Ada", bday: try Fixture.birthday("1961-03-15")), Fixture.card("c", "Cleo")],
                    includeByDefault: false)
        #expect(try db.allContacts().map(\.decision) == [nil, nil])
        // Re-importing with a changed card keeps them undecided.
        try db.load("s", [Fixture.card("a", "Ada", bday: try Fixture.birthday("1961-03-16")),
                          Fixture.card("c", "Cleo", bday: try Fixture.birthday("--01-01"))], includeByDefault: false)
        #expect(try db.allContacts().map(\.decision) == [nil, nil])
    }

    @Test func everyFieldRoundTrips() throws {
        let hebrew = try #require(Birthday(month: 3, day: 15, year: 1961, calendar: .hebrew))
        var card = Fixture.card("urn:uuid:x/1%2", "Zoë \"Zee\" O'Brien", bday: hebrew,
                                emails: ["zoe@example.org", "zee@example.net"],
                                phones: [Phone(number: "+49 30 123", kind: .cell, preferred: true),
                                         Phone(number: "030 456", kind: .work)],
                                categories: ["Family", "Book club"], language: "de-AT")
        card.anniversary = try Fixture.birthday("1990-06-01")
        card.emails[1].preferred = true
        card.firstName = "Zoë"
        try db.load("s", [card])
        let stored = try #require(try db.contact("urn:uuid:x/1%2"))
        #expect(stored.card == card)
        #expect(stored.birthday?.calendar == .hebrew)

        let text = Fixture.card("t", "Tex Text")
        var withNote = text
        withNote.birthdayText = "sometime in spring"
        try db.load("s2", [withNote])
        #expect(try db.contact("t")?.card.birthdayText == "sometime in spring")
    }

    @Test func reimportCountsUnchangedAndUpdated() throws {
        let cards = [
            Fixture.card("a", "Ada Archer", bday: try Fixture.birthday("1961-03-15"), emails: ["ada@example.org"]),
            Fixture.card("b", "Ben Baker", bday: try Fixture.birthday("--07-04")),
            Fixture.card("c", "Cleo Carter"),
        ]
        #expect(try db.load("s", cards) == Fixture.summary(added: 3))
        #expect(try db.load("s", cards) == Fixture.summary(unchanged: 3))
        var changed = cards
        changed[0].emails = [Email(address: "ada@example.net")]
        changed[2].birthday = try Fixture.birthday("1990-01-02")
        #expect(try db.load("s", changed) == Fixture.summary(updated: 2, unchanged: 1))
        #expect(try db.contact("a")?.card.emails.map(\.address) == ["ada@example.net"])
        #expect(try db.load("s", changed) == Fixture.summary(unchanged: 3))
        // A card that gains a birthday is included (it was undecided only for lack of one).
        #expect(try db.contact("c")?.decision == .include)
    }

    @Test func decisionsAndHandEnteredBirthdaysSurviveReimport() throws {
        let cards = [
            Fixture.card("a", "Ada", bday: try Fixture.birthday("1961-03-15")),
            Fixture.card("b", "Ben"),
            Fixture.card("c", "Cleo"),
            Fixture.card("d", "Dora", bday: try Fixture.birthday("1970-01-01")),
        ]
        try db.load("s", cards)
        try db.setDecision(.skip, for: ["a"], now: 2_000)
        try db.setDecision(.include, for: ["b"], now: 2_000)
        try db.setManualBirthday(try Fixture.birthday("--12-24"), for: "c", now: 2_000)
        try db.setManualBirthday(try Fixture.birthday("1971-02-02"), for: "d", now: 2_000)

        var changed = cards
        for index in changed.indices { changed[index].name += " Renamed" }
        changed[1].birthday = try Fixture.birthday("--05-05")
        changed[3].birthday = try Fixture.birthday("1972-03-03")
        #expect(try db.load("s", changed) == Fixture.summary(updated: 4))

        let byID = Dictionary(uniqueKeysWithValues: try db.allContacts().map { ($0.id, $0) })
        #expect(byID["a"]?.decision == .skip)
        #expect(byID["a"]?.name == "Ada Renamed")
        #expect(byID["b"]?.decision == .include)
        #expect(byID["b"]?.includedAt == 2_000)
        #expect(byID["c"]?.decision == .include)
        #expect(byID["c"]?.manualBirthday == (try Fixture.birthday("--12-24")))
        #expect(byID["d"]?.manualBirthday == (try Fixture.birthday("1971-02-02")))
        #expect(byID["d"]?.card.birthday == (try Fixture.birthday("1972-03-03")))
        #expect(byID["d"]?.birthday == (try Fixture.birthday("1971-02-02")), "hand-entered wins")
    }

    @Test func uidLessCardWhoseEmailChangedKeepsItsID() throws {
        let old = Fixture.uidless("Kim  Lee", email: "Kim@Old.example")
        #expect(old.id == ContactIdentity.derivedID(name: "kim lee", firstEmail: "kim@old.example", firstPhone: nil))
        let other = Fixture.uidless("Lou Park", email: nil, phone: "+1 (555) 010-2030")
        try db.load("s", [old, other])
        try db.setDecision(.skip, for: [old.id], now: 5)

        let moved = Fixture.uidless("kim lee", email: "kim@new.example", bday: try Fixture.birthday("1985-05-05"))
        #expect(moved.id != old.id)
        let summary = try db.load("s", [other, moved], prune: true)
        #expect(summary == Fixture.summary(updated: 1, unchanged: 1))
        let contacts = try db.allContacts()
        #expect(contacts.count == 2)
        let kim = try #require(try db.contact(old.id))
        #expect(kim.decision == .skip)
        #expect(kim.card.emails.map(\.address) == ["kim@new.example"])
        #expect(kim.card.birthday == (try Fixture.birthday("1985-05-05")))
        #expect(try db.contact(moved.id) == nil)
    }

    @Test func uidLessNameMatchNeedsExactlyOneUnmatchedContactOfThatSource() throws {
        let first = Fixture.uidless("Sam Smith", email: "sam1@example.org")
        let second = Fixture.uidless("Sam Smith", email: "sam2@example.org")
        try db.load("s", [first, second])
        try db.setDecision(.skip, for: [first.id, second.id], now: 5)
        // Two unmatched Sam Smiths: a third address cannot be told apart, so it is a new contact.
        let third = Fixture.uidless("Sam Smith", email: "sam3@example.org")
        #expect(try db.load("s", [third]) == Fixture.summary(added: 1))
        #expect(try db.contact(third.id)?.decision == nil)
        #expect(try db.allContacts().count == 3)
    }

    @Test func uidLessNameMatchIsPerSource() throws {
        let old = Fixture.uidless("Rae Ray", email: "rae@old.example")
        try db.load("work.vcf", [old])
        let moved = Fixture.uidless("Rae Ray", email: "rae@new.example")
        #expect(try db.load("home.vcf", [moved]) == Fixture.summary(added: 1))
        #expect(try db.allContacts().count == 2)
    }

    @Test func uidLessMatchedContactIsNotPrunedAndItsTwinIsNotStolen() throws {
        let kept = Fixture.uidless("Pat Pine", email: "pat@example.org")
        let gone = Fixture.uidless("Quinn Q", email: "q@example.org")
        try db.load("s", [kept, gone])
        // Pat's card is unchanged (matched by id); a second, new Pat appears: it must not take Pat's id.
        let newPat = Fixture.uidless("Pat Pine", email: "pat@other.example")
        let summary = try db.load("s", [kept, newPat], prune: true)
        #expect(summary == Fixture.summary(added: 1, unchanged: 1, removed: 1))
        #expect(Set(try db.allContacts().map(\.id)) == [kept.id, newPat.id])
    }

    @Test func sameUIDInTwoSourcesIsOneContact() throws {
        try db.load("a.vcf", [Fixture.card("shared", "Old Name", bday: try Fixture.birthday("1960-01-01"))])
        try db.setDecision(.skip, for: ["shared"], now: 5)
        let summary = try db.load("b.vcf", [Fixture.card("shared", "New Name", bday: try Fixture.birthday("1960-01-01"))])
        #expect(summary == Fixture.summary(updated: 1))
        let contacts = try db.allContacts()
        #expect(contacts.count == 1)
        #expect(contacts.first?.name == "New Name")
        #expect(contacts.first?.source == "b.vcf")
        #expect(contacts.first?.decision == .skip)
        // Pruning the first source does not remove it: it now belongs to the second.
        #expect(try db.load("a.vcf", [], prune: true) == Fixture.summary())
        #expect(try db.allContacts().count == 1)
    }

    @Test func sameUIDInTwoSourcesOfOneImport() throws {
        let summary = try db.importSources(["a", "b"], prune: false, now: 9, includeByDefault: true) { source, session in
            try session.add(.card(Fixture.card("dup", "From \(source)"), problems: []))
        }
        #expect(summary == Fixture.summary(added: 1, updated: 1))
        #expect(try db.allContacts().map(\.name) == ["From b"])
    }

    /// A contact that moved from one source to another imported in the same
    /// run is one contact (docs/design/identity.md): pruning the first must not delete it
    /// and re-add it without its decisions.
    @Test func contactMovingBetweenSourcesOfOnePrunedImportKeepsItsDecision() throws {
        try db.load("a", [Fixture.card("x", "Xavier", bday: try Fixture.birthday("1990-01-01")), Fixture.card("y", "Yvonne")])
        try db.load("b", [Fixture.card("z", "Zed")])
        try db.setDecision(.skip, for: ["x"], now: 5)
        let summary = try db.importSources(["a", "b"], prune: true, now: 9, includeByDefault: true) { source, session in
            let cards = source == "a" ? [Fixture.card("y", "Yvonne")]
                : [Fixture.card("z", "Zed"), Fixture.card("x", "Xavier", bday: try Fixture.birthday("1990-01-01"))]
            for card in cards { try session.add(.card(card, problems: [])) }
        }
        #expect(try db.allContacts().map(\.id) == ["x", "y", "z"])
        #expect(try db.contact("x")?.source == "b")
        #expect(try db.contact("x")?.decision == .skip, "the skip decision survives the move")
        #expect(summary.added == 0 && summary.removed == 0, "\(summary)")
    }

    @Test func pruneRemovesOnlyContactsGoneFromThatSource() throws {
        try db.load("a", [Fixture.card("1", "One"), Fixture.card("2", "Two"), Fixture.card("3", "Three")])
        try db.load("b", [Fixture.card("9", "Nine")])
        #expect(try db.load("a", [Fixture.card("1", "One")]) == Fixture.summary(unchanged: 1))
        #expect(try db.allContacts().count == 4)
        #expect(try db.load("a", [Fixture.card("1", "One")], prune: true) == Fixture.summary(unchanged: 1, removed: 2))
        #expect(try db.allContacts().map(\.id) == ["1", "9"])
        #expect(try db.load("a", [], prune: true) == Fixture.summary(removed: 1))
        #expect(try db.allContacts().map(\.id) == ["9"])
    }

    /// A card that is still in the source but had to be skipped (truncated,
    /// too large) is not "gone": pruning must not delete it and its decisions.
    @Test func pruneKeepsAContactWhoseCardWasSkipped() throws {
        try db.load("a", [Fixture.card("x", "Xavier", bday: try Fixture.birthday("1990-01-01")), Fixture.card("y", "Yvonne")])
        try db.setDecision(.skip, for: ["x"], now: 5)
        let summary = try db.importSources(["a"], prune: true, now: 9, includeByDefault: true) { _, session in
            try session.add(.skipped(CardProblem(cardNumber: 1, uid: "x", message: "truncated: BEGIN:VCARD before this card's END:VCARD")))
            try session.add(.card(Fixture.card("y", "Yvonne"), problems: []))
        }
        #expect(summary == Fixture.summary(unchanged: 1, skipped: 1))
        #expect(try db.contact("x")?.decision == .skip)
    }

    @Test func failedImportWritesNothing() throws {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.importSources(["a", "b"], prune: false, now: 1, includeByDefault: true) { source, session in
                try session.add(.card(Fixture.card("x-\(source)", "X \(source)"), problems: []))
                if source == "b" { throw Boom() }
            }
        }
        #expect(try db.allContacts().isEmpty)
    }

    @Test func setManualBirthdayIncludesUndecidedButNeverSkipped() throws {
        try db.load("s", [Fixture.card("u", "Undecided"), Fixture.card("k", "Skipped"),
                          Fixture.card("i", "Included", bday: try Fixture.birthday("1950-05-05"))])
        try db.setDecision(.skip, for: ["k"], now: 10)
        try db.setManualBirthday(try Fixture.birthday("02-29"), for: "u", now: 20)
        try db.setManualBirthday(try Fixture.birthday("1999-09-09"), for: "k", now: 20)
        try db.setManualBirthday(try Fixture.birthday("1951-06-06"), for: "i", now: 20)
        let byID = Dictionary(uniqueKeysWithValues: try db.allContacts().map { ($0.id, $0) })
        #expect(byID["u"]?.decision == .include)
        #expect(byID["u"]?.includedAt == 20)
        #expect(byID["u"]?.birthday == (try Fixture.birthday("--02-29")))
        #expect(byID["k"]?.decision == .skip)
        #expect(byID["k"]?.includedAt == nil)
        #expect(byID["k"]?.manualBirthday == (try Fixture.birthday("1999-09-09")))
        #expect(byID["i"]?.decision == .include)
        #expect(byID["i"]?.includedAt == 1_800_000_000, "already included: unchanged")

        try db.setManualBirthday(nil, for: "i", now: 30)
        let cleared = try #require(try db.contact("i"))
        #expect(cleared.manualBirthday == nil)
        #expect(cleared.birthday == (try Fixture.birthday("1950-05-05")))
        #expect(cleared.decision == .include)
    }

    @Test func setDecisionRecordsWhenIncluded() throws {
        try db.load("s", [Fixture.card("a", "Ada"), Fixture.card("b", "Ben", bday: try Fixture.birthday("--01-01"))])
        try db.setDecision(.include, for: ["a"], now: 100)
        try db.setDecision(.include, for: ["a", "b"], now: 200)
        #expect(try db.contact("a")?.includedAt == 100, "re-including keeps the first time")
        #expect(try db.contact("b")?.includedAt == 1_800_000_000)
        try db.setDecision(.skip, for: ["a"], now: 300)
        try db.setDecision(.include, for: ["a"], now: 400)
        #expect(try db.contact("a")?.includedAt == 400)
        try db.setDecision(nil, for: ["a"], now: 500)
        #expect(try db.contact("a")?.decision == nil)
    }

    @Test func findContacts() throws {
        try db.load("s", [Fixture.card("u-ann", "Ann"), Fixture.card("u-anna", "Anna Bell"),
                          Fixture.card("u-dan", "Dan  Dane"), Fixture.card("Ann", "Zed Zulu")])
        func ids(_ query: String) throws -> [String] { try db.findContacts(query).map(\.id).sorted() }
        #expect(try ids("u-dan") == ["u-dan"])
        #expect(try ids("Ann") == ["Ann"], "an id match comes first")
        #expect(try ids("ann") == ["u-ann"], "exact (normalized) name wins over partial matches")
        #expect(try ids("an") == ["u-ann", "u-anna", "u-dan"])
        #expect(try ids("BELL") == ["u-anna"])
        #expect(try ids(" dan   DANE ") == ["u-dan"])
        #expect(try ids("nobody").isEmpty)
        #expect(try ids("u-").isEmpty, "ids are matched exactly, not by part")
    }

    @Test func exactNameWinsOnlyWhenUnique() throws {
        try db.load("s", [Fixture.card("1", "Ann"), Fixture.card("2", "ann"), Fixture.card("3", "Anna Bell")])
        #expect(try db.findContacts("ann").map(\.id).sorted() == ["1", "2", "3"])
    }

    @Test func migrationsRunTwiceOnTheSameFile() throws {
        try db.load("s", [Fixture.card("a", "Ada", bday: try Fixture.birthday("1961-03-15"))])
        try db.setMeta("watermark", "12345")
        let again = try BuzzDatabase(directory: dir.path + "/data")
        #expect(try again.allContacts().map(\.id) == ["a"])
        #expect(try again.meta("watermark") == "12345")
        let third = try BuzzDatabase(directory: dir.path + "/data")
        #expect(try third.load("s", [Fixture.card("a", "Ada", bday: try Fixture.birthday("1961-03-15"))])
                == Fixture.summary(unchanged: 1))
    }

    @Test func metaRoundTrip() throws {
        #expect(try db.meta("missing") == nil)
        try db.setMeta("k", "one")
        try db.setMeta("k", "two")
        #expect(try db.meta("k") == "two")
    }

    @Test func filesArePrivate() throws {
        func mode(_ path: String) throws -> Int? {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(db.directory) == 0o700)
        #expect(try mode(db.path) == 0o600)
        #expect(db.path == dir.path + "/data/buzz.sqlite")
    }

    @Test func aFileWhereTheDataDirShouldBeIsAnError() throws {
        let file = dir.path + "/not-a-dir"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: StoreError.self) { try BuzzDatabase(directory: file) }
    }
}
