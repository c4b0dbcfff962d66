import Foundation
import Testing
@testable import BirthdayBuzz

/// The contact's own day: the card's `TZ`, `their_time` for reminders, and the
/// times of a scheduled wish (`ScheduledWish`).
@Suite struct ContactTimeZoneTests {
    @Test(arguments: [
        ("TZ:-05:00", "-05:00"),  // vCard 3
        ("TZ;VALUE=utc-offset:-0500", "-05:00"),
        ("TZ:+0530", "+05:30"),
        ("TZ:+09", "+09:00"),
        ("TZ:Asia/Tokyo", "Asia/Tokyo"),  // vCard 4
        ("TZ;VALUE=text:America/New_York", "America/New_York"),
        ("TZ;VALUE=text:-05:00\\; EST\\; Raleigh/North America", "-05:00"),
        ("tz:Europe/Berlin", "Europe/Berlin"),
    ])
    func cardTimeZoneIsKept(line: String, stored: String) {
        let read = card(bday: line)
        #expect(read?.timeZone?.stored == stored, "\(line)")
        #expect(read?.unreadTimeZone == nil)
    }

    /// An unknown name, an abbreviation, a URI or nonsense is ignored (never a
    /// problem for the import, never a crash); the rest of the card is kept.
    @Test(arguments: ["TZ:Mars/Olympus_Mons", "TZ:EST", "TZ;VALUE=uri:https://example.org/tz/x", "TZ:+25:00",
                      "TZ:-5", "TZ:", "TZ:\u{0}/\u{1}"])
    func unknownTimeZoneIsIgnored(line: String) {
        let entries = readCards("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:x\r\nFN:Test\r\nBDAY:1990-03-15\r\n\(line)\r\nEND:VCARD\r\n")
        guard case .card(let read, let problems)? = entries.first else {
            Issue.record("no card for \(line)")
            return
        }
        #expect(read.timeZone == nil && problems.isEmpty && read.birthday != nil, "\(line)")
    }

    @Test func offsetsShowAsUTCAndStoredFormsRoundTrip() throws {
        let offset = try #require(ContactTimeZone(stored: "-05:00"))
        #expect(offset.description == "UTC-05:00")
        #expect(offset.timeZone.secondsFromGMT() == -18_000)
        #expect(ContactTimeZone(stored: "Asia/Tokyo")?.description == "Asia/Tokyo")
        #expect(ContactTimeZone(stored: "Nowhere/Here") == nil)
    }

    static let utc = WallClock(timeZone: TimeZone(identifier: "UTC")!)
    static let tokyo = ContactTimeZone(stored: "Asia/Tokyo")
    static let march15 = LocalDate(year: 2027, month: 3, day: 15)!
    static func at(_ text: String) -> Int64 { Int64(ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970) }

    /// Tokyo is 9 h ahead: at a 09:00Z reminder it is 18:00 there, and their
    /// birthday began at 15:00 the day before in the user's time.
    @Test func theirDayAheadOfUs() throws {
        let day = try #require(TheirDay(zone: Self.tokyo, occurrence: Self.march15, fireAt: Self.at("2027-03-15T09:00:00Z"), ours: Self.utc))
        #expect(day.theirTime == "18:00")
        #expect(day.dayStarts == "15:00")
        #expect(day.dayStartsTheDayBefore)
        let behind = try #require(TheirDay(zone: ContactTimeZone(stored: "-05:00"), occurrence: Self.march15,
                                           fireAt: Self.at("2027-03-15T09:00:00Z"), ours: Self.utc))
        #expect(behind.theirTime == "04:00" && behind.dayStarts == "05:00" && !behind.dayStartsTheDayBefore)
        // The same offset under another name is the same day: nothing to say.
        #expect(TheirDay(zone: ContactTimeZone(stored: "Europe/London"), occurrence: LocalDate(year: 2027, month: 1, day: 15)!,
                         fireAt: Self.at("2027-01-15T09:00:00Z"), ours: Self.utc) == nil)
        #expect(TheirDay(zone: nil, occurrence: Self.march15, fireAt: Self.at("2027-03-15T09:00:00Z"), ours: Self.utc) == nil)
    }

    /// The shipped day-of templates say when their day starts, in every language;
    /// the reminders before the day and contacts in our zone say nothing of it.
    @Test func shippedDayOfTemplatesSayWhenTheirDayStarts() throws {
        let templates = try MessageTemplates()
        let day = TheirDay(zone: Self.tokyo, occurrence: Self.march15, fireAt: Self.at("2027-03-15T09:00:00Z"), ours: Self.utc)
        let expected = ["en": "Aiko's birthday began yesterday at 15:00 your time", "de": "hat gestern um 15:00 Uhr deiner Zeit begonnen",
                        "fr": "a commencé hier à 15:00", "es": "empezó ayer a las 15:00"]
        for (locale, text) in expected {
            let body = templates.renderReminder(name: "Aiko Tanaka", firstName: "Aiko", daysUntil: 0, age: 37, date: Self.march15,
                                                locale: locale, theirDay: day).body
            #expect(body.contains(text), "\(locale): \(body)")
            let anniversary = templates.renderReminder(name: "Aiko Tanaka", firstName: "Aiko", daysUntil: 0, age: 5,
                                                       date: Self.march15, locale: locale, occasion: .anniversary,
                                                       theirDay: day).body
            #expect(anniversary.contains("15:00"), "\(locale): \(anniversary)")
            let plain = templates.renderReminder(name: "Aiko Tanaka", firstName: "Aiko", daysUntil: 0, age: 37,
                                                 date: Self.march15, locale: locale).body
            #expect(!plain.contains("15:00"), "\(locale): \(plain)")
        }
        let behind = TheirDay(zone: ContactTimeZone(stored: "-05:00"), occurrence: Self.march15,
                              fireAt: Self.at("2027-03-15T09:00:00Z"), ours: Self.utc)
        let body = templates.renderReminder(name: "Ben Ortiz", firstName: "Ben", daysUntil: 0, age: nil, date: Self.march15,
                                            locale: "en", theirDay: behind).body
        #expect(body.contains("Ben's birthday starts at 05:00 your time (it is 04:00 there now)."), "\(body)")
        let before = templates.renderReminder(name: "Ben Ortiz", firstName: "Ben", daysUntil: 1, age: nil, date: Self.march15,
                                              locale: "en", theirDay: behind).body
        #expect(!before.contains("05:00"), "\(before)")
    }

    /// `--at 09:00` for a contact in Tokyo: 00:00Z on the birthday; today's when the
    /// time has not passed there, else the next year's; the day ends at their midnight.
    @Test func scheduledWishTimesAreTheContacts() throws {
        let birthday = try #require(Birthday(month: 3, day: 15, year: 1990))
        let tokyo = ScheduledWish.clock(for: Self.tokyo, ours: Self.utc)
        let early = ScheduledWish.schedule(birthday, secondsAfterMidnight: 9 * 3_600, clock: tokyo,
                                           now: Self.at("2027-03-10T12:00:00Z"), feb29: .feb28)
        #expect(early.occurrence.date == Self.march15 && early.fireAt == Self.at("2027-03-15T00:00:00Z"))
        #expect(early.occurrence.age == 37)
        // 2027-03-14T20:00Z is 05:00 on the 15th in Tokyo: still today.
        let sameDay = ScheduledWish.schedule(birthday, secondsAfterMidnight: 9 * 3_600, clock: tokyo,
                                             now: Self.at("2027-03-14T20:00:00Z"), feb29: .feb28)
        #expect(sameDay.fireAt == Self.at("2027-03-15T00:00:00Z"))
        // 10:00 in Tokyo on the 15th: 09:00 has passed there, so next year.
        let late = ScheduledWish.schedule(birthday, secondsAfterMidnight: 9 * 3_600, clock: tokyo,
                                          now: Self.at("2027-03-15T01:00:00Z"), feb29: .feb28)
        #expect(late.occurrence.date == LocalDate(year: 2028, month: 3, day: 15)!)
        #expect(ScheduledWish.dayEnd(Self.march15, clock: tokyo) == Self.at("2027-03-15T15:00:00Z"))
        #expect(ScheduledWish.timeOfDay("09:00") == 32_400 && ScheduledWish.timeOfDay("9:00") == nil
                && ScheduledWish.timeOfDay("24:00") == nil)
        #expect(ScheduledWish.parse("a%2Fb/wish/2027-03-15")?.contactID == "a/b")
        #expect(ScheduledWish.parse("a/0/2027-03-15") == nil)
    }
}
