/// The month-and-day keys (`month * 100 + day`, Feb 29 = 229) of the dates
/// that can fall in a window of days: what a store with its dates indexed by
/// that key reads instead of every contact (docs/design/reminders.md, "Reading a window").
///
/// A contact is a candidate when any of its dates has a key in `ranges`. A
/// window that holds Feb 28 or Mar 1 holds Feb 29 too (a Feb 29 date falls on
/// one of them in a common year). Dates whose month and day move from year to
/// year (another calendar) have no key and are always candidates, as are the
/// dates kept by hand (few, and their rules live in the planner).
public struct DayKeyRanges: Sendable, Equatable, CustomStringConvertible {
    /// One to three closed ranges (two when the window wraps at the year's end,
    /// one more for Feb 29).
    public let ranges: [ClosedRange<Int>]

    /// The keys of every date from `first` to `last` (local dates); nil when
    /// that is close to a year, where every key is in.
    public init?(from first: LocalDate, through last: LocalDate) {
        guard first.days(until: last) < 360 else { return nil }
        let low = first.month * 100 + first.day
        let high = last.month * 100 + last.day
        var ranges = low <= high ? [low...high] : [low...1231, 101...high]
        let holds = { (key: Int) in ranges.contains { $0.contains(key) } }
        if !holds(229), holds(228) || holds(301) { ranges.append(229...229) }
        self.ranges = ranges
    }

    /// Whether a key is in one of the ranges.
    public func contains(_ key: Int) -> Bool { ranges.contains { $0.contains(key) } }

    /// The key of a date: its month and day, or nil for a date in another
    /// calendar (always a candidate).
    public static func key(of date: Birthday) -> Int? {
        date.calendar == .gregorian ? date.month * 100 + date.day : nil
    }

    public var description: String { ranges.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ",") }
}

extension Planner {
    /// `upcoming`, reading only the contacts whose dates fall near the window
    /// it looks at: `read(keys)` gives the contacts with a date keyed in `keys`
    /// (and those without keys), or every plannable contact for nil. The answer
    /// is the one `upcoming` gives over every contact.
    ///
    /// Without `until`, the window starts at today and tomorrow and doubles
    /// until it holds `limit` events; an event that fires in the window comes from a
    /// date within the window plus the largest offset, so the events found
    /// there are exactly the full answer's first ones. Past ~300 days (or with
    /// name days, which match names, not dates) it reads every contact.
    public func upcoming(now: Int64, until: Int64? = nil, limit: Int, recorded: RecordedDeliveries = RecordedDeliveries(),
                         largestOwnOffset: Int,
                         reading read: (DayKeyRanges?) throws -> [PlanningContact]) rethrows -> [PlannedEvent] {
        let today = clock.localDate(at: now)
        let reach = max(largestConfiguredOffset, largestOwnOffset)
        // Today and tomorrow (with the offsets' reach) hold a limit of 64 at
        // ~10,000 contacts and more, also once today's reminders have fired
        // (today alone, tried first, read twice at 09:00); smaller books take a
        // few doublings, each cheap.
        var span = 1
        if let until { span = max(0, today.days(until: clock.localDate(at: until))) }
        while !concernsEveryContact, span + reach < 300 {
            let lastDay = today.adding(days: span)
            // The last instant of `lastDay`.
            let edge = clock.instant(of: lastDay.adding(days: 1), secondsAfterMidnight: 0) - 1
            // An event firing after now and by `edge` fires on a day from today to
            // `lastDay` (a fire time is an instant of its own local day), so its
            // date is at most `reach` days later.
            guard let keys = DayKeyRanges(from: today, through: lastDay.adding(days: reach)) else { break }
            let contacts = try read(keys)
            let events = upcoming(contacts, now: now, until: min(until ?? .max, edge), limit: limit, recorded: recorded)
            // With `until`, the window reaches it at once.
            if until != nil || events.count >= limit { return events }
            span *= 2
        }
        return upcoming(try read(nil), now: now, until: until, limit: limit, recorded: recorded)
    }
}
