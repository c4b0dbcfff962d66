import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct WallClockTests {
    static func clock(_ zone: String) throws -> WallClock {
        WallClock(timeZone: try #require(TimeZone(identifier: zone)))
    }

    struct DSTCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var date: String
        var time: String  // local wall time asked for
        var expected: String  // ISO 8601 instant with offset
        var testDescription: String { "\(zone) \(date) \(time) → \(expected)" }
    }

    @Test(arguments: [
        // America/New_York: spring forward 2027-03-14 02:00 → 03:00; fall back 2027-11-07 02:00 → 01:00.
        DSTCase(zone: "America/New_York", date: "2027-03-14", time: "02:30", expected: "2027-03-14T03:30:00-04:00"),
        DSTCase(zone: "America/New_York", date: "2027-03-14", time: "01:59", expected: "2027-03-14T01:59:00-05:00"),
        DSTCase(zone: "America/New_York", date: "2027-03-14", time: "03:00", expected: "2027-03-14T03:00:00-04:00"),
        DSTCase(zone: "America/New_York", date: "2027-11-07", time: "01:30", expected: "2027-11-07T01:30:00-04:00"),
        DSTCase(zone: "America/New_York", date: "2027-11-07", time: "09:00", expected: "2027-11-07T09:00:00-05:00"),
        // Europe/Berlin: 2027-03-28 02:00 → 03:00; 2027-10-31 03:00 → 02:00.
        DSTCase(zone: "Europe/Berlin", date: "2027-03-28", time: "02:30", expected: "2027-03-28T03:30:00+02:00"),
        DSTCase(zone: "Europe/Berlin", date: "2027-10-31", time: "02:30", expected: "2027-10-31T02:30:00+02:00"),
        DSTCase(zone: "Europe/Berlin", date: "2027-10-31", time: "09:00", expected: "2027-10-31T09:00:00+01:00"),
        // Australia/Lord_Howe: a 30-minute shift. 2027-10-03 02:00 → 02:30; 2027-04-04 02:00 → 01:30.
        DSTCase(zone: "Australia/Lord_Howe", date: "2027-10-03", time: "02:15", expected: "2027-10-03T02:45:00+11:00"),
        DSTCase(zone: "Australia/Lord_Howe", date: "2027-10-03", time: "02:30", expected: "2027-10-03T02:30:00+11:00"),
        DSTCase(zone: "Australia/Lord_Howe", date: "2027-04-04", time: "01:45", expected: "2027-04-04T01:45:00+11:00"),
        DSTCase(zone: "Australia/Lord_Howe", date: "2027-04-04", time: "09:00", expected: "2027-04-04T09:00:00+10:30"),
    ])
    func dstNights(_ c: DSTCase) throws {
        let clock = try Self.clock(c.zone)
        let minutes = try #require(ValueFormats.timeOfDay(c.time))
        let date = try #require(LocalDate(iso: c.date))
        let instant = clock.instant(of: date, secondsAfterMidnight: minutes * 60)
        #expect(clock.iso8601(instant) == c.expected)
    }

    @Test func overlapFiresOnce() throws {
        // A reminder at 01:30 on the fall-back night: one instant, the first.
        let clock = try Self.clock("America/New_York")
        let date = try #require(LocalDate(iso: "2027-11-07"))
        let first = clock.instant(of: date, secondsAfterMidnight: 90 * 60)
        #expect(clock.offset(at: first) == -4 * 3_600)
        #expect(clock.localDate(at: first) == date)
    }

    @Test func localDateAcrossMidnight() throws {
        let clock = try Self.clock("Pacific/Auckland")
        // 2027-01-01T10:30Z is 23:30 on Jan 1 in Auckland (UTC+13).
        let instant = Int64(try #require(LocalDate(iso: "2027-01-01")).daysSinceEpoch) * 86_400 + 10 * 3_600 + 1_800
        #expect(clock.localDate(at: instant).description == "2027-01-01")
        #expect(clock.localDate(at: instant + 3_600).description == "2027-01-02")
    }

    @Test(arguments: [
        ("2027-05-10", "Europe/Berlin", "2027-05-10T00:00:00+02:00"),
        ("2027-05-10T09:05", "Europe/Berlin", "2027-05-10T09:05:00+02:00"),
        ("2027-05-10T09:05Z", "Europe/Berlin", "2027-05-10T11:05:00+02:00"),
        ("2027-05-10T09:05:30+01:00", "Europe/Berlin", "2027-05-10T10:05:30+02:00"),
        ("2027-05-10T09:05-04:30", "UTC", "2027-05-10T13:35:00+00:00"),
    ])
    func pinnedNow(_ text: String, _ zone: String, _ expected: String) throws {
        let pinned = try #require(PinnedNow(text))
        let clock = try Self.clock(zone)
        #expect(clock.iso8601(pinned.instant(in: clock)) == expected)
    }

    @Test(arguments: ["", "2027", "2027-5-10", "2027-02-30", "2027-05-10T25:00", "2027-05-10T09", "2027-05-10T09:05+1",
                      "2027-05-10T09:05:61", "tomorrow", "2027-05-10T09:05Zx"])
    func pinnedNowRejects(_ text: String) {
        #expect(PinnedNow(text) == nil)
    }
}
