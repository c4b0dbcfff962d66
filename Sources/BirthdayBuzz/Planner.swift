/// What a reminder is about (DESIGN §3b): a birthday, or a wedding or other anniversary.
public enum Occasion: String, Sendable, Hashable, CaseIterable {
    case birthday
    case anniversary
    // Not yet: `memorial` (the date of death, `[memorials]`, memorial.mustache) waits for occasion-kind descriptors; ContactCard.deathDate holds the date.
}

/// A reminder that will fire: one offset of one occurrence of one occasion of one contact.
public struct PlannedEvent: Hashable, Sendable {
    /// `<contact-id>/<offset>/<occurrence-date>` for a birthday,
    /// `<contact-id>/anniversary/<offset>/<occurrence-date>` for an anniversary;
    /// the contact id percent-encoded for `/` and `%`.
    public var id: String
    public var contactID: String
    public var name: String
    public var occurrence: LocalDate
    public var offsetDays: Int
    /// Seconds since 1970 UTC.
    public var fireAt: Int64
    /// The age turned (birthday) or the years married (anniversary), when the year is known.
    public var age: Int?
    public var channels: [String]
    public var occasion: Occasion

    public init(id: String, contactID: String, name: String, occurrence: LocalDate, offsetDays: Int, fireAt: Int64,
                age: Int?, channels: [String], occasion: Occasion = .birthday) {
        self.id = id
        self.contactID = contactID
        self.name = name
        self.occurrence = occurrence
        self.offsetDays = offsetDays
        self.fireAt = fireAt
        self.age = age
        self.channels = channels
        self.occasion = occasion
    }

    /// The deterministic event id (DESIGN §2, §3b): birthdays keep the three-part form.
    public static func id(contactID: String, occasion: Occasion = .birthday, offset: Int, occurrence: LocalDate) -> String {
        switch occasion {
        case .birthday: return encodeContactID(contactID) + "/\(offset)/" + occurrence.description
        case .anniversary: return encodeContactID(contactID) + "/anniversary/\(offset)/" + occurrence.description
        }
    }

    /// Percent-encodes `%` and `/` so the id splits unambiguously on `/`.
    public static func encodeContactID(_ id: String) -> String {
        guard id.utf8.contains(where: { $0 == 0x2F || $0 == 0x25 }) else { return id }
        var out = ""
        for character in id {
            switch character {
            case "%": out += "%25"
            case "/": out += "%2F"
            default: out.append(character)
            }
        }
        return out
    }
}

/// A contact's own reminder settings (`buzz set`, DESIGN §3b): each one set wins
/// over the contact's group, which wins over `[reminders]` (and `[anniversaries]`).
public struct ContactSettings: Hashable, Sendable {
    /// Days before; sorted, no duplicates.
    public var offsets: [Int]?
    /// Minutes after local midnight.
    public var time: Int?
    public var channels: [String]?

    public init(offsets: [Int]? = nil, time: Int? = nil, channels: [String]? = nil) {
        self.offsets = offsets
        self.time = time
        self.channels = channels
    }

    public var isEmpty: Bool { offsets == nil && time == nil && channels == nil }
}

/// A contact's own settings, open gift ideas, notes and time zone, as planning and rendering see them.
private final class KeptForPlanning: Hashable, Sendable {
    let settings: ContactSettings?
    let giftIdeas: [String]
    let notes: [String]
    let timeZone: ContactTimeZone?

    /// nil when there is nothing to keep.
    init?(settings: ContactSettings?, giftIdeas: [String], notes: [String], timeZone: ContactTimeZone?) {
        if settings == nil, giftIdeas.isEmpty, notes.isEmpty, timeZone == nil { return nil }
        self.settings = settings
        self.giftIdeas = giftIdeas
        self.notes = notes
        self.timeZone = timeZone
    }

    static func == (a: KeptForPlanning, b: KeptForPlanning) -> Bool {
        a.settings == b.settings && a.giftIdeas == b.giftIdeas && a.notes == b.notes && a.timeZone == b.timeZone
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(settings)
        hasher.combine(giftIdeas)
        hasher.combine(notes)
    }
}

/// The lightest plannable contact: what `upcoming` and the dispatcher load.
public struct PlanningContact: Hashable, Sendable {
    public var id: String
    public var name: String
    /// For messages ("Happy birthday, Ada"); the first word of the name when unknown.
    public var firstName: String
    public var birthday: Birthday?
    public var categories: [String]
    public var isIncluded: Bool
    /// When the contact was included, seconds since 1970 (nil if unknown).
    public var includedAt: Int64?
    /// The anniversary that counts (the hand-entered one, else the card's).
    public var anniversary: Birthday? {
        get { Self.unpack(packedAnniversary) }
        set { packedAnniversary = Self.pack(newValue) }
    }
    /// `anniversary` in one word (0: none), so that contacts without one cost
    /// planning eight bytes, not a `Birthday?`, in the array it walks.
    fileprivate var packedAnniversary: Int64 = 0
    /// Settings, gift ideas and notes: few contacts have any, so they sit behind
    /// one reference that is nil for the others (planning copies no arrays for them).
    private var kept: KeptForPlanning?

    /// The contact's own settings (`buzz set`); nil when none.
    public var settings: ContactSettings? {
        get { kept?.settings }
        set { kept = KeptForPlanning(settings: newValue, giftIdeas: giftIdeas, notes: notes, timeZone: timeZone) }
    }
    /// Open gift ideas, oldest first (template variable `gift_ideas`).
    public var giftIdeas: [String] {
        get { kept?.giftIdeas ?? [] }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: newValue, notes: notes, timeZone: timeZone) }
    }
    /// Notes, oldest first (template variable `notes`).
    public var notes: [String] {
        get { kept?.notes ?? [] }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: newValue, timeZone: timeZone) }
    }
    /// The card's `TZ` (`their_time` in reminders); nil when unknown.
    public var timeZone: ContactTimeZone? {
        get { kept?.timeZone }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: notes, timeZone: newValue) }
    }

    public init(id: String, name: String, firstName: String? = nil, birthday: Birthday?, categories: [String] = [],
                isIncluded: Bool = true, includedAt: Int64? = nil, anniversary: Birthday? = nil,
                settings: ContactSettings? = nil, giftIdeas: [String] = [], notes: [String] = []) {
        self.id = id
        self.name = name
        self.firstName = firstName ?? ContactCard.firstName(of: name)
        self.birthday = birthday
        self.categories = categories
        self.isIncluded = isIncluded
        self.includedAt = includedAt
        self.anniversary = anniversary
        kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: notes, timeZone: nil)
    }

    private static func pack(_ date: Birthday?) -> Int64 {
        guard let date else { return 0 }
        let calendar = Int64(BirthdayCalendar.allCases.firstIndex(of: date.calendar) ?? 0)
        return 1 << 48 | calendar << 32 | Int64((date.year ?? -1) + 1) << 16 | Int64(date.month) << 8 | Int64(date.day)
    }

    private static func unpack(_ packed: Int64) -> Birthday? {
        guard packed != 0 else { return nil }
        let year = Int((packed >> 16) & 0xFFFF) - 1
        let calendar = BirthdayCalendar.allCases[Int((packed >> 32) & 0xFF)]
        return Birthday(month: Int((packed >> 8) & 0xFF), day: Int(packed & 0xFF), year: year < 0 ? nil : year,
                        calendar: calendar)
    }

    /// The date of an occasion.
    public func date(of occasion: Occasion) -> Birthday? {
        occasion == .birthday ? birthday : anniversary
    }
}

extension Contact {
    /// What the planner needs of this contact.
    public var planning: PlanningContact {
        var planning = PlanningContact(id: id, name: name, firstName: card.firstName, birthday: birthday, categories: card.categories,
                                       isIncluded: isIncluded, includedAt: includedAt, anniversary: anniversary, settings: settings)
        planning.timeZone = card.timeZone
        return planning
    }
}

/// The `capacity` smallest fire times seen so far, as a max-heap.
private struct FireTimeHeap {
    private var heap: [Int64] = []
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        heap.reserveCapacity(min(capacity, 1 << 16))
    }

    /// The largest fire time that can still make the cut, once the heap is full.
    var cutOff: Int64? { heap.count == capacity ? heap.first : nil }

    /// Records `value`; false when it is later than every kept time (it cannot
    /// be among the earliest `capacity`). Ties with the cut-off are kept.
    mutating func offer(_ value: Int64) -> Bool {
        if heap.count < capacity {
            heap.append(value)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[parent] < heap[child] else { break }
                heap.swapAt(parent, child)
                child = parent
            }
            return true
        }
        guard let top = heap.first else { return false }
        if value > top { return false }
        if value == top { return true }
        heap[0] = value
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var largest = parent
            if left < heap.count, heap[left] > heap[largest] { largest = left }
            if right < heap.count, heap[right] > heap[largest] { largest = right }
            if largest == parent { break }
            heap.swapAt(parent, largest)
            parent = largest
        }
        return true
    }
}

/// A compact event before its id and name are built (only the winners pay for strings).
private struct Candidate {
    var fireAt: Int64
    var index: Int32
    var offset: Int16
    var anniversary: Bool
    var occurrence: LocalDate
    var age: Int?
}

/// Where and when one occasion of one contact is reminded of.
public struct ReminderRoute: Sendable, Equatable {
    public var offsets: [Int]
    public var channels: [String]
    /// Minutes after local midnight.
    public var time: Int
    /// Tried in order when the route does not deliver in time (`fallback`).
    public var fallback: [String] = []
    /// Seconds (`fallback_after`).
    public var fallbackAfter = 2 * 3_600
}

/// Works out reminder events from contacts and configuration. A pure function
/// of (contacts, config, now, time zone): it never reads a clock.
public struct Planner: Sendable {
    public var offsets: [Int]
    public var secondsAfterMidnight: Int
    public var feb29: Feb29Policy
    public var defaultChannels: [String]
    private let config: BuzzConfig
    public let clock: WallClock

    /// - Parameter defaultChannels: the route for contacts no group overrides
    ///   (`reminders.channels`, or the embedded default the caller resolved).
    public init(config: BuzzConfig, defaultChannels: [String]) {
        offsets = config.reminders.offsets
        secondsAfterMidnight = config.reminders.time * 60
        feb29 = config.reminders.feb29
        self.defaultChannels = defaultChannels
        self.config = config
        clock = WallClock(timeZone: config.general.timeZone)
    }

    /// What a contact's birthday reminders use: offsets and channels, from its group if any.
    public func route(for categories: [String]) -> (offsets: [Int], channels: [String]) {
        guard let group = config.group(forCategories: categories) else { return (offsets, defaultChannels) }
        return (group.offsets ?? offsets, group.channels ?? defaultChannels)
    }

    /// What one occasion of a contact uses (DESIGN §3b): the contact's own settings,
    /// else its group's, else `[reminders]`; anniversaries take their offsets and
    /// channels from `[anniversaries]` before the group's channels.
    public func route(for contact: PlanningContact, occasion: Occasion) -> ReminderRoute {
        let settings = contact.settings
        let time = settings?.time ?? config.reminders.time
        let group = config.group(forCategories: contact.categories)
        switch occasion {
        case .birthday:
            let base = route(for: contact.categories)
            return ReminderRoute(offsets: settings?.offsets ?? base.offsets, channels: settings?.channels ?? base.channels,
                                 time: time, fallback: group?.fallback ?? config.reminders.fallback,
                                 fallbackAfter: group?.fallbackAfter ?? config.reminders.fallbackAfter)
        case .anniversary:
            let channels = settings?.channels ?? config.anniversaries.channels ?? group?.channels ?? defaultChannels
            return ReminderRoute(offsets: settings?.offsets ?? config.anniversaries.offsets, channels: channels, time: time,
                                 fallback: config.anniversaries.fallback ?? group?.fallback ?? config.reminders.fallback,
                                 fallbackAfter: config.anniversaries.fallbackAfter ?? group?.fallbackAfter
                                     ?? config.reminders.fallbackAfter)
        }
    }

    /// Whether any reminder has a fallback channel (else no pass looks for fallbacks).
    public var hasFallbacks: Bool {
        !config.reminders.fallback.isEmpty || config.anniversaries.fallback?.isEmpty == false
            || config.groups.contains { $0.fallback?.isEmpty == false }
    }

    /// The most fallback channels any reminder has.
    public var longestFallbackChain: Int {
        ([config.reminders.fallback.count, config.anniversaries.fallback?.count ?? 0]
         + config.groups.map { $0.fallback?.count ?? 0 }).max() ?? 0
    }

    /// `[reminders] fallback`.
    public var fallbackChannels: [String] { config.reminders.fallback }

    /// `[reminders] notices`; nil for the default order.
    public var noticeChannels: [String]? { config.reminders.notices }

    /// Whether anniversaries are reminded of (`anniversaries.enabled`).
    public var remindsAnniversaries: Bool { config.anniversaries.enabled }

    /// How far before the watermark a dispatch pass looks for events whose
    /// fire time moved into the past without ever having been looked at
    /// (DESIGN §2, catch-up): the largest offset in the config plus two days,
    /// which covers a changed `reminders.time` or `general.timezone` (at most
    /// ~26 h), a new or larger offset, and a birthday entered a day late.
    public var lookback: Int64 {
        var all = [offsets] + config.groups.compactMap(\.offsets)
        if config.anniversaries.enabled { all.append(config.anniversaries.offsets) }
        let largest = all.joined().max() ?? 0
        return Int64(max(largest, 0) + 2) * 86_400
    }

    /// `lookback`, widened for contacts whose own offsets (`buzz set`) reach further.
    public func lookback(for contacts: [PlanningContact]) -> Int64 {
        var largest = 0
        for contact in contacts {
            if let own = contact.settings?.offsets?.last, own > largest { largest = own }
        }
        return max(lookback, Int64(largest + 2) * 86_400)
    }

    /// Occurrences closer than this are never two of one birthday (a Hebrew or
    /// Islamic year is 354 days, less a day when the month is short).
    private static let shortestYear: Int64 = 340 * 86_400
    /// `upcoming` looks no further than this many years ahead.
    private static let horizonYears = 100

    /// The look-ahead: events firing after `now`, nearest first (ties by id), at
    /// most `limit`. Without `until` that is each contact's next event per occasion
    /// and offset; with `until`, every event firing at or before it (a 400-day
    /// window holds some birthdays twice). Deliveries in `recorded` are left out:
    /// an event the ledger already holds is never planned again, whatever its new
    /// time (DESIGN §2); an event recorded for some of its channels keeps the others.
    ///
    /// Only included contacts with a birthday or an anniversary take part.
    public func upcoming(_ contacts: [PlanningContact], now: Int64, until: Int64? = nil, limit: Int,
                         recorded: RecordedDeliveries = RecordedDeliveries()) -> [PlannedEvent] {
        guard limit > 0 else { return [] }
        let today = clock.localDate(at: now)
        let horizon = today.adding(days: Self.horizonYears * 366)
        let anniversaries = config.anniversaries.enabled
        // An anniversary's route is the same for every contact without settings,
        // unless groups can change its channels.
        let anniversaryOffsets = config.anniversaries.offsets
        let anniversaryChannels = config.anniversaries.channels ?? defaultChannels
        let anniversaryRouteVaries = config.anniversaries.channels == nil && !config.groups.isEmpty
        // Compact candidates first; ids and names are built only for the winners.
        // A max-heap of the `limit` earliest fire times gives a running cut-off,
        // so most candidates are never stored and only a small set is sorted.
        var candidates: [Candidate] = []
        var earliest = FireTimeHeap(capacity: limit)
        // Fire times at the configured time, by day number from `firstCached`:
        // most events of a look-ahead fire within a year and a bit of today.
        let todayNumber = today.daysSinceEpoch
        let firstCached = todayNumber - 2
        var fireCache = [Int64](repeating: .min, count: 800)
        func fireTime(_ dayNumber: Int, _ seconds: Int) -> Int64 {
            let slot = dayNumber - firstCached
            // Only the configured time is cached: a contact's own time is rare.
            guard seconds == secondsAfterMidnight, slot >= 0, slot < fireCache.count else {
                return clock.instant(of: LocalDate(daysSinceEpoch: dayNumber), secondsAfterMidnight: seconds)
            }
            let cached = fireCache[slot]
            if cached != .min { return cached }
            let value = clock.instant(of: LocalDate(daysSinceEpoch: dayNumber), secondsAfterMidnight: seconds)
            fireCache[slot] = value
            return value
        }
        // `today` plus each offset (0…365), made once.
        var startCache = [LocalDate?](repeating: nil, count: 366)
        func start(_ offset: Int) -> LocalDate {
            guard offset >= 0, offset < startCache.count else { return today.adding(days: offset) }
            if let known = startCache[offset] { return known }
            let value = today.adding(days: offset)
            startCache[offset] = value
            return value
        }
        func plan(_ date: Birthday, index: Int, anniversary: Bool, offsets: [Int], channels: [String], seconds: Int,
                  done: [String: Set<String>]?) {
            let occasion: Occasion = anniversary ? .anniversary : .birthday
            for offset in offsets {
                var occurrence = date.nextOccurrence(onOrAfter: start(offset), feb29: feb29)
                var fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                if fire <= now {
                    occurrence = date.nextOccurrence(onOrAfter: occurrence.date.adding(days: 1), feb29: feb29)
                    fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                }
                while occurrence.date <= horizon {
                    if let until, fire > until { break }
                    // An event in the ledger is passed over for the next one.
                    let finished = done.map {
                        RecordedDeliveries.channels(channels, leftIn: $0, occasion: occasion, offset: offset,
                                                    occurrence: occurrence.date).isEmpty
                    } ?? false
                    if !finished {
                        guard earliest.offer(fire) else { break }
                        candidates.append(Candidate(fireAt: fire, index: Int32(index), offset: Int16(offset),
                                                    anniversary: anniversary, occurrence: occurrence.date,
                                                    age: occurrence.age))
                    }
                    // The next occurrence is a year on: it belongs in a window that
                    // long (or replaces one the ledger holds), and can make the cut
                    // only while the heap has room or its cut-off is that far away.
                    if until == nil, !finished { break }
                    if let cutOff = earliest.cutOff, cutOff < fire + Self.shortestYear { break }
                    occurrence = date.nextOccurrence(onOrAfter: occurrence.date.adding(days: 1), feb29: feb29)
                    fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                }
            }
        }
        for index in contacts.indices {
            let contact = contacts[index]
            guard contact.isIncluded else { continue }
            let done = recorded.isEmpty ? nil : recorded.entries(for: contact.id)
            if let birthday = contact.birthday {
                if contact.settings == nil {
                    let route = route(for: contact.categories)
                    plan(birthday, index: index, anniversary: false, offsets: route.offsets, channels: route.channels,
                         seconds: secondsAfterMidnight, done: done)
                } else {
                    let route = route(for: contact, occasion: .birthday)
                    plan(birthday, index: index, anniversary: false, offsets: route.offsets, channels: route.channels,
                         seconds: route.time * 60, done: done)
                }
            }
            if anniversaries, contact.packedAnniversary != 0, let anniversary = contact.anniversary {
                if contact.settings == nil, !anniversaryRouteVaries || contact.categories.isEmpty {
                    plan(anniversary, index: index, anniversary: true, offsets: anniversaryOffsets,
                         channels: anniversaryChannels, seconds: secondsAfterMidnight, done: done)
                } else {
                    let route = route(for: contact, occasion: .anniversary)
                    plan(anniversary, index: index, anniversary: true, offsets: route.offsets, channels: route.channels,
                         seconds: route.time * 60, done: done)
                }
            }
        }
        // Order by fire time; ties are broken by contact id, occasion and offset so
        // the result is deterministic. Only the slice that can make the cut (up to
        // the limit, plus ties at its edge) pays for the string comparisons.
        if let cutOff = earliest.cutOff { candidates.removeAll { $0.fireAt > cutOff } }
        let ordered = candidates.sorted { a, b in
            if a.fireAt != b.fireAt { return a.fireAt < b.fireAt }
            let ida = contacts[Int(a.index)].id, idb = contacts[Int(b.index)].id
            if ida != idb { return ida < idb }
            if a.anniversary != b.anniversary { return !a.anniversary }
            if a.offset != b.offset { return a.offset < b.offset }
            return a.occurrence < b.occurrence
        }
        return ordered.prefix(limit).map { candidate in
            let contact = contacts[Int(candidate.index)]
            let offset = Int(candidate.offset)
            let occasion: Occasion = candidate.anniversary ? .anniversary : .birthday
            var channels = route(for: contact, occasion: occasion).channels
            if let done = recorded.isEmpty ? nil : recorded.entries(for: contact.id) {
                channels = RecordedDeliveries.channels(channels, leftIn: done, occasion: occasion, offset: offset,
                                                       occurrence: candidate.occurrence)
            }
            return PlannedEvent(
                id: PlannedEvent.id(contactID: contact.id, occasion: occasion, offset: offset, occurrence: candidate.occurrence),
                contactID: contact.id, name: contact.name, occurrence: candidate.occurrence,
                offsetDays: offset, fireAt: candidate.fireAt, age: candidate.age,
                channels: channels, occasion: occasion)
        }
    }

    /// Every event whose fire time lies in `(after, upTo]`, with no ceiling: what a
    /// dispatch pass considers (DESIGN §2). Includes contacts not included, so the
    /// dispatcher can record them `skipped`; `isIncluded` tells them apart.
    public func due(_ contacts: [PlanningContact], after: Int64, upTo: Int64) -> [(event: PlannedEvent, contact: PlanningContact)] {
        guard upTo > after else { return [] }
        // Occurrence dates whose fire time could land in the window.
        let firstDay = clock.localDate(at: after).adding(days: -1)
        let lastDay = clock.localDate(at: upTo).adding(days: 1)
        var result: [(PlannedEvent, PlanningContact)] = []
        for contact in contacts where contact.isIncluded {
            for occasion in Occasion.allCases {
                guard let date = contact.date(of: occasion) else { continue }
                if occasion == .anniversary, !config.anniversaries.enabled { continue }
                let route = route(for: contact, occasion: occasion)
                for offset in route.offsets {
                    var start = firstDay.adding(days: offset)
                    while true {
                        let occurrence = date.nextOccurrence(onOrAfter: start, feb29: feb29)
                        let fireDay = occurrence.date.adding(days: -offset)
                        if fireDay > lastDay { break }
                        let fire = clock.instant(of: fireDay, secondsAfterMidnight: route.time * 60)
                        if fire > after, fire <= upTo {
                            result.append((PlannedEvent(
                                id: PlannedEvent.id(contactID: contact.id, occasion: occasion, offset: offset,
                                                    occurrence: occurrence.date),
                                contactID: contact.id, name: contact.name, occurrence: occurrence.date,
                                offsetDays: offset, fireAt: fire, age: occurrence.age, channels: route.channels,
                                occasion: occasion), contact))
                        }
                        start = occurrence.date.adding(days: 1)
                    }
                }
            }
        }
        return result.sorted { $0.0.fireAt != $1.0.fireAt ? $0.0.fireAt < $1.0.fireAt : $0.0.id < $1.0.id }
    }
}

/// Deliveries the ledger already holds, by contact: what planning leaves out
/// (DESIGN §2: an event in the ledger is never planned again, whatever its new time).
public struct RecordedDeliveries: Sendable {
    /// Contact id → "offset/occurrence" (birthdays) or "anniversary/offset/occurrence" → channels recorded.
    private var byContact: [String: [String: Set<String>]] = [:]

    public init() {}

    /// From ledger keys; ids that are not reminder events (asks) are ignored.
    public init(keys: Set<LedgerKey>) {
        for key in keys {
            guard let parts = PlannedEvent.parse(key.eventID) else { continue }
            byContact[parts.contactID, default: [:]][Self.key(parts.occasion, parts.offset, parts.occurrence), default: []]
                .insert(key.channel)
        }
    }

    private static func key(_ occasion: Occasion, _ offset: Int, _ occurrence: LocalDate) -> String {
        occasion == .birthday ? "\(offset)/\(occurrence)" : "anniversary/\(offset)/\(occurrence)"
    }

    public var isEmpty: Bool { byContact.isEmpty }

    /// One contact's recorded deliveries (nil when there are none).
    public func entries(for contactID: String) -> [String: Set<String>]? { byContact[contactID] }

    /// The channels of `channels` that have no delivery of this event yet.
    public static func channels(_ channels: [String], leftIn entries: [String: Set<String>], occasion: Occasion = .birthday,
                                offset: Int, occurrence: LocalDate) -> [String] {
        guard let done = entries[key(occasion, offset, occurrence)] else { return channels }
        return channels.filter { !done.contains($0) }
    }
}
