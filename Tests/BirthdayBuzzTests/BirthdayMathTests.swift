import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct BirthdayMathTests {
    static func date(_ text: String) -> LocalDate {
        guard let date = LocalDate(iso: text) else { Issue.record("bad fixture \(text)"); return LocalDate(daysSinceEpoch: 0) }
        return date
    }

    @Test func leapYearRules() {
        #expect(LocalDate.isLeap(2000))
        #expect(!LocalDate.isLeap(1900))
        #expect(!LocalDate.isLeap(2100))
        #expect(LocalDate.isLeap(2028))
        #expect(!LocalDate.isLeap(2027))
        #expect(LocalDate.isLeap(1604))
    }

    struct Feb29Case: Sendable, CustomTestStringConvertible {
        var policy: Feb29Policy
        var from: String
        var year: Int?
        var expected: String
        var testDescription: String { "\(policy) from \(from) born \(year.map(String.init) ?? "-") → \(expected)" }
    }

    @Test(arguments: [
        Feb29Case(policy: .feb28, from: "2027-02-20", year: nil, expected: "2027-02-28"),
        Feb29Case(policy: .mar1, from: "2027-02-20", year: nil, expected: "2027-03-01"),
        Feb29Case(policy: .feb28, from: "2028-02-20", year: nil, expected: "2028-02-29"),
        Feb29Case(policy: .mar1, from: "2028-02-20", year: nil, expected: "2028-02-29"),
        Feb29Case(policy: .feb28, from: "2027-03-01", year: nil, expected: "2028-02-29"),
        Feb29Case(policy: .mar1, from: "2027-03-01", year: nil, expected: "2027-03-01"),
        Feb29Case(policy: .mar1, from: "2027-03-02", year: nil, expected: "2028-02-29"),
        Feb29Case(policy: .feb28, from: "2099-12-31", year: nil, expected: "2100-02-28"),  // 2100 is not leap
        Feb29Case(policy: .mar1, from: "2100-01-01", year: nil, expected: "2100-03-01"),
        Feb29Case(policy: .feb28, from: "2000-01-01", year: nil, expected: "2000-02-29"),  // 2000 is
        Feb29Case(policy: .feb28, from: "2027-02-20", year: 1996, expected: "2027-02-28"),
        Feb29Case(policy: .mar1, from: "2028-02-29", year: 1996, expected: "2028-02-29"),
    ])
    func feb29(_ c: Feb29Case) throws {
        let birthday = try #require(Birthday(month: 2, day: 29, year: c.year))
        let next = birthday.nextOccurrence(onOrAfter: Self.date(c.from), feb29: c.policy)
        #expect(next.date == Self.date(c.expected))
        if let year = c.year { #expect(next.age == next.date.year - year) } else { #expect(next.age == nil) }
    }

    @Test func impossibleBirthdaysAreRejected() {
        #expect(Birthday(month: 2, day: 30) == nil)
        #expect(Birthday(month: 13, day: 1) == nil)
        #expect(Birthday(month: 2, day: 29, year: 1900) == nil)  // 1900 is not a leap year
        #expect(Birthday(month: 2, day: 29, year: 2000) != nil)
        #expect(Birthday(month: 2, day: 29) != nil)  // year-less Feb 29 is fine
        #expect(Birthday(month: 4, day: 31) == nil)
        #expect(Birthday(month: 0, day: 10) == nil)
    }

    @Test func ageAndSameDay() throws {
        let birthday = try #require(Birthday(month: 3, day: 15, year: 1990))
        let today = birthday.nextOccurrence(onOrAfter: Self.date("2027-03-15"), feb29: .feb28)
        #expect(today.date == Self.date("2027-03-15"))
        #expect(today.age == 37)
        let after = birthday.nextOccurrence(onOrAfter: Self.date("2027-03-16"), feb29: .feb28)
        #expect(after.date == Self.date("2028-03-15"))
        #expect(after.age == 38)
        // A baby born this year: first occurrence is the first birthday.
        let baby = try #require(Birthday(month: 1, day: 10, year: 2027))
        #expect(baby.nextOccurrence(onOrAfter: Self.date("2027-01-05"), feb29: .feb28).date == Self.date("2028-01-10"))
    }

    @Test func yearEnd() throws {
        let newYear = try #require(Birthday(month: 1, day: 1))
        #expect(newYear.nextOccurrence(onOrAfter: Self.date("2026-12-31"), feb29: .feb28).date == Self.date("2027-01-01"))
        #expect(newYear.nextOccurrence(onOrAfter: Self.date("2027-01-02"), feb29: .feb28).date == Self.date("2028-01-01"))
    }

    /// Every day of a 400-year Gregorian cycle: the next occurrence of every
    /// month/day lands on that month/day (or the Feb 29 substitute) and is the first one.
    @Test func fourHundredYearSweep() throws {
        let start = Self.date("2000-01-01").daysSinceEpoch
        let end = Self.date("2400-01-01").daysSinceEpoch
        let probes: [(Int, Int)] = [(1, 1), (2, 28), (2, 29), (3, 1), (6, 15), (12, 31)]
        var checked = 0
        for (month, day) in probes {
            let birthday = try #require(Birthday(month: month, day: day))
            for policy in Feb29Policy.allCases {
                var expectedNext: LocalDate?
                // Walk backwards so the expected next occurrence is known at every day.
                var dayNumber = end + 400
                while dayNumber >= start {
                    let current = LocalDate(daysSinceEpoch: dayNumber)
                    let celebrates: Bool
                    if month == 2, day == 29, !LocalDate.isLeap(current.year) {
                        celebrates = policy == .feb28 ? (current.month == 2 && current.day == 28)
                                                      : (current.month == 3 && current.day == 1)
                    } else {
                        celebrates = current.month == month && current.day == day
                    }
                    if celebrates { expectedNext = current }
                    if dayNumber < end, let expectedNext {
                        let got = birthday.nextOccurrence(onOrAfter: current, feb29: policy).date
                        if got != expectedNext {
                            Issue.record("\(month)-\(day) \(policy) from \(current): got \(got), expected \(expectedNext)")
                            return
                        }
                        checked += 1
                    }
                    dayNumber -= 1
                }
            }
        }
        #expect(checked == 12 * (end - start))
    }

    @Test func localDateRoundTrip() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = LocalDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            #expect(LocalDate(year: date.year, month: date.month, day: date.day) == date)
        }
        #expect(LocalDate(daysSinceEpoch: 0).description == "1970-01-01")
    }

    @Test func hebrewBirthdayRecursInItsCalendar() throws {
        // Born 1995-04-10 = 10 Nisan 5755; 10 Nisan 5787 is 2027-04-17.
        let birthday = try #require(Birthday(month: 4, day: 10, year: 1995, calendar: .hebrew))
        let next = birthday.nextOccurrence(onOrAfter: Self.date("2027-01-01"), feb29: .feb28)
        #expect(next.date == Self.date("2027-04-17"))
        #expect(next.age == 32)
    }

    /// Born in Adar I of a leap year (1989-02-20 = 15 Adar I 5749): in common
    /// years the birthday is in Adar, every year, none skipped.
    @Test func hebrewAdarIBirthdayRecursEveryYear() throws {
        let birthday = try #require(Birthday(month: 2, day: 20, year: 1989, calendar: .hebrew))
        var cal = Calendar(identifier: .hebrew)
        cal.timeZone = TimeZone(secondsFromGMT: 0)!
        var start = Self.date("2026-11-01")
        var years: [Int] = []
        for _ in 0..<4 {
            let next = birthday.nextOccurrence(onOrAfter: start, feb29: .feb28)
            let parts = cal.dateComponents([.year, .month, .day], from: try #require(next.date.utcMidnight))
            #expect(parts.day == 15 && (parts.month == 6 || parts.month == 7), "\(next.date) is \(parts)")
            years.append(next.date.year)
            start = next.date.adding(days: 1)
        }
        #expect(years == [2027, 2028, 2029, 2030], "\(years)")
    }

    /// Issue 10 point 14: born in a Chinese leap month (2020-06-01 = 10th day of
    /// the leap 4th month of 2020), the birthday recurs in the ordinary 4th month,
    /// which comes before the leap one: the age is still the count of years.
    @Test func chineseLeapMonthBirthdayAgeIsNotOneLow() throws {
        var cal = Calendar(identifier: .chinese)
        cal.timeZone = TimeZone(secondsFromGMT: 0)!
        let born = cal.dateComponents([.month, .day, .isLeapMonth], from: try #require(Self.date("2020-06-01").utcMidnight))
        #expect(born.month == 4 && born.day == 10 && born.isLeapMonth == true, "\(born)")
        let birthday = try #require(Birthday(month: 6, day: 1, year: 2020, calendar: .chinese))
        var start = Self.date("2021-01-01")
        var ages: [Int?] = []
        for _ in 0..<6 {
            let next = birthday.nextOccurrence(onOrAfter: start, feb29: .feb28)
            let parts = cal.dateComponents([.month, .day], from: try #require(next.date.utcMidnight))
            #expect(parts.month == 4 && parts.day == 10, "\(next.date) is \(parts)")
            ages.append(next.age)
            start = next.date.adding(days: 1)
        }
        #expect(ages == [1, 2, 3, 4, 5, 6])
        // Born on the 30th of a 30-day month, in a year whose month has 29 days the
        // birthday is on the 29th: still a full year older (Hebrew, Islamic, Persian too).
        for kind in [BirthdayCalendar.hebrew, .chinese, .islamicUmmAlQura, .persian] {
            var calendar = Calendar(identifier: kind.foundationIdentifier)
            calendar.timeZone = TimeZone(secondsFromGMT: 0)!
            var day = Self.date("1990-01-01")
            for _ in 0..<400 {  // every date of birth over a year: the age is the difference of calendar years
                let birth = try #require(Birthday(month: day.month, day: day.day, year: day.year, calendar: kind))
                let next = birth.nextOccurrence(onOrAfter: Self.date("2027-01-01"), feb29: .feb28)
                func year(_ date: LocalDate) throws -> Int {
                    let parts = calendar.dateComponents([.era, .year], from: try #require(date.utcMidnight))
                    return kind == .chinese ? (parts.era! * 60 + parts.year!) : parts.year!
                }
                #expect(next.age == (try year(next.date) - year(day)), "\(kind) born \(day), next \(next.date)")
                day = day.adding(days: 1)
            }
        }
    }

    @Test(arguments: [BirthdayCalendar.hebrew, .chinese, .islamicUmmAlQura, .persian])
    func nonGregorianRecursOnSameMonthAndDay(_ kind: BirthdayCalendar) throws {
        var cal = Calendar(identifier: kind.foundationIdentifier)
        cal.timeZone = TimeZone(secondsFromGMT: 0)!
        let birthday = try #require(Birthday(month: 6, day: 20, year: 1988, calendar: kind))
        let bornInstant = try #require(Self.date("1988-06-20").utcMidnight)
        let born = cal.dateComponents([.month, .day, .isLeapMonth], from: bornInstant)
        var from = Self.date("2026-01-01")
        var previous: LocalDate?
        for _ in 0..<5 {
            let next = birthday.nextOccurrence(onOrAfter: from, feb29: .feb28)
            #expect(next.date >= from)
            let instant = try #require(next.date.utcMidnight)
            let got = cal.dateComponents([.month, .day], from: instant)
            #expect(got.month == born.month)
            // The day matches, or is the month's last day when the day is missing.
            if got.day != born.day {
                let range = try #require(cal.range(of: .day, in: .month, for: instant))
                #expect(got.day == range.count)
            }
            if let previous { #expect(previous.days(until: next.date) > 300) }
            previous = next.date
            from = next.date.adding(days: 1)
        }
    }

    @Test func storedForms() {
        #expect(Birthday(storedForm: "1990-03-15")?.description == "1990-03-15")
        #expect(Birthday(storedForm: "--03-15")?.description == "--03-15")
        #expect(Birthday(storedForm: "03-15")?.description == "--03-15")
        #expect(Birthday(storedForm: "02-30") == nil)
        #expect(Birthday(storedForm: "2023-02-29") == nil)
        #expect(Birthday(storedForm: "---15") == nil)
        #expect(Birthday(storedForm: "1990-3-15") == nil)
    }
}
