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

    /// Whether contact id `a` sorts before `b` in the byte order of their UTF-8,
    /// the order SQLite's BINARY collation gives (and String's `<` too, for ids in
    /// NFC): planning breaks ties with it, so a window read in id order finds the
    /// same first contacts as a read of every one.
    public static func idPrecedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The deterministic event id: `<contact>/<offset>/<occurrence>` for birthdays,
    /// `<contact>/<kind>/<offset>/<occurrence>` for the other kinds (`Occasion.idSegment`).
    public static func id(contactID: String, occasion: Occasion = .birthday, offset: Int, occurrence: LocalDate) -> String {
        guard let segment = occasion.idSegment else {
            return encodeContactID(contactID) + "/\(offset)/" + occurrence.description
        }
        return encodeContactID(contactID) + "/" + segment + "/\(offset)/" + occurrence.description
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

/// A contact's own reminder settings (`buzz set`, docs/design/occasions.md): each one set wins
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
    let otherDates: [OccasionDate]
    let timeZone: ContactTimeZone?

    /// nil when there is nothing to keep.
    init?(settings: ContactSettings?, giftIdeas: [String], notes: [String], otherDates: [OccasionDate],
          timeZone: ContactTimeZone?) {
        if settings == nil, giftIdeas.isEmpty, notes.isEmpty, otherDates.isEmpty, timeZone == nil { return nil }
        self.settings = settings
        self.giftIdeas = giftIdeas
        self.notes = notes
        self.otherDates = otherDates
        self.timeZone = timeZone
    }

    static func == (a: KeptForPlanning, b: KeptForPlanning) -> Bool {
        a.settings == b.settings && a.giftIdeas == b.giftIdeas && a.notes == b.notes && a.otherDates == b.otherDates
            && a.timeZone == b.timeZone
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(settings)
        hasher.combine(giftIdeas)
        hasher.combine(notes)
        hasher.combine(otherDates)
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
    /// Deceased (marked by hand, or a date of death): only kinds for the
    /// deceased (memorials) are planned for it, and none of the others.
    public var isDeceased = false
    /// Settings, gift ideas, notes and the dates of other kinds: few contacts have
    /// any, so they sit behind one reference that is nil for the others (planning
    /// copies no arrays for them).
    private var kept: KeptForPlanning?

    /// The contact's own settings (`buzz set`); nil when none.
    public var settings: ContactSettings? {
        get { kept?.settings }
        set { kept = KeptForPlanning(settings: newValue, giftIdeas: giftIdeas, notes: notes, otherDates: otherDates,
                                     timeZone: timeZone) }
    }
    /// Open gift ideas, oldest first (template variable `gift_ideas`).
    public var giftIdeas: [String] {
        get { kept?.giftIdeas ?? [] }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: newValue, notes: notes, otherDates: otherDates,
                                     timeZone: timeZone) }
    }
    /// Notes, oldest first (template variable `notes`).
    public var notes: [String] {
        get { kept?.notes ?? [] }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: newValue, otherDates: otherDates,
                                     timeZone: timeZone) }
    }
    /// The dates of the kinds other than birthday and anniversary that count
    /// (the hand-entered ones, else the card's): a memorial, labelled dates.
    public var otherDates: [OccasionDate] {
        get { kept?.otherDates ?? [] }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: notes, otherDates: newValue,
                                     timeZone: timeZone) }
    }
    /// The card's `TZ` (`their_time` in reminders); nil when unknown.
    public var timeZone: ContactTimeZone? {
        get { kept?.timeZone }
        set { kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: notes, otherDates: otherDates,
                                     timeZone: newValue) }
    }

    public init(id: String, name: String, firstName: String? = nil, birthday: Birthday?, categories: [String] = [],
                isIncluded: Bool = true, includedAt: Int64? = nil, anniversary: Birthday? = nil,
                settings: ContactSettings? = nil, giftIdeas: [String] = [], notes: [String] = [],
                otherDates: [OccasionDate] = [], isDeceased: Bool = false) {
        self.id = id
        self.name = name
        self.firstName = firstName ?? ContactCard.firstName(of: name)
        self.birthday = birthday
        self.categories = categories
        self.isIncluded = isIncluded
        self.includedAt = includedAt
        self.anniversary = anniversary
        self.isDeceased = isDeceased
        kept = KeptForPlanning(settings: settings, giftIdeas: giftIdeas, notes: notes, otherDates: otherDates,
                                 timeZone: nil)
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

    /// The date of an occasion (a labelled date's by its label), with the kind's
    /// prepared file (`Planner.prepared`) for kinds read from one.
    public func date(of occasion: Occasion, prepared: (any Sendable)? = nil) -> Birthday? {
        switch occasion.kind {
        case .birthday: return birthday
        case .anniversary: return anniversary
        default:
            var found: Birthday?
            occasion.kind.dates(self, prepared) { label, date in
                if found == nil, label == occasion.label { found = date }
            }
            return found
        }
    }
}

extension Contact {
    /// What the planner needs of this contact.
    public var planning: PlanningContact {
        var planning = PlanningContact(id: id, name: name, firstName: card.firstName, birthday: birthday,
                                       categories: card.categories, isIncluded: isIncluded, includedAt: includedAt,
                                       anniversary: anniversary, settings: settings, otherDates: otherDates,
                                       isDeceased: isDeceased)
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
    /// `OccasionKind.all`'s index of the kind.
    var kind: UInt8
    /// For a labelled date, which of the contact's dates of its kind (in the kind's order).
    var slot: UInt16
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
    /// What each kind's `prepare` made of the files its config table names, by
    /// kind name (the wiring reads them); a kind read from a file without one
    /// has no dates.
    public var prepared: [String: any Sendable] = [:]

    /// The kinds reminded of (`enabled`), birthdays first.
    public var kinds: [OccasionKind] { OccasionKind.all.filter { config.reminds($0) } }

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

    /// What one occasion of a contact uses: the contact's own settings, else its
    /// group's, else `[reminders]`; the other kinds take their offsets, channels
    /// and fallbacks from their own table (`[anniversaries]`, …) before the group's.
    public func route(for contact: PlanningContact, occasion: Occasion) -> ReminderRoute {
        route(for: contact, kind: occasion.kind)
    }

    public func route(for contact: PlanningContact, kind: OccasionKind) -> ReminderRoute {
        let settings = contact.settings
        let time = settings?.time ?? config.reminders.time
        let group = config.group(forCategories: contact.categories)
        if kind == .birthday {
            let base = route(for: contact.categories)
            return ReminderRoute(offsets: settings?.offsets ?? base.offsets, channels: settings?.channels ?? base.channels,
                                 time: time, fallback: group?.fallback ?? config.reminders.fallback,
                                 fallbackAfter: group?.fallbackAfter ?? config.reminders.fallbackAfter)
        }
        let table = config.occasion(kind)
        let channels = settings?.channels ?? table.channels ?? group?.channels ?? defaultChannels
        return ReminderRoute(offsets: settings?.offsets ?? table.offsets, channels: channels, time: time,
                             fallback: table.fallback ?? group?.fallback ?? config.reminders.fallback,
                             fallbackAfter: table.fallbackAfter ?? group?.fallbackAfter ?? config.reminders.fallbackAfter)
    }

    /// Whether any reminder has a fallback channel (else no pass looks for fallbacks).
    public var hasFallbacks: Bool { longestFallbackChain > 0 }

    /// The most fallback channels any reminder has.
    public var longestFallbackChain: Int {
        ([config.reminders.fallback.count]
         + OccasionKind.all.filter { $0 != .birthday }.map { config.occasion($0).fallback?.count ?? 0 }
         + config.groups.map { $0.fallback?.count ?? 0 }).max() ?? 0
    }

    /// `[reminders] fallback`.
    public var fallbackChannels: [String] { config.reminders.fallback }

    /// `[reminders] notices`; nil for the default order.
    public var noticeChannels: [String]? { config.reminders.notices }

    /// Whether anniversaries are reminded of (`anniversaries.enabled`).
    public var remindsAnniversaries: Bool { config.anniversaries.enabled }

    /// Whether `kind` is reminded of (its table's `enabled`; birthdays always).
    public func reminds(_ kind: OccasionKind) -> Bool { config.reminds(kind) }

    /// Whether some kind is planned for every included contact (name days from
    /// a file): then planning must load the contacts without any date too.
    public var concernsEveryContact: Bool { kinds.contains { $0.concernsEveryContact } }

    /// Whether a contact's categories can change its route (groups are configured).
    var routesFollowCategories: Bool { !config.groups.isEmpty }

    /// Whether some kind is planned for deceased contacts (memorials).
    public var concernsTheDeceased: Bool { kinds.contains { $0.isForTheDeceased } }

    /// How far before the watermark a dispatch pass looks for events whose
    /// fire time moved into the past without ever having been looked at
    /// (docs/design/reminders.md, catch-up): the largest offset in the config plus two days,
    /// which covers a changed `reminders.time` or `general.timezone` (at most
    /// ~26 h), a new or larger offset, and a birthday entered a day late.
    public var lookback: Int64 { lookback(largestOwnOffset: 0) }

    /// The largest offset of any route the config gives (`[reminders]`, groups,
    /// the other kinds' tables), 0 when none is larger.
    var largestConfiguredOffset: Int {
        var all = [offsets] + config.groups.compactMap(\.offsets)
        for kind in kinds where kind != .birthday { all.append(config.occasion(kind).offsets) }
        return max(all.joined().max() ?? 0, 0)
    }

    /// `lookback`, widened for the largest offset a contact set for itself.
    public func lookback(largestOwnOffset: Int) -> Int64 {
        Int64(max(largestConfiguredOffset, largestOwnOffset) + 2) * 86_400
    }

    /// `lookback`, widened for contacts whose own offsets (`buzz set`) reach further.
    public func lookback(for contacts: [PlanningContact]) -> Int64 {
        var largest = 0
        for contact in contacts {
            if let own = contact.settings?.offsets?.last, own > largest { largest = own }
        }
        return lookback(largestOwnOffset: largest)
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
    /// time (docs/design/reminders.md); an event recorded for some of its channels keeps the others.
    ///
    /// Only included contacts with a birthday or an anniversary take part.
    public func upcoming(_ contacts: [PlanningContact], now: Int64, until: Int64? = nil, limit: Int,
                         recorded: RecordedDeliveries = RecordedDeliveries()) -> [PlannedEvent] {
        guard limit > 0 else { return [] }
        let today = clock.localDate(at: now)
        let horizon = today.adding(days: Self.horizonYears * 366)
        // The kinds after birthdays, each with the route it has for every contact
        // without settings (unless groups can change its channels).
        let others = kinds.filter { $0 != .birthday }.map { kind in
            let table = config.occasion(kind)
            return (kind: kind, index: UInt8(kind.index), offsets: table.offsets, channels: table.channels ?? defaultChannels,
                    routeVaries: table.channels == nil && !config.groups.isEmpty, prepared: prepared[kind.name],
                    forTheDeceased: kind.isForTheDeceased)
        }
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
        func plan(_ date: Birthday, index: Int, kind: UInt8, slot: UInt16, occasion: Occasion?, offsets: [Int],
                  channels: [String], seconds: Int, done: [String: Set<String>]?, countingTheDate: Bool = false) {
            for offset in offsets {
                var occurrence = date.nextOccurrence(onOrAfter: start(offset), feb29: feb29, countingTheDate: countingTheDate)
                var fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                if fire <= now {
                    occurrence = date.nextOccurrence(onOrAfter: occurrence.date.adding(days: 1), feb29: feb29, countingTheDate: countingTheDate)
                    fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                }
                while occurrence.date <= horizon {
                    if let until, fire > until { break }
                    // An event in the ledger is passed over for the next one.
                    let finished = done.map {
                        RecordedDeliveries.channels(channels, leftIn: $0, occasion: occasion ?? .birthday, offset: offset,
                                                    occurrence: occurrence.date).isEmpty
                    } ?? false
                    if !finished {
                        guard earliest.offer(fire) else { break }
                        candidates.append(Candidate(fireAt: fire, index: Int32(index), offset: Int16(offset),
                                                    kind: kind, slot: slot, occurrence: occurrence.date,
                                                    age: occurrence.age))
                    }
                    // The next occurrence is a year on: it belongs in a window that
                    // long (or replaces one the ledger holds), and can make the cut
                    // only while the heap has room or its cut-off is that far away.
                    if until == nil, !finished { break }
                    if let cutOff = earliest.cutOff, cutOff < fire + Self.shortestYear { break }
                    occurrence = date.nextOccurrence(onOrAfter: occurrence.date.adding(days: 1), feb29: feb29, countingTheDate: countingTheDate)
                    fire = fireTime(occurrence.date.daysSinceEpoch - offset, seconds)
                }
            }
        }
        for index in contacts.indices {
            let contact = contacts[index]
            guard contact.isIncluded else { continue }
            let done = recorded.isEmpty ? nil : recorded.entries(for: contact.id)
            if !contact.isDeceased, let birthday = contact.birthday {
                if contact.settings == nil {
                    let route = route(for: contact.categories)
                    plan(birthday, index: index, kind: 0, slot: 0, occasion: done == nil ? nil : .birthday,
                         offsets: route.offsets, channels: route.channels, seconds: secondsAfterMidnight, done: done)
                } else {
                    let route = route(for: contact, kind: .birthday)
                    plan(birthday, index: index, kind: 0, slot: 0, occasion: done == nil ? nil : .birthday,
                         offsets: route.offsets, channels: route.channels, seconds: route.time * 60, done: done)
                }
            }
            for other in others where other.forTheDeceased == contact.isDeceased {
                // Anniversaries sit in one word of the contact: most contacts have none.
                if other.kind == .anniversary, contact.packedAnniversary == 0 { continue }
                var slot: UInt16 = 0
                other.kind.dates(contact, other.prepared) { label, date in
                    defer { slot &+= 1 }
                    let occasion = done == nil ? nil : Occasion(other.kind, label: label)
                    if contact.settings == nil, !other.routeVaries || contact.categories.isEmpty {
                        plan(date, index: index, kind: other.index, slot: slot, occasion: occasion, offsets: other.offsets,
                             channels: other.channels, seconds: secondsAfterMidnight, done: done,
                             countingTheDate: other.kind.allowsFuture)
                    } else {
                        let route = route(for: contact, kind: other.kind)
                        plan(date, index: index, kind: other.index, slot: slot, occasion: occasion, offsets: route.offsets,
                             channels: route.channels, seconds: route.time * 60, done: done,
                             countingTheDate: other.kind.allowsFuture)
                    }
                }
            }
        }
        // Order by fire time; ties are broken by contact id (in byte order, as the
        // store orders them: PlanningWindow.swift), occasion and offset so
        // the result is deterministic. Only the slice that can make the cut (up to
        // the limit, plus ties at its edge) pays for the string comparisons.
        if let cutOff = earliest.cutOff { candidates.removeAll { $0.fireAt > cutOff } }
        let ordered = candidates.sorted { a, b in
            if a.fireAt != b.fireAt { return a.fireAt < b.fireAt }
            let ida = contacts[Int(a.index)].id, idb = contacts[Int(b.index)].id
            if !ida.utf8.elementsEqual(idb.utf8) { return PlannedEvent.idPrecedes(ida, idb) }
            if a.kind != b.kind { return a.kind < b.kind }
            if a.slot != b.slot { return a.slot < b.slot }
            if a.offset != b.offset { return a.offset < b.offset }
            return a.occurrence < b.occurrence
        }
        return ordered.prefix(limit).map { candidate in
            let contact = contacts[Int(candidate.index)]
            let offset = Int(candidate.offset)
            let occasion = occasion(of: candidate, contact: contact)
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

    /// The occasion a candidate stands for: its kind, and a labelled date's label
    /// (the `slot`-th date the kind reads from the contact).
    private func occasion(of candidate: Candidate, contact: PlanningContact) -> Occasion {
        let kind = OccasionKind.all[Int(candidate.kind)]
        guard kind.isLabelled else { return Occasion(kind) }
        var slot: UInt16 = 0
        var label: String?
        kind.dates(contact, prepared[kind.name]) { found, _ in
            if slot == candidate.slot { label = found }
            slot &+= 1
        }
        return Occasion(kind, label: label)
    }

    /// Every event whose fire time lies in `(after, upTo]`, with no ceiling: what a
    /// dispatch pass considers (docs/design/reminders.md). Includes contacts not included, so the
    /// dispatcher can record them `skipped`; `isIncluded` tells them apart.
    public func due(_ contacts: [PlanningContact], after: Int64, upTo: Int64) -> [(event: PlannedEvent, contact: PlanningContact)] {
        guard upTo > after else { return [] }
        // Occurrence dates whose fire time could land in the window.
        let firstDay = clock.localDate(at: after).adding(days: -1)
        let lastDay = clock.localDate(at: upTo).adding(days: 1)
        var result: [(PlannedEvent, PlanningContact)] = []
        let kinds = kinds
        for contact in contacts where contact.isIncluded {
            for kind in kinds where kind.isForTheDeceased == contact.isDeceased {
                var dates: [(Occasion, Birthday)] = []
                kind.dates(contact, prepared[kind.name]) { label, date in dates.append((Occasion(kind, label: label), date)) }
                guard !dates.isEmpty else { continue }
                let route = route(for: contact, kind: kind)
                for (occasion, date) in dates {
                    for offset in route.offsets {
                        var start = firstDay.adding(days: offset)
                        while true {
                            let occurrence = date.nextOccurrence(onOrAfter: start, feb29: feb29,
                                                                 countingTheDate: kind.allowsFuture)
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
        }
        return result.sorted { $0.0.fireAt != $1.0.fireAt ? $0.0.fireAt < $1.0.fireAt : $0.0.id < $1.0.id }
    }
}

/// Deliveries the ledger already holds, by contact: what planning leaves out
/// (docs/design/reminders.md: an event in the ledger is never planned again, whatever its new time).
public struct RecordedDeliveries: Sendable {
    /// Contact id → "offset/occurrence" (birthdays) or "<kind>/offset/occurrence" → channels recorded.
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
        guard let segment = occasion.idSegment else { return "\(offset)/\(occurrence)" }
        return segment + "/\(offset)/\(occurrence)"
    }

    public var isEmpty: Bool { byContact.isEmpty }

    /// How many contacts have deliveries recorded.
    public var contactCount: Int { byContact.count }

    /// One contact's recorded deliveries (nil when there are none).
    public func entries(for contactID: String) -> [String: Set<String>]? { byContact[contactID] }

    /// The channels of `channels` that have no delivery of this event yet.
    public static func channels(_ channels: [String], leftIn entries: [String: Set<String>], occasion: Occasion = .birthday,
                                offset: Int, occurrence: LocalDate) -> [String] {
        guard let done = entries[key(occasion, offset, occurrence)] else { return channels }
        return channels.filter { !done.contains($0) }
    }
}
