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

    /// Every month-and-day key in the ranges, in order (Feb 30 and the like
    /// included: no date has them).
    public var keys: [Int] {
        ranges.flatMap { $0.filter { (1...12).contains($0 / 100) && (1...31).contains($0 % 100) } }
    }

    /// The key of a date: its month and day, or nil for a date in another
    /// calendar (always a candidate).
    public static func key(of date: Birthday) -> Int? {
        date.calendar == .gregorian ? date.month * 100 + date.day : nil
    }

    public var description: String { ranges.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ",") }
}

/// A date stream of a window read that a per-key limit cut short: the
/// contacts with a date of one kind keyed `key`, read in the byte order of
/// their ids up to `lastID`. Those not read have larger ids.
public struct CutStream: Sendable, Equatable {
    public let key: Int
    public let lastID: String

    public init(key: Int, lastID: String) {
        self.key = key
        self.lastID = lastID
    }
}

/// What a window read gives: the contacts, and the streams a per-key limit cut short.
public struct WindowRead: Sendable {
    public var contacts: [PlanningContact]
    public var cut: [CutStream]

    public init(contacts: [PlanningContact], cut: [CutStream] = []) {
        self.contacts = contacts
        self.cut = cut
    }
}

extension Planner {
    /// Windows of more keys than this are read whole (three queries a key add
    /// up): a window that long only comes from a book too small to hold the
    /// limit in a shorter one, or from offsets of two months.
    static let mostKeysReadOneByOne = 62
    /// Past this per-key limit the window is read whole.
    static let largestPerKey = 256

    /// `upcoming`, reading only the contacts whose dates fall near the window
    /// it looks at: `read(keys, perKey)` gives the contacts with a date keyed in
    /// `keys` and those without keys, or every plannable contact for nil keys.
    /// With `perKey` it gives at most that many of each date stream (one kind
    /// of date, one key: a busy day of a big book), the first ones in the byte
    /// order of their ids, and the streams it cut short; it then also reads the
    /// contacts with settings of their own whole, so `keys` need reach only as
    /// far as the configured routes' largest offset. The answer is the one
    /// `upcoming` gives over every contact.
    ///
    /// Without `until`, the window starts at today and tomorrow and doubles
    /// until it holds `limit` events; an event that fires in the window comes from a
    /// date within the window plus the largest offset, so the events found
    /// there are exactly the full answer's first ones. Past ~300 days (or with
    /// name days, which match names, not dates) it reads every contact.
    ///
    /// A stream cut short is safe to leave unread when no contact past its last
    /// id can make the cut (`isWhole`): every such contact fires no earlier than
    /// the key's earliest event on the configured route, and sorts after the
    /// last event at that time by its id. So at a million contacts, where one
    /// day holds ~2,700 birthdays, `upcoming` reads about as many contacts as
    /// at 100,000. With groups, whose routes follow categories, no stream is cut.
    public func upcoming(now: Int64, until: Int64? = nil, limit: Int, recorded: RecordedDeliveries = RecordedDeliveries(),
                         largestOwnOffset: Int,
                         reading read: (DayKeyRanges?, Int?) throws -> WindowRead) rethrows -> [PlannedEvent] {
        let today = clock.localDate(at: now)
        let reach = max(largestConfiguredOffset, largestOwnOffset)
        // Today and tomorrow (with the offsets' reach) hold a limit of 64 at
        // ~10,000 contacts and more, also once today's reminders have fired
        // (today alone, tried first, read twice at 09:00); smaller books take a
        // few doublings, each cheap.
        var span = 1
        if let until { span = max(0, today.days(until: clock.localDate(at: until))) }
        // Enough of each stream for the limit, and for the recorded events passed over.
        var perKey: Int? = !routesFollowCategories ? min(limit + recorded.contactCount, Self.largestPerKey) : nil
        while !concernsEveryContact, span + reach < 300 {
            let lastDay = today.adding(days: span)
            // The last instant of `lastDay`.
            let edge = clock.instant(of: lastDay.adding(days: 1), secondsAfterMidnight: 0) - 1
            // An event firing after now and by `edge` fires on a day from today to
            // `lastDay` (a fire time is an instant of its own local day), so its
            // date is at most `reach` days later.
            guard let keys = DayKeyRanges(from: today, through: lastDay.adding(days: reach)) else { break }
            let windowEnd = min(until ?? .max, edge)
            // With streams cut, the contacts with offsets of their own are read whole:
            // the streams need only the reach of the configured routes.
            // A window that grew past two days belongs to a book too small to fill the
            // limit sooner, where no stream is long: one read of its ranges is cheaper.
            let streamKeys = perKey == nil || span > 2 ? nil
                : DayKeyRanges(from: today, through: lastDay.adding(days: largestConfiguredOffset))
            let read = if let streamKeys, streamKeys.keys.count <= Self.mostKeysReadOneByOne {
                try read(streamKeys, perKey)
            } else {
                try read(keys, nil)
            }
            let events = upcoming(read.contacts, now: now, until: windowEnd, limit: limit, recorded: recorded)
            if !isWhole(events, cut: read.cut, limit: limit, windowEnd: windowEnd, now: now) {
                // A stream cut short may hold an event that belongs: read more of each.
                perKey = perKey.flatMap { $0 < Self.largestPerKey ? min($0 * 4, Self.largestPerKey) : nil }
                continue
            }
            // With `until`, the window reaches it at once.
            if until != nil || events.count >= limit { return events }
            span *= 2
        }
        return upcoming(try read(nil, nil).contacts, now: now, until: until, limit: limit, recorded: recorded)
    }

    /// Whether no contact left unread in a stream cut short can change `events`
    /// (the first `limit` events up to `windowEnd` among those read). A contact
    /// of the stream fires no earlier than `earliestFire(ofKey:)` (its own date
    /// of that key with a year, a date yet to come, the ledger or its death only
    /// move its event later or drop it; contacts with settings of their own are
    /// read whole), and its id is past the stream's last one.
    private func isWhole(_ events: [PlannedEvent], cut: [CutStream], limit: Int, windowEnd: Int64, now: Int64) -> Bool {
        // A key's three streams (birthdays, anniversaries, labelled dates) share its earliest event.
        var earliestByKey: [Int: Int64] = [:]
        for stream in cut {
            // `Int64.max`: the key has no event (a Feb 30 read for its range).
            let earliest = earliestByKey[stream.key] ?? earliestFire(ofKey: stream.key, now: now) ?? .max
            earliestByKey[stream.key] = earliest
            guard events.count >= limit else {
                // Every event up to the window's end belongs.
                if earliest <= windowEnd { return false }
                continue
            }
            let last = events[limit - 1]
            if earliest < last.fireAt { return false }
            // At the same time the contact id decides, in byte order (as the store reads them).
            if earliest == last.fireAt, PlannedEvent.idPrecedes(stream.lastID, last.contactID) { return false }
        }
        return true
    }

    /// The earliest event a date of `key` (of any kind the config plans, on the
    /// configured routes) has after `now`.
    private func earliestFire(ofKey key: Int, now: Int64) -> Int64? {
        guard let date = Birthday(month: key / 100, day: key % 100) else { return nil }
        var contact = PlanningContact(id: "", name: "", birthday: date, anniversary: date)
        contact.otherDates = [OccasionDate(kind: .labelledDate, label: nil, date: date)]
        return upcoming([contact], now: now, limit: 1).first?.fireAt
    }
}
