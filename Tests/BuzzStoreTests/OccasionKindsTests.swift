import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import Foundation
import Testing

/// Occasion kinds as data: labelled dates from Apple and Google, memorials for
/// the departed, dates kept by hand, and every kind's ledger rows read back as
/// written — through the store and the planner, in process.
@Suite struct OccasionKindsTests {
    let dir: TempDir
    let db: BuzzDatabase

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
    }

    static let appleCard = """
        BEGIN:VCARD\r
        VERSION:3.0\r
        UID:gina\r
        FN:Gina Grad\r
        item1.X-ABDATE;type=pref:2019-09-14\r
        item1.X-ABLabel:Graduation\r
        item2.X-ABLabel:_$!<Other>!$_\r
        item2.X-ABDATE:2001-05-05\r
        item3.X-ABDATE:2010-06-06\r
        item3.X-ABLabel:_$!<Anniversary>!$_\r
        item4.X-ABDATE:2003-10-10\r
        item4.X-ABLabel:Graduation\r
        END:VCARD\r

        """

    static let googleCSV = """
        Name,Given Name,Family Name,Birthday,Event 1 - Type,Event 1 - Value,Event 2 - Type,Event 2 - Value
        Carl Csv,Carl,Csv,,Graduation,2019-09-14,Anniversary,2012-07-07

        """

    static func cards(vcard: String) -> [ContactCard] {
        var cards: [ContactCard] = []
        VCardReader.parse(vcard) { entry in if case .card(let card, _) = entry { cards.append(card) } }
        return cards
    }

    static func cards(csv: String) throws -> [ContactCard] {
        var cards: [ContactCard] = []
        try GoogleContactsCSV.parse(csv) { entry in if case .card(let card, _) = entry { cards.append(card) } }
        return cards
    }

    static func config(_ toml: String = "") throws -> BuzzConfig {
        try BuzzConfig(toml: "[general]\ntimezone = \"UTC\"\n" + toml, file: "t.toml", environment: [:],
                       systemTimeZone: TimeZone(identifier: "UTC")!, types: ConfigTypes(channels: [], sources: []))
    }

    static func instant(_ text: String) throws -> Int64 {
        let date = try #require(ISO8601DateFormatter().date(from: text))
        return Int64(date.timeIntervalSince1970)
    }

    /// The ids `upcoming` gives for the store's contacts over the next `days`.
    func upcomingIDs(_ config: BuzzConfig, from now: String, days: Int = 300) throws -> [String] {
        let planner = Planner(config: config, defaultChannels: ["console"])
        let start = try Self.instant(now)
        return planner.upcoming(try db.plannableContacts(for: planner), now: start, until: start + Int64(days) * 86_400,
                                limit: 1_000).map(\.id)
    }

    @Test func appleAndGoogleLabelledDatesArePlannedWithTheirLabels() throws {
        let apple = Self.cards(vcard: Self.appleCard)
        #expect(apple.first?.anniversary == Birthday(storedForm: "2010-06-06"))
        #expect(apple.first?.labelledDates.map(\.label) == ["Graduation", "Other", "Graduation 2"])
        let google = try Self.cards(csv: Self.googleCSV)
        #expect(google.first?.anniversary == Birthday(storedForm: "2012-07-07"))
        #expect(google.first?.labelledDates == [LabelledDate(label: "Graduation", date: Birthday(storedForm: "2019-09-14")!)])
        try db.load("apple", apple, now: 1)
        try db.load("google", google, now: 1)
        let carl = try #require(google.first?.id)
        // Without a birthday a contact starts undecided (as with only an anniversary): include both.
        try db.setDecision(.include, for: ["gina", carl], now: 1)

        let ids = try upcomingIDs(try Self.config(), from: "2027-01-01T00:00:00Z")
        #expect(ids.contains("gina/date:Graduation/0/2027-09-14"))
        #expect(ids.contains("gina/date:Other/0/2027-05-05"))
        #expect(ids.contains("gina/date:Graduation 2/0/2027-10-10"))
        #expect(ids.contains("gina/anniversary/0/2027-06-06"))
        #expect(ids.contains("\(carl)/date:Graduation/0/2027-09-14"))
        #expect(ids.contains("\(carl)/anniversary/0/2027-07-07"))
        // Each id reads back as the occasion it was built from.
        let parsed = try #require(PlannedEvent.parse("gina/date:Graduation 2/0/2027-10-10"))
        #expect(parsed.occasion == Occasion(.labelledDate, label: "Graduation 2"))
        #expect(PlannedEvent.parse("a%2Fb/date:A%2FB/3/2027-10-10")?.occasion.label == "A/B")

        // `[dates] enabled = false` turns them off, and nothing else.
        let off = try upcomingIDs(try Self.config("[dates]\nenabled = false\n"), from: "2027-01-01T00:00:00Z")
        #expect(!off.contains { $0.contains("/date:") } && off.contains("gina/anniversary/0/2027-06-06"))
    }

    @Test func theDepartedGetOnlyTheirMemorialAndOnlyWhenAskedFor() throws {
        var dora = Self.cards(vcard: """
            BEGIN:VCARD\r
            VERSION:4.0\r
            UID:dora\r
            FN:Dora\r
            BDAY:19400101\r
            ANNIVERSARY:19650505\r
            DEATHDATE:20240103\r
            END:VCARD\r

            """)
        #expect(dora.first?.deathDate == Birthday(storedForm: "2024-01-03"))
        dora.append(Fixture.card("eve", "Eve", bday: try Fixture.birthday("1950-02-02")))
        try db.load("s", dora, now: 1)
        try db.setDeceased(true, for: "eve", now: 2)
        try db.load("s", dora, now: 3)  // a re-import keeps the hand mark

        try db.setDecision(.include, for: ["dora", "eve"], now: 3)
        let plain = try upcomingIDs(try Self.config(), from: "2026-12-01T00:00:00Z")
        #expect(plain.isEmpty, "no birthday, anniversary or memorial for the dead by default: \(plain)")
        let remembered = try upcomingIDs(try Self.config("[memorials]\nenabled = true\noffsets = [0, 1]\n"),
                                         from: "2026-12-01T00:00:00Z")
        #expect(remembered == ["dora/memorial/1/2027-01-03", "dora/memorial/0/2027-01-03"])

        // A memorial date by hand makes Eve's a memorial too; cleared, it is gone again.
        try db.setHandDate(.memorial, label: nil, try Fixture.birthday("2020-03-03"), for: "eve", now: 4)
        let both = try upcomingIDs(try Self.config("[memorials]\nenabled = true\n"), from: "2026-12-01T00:00:00Z")
        #expect(both == ["dora/memorial/0/2027-01-03", "eve/memorial/0/2027-03-03"])
        // Clearing Dora's card date makes her living again, as `clear-date dora memorial` does.
        try db.setHandDate(.memorial, label: nil, nil, for: "dora", now: 5)
        let cleared = try upcomingIDs(try Self.config("[memorials]\nenabled = true\n"), from: "2026-12-01T00:00:00Z")
        #expect(cleared.contains("dora/0/2027-01-01") && cleared.contains("eve/memorial/0/2027-03-03"))
        #expect(!cleared.contains { $0.hasPrefix("dora/memorial") })
    }

    @Test func handDatesWinOverTheCardsAndSurviveReimport() throws {
        let apple = Self.cards(vcard: Self.appleCard)
        try db.load("apple", apple, now: 1)
        try db.setDecision(.include, for: ["gina"], now: 1)
        // Cleared by hand: the card's Graduation is gone; a hand-entered wedding next year is planned.
        try db.setHandDate(.labelledDate, label: "Graduation", nil, for: "gina", now: 2)
        try db.setHandDate(.labelledDate, label: "Wedding", try Fixture.birthday("2027-08-08"), for: "gina", now: 3)
        try db.load("apple", apple, now: 4)
        let ids = try upcomingIDs(try Self.config(), from: "2027-01-01T00:00:00Z")
        #expect(!ids.contains("gina/date:Graduation/0/2027-09-14"))
        #expect(ids.contains("gina/date:Wedding/0/2027-08-08"))
        let gina = try #require(try db.allContacts().first { $0.id == "gina" })
        #expect(gina.otherDates.map(\.label) == ["Other", "Graduation 2", "Wedding"])
        // Removing the hand entry brings the card's back.
        try db.removeHandDate(.labelledDate, label: "Graduation", for: "gina")
        #expect(try upcomingIDs(try Self.config(), from: "2027-01-01T00:00:00Z").contains("gina/date:Graduation/0/2027-09-14"))
    }

    /// Every kind's reminder row is stored under its kind and read back as
    /// written, from SQLite and from memory alike.
    @Test func everyKindsLedgerRowReadsBackAsWritten() throws {
        let sqlite = SQLiteLedger(db)
        let memory = InMemoryLedger()
        for kind in OccasionKind.all {
            let occasion = Occasion(kind, label: kind.isLabelled ? "Graduation" : nil)
            let id = PlannedEvent.id(contactID: "ada", occasion: occasion, offset: 0,
                                     occurrence: LocalDate(year: 2027, month: 3, day: 15)!)
            let row = LedgerRow(eventID: id, channel: "hook", contactID: "ada", kind: .reminder(of: kind), state: .sent,
                                fireAt: 100, sentAt: 100)
            try sqlite.save(row, now: 100)
            try memory.save(row, now: 100)
        }
        for ledger in [sqlite, memory] as [any DeliveryLedger] {
            for kind in OccasionKind.all {
                let rows = try ledger.rows(kind: .reminder(of: kind), firedAfter: 0)
                #expect(rows.count == 1 && rows.first?.kind.occasionKind == kind, "\(type(of: ledger)) \(kind)")
                #expect(rows.first.flatMap { PlannedEvent.parse($0.eventID) }?.occasion.kind == kind)
            }
        }
        #expect(try sqlite.rows(kind: .anniversary, firedAfter: 0).first?.eventID == "ada/anniversary/0/2027-03-15")
    }
}
