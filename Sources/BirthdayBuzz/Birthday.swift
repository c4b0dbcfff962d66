import Foundation

/// The calendars a birthday can recur in (docs/design/reminders.md). Gregorian unless a vCard
/// `CALSCALE` names another one that Foundation knows.
public enum BirthdayCalendar: String, Sendable, CaseIterable {
    case gregorian
    case hebrew
    case chinese
    case islamicUmmAlQura = "islamic-umalqura"
    case persian

    /// Reads a vCard `CALSCALE` value (case-insensitive); nil when unknown.
    public init?(calscale: String) {
        let lowered = calscale.lowercased()
        switch lowered {
        case "gregorian": self = .gregorian
        case "hebrew": self = .hebrew
        case "chinese": self = .chinese
        case "islamic-umalqura", "islamic-umm-al-qura", "islamicumalqura": self = .islamicUmmAlQura
        case "persian": self = .persian
        default: return nil
        }
    }

    var foundationIdentifier: Calendar.Identifier {
        switch self {
        case .gregorian: return .gregorian
        case .hebrew: return .hebrew
        case .chinese: return .chinese
        case .islamicUmmAlQura: return .islamicUmmAlQura
        case .persian: return .persian
        }
    }
}

/// What to do with a Feb 29 birthday in a year that has no Feb 29.
public enum Feb29Policy: String, Sendable, CaseIterable {
    /// Celebrate on Feb 28 (the default).
    case feb28
    /// Celebrate on Mar 1.
    case mar1
}

/// A birthday: month and day, an optional year, and the calendar it recurs in.
///
/// For a non-Gregorian calendar the stored month/day/year are the *Gregorian*
/// date of birth (as the vCard gives it); recurrence converts it.
public struct Birthday: Hashable, Sendable, CustomStringConvertible {
    public var month: Int
    public var day: Int
    public var year: Int?
    public var calendar: BirthdayCalendar

    /// Creates a birthday, checking the date exists (Feb 29 needs a leap year or no year).
    public init?(month: Int, day: Int, year: Int? = nil, calendar: BirthdayCalendar = .gregorian) {
        guard (1...12).contains(month), day >= 1 else { return nil }
        let limit = year.map { LocalDate.daysIn(month: month, year: $0) }
            ?? (month == 2 ? 29 : LocalDate.daysIn(month: month, year: 2001))
        guard day <= limit else { return nil }
        if let year, !(1...9999).contains(year) { return nil }
        self.month = month
        self.day = day
        self.year = year
        // A calendar only means something with a full date of birth to convert.
        self.calendar = year == nil ? .gregorian : calendar
    }

    /// The date of birth, when the year is known.
    public var dateOfBirth: LocalDate? {
        year.flatMap { LocalDate(year: $0, month: month, day: day) }
    }

    /// `1990-03-15`, or `--03-15` without a year (the `list --json` form).
    public var description: String {
        let md = pad(month, 2) + "-" + pad(day, 2)
        return year.map { pad($0, 4) + "-" + md } ?? "--" + md
    }

    /// Parses the stored/CLI forms `YYYY-MM-DD`, `--MM-DD` and `MM-DD`.
    public init?(storedForm text: String, calendar: BirthdayCalendar = .gregorian) {
        var body = Substring(text)
        if body.hasPrefix("--") { body = body.dropFirst(2) }
        let parts = body.split(separator: "-", omittingEmptySubsequences: false)
        switch parts.count {
        case 2:
            guard parts[0].count == 2, parts[1].count == 2,
                  let m = Int(parts[0]), let d = Int(parts[1]), !text.hasPrefix("---") else { return nil }
            self.init(month: m, day: d)
        case 3 where !text.hasPrefix("--"):
            guard parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                  let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
            self.init(month: m, day: d, year: y, calendar: calendar)
        default:
            return nil
        }
    }
}

extension Birthday {
    /// `description`, then a space and the calendar when it is not Gregorian
    /// (`1990-03-15 hebrew`): how the store keeps an anniversary with its calendar.
    public var storedFormWithCalendar: String {
        calendar == .gregorian ? description : description + " " + calendar.rawValue
    }

    /// Reads `storedFormWithCalendar` from its UTF-8 bytes: `YYYY-MM-DD` and
    /// `--MM-DD` without making a string (planning reads one per contact); other
    /// forms through `init?(storedFormWithCalendar:)`.
    public init?(storedFormBytes bytes: UnsafeRawBufferPointer) {
        func digits(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for offset in start..<(start + count) {
                let byte = bytes[offset]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        if bytes.count == 10, bytes[4] == 0x2D, bytes[7] == 0x2D,
           let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2) {
            self.init(month: month, day: day, year: year)
        } else if bytes.count == 7, bytes[0] == 0x2D, bytes[1] == 0x2D, bytes[4] == 0x2D,
                  let month = digits(2, 2), let day = digits(5, 2) {
            self.init(month: month, day: day)
        } else {
            self.init(storedFormWithCalendar: String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Reads `storedFormWithCalendar` (and the plain stored forms).
    public init?(storedFormWithCalendar text: String) {
        let parts = text.split(separator: " ", maxSplits: 1)
        guard let first = parts.first else { return nil }
        let calendar = parts.count == 2 ? BirthdayCalendar(rawValue: String(parts[1])) : .gregorian
        guard let calendar else { return nil }
        self.init(storedForm: String(first), calendar: calendar)
    }
}

/// One occurrence of a birthday.
public struct Occurrence: Hashable, Sendable {
    /// The Gregorian day it is celebrated on.
    public var date: LocalDate
    /// The age turned that day, when the year of birth is known.
    public var age: Int?
}

extension Birthday {
    /// The first occurrence on or after `start`.
    ///
    /// Gregorian birthdays use integer math; Feb 29 follows `policy` in common
    /// years. Other calendars recur on the same month and day of that calendar
    /// (the month's last day when the day is missing; a leap month recurs in
    /// the ordinary month of the same number). Occurrences begin the year after
    /// birth, so the age turned is at least 1.
    /// With `countingTheDate`, the date itself is the first occurrence (a labelled
    /// date such as a wedding next year); else the first is a year on (a birthday).
    public func nextOccurrence(onOrAfter start: LocalDate, feb29 policy: Feb29Policy,
                               countingTheDate: Bool = false) -> Occurrence {
        if calendar != .gregorian, let birth = dateOfBirth,
           let occurrence = nonGregorianOccurrence(birth: birth, onOrAfter: start) {
            return occurrence
        }
        var year = start.year
        if let birthYear = self.year, year <= birthYear {
            year = countingTheDate ? max(year, birthYear) : birthYear + 1
        }
        while true {
            let date = resolved(in: year, policy: policy)
            if date >= start {
                return Occurrence(date: date, age: self.year.map { year - $0 })
            }
            year += 1
        }
    }

    /// The Gregorian day this month/day falls on in `year`.
    public func resolved(in year: Int, policy: Feb29Policy) -> LocalDate {
        if month == 2, day == 29, !LocalDate.isLeap(year) {
            switch policy {
            case .feb28: return LocalDate(year: year, month: 2, day: 28)!
            case .mar1: return LocalDate(year: year, month: 3, day: 1)!
            }
        }
        // Month and day were validated at init; only Feb 29 can be missing.
        return LocalDate(year: year, month: month, day: day)!
    }

    /// A year of this calendar counted from a fixed start: the Chinese calendar
    /// numbers its years 1–60 within each cycle (`era`); the others number them
    /// within one era.
    private func absoluteYear(_ parts: DateComponents) -> Int? {
        guard let year = parts.year else { return nil }
        guard calendar == .chinese else { return year }
        return parts.era.map { $0 * 60 + year }
    }

    private func nonGregorianOccurrence(birth: LocalDate, onOrAfter start: LocalDate) -> Occurrence? {
        var cal = Calendar(identifier: calendar.foundationIdentifier)
        cal.timeZone = TimeZone(secondsFromGMT: 0)!
        guard let birthInstant = birth.utcMidnight,
              let startInstant = start.utcMidnight else { return nil }
        let born = cal.dateComponents([.era, .year, .month, .day, .isLeapMonth], from: birthInstant)
        guard let bornMonth = born.month, let bornDay = born.day else { return nil }
        // Walk from the start of the calendar year containing `start` (or the
        // year after birth) until an occurrence lands on or after `start`.
        let from = max(startInstant, cal.date(byAdding: .year, value: 1, to: birthInstant) ?? startInstant)
        var probe = cal.dateComponents([.era, .year], from: from)
        for _ in 0..<4 {
            var wanted = DateComponents()
            wanted.era = probe.era
            wanted.year = probe.year
            wanted.month = bornMonth
            wanted.day = 1
            wanted.isLeapMonth = false
            // Hebrew: Adar I (month 6) exists only in leap years; in a common
            // year the birthday falls in Adar (month 7), the ordinary month.
            if calendar == .hebrew, bornMonth == 6, let probeMonth = cal.date(from: wanted),
               cal.component(.month, from: probeMonth) != 6 {
                wanted.month = 7
            }
            if let monthStart = cal.date(from: wanted),
               cal.component(.month, from: monthStart) == wanted.month,
               let days = cal.range(of: .day, in: .month, for: monthStart),
               let dayInstant = cal.date(byAdding: .day, value: min(bornDay, days.count) - 1, to: monthStart) {
                let date = LocalDate(utc: dayInstant)
                if date >= start, dayInstant > birthInstant {
                    // The age is the count of that calendar's years since birth, not the
                    // whole years elapsed between the two instants: a birthday from a
                    // Chinese leap month recurs in the ordinary month, which comes
                    // before it, and one from a 30th may fall on a 29th; both are less
                    // than a full year apart and would make the person one year too young.
                    let age = absoluteYear(probe).flatMap { now in absoluteYear(born).map { now - $0 } }
                    return Occurrence(date: date, age: age)
                }
            }
            // Next year of that calendar.
            var current = DateComponents()
            current.era = probe.era
            current.year = probe.year
            current.month = 1
            current.day = 1
            guard let yearStart = cal.date(from: current),
                  let next = cal.date(byAdding: .year, value: 1, to: yearStart) else { return nil }
            probe = cal.dateComponents([.era, .year], from: next)
        }
        return nil
    }
}

extension LocalDate {
    /// Midnight UTC of this date, as a Foundation instant.
    var utcMidnight: Date? {
        Date(timeIntervalSince1970: TimeInterval(daysSinceEpoch) * 86_400)
    }

    /// The UTC calendar date of an instant.
    init(utc instant: Date) {
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down))
        self.init(daysSinceEpoch: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
    }
}

extension Birthday {
    /// Years that mean "year unknown": iOS writes 1604, some exporters 0000,
    /// khard 1900 (its prompt says so). vCards, Google CSV and hand-entered
    /// dates all read them so.
    public static let placeholderYears: Set<Int> = [0, 1604, 1900]

    /// `BDAY 2090-01-06 is in the future (today is 2026-11-23)` when the date of
    /// birth lies after `today`; nil otherwise (and for year-less birthdays).
    public func futureProblem(today: LocalDate?, property: String) -> String? {
        guard let today, let born = dateOfBirth, born > today else { return nil }
        return "\(property) \(born) is in the future (today is \(today))"
    }
}
