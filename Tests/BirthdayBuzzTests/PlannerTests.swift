import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct PlannerTests {
    static func contact(_ id: String, _ birthday: String, categories: [String] = [], decision: Decision? = .include) -> PlanningContact {
        Contact(card: ContactCard(id: id, name: "Person \(id)", birthday: Birthday(storedForm: birthday),
                                  categories: categories), decision: decision).planning
    }

    static func config(_ toml: String = "", zone: String = "UTC") throws -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "t.toml", environment: [:], systemTimeZone: TimeZone(identifier: zone)!, types: .shipped)
    }

    static func instant(_ text: String, _ config: BuzzConfig) throws -> Int64 {
        try #require(PinnedNow(text)).instant(in: WallClock(timeZone: config.general.timeZone))
    }

    @Test func dayBeforeAcrossTheYearEnd() throws {
        let config = try Self.config("[general]\ntimezone = \"Europe/Berlin\"")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let events = planner.upcoming([Self.contact("jan1", "1985-01-01")], now: try Self.instant("2026-12-30T12:00", config), limit: 10)
        #expect(events.count == 2)
        #expect(events.map(\.id) == ["jan1/1/2027-01-01", "jan1/0/2027-01-01"])
        #expect(events.map { planner.clock.iso8601($0.fireAt) } == ["2026-12-31T09:00:00+01:00", "2027-01-01T09:00:00+01:00"])
        #expect(events.first?.age == 42)
    }

    @Test func firedTodayMovesToNextYear() throws {
        let config = try Self.config()
        let planner = Planner(config: config, defaultChannels: ["console"])
        // 10:00 on the birthday: the day-of reminder (09:00) has fired, so next year's comes next.
        let events = planner.upcoming([Self.contact("a", "--03-15")], now: try Self.instant("2027-03-15T10:00Z", config), limit: 10)
        #expect(events.map(\.id) == ["a/1/2028-03-15", "a/0/2028-03-15"])
    }

    @Test func ceilingIsNearestFirst() throws {
        let config = try Self.config("[reminders]\nmax_pending = 10")
        let planner = Planner(config: config, defaultChannels: ["console"])
        var contacts: [PlanningContact] = []
        for index in 0..<100 {
            let date = LocalDate(daysSinceEpoch: (LocalDate(iso: "2027-01-01")!.daysSinceEpoch + index * 3))
            contacts.append(Self.contact("c\(index)", "1980-" + date.description.dropFirst(5)))
        }
        let now = try Self.instant("2027-01-01T00:00Z", config)
        let ten = planner.upcoming(contacts.shuffled(), now: now, limit: config.reminders.maxPending)
        #expect(ten.count == 10)
        #expect(ten == ten.sorted { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) })
        let all = planner.upcoming(contacts, now: now, limit: 1_000)
        #expect(all.count == 200)
        #expect(Array(all.prefix(10)) == ten)
        #expect(Set(all.map(\.id)).count == 200)
    }

    @Test func onlyIncludedContactsWithBirthdays() throws {
        let planner = Planner(config: try Self.config(), defaultChannels: ["console"])
        let contacts = [Self.contact("in", "--05-01"), Self.contact("skip", "--05-02", decision: .skip),
                        Self.contact("undecided", "--05-03", decision: nil),
                        Contact(card: ContactCard(id: "none", name: "No Birthday"), decision: .include).planning]
        let events = planner.upcoming(contacts, now: 0, limit: 100)
        #expect(Set(events.map(\.contactID)) == ["in"])
    }

    @Test func groupsOverrideOffsetsAndChannels() throws {
        let config = try Self.config("""
            [reminders]
            channels = ["console"]
            [groups.family]
            offsets = [0, 7]
            channels = ["desktop"]
            """)
        let planner = Planner(config: config, defaultChannels: config.reminders.channels ?? [])
        let events = planner.upcoming([Self.contact("f", "--06-20", categories: ["Family"]), Self.contact("o", "--06-20")],
                                      now: try Self.instant("2027-06-01", config), limit: 100)
        let family = events.filter { $0.contactID == "f" }
        #expect(family.map(\.offsetDays).sorted() == [0, 7])
        #expect(family.allSatisfy { $0.channels == ["desktop"] })
        let other = events.filter { $0.contactID == "o" }
        #expect(other.map(\.offsetDays).sorted() == [0, 1])
        #expect(other.allSatisfy { $0.channels == ["console"] })
    }

    @Test func eventIDsEncodeSlashAndPercent() {
        #expect(PlannedEvent.id(contactID: "urn:uuid:1", offset: 1, occurrence: LocalDate(iso: "2027-03-15")!)
                == "urn:uuid:1/1/2027-03-15")
        #expect(PlannedEvent.encodeContactID("a/b%c") == "a%2Fb%25c")
    }

    @Test func daysWindowAndFireTimeInDSTGap() throws {
        let config = try Self.config("[general]\ntimezone = \"America/New_York\"\n[reminders]\ntime = \"02:30\"\noffsets = [0]")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let events = planner.upcoming([Self.contact("dst", "--03-14")], now: try Self.instant("2027-03-01", config), limit: 5)
        #expect(events.first.map { planner.clock.iso8601($0.fireAt) } == "2027-03-14T03:30:00-04:00")
        let until = try Self.instant("2027-03-13T23:59:59", config)
        #expect(planner.upcoming([Self.contact("dst", "--03-14")], now: try Self.instant("2027-03-01", config),
                                 until: until, limit: 5).isEmpty)
    }

    @Test func dueWindowHasNoCeiling() throws {
        let config = try Self.config("[reminders]\nmax_pending = 1")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let contacts = (0..<50).map { Self.contact("p\($0)", "--07-04") }
        let after = try Self.instant("2027-07-04T08:00Z", config)
        let due = planner.due(contacts, after: after, upTo: after + 3_600 * 2)
        #expect(due.count == 50)
        #expect(due.allSatisfy { $0.event.offsetDays == 0 && $0.event.occurrence.description == "2027-07-04" })
        // A window of a whole year holds every occurrence once per offset.
        let year = planner.due([Self.contact("y", "--02-29")], after: try Self.instant("2027-01-01", config),
                               upTo: try Self.instant("2029-01-01", config))
        #expect(year.map(\.event.id) == ["y/1/2027-02-28", "y/0/2027-02-28", "y/1/2028-02-29", "y/0/2028-02-29"])
    }
}

@Suite struct UpcomingWindowTests {
    @Test func aWindowLongerThanAYearHoldsEveryOccurrence() throws {
        let config = try PlannerTests.config("[reminders]\noffsets = [0, 1]")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let now = try PlannerTests.instant("2027-01-10T12:00Z", config)
        let until = try PlannerTests.instant("2028-02-14T00:00Z", config)  // 400 days on
        let events = planner.upcoming([PlannerTests.contact("a", "--02-01")], now: now, until: until, limit: 64)
        #expect(events.map(\.id) == ["a/1/2027-02-01", "a/0/2027-02-01", "a/1/2028-02-01", "a/0/2028-02-01"])
        // The limit still holds, nearest first.
        let two = planner.upcoming([PlannerTests.contact("a", "--02-01")], now: now, until: until, limit: 3)
        #expect(two.map(\.id) == ["a/1/2027-02-01", "a/0/2027-02-01", "a/1/2028-02-01"])
    }
}
