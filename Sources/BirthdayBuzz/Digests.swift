/// One scheduled send of a `[digests.NAME]` table: the local date it fires on
/// and the instant that is.
public struct DigestEvent: Sendable, Hashable {
    /// The digest's name (`[digests.NAME]`).
    public var name: String
    /// The local date it fires on; its look-ahead starts that day.
    public var date: LocalDate
    /// Seconds since 1970 UTC.
    public var fireAt: Int64
    public var channels: [String]
    /// `%digest/<NAME>/<date>`.
    public var id: String

    public init(name: String, date: LocalDate, fireAt: Int64, channels: [String]) {
        self.name = name
        self.date = date
        self.fireAt = fireAt
        self.channels = channels
        id = DigestSchedule.id(name: name, date: date)
    }
}

/// One occasion a digest lists.
public struct DigestEntry: Sendable, Hashable {
    public var contactID: String
    public var name: String
    public var occasion: Occasion
    /// A labelled date's label; nil for the other kinds.
    public var label: String?
    public var date: LocalDate
    /// Days from the digest's date.
    public var daysUntil: Int
    /// The age turned, or the years of an anniversary, when the year is known.
    public var age: Int?
    /// The contact's open gift ideas.
    public var giftIdeas: [String]
}

/// What one digest says: its occasions ahead, the problems since the previous
/// scheduled digest of that name, and how many contacts have no birthday.
public struct DigestContent: Sendable, Hashable {
    public var name: String
    /// The day it covers from (the day it fires, or today for `buzz digest NAME`).
    public var date: LocalDate
    /// How many days it covers: `date` … `date + days − 1`.
    public var days: Int
    /// In date order, then by name.
    public var entries: [DigestEntry]
    public var problems: [NoticeEntry]
    /// Contacts without a birthday that are not skipped.
    public var missingCount: Int

    /// Nothing ahead and nothing went wrong: what `empty = false` does not send.
    public var isEmpty: Bool { entries.isEmpty && problems.isEmpty }
}

/// When the configured digests fire, and what they list. A pure function of the
/// configuration, the contacts and the instants it is handed: it reads no clock.
///
/// A digest fires on each local date its `every`/`on` selects, at its `time`
/// (else `reminders.time`) in `general.timezone`; a time in a DST gap or overlap
/// is read as for reminders (`WallClock.instant(of:secondsAfterMidnight:)`).
public struct DigestSchedule: Sendable {
    public let digests: [BuzzConfig.Digest]
    public let clock: WallClock
    private let defaultTime: Int
    private let feb29: Feb29Policy
    /// The kinds reminded of, birthdays first.
    private let kinds: [OccasionKind]
    /// What each kind's `prepare` made of its file, by kind name (`Planner.prepared`).
    public var prepared: [String: any Sendable] = [:]

    public init(config: BuzzConfig) {
        digests = config.digests
        clock = WallClock(timeZone: config.general.timeZone)
        defaultTime = config.reminders.time
        feb29 = config.reminders.feb29
        kinds = OccasionKind.all.filter { config.reminds($0) }
    }

    public func digest(named name: String) -> BuzzConfig.Digest? {
        digests.first { $0.name == name }
    }

    // MARK: Ids

    /// `%digest/<NAME>/<YYYY-MM-DD>`: `%` starts every id that is not a contact's
    /// (a contact id in an event id is percent-encoded, so it cannot collide).
    public static func id(name: String, date: LocalDate) -> String {
        "%digest/" + name + "/" + date.description
    }

    /// `%digest/<NAME>/manual/<n>`: a digest sent by hand (`buzz digest NAME`).
    public static func manualID(name: String, number: Int) -> String {
        "%digest/" + name + "/manual/\(number)"
    }

    /// A digest id's parts: the name, and the scheduled date or the manual number.
    public static func parse(_ id: String) -> (name: String, date: LocalDate?, manual: Int?)? {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.first == "%digest" else { return nil }
        if parts.count == 3, let date = LocalDate(iso: parts[2]) { return (String(parts[1]), date, nil) }
        if parts.count == 4, parts[2] == "manual", let number = Int(parts[3]), number > 0 {
            return (String(parts[1]), nil, number)
        }
        return nil
    }

    // MARK: Fire times

    /// ISO weekday of a date: 1 (Monday) … 7 (Sunday).
    static func weekday(_ date: LocalDate) -> Int {
        ((date.daysSinceEpoch + 3) % 7 + 7) % 7 + 1  // 1970-01-01 was a Thursday
    }

    /// Whether `digest` fires on `date`.
    public func fires(_ digest: BuzzConfig.Digest, on date: LocalDate) -> Bool {
        switch digest.every {
        case .day: true
        case .week: Self.weekday(date) == digest.on
        case .month: date.day == digest.on
        }
    }

    /// The instant `digest` fires on `date` (whether or not it fires that day).
    public func fireTime(_ digest: BuzzConfig.Digest, on date: LocalDate) -> Int64 {
        clock.instant(of: date, secondsAfterMidnight: (digest.time ?? defaultTime) * 60)
    }

    public func event(_ digest: BuzzConfig.Digest, on date: LocalDate) -> DigestEvent {
        DigestEvent(name: digest.name, date: date, fireAt: fireTime(digest, on: date), channels: digest.channels)
    }

    /// Every digest send that fires in `(after, upTo]`, by fire time (ties by id).
    public func events(after: Int64, upTo: Int64) -> [DigestEvent] {
        guard upTo > after, !digests.isEmpty else { return [] }
        // A day either side: a fire time can sit on the local date before or after.
        let first = clock.localDate(at: after).adding(days: -1)
        let last = clock.localDate(at: upTo).adding(days: 1)
        var events: [DigestEvent] = []
        var date = first
        while date <= last {
            for digest in digests where fires(digest, on: date) {
                let event = event(digest, on: date)
                if event.fireAt > after, event.fireAt <= upTo { events.append(event) }
            }
            date = date.adding(days: 1)
        }
        return events.sorted { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) }
    }

    /// Each digest's next send after `now` (one per digest), by fire time.
    public func next(after now: Int64) -> [DigestEvent] {
        let today = clock.localDate(at: now)
        var events: [DigestEvent] = []
        for digest in digests {
            // Every digest fires at least once in any 31 days (a monthly one on a day 1–28).
            for step in -1...32 {
                let date = today.adding(days: step)
                guard fires(digest, on: date) else { continue }
                let event = event(digest, on: date)
                if event.fireAt > now {
                    events.append(event)
                    break
                }
            }
        }
        return events.sorted { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) }
    }

    /// The fire time of the last scheduled send of `digest` strictly before `instant`.
    public func previousFire(_ digest: BuzzConfig.Digest, before instant: Int64) -> Int64 {
        let day = clock.localDate(at: instant)
        for step in 0...33 {
            let date = day.adding(days: -step + 1)
            guard fires(digest, on: date) else { continue }
            let fire = fireTime(digest, on: date)
            if fire < instant { return fire }
        }
        return instant - 32 * 86_400  // unreachable: every digest fires within 31 days
    }

    // MARK: Content

    /// What `digest` lists when it covers from `date`: the included contacts'
    /// occasions on `date` … `date + days − 1` (across a year end like any other
    /// days; an occasion twice in a 366-day window is listed twice), then
    /// `problems` (found by the caller: `DeliveryLedger.problems(firedAfter:)`
    /// since `previousFire`), named from `contacts`.
    ///
    /// `missingCount` is the caller's: the contacts without a birthday that are
    /// not skipped. (A deceased contact does not exist yet; once it does, it is
    /// not counted either.)
    public func content(_ digest: BuzzConfig.Digest, from date: LocalDate, contacts: [PlanningContact],
                        problems: [DeliveryProblem], missingCount: Int) -> DigestContent {
        let last = date.adding(days: digest.days - 1)
        var entries: [DigestEntry] = []
        var names: [String: String] = [:]
        for contact in contacts {
            names[contact.id] = contact.name
            guard contact.isIncluded else { continue }
            for kind in kinds where kind.isForTheDeceased == contact.isDeceased {
                kind.dates(contact, prepared[kind.name]) { label, when in
                    let occasion = Occasion(kind, label: label)
                    var occurrence = when.nextOccurrence(onOrAfter: date, feb29: feb29, countingTheDate: kind.allowsFuture)
                    while occurrence.date <= last {
                        entries.append(DigestEntry(contactID: contact.id, name: contact.name, occasion: occasion,
                                                   label: occasion.label, date: occurrence.date,
                                                   daysUntil: date.days(until: occurrence.date),
                                                   age: occurrence.age, giftIdeas: contact.giftIdeas))
                        occurrence = when.nextOccurrence(onOrAfter: occurrence.date.adding(days: 1), feb29: feb29)
                    }
                }
            }
        }
        entries.sort { a, b in
            if a.date != b.date { return a.date < b.date }
            if a.name != b.name { return a.name < b.name }
            if a.occasion != b.occasion {
                let (ka, kb) = (a.occasion.kind.index, b.occasion.kind.index)
                return ka != kb ? ka < kb : (a.occasion.label ?? "") < (b.occasion.label ?? "")
            }
            return a.contactID < b.contactID
        }
        let listed = problems.map { problem in
            let name = names[problem.contactID] ?? problem.contactID
            return NoticeEntry(problem, name: name, today: date)
        }
        return DigestContent(name: digest.name, date: date, days: digest.days, entries: entries, problems: listed,
                             missingCount: missingCount)
    }
}
