import BirthdayBuzz
import BuzzStore
import Foundation
import Testing

/// Hand-kept extras (docs/design/occasions.md): anniversaries, settings, notes and gift ideas
/// are kept by contact id, through re-imports and a contact's absence.
@Suite struct ContactKeepingTests {
    let dir: TempDir
    let db: BuzzDatabase

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
    }

    @Test func extrasSurviveReimportAndAContactsAbsence() throws {
        var ada = Fixture.card("a", "Ada", bday: try Fixture.birthday("1990-03-15"))
        ada.anniversary = try Fixture.birthday("2015-06-20")
        let bob = Fixture.card("b", "Bob")
        try db.load("s", [ada, bob])
        try db.setContactSettings(ContactSettings(offsets: [0, 7], time: 450, channels: ["desktop", "mail"]), for: "a", now: 10)
        try db.addNote(.gift, "tickets", for: "a", now: 11)
        try db.addNote(.note, "likes tea", for: "a", now: 12)
        try db.addNote(.gift, "a book", for: "a", now: 13)
        try db.clearCardAnniversary(for: "a", now: 14)
        try db.setManualAnniversary(try Fixture.birthday("--07-01"), for: "b", now: 15)

        // Gone from its source (pruned), then back: everything kept comes back.
        #expect(try db.load("s", [bob], prune: true).removed == 1)
        try db.load("s", [ada, bob], prune: true)

        let byID = Dictionary(uniqueKeysWithValues: try db.allContacts().map { ($0.id, $0) })
        let back = try #require(byID["a"])
        #expect(back.settings == ContactSettings(offsets: [0, 7], time: 450, channels: ["desktop", "mail"]))
        #expect(back.anniversaryCleared && back.anniversary == nil && back.card.anniversary != nil)
        #expect(byID["b"]?.anniversary == (try Fixture.birthday("--07-01")))
        #expect(byID["b"]?.decision == .include, "a hand-entered anniversary includes an undecided contact")
        let notes = try db.notes(for: "a")
        #expect(notes.map(\.text) == ["tickets", "likes tea", "a book"])

        let planning = Dictionary(uniqueKeysWithValues: try db.plannableContacts().map { ($0.id, $0) })
        #expect(planning["a"]?.giftIdeas == ["tickets", "a book"])
        #expect(planning["a"]?.notes == ["likes tea"])
        #expect(planning["a"]?.anniversary == nil)
        #expect(planning["a"]?.settings?.offsets == [0, 7])
        #expect(planning["b"]?.anniversary == (try Fixture.birthday("--07-01")), "an anniversary alone is planned")

        try db.markGiftDone(noteID: try #require(notes.first).id, now: 20)
        #expect(try db.plannableContacts().first { $0.id == "a" }?.giftIdeas == ["a book"])
        try db.setContactSettings(nil, for: "a", now: 21)
        try db.setManualAnniversary(nil, for: "a", now: 22)
        let reset = try #require(try db.findContacts("a").first)
        #expect(reset.settings == nil)
        #expect(reset.anniversary == (try Fixture.birthday("2015-06-20")), "the card's applies again")
    }

    /// A planned contact without extras is read as before (no settings, no lists).
    @Test func contactsWithoutExtrasStayPlain() throws {
        try db.load("s", [Fixture.card("a", "Ada", bday: try Fixture.birthday("1990-03-15"))])
        let only = try #require(try db.plannableContacts().first)
        #expect(only.settings == nil && only.giftIdeas.isEmpty && only.notes.isEmpty && only.anniversary == nil)
    }

    @Test func anniversaryInAnotherCalendarKeepsItsCalendar() throws {
        var card = Fixture.card("h", "Hana", bday: try Fixture.birthday("1990-03-15"))
        card.anniversary = Birthday(month: 3, day: 24, year: 2016, calendar: .hebrew)
        try db.load("s", [card])
        #expect(try db.contact("h")?.anniversary?.calendar == .hebrew)
        #expect(try db.plannableContacts().first?.anniversary?.calendar == .hebrew)
    }

    /// A digest's `missing_count` is one SQL count; it agrees with `list --missing`'s
    /// rule in Swift (no birthday, not skipped, not deceased) for every case.
    @Test func theMissingCountAgreesWithListMissing() throws {
        var dead = Fixture.card("dead", "Dead No Date")
        dead.deathText = "circa 1890"
        var revived = Fixture.card("revived", "Marked Living")
        revived.deathDate = try Fixture.birthday("2020-01-01")
        try db.load("s", [Fixture.card("none", "No Date"), Fixture.card("skipped", "Skipped"),
                          Fixture.card("cleared", "Cleared", bday: try Fixture.birthday("1990-03-15")),
                          Fixture.card("manual", "Manual"), Fixture.card("has", "Has", bday: try Fixture.birthday("1980-01-02")),
                          Fixture.card("byhand", "Dead By Hand"), dead, revived])
        try db.setDecision(.skip, for: ["skipped"], now: 1)
        try db.clearCardBirthday(for: "cleared", now: 2)
        try db.setManualBirthday(try Fixture.birthday("--05-06"), for: "manual", now: 3)
        try db.setDeceased(true, for: "byhand", now: 4)
        try db.setDeceased(false, for: "revived", now: 5)
        let rule = try db.allContacts().filter { $0.birthday == nil && $0.decision != .skip && !$0.isDeceased }
        #expect(Set(rule.map(\.id)) == ["none", "cleared", "revived"])
        #expect(try db.missingBirthdayCount() == rule.count)
    }
}
