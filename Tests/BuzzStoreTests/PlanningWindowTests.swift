import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import Foundation
import Testing

/// `upcoming` over the store's window (`plannableContacts(within:)`, grown until it
/// holds the limit) gives exactly what planning over every contact gives: for
/// every day of a leap year, Feb 29 in both modes, other calendars, hand-kept
/// dates, own offsets, memorials, the time zones the tests use, DST nights and
/// year rollovers.
@Suite struct PlanningWindowTests {
    let dir: TempDir
    let db: BuzzDatabase

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
        try Self.fill(db)
    }

    /// A birthday on every day of a leap year (with and without a year), an
    /// anniversary on every third day, a labelled date on every fifth, some in
    /// other calendars; hand-kept birthdays, anniversaries, dates and offsets;
    /// deceased contacts with their dates of death.
    static func fill(_ db: BuzzDatabase) throws {
        var cards: [ContactCard] = []
        var day = LocalDate(year: 2024, month: 1, day: 1)!
        let calendars: [BirthdayCalendar] = [.hebrew, .islamicUmmAlQura, .persian, .hebrew]
        for index in 0..<366 {
            defer { day = day.adding(days: 1) }
            // Every day near the year's end and Feb 29, every third day elsewhere.
            guard [1, 2, 3, 12].contains(day.month) || index % 3 == 0 else { continue }
            var card = ContactCard(id: "c\(index)", name: "Contact \(index)",
                                   birthday: Birthday(month: day.month, day: day.day, year: index % 2 == 0 ? 1980 + index % 40 : nil))
            if index % 3 == 0 {
                card.anniversary = Birthday(month: day.month, day: day.day, year: 2000 + index % 20,
                                            calendar: index % 99 == 0 ? .hebrew : .gregorian)
            }
            if index % 5 == 0 {
                let other = day.adding(days: 100)
                card.labelledDates = [LabelledDate(label: "Graduation", date: Birthday(month: other.month, day: other.day, year: 2010)!)]
                if index % 75 == 0 {
                    card.labelledDates.append(LabelledDate(label: "Moved", date: Birthday(month: 2, day: 29, year: 2012,
                                                                                          calendar: calendars[index % 4])!))
                }
            }
            if index % 41 == 0 {
                card.deathDate = Birthday(month: day.adding(days: 7).month, day: day.adding(days: 7).day, year: 2023)
            }
            cards.append(card)
            // Another calendar's birthday, and a Feb 29 one with a year.
            if index % 90 == 0 {
                cards.append(ContactCard(id: "k\(index)", name: "Calendar \(index)",
                                         birthday: Birthday(month: day.month, day: day.day, year: 1990, calendar: calendars[index % 4])))
            }
        }
        cards.append(ContactCard(id: "leap", name: "Leap Year", birthday: Birthday(month: 2, day: 29, year: 1996)))
        _ = try db.importSources(["cards"], prune: false, now: 1, includeByDefault: true) { _, session in
            for card in cards { try session.add(.card(card, problems: [])) }
        }
        // By hand: a birthday moved, one cleared, an anniversary, labelled and memorial
        // dates, own offsets reaching a month ahead, a deceased mark and its undoing.
        try db.setManualBirthday(Birthday(month: 7, day: 4), for: "c10", now: 2)
        try db.clearCardBirthday(for: "c11", now: 2)
        try db.setManualAnniversary(Birthday(month: 12, day: 31, year: 1999), for: "c12", now: 2)
        try db.setHandDate(.labelledDate, label: "Surgery", Birthday(month: 1, day: 2, year: 2020), for: "c13", now: 2)
        try db.setHandDate(.memorial, label: nil, Birthday(month: 3, day: 3, year: 2021), for: "c14", now: 2)
        try db.setDeceased(true, for: "c14", now: 2)
        try db.setDeceased(false, for: "c41", now: 2)
        try db.setContactSettings(ContactSettings(offsets: [0, 30], time: 23 * 60 + 45), for: "c201", now: 2)
        try db.setContactSettings(ContactSettings(offsets: [45]), for: "c300", now: 2)
    }

    static func config(zone: String, feb29: Feb29Policy, time: String, offsets: String) throws -> BuzzConfig {
        try BuzzConfig(toml: """
            [general]
            timezone = "\(zone)"
            [reminders]
            time = "\(time)"
            feb29 = "\(feb29.rawValue)"
            offsets = \(offsets)
            [anniversaries]
            enabled = true
            offsets = [0, 2]
            [dates]
            enabled = true
            [memorials]
            enabled = true
            """, file: "t.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!,
            types: ConfigTypes(channels: [], sources: []))
    }

    static func instant(_ text: String) throws -> Int64 {
        Int64(try #require(ISO8601DateFormatter().date(from: text)).timeIntervalSince1970)
    }

    /// Year rollovers, Feb 28/29/Mar 1 of a leap and a common year, the DST nights
    /// of Europe, the US and New Zealand, and a plain day.
    static let moments = [
        "2027-12-31T23:59:59Z", "2027-02-28T23:30:00Z", "2028-02-28T10:00:00Z", "2028-02-29T23:00:00Z",
        "2027-03-28T00:30:00Z", "2027-03-14T06:30:00Z", "2027-10-31T01:00:00Z", "2026-11-28T14:20:00Z",
    ]

    /// The deliveries the ledger holds change nothing either: with the first
    /// events of `full` recorded, the window passes over them as a full read does.
    static func expectRecordedPassedOver(_ full: [PlannedEvent], planner: Planner, db: BuzzDatabase, everyone: [PlanningContact],
                                         now: Int64, until: Int64?, limit: Int, largestOwn: Int, _ label: String) throws {
        let recorded = RecordedDeliveries(keys: Set(full.prefix(3).flatMap { event in
            event.channels.map { LedgerKey(eventID: event.id, channel: $0) }
        }))
        let fullLeft = planner.upcoming(everyone, now: now, until: until, limit: limit, recorded: recorded)
        let windowedLeft = try planner.upcoming(now: now, until: until, limit: limit, recorded: recorded,
                                                largestOwnOffset: largestOwn) { keys, perKey in
            try db.plannableContacts(for: planner, within: keys, perKey: perKey)
        }
        #expect(windowedLeft == fullLeft, "recorded: \(label) limit \(limit)")
    }

    @Test(arguments: [
        ("UTC", Feb29Policy.feb28, "09:00", "[0]"),
        ("Europe/Berlin", .mar1, "02:30", "[0, 7]"),
        ("Asia/Tokyo", .feb28, "00:00", "[0, 1, 14]"),
        ("America/New_York", .mar1, "23:30", "[3]"),
        ("Pacific/Auckland", .feb28, "02:15", "[0, 7]"),
        ("Pacific/Kiritimati", .mar1, "08:00", "[0]"),
    ])
    func theWindowGivesWhatEveryContactGives(zone: String, feb29: Feb29Policy, time: String, offsets: String) throws {
        let config = try Self.config(zone: zone, feb29: feb29, time: time, offsets: offsets)
        let planner = Planner(config: config, defaultChannels: ["console"])
        let everyone = try db.plannableContacts(for: planner)
        let largestOwn = try db.largestOwnOffset()
        #expect(largestOwn == 45)
        var narrowReads = 0
        for moment in Self.moments {
            let now = try Self.instant(moment)
            // Reading everything (a limit no window holds, a year's window) is slow in a
            // debug build: checked at two moments.
            let wide: [(Int, Int?)] = moment == Self.moments[0] || moment == Self.moments[3] ? [(5_000, nil), (1_000, 400)] : []
            for (limit, days) in [(1, nil), (64, nil), (1_000, 3)] + wide {
                let until = days.map { now + Int64($0) * 86_400 }
                let full = planner.upcoming(everyone, now: now, until: until, limit: limit)
                let windowed = try planner.upcoming(now: now, until: until, limit: limit, largestOwnOffset: largestOwn) { keys, perKey in
                    if keys != nil { narrowReads += 1 }
                    return try db.plannableContacts(for: planner, within: keys, perKey: perKey)
                }
                #expect(windowed == full, "\(zone) \(feb29) \(moment) limit \(limit) days \(String(describing: days))")
                guard limit == 64 || days == 3 else { continue }
                try Self.expectRecordedPassedOver(full, planner: planner, db: db, everyone: everyone, now: now, until: until,
                                                  limit: limit, largestOwn: largestOwn, "\(zone) \(moment)")
            }
        }
        // The window did narrow the read (not every answer came from reading all).
        #expect(narrowReads > Self.moments.count * 3)
    }

    /// Busy days, as a big book has them: a per-key limit cuts the date streams
    /// short (the first contacts by id, in byte order), and what is left unread
    /// changes nothing. The contacts that could fire earlier than their stream
    /// (their own time or offsets) are read whole; those that fire later or not
    /// at all (a wedding yet to come, a skipped or deceased contact) take a place
    /// in their stream, and the window reads more when that matters.
    @Test(arguments: [
        ("UTC", Feb29Policy.feb28, "09:00", "[0, 1]"),
        ("Europe/Berlin", .mar1, "00:00", "[0, 7]"),
    ])
    func busyDaysCutShortGiveWhatEveryContactGives(zone: String, feb29: Feb29Policy, time: String, offsets: String) throws {
        let dir = try TempDir()
        let db = try BuzzDatabase(directory: dir.path + "/data")
        let days = [(6, 1), (6, 2), (6, 3), (6, 4), (2, 28), (2, 29), (3, 1), (12, 31), (1, 1)]
        var cards: [ContactCard] = []
        var skipped: [String] = [], deceased: [String] = [], ownTime: [String] = [], ownOffsets: [String] = []
        for (dayIndex, (month, day)) in days.enumerated() {
            for number in 0..<40 {
                let serial = dayIndex * 40 + number
                // Ids in no particular order: hex, upper and lower case, one with a non-ASCII letter.
                var id = String((UInt32(truncatingIfNeeded: serial &* 2_654_435_761)), radix: 16)
                if serial % 6 == 0 { id = id.uppercased() }
                if serial % 17 == 0 { id = "\u{e9}" + id }
                var card = ContactCard(id: id, name: "Busy \(serial)",
                                       birthday: Birthday(month: month, day: day, year: serial % 3 == 0 ? nil : 1972 + 4 * (serial % 12)))
                if serial % 5 == 0 {
                    // Every other one a wedding yet to come: its first occurrence is years away.
                    // (Leap years throughout, for Feb 29.)
                    card.anniversary = Birthday(month: month, day: day, year: serial % 10 == 0 ? 2032 : 2004)
                }
                if serial % 4 == 0 {
                    card.labelledDates = [LabelledDate(label: "Graduation", date: Birthday(month: month, day: day, year: 2016)!)]
                }
                if serial % 11 == 0 {
                    card.deathDate = Birthday(month: month, day: day, year: 2020)
                    deceased.append(id)
                }
                if serial % 7 == 0 { skipped.append(id) }
                if serial % 13 == 0 { ownTime.append(id) }
                if serial % 19 == 0 { ownOffsets.append(id) }
                cards.append(card)
            }
        }
        // The first ids of Jun 2 and Jun 3 are of the dead: a stream cut at them
        // holds no birthday, and the window must read on.
        for number in 0..<20 {
            var card = ContactCard(id: "00dead\(number)", name: "Late \(number)",
                                   birthday: Birthday(month: 6, day: 2 + number % 2, year: 1930))
            card.deathDate = Birthday(month: 11, day: 11, year: 2010)
            cards.append(card)
        }
        _ = try db.importSources(["busy"], prune: false, now: 1, includeByDefault: true) { _, session in
            for card in cards { try session.add(.card(card, problems: [])) }
        }
        try db.setDecision(.skip, for: skipped, now: 2)
        for id in ownTime { try db.setContactSettings(ContactSettings(time: 6 * 60), for: id, now: 2) }
        for id in ownOffsets { try db.setContactSettings(ContactSettings(offsets: [3]), for: id, now: 2) }

        let config = try Self.config(zone: zone, feb29: feb29, time: time, offsets: offsets)
        let planner = Planner(config: config, defaultChannels: ["console"])
        let everyone = try db.plannableContacts(for: planner)
        let largestOwn = try db.largestOwnOffset()
        var cutReads = 0, retries = 0
        for moment in ["2027-06-01T12:00:00Z", "2028-02-28T10:00:00Z", "2027-12-30T23:30:00Z"] {
            let now = try Self.instant(moment)
            for (limit, days) in [(1, nil), (5, nil), (64, nil), (10, 2)] as [(Int, Int?)] {
                let until = days.map { now + Int64($0) * 86_400 }
                let full = planner.upcoming(everyone, now: now, until: until, limit: limit)
                var perKeys: [Int?] = []
                let windowed = try planner.upcoming(now: now, until: until, limit: limit, largestOwnOffset: largestOwn) { keys, perKey in
                    let read = try db.plannableContacts(for: planner, within: keys, perKey: perKey)
                    if !read.cut.isEmpty { cutReads += 1 }
                    if perKeys.contains(where: { $0 != nil }), perKey != perKeys.last { retries += 1 }
                    perKeys.append(perKey)
                    return read
                }
                #expect(windowed == full, "\(zone) \(moment) limit \(limit) days \(String(describing: days)) read \(perKeys)")
                guard limit == 5 || days != nil else { continue }
                try Self.expectRecordedPassedOver(full, planner: planner, db: db, everyone: everyone, now: now, until: until,
                                                  limit: limit, largestOwn: largestOwn, "\(zone) \(moment)")
            }
        }
        // Streams were cut short, and some cuts had to read more (past the dead of Jun 2 and 3, at least).
        #expect(cutReads > 5)
        #expect(retries > 0)
    }

    /// Contact ids are ordered by their bytes, as SQLite orders them.
    @Test func idsAreOrderedByTheirBytes() {
        #expect(PlannedEvent.idPrecedes("B", "a"))
        #expect(PlannedEvent.idPrecedes("z", "\u{e9}"))
        #expect(!PlannedEvent.idPrecedes("abc", "abc"))
        // Canonically equivalent, different bytes: the decomposed one (e + U+0301) sorts first.
        #expect(PlannedEvent.idPrecedes("e\u{301}", "\u{e9}"))
    }

    @Test func aNarrowReadHoldsOnlyContactsNearTheWindow() throws {
        let config = try Self.config(zone: "UTC", feb29: .feb28, time: "09:00", offsets: "[0]")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let keys = try #require(DayKeyRanges(from: LocalDate(year: 2027, month: 6, day: 1)!,
                                             through: LocalDate(year: 2027, month: 6, day: 3)!))
        let read = try db.plannableContacts(for: planner, within: keys)
        let all = try db.plannableContacts(for: planner)
        #expect(read.count < all.count / 10)
        // Every contact with a date on those days is in; a keyless one (another calendar) too.
        #expect(read.contains { $0.id == "c153" })   // Jun 1, 2024 is day 153 (a multiple of 3)
        #expect(read.contains { $0.id == "k0" })
        #expect(!read.contains { $0.id == "c3" })
    }

    @Test func yearEndWrapsAndLabelledDatesFollowTheirCard() throws {
        let wrapped = try #require(DayKeyRanges(from: LocalDate(year: 2027, month: 12, day: 30)!,
                                                through: LocalDate(year: 2028, month: 1, day: 2)!))
        #expect(wrapped.ranges == [1230...1231, 101...102])
        #expect(DayKeyRanges(from: LocalDate(year: 2027, month: 1, day: 1)!, through: LocalDate(year: 2027, month: 12, day: 31)!) == nil)
        // A card's labelled dates move with it on re-import, and go with it when it goes.
        let config = try Self.config(zone: "UTC", feb29: .feb28, time: "09:00", offsets: "[0]")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let august = try #require(DayKeyRanges(from: LocalDate(year: 2027, month: 8, day: 10)!,
                                               through: LocalDate(year: 2027, month: 8, day: 10)!))
        var card = ContactCard(id: "mover", name: "Mover")
        card.labelledDates = [LabelledDate(label: "Graduation", date: Birthday(month: 8, day: 10, year: 2015)!)]
        _ = try db.importSources(["moving"], prune: true, now: 3, includeByDefault: true) { _, session in
            try session.add(.card(card, problems: []))
        }
        try db.setDecision(.include, for: ["mover"], now: 3)
        #expect(try db.plannableContacts(for: planner, within: august).contains { $0.id == "mover" })
        card.labelledDates = [LabelledDate(label: "Graduation", date: Birthday(month: 9, day: 10, year: 2015)!)]
        _ = try db.importSources(["moving"], prune: true, now: 4, includeByDefault: true) { _, session in
            try session.add(.card(card, problems: []))
        }
        #expect(try !db.plannableContacts(for: planner, within: august).contains { $0.id == "mover" })
        _ = try db.importSources(["moving"], prune: true, now: 5, includeByDefault: true) { _, _ in }
        let september = try #require(DayKeyRanges(from: LocalDate(year: 2027, month: 9, day: 10)!,
                                                  through: LocalDate(year: 2027, month: 9, day: 10)!))
        #expect(try !db.plannableContacts(for: planner, within: september).contains { $0.id == "mover" })
    }
}
