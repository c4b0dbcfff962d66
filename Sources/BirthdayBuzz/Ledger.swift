import Foundation

/// The states of a delivery (docs/design/reminders.md), one row per (event, channel).
public enum DeliveryState: String, Sendable, CaseIterable {
    /// Planned, not yet tried.
    case pending
    /// Written just before the attempt: a row left here by a crash is resent with the same id.
    case sending
    case sent
    /// A temporary failure; tried again at `nextAttemptAt`.
    case retrying
    /// Permanent failure, or out of attempts. `retry` puts it back.
    case failed
    /// Due while nothing ran, beyond catch-up, or its day ended undelivered. Never attempted again.
    case missed
    /// The contact was not included at fire time. Never attempted.
    case skipped
}

/// Why a row's channel is not one of the event's route: a fallback after the
/// route failed, or an escalation of a notification nobody saw.
public enum DeliveryVia: Sendable, Hashable {
    /// Sent because the route's channels (`for`, in order) did not deliver in time.
    case fallback(for: [String])
    /// Sent because the notification that channel showed went unseen.
    case escalated(from: String)

    /// `fallback for desktop, ntfy` / `escalated from desktop`, as `outbox` and `show` say it.
    public var label: String {
        switch self {
        case .fallback(let channels): "fallback for " + channels.joined(separator: ", ")
        case .escalated(let channel): "escalated from " + channel
        }
    }

    public var isEscalation: Bool {
        if case .escalated = self { return true }
        return false
    }

    /// The stored form: `fallback:a,b` or `escalated:desktop` (channel names hold no `,`).
    public var stored: String {
        switch self {
        case .fallback(let channels): "fallback:" + channels.joined(separator: ",")
        case .escalated(let channel): "escalated:" + channel
        }
    }

    public init?(stored: String) {
        if stored.hasPrefix("fallback:") {
            self = .fallback(for: stored.dropFirst("fallback:".count).split(separator: ",").map(String.init))
        } else if stored.hasPrefix("escalated:") {
            self = .escalated(from: String(stored.dropFirst("escalated:".count)))
        } else {
            return nil
        }
    }
}

/// One row of the delivery ledger.
public struct LedgerRow: Sendable, Hashable {
    public var eventID: String
    public var channel: String
    public var contactID: String
    public var kind: Message.Kind
    public var state: DeliveryState
    /// When the event was due, seconds since 1970.
    public var fireAt: Int64
    public var attempts: Int
    /// One line, secrets already scrubbed.
    public var lastError: String?
    public var nextAttemptAt: Int64?
    public var sentAt: Int64?
    /// nil for a channel of the event's own route.
    public var via: DeliveryVia?
    /// When the row was first written (its first claim): the first attempt on this
    /// channel. Set by the ledger; what a `save` passes here is ignored.
    public var createdAt: Int64?

    public init(eventID: String, channel: String, contactID: String, kind: Message.Kind = .reminder,
                state: DeliveryState, fireAt: Int64, attempts: Int = 0, lastError: String? = nil,
                nextAttemptAt: Int64? = nil, sentAt: Int64? = nil, via: DeliveryVia? = nil) {
        self.eventID = eventID
        self.channel = channel
        self.contactID = contactID
        self.kind = kind
        self.state = state
        self.fireAt = fireAt
        self.attempts = attempts
        self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt
        self.sentAt = sentAt
        self.via = via
    }

    /// A reminder of any occasion (what can become a problem: `DeliveryProblems`).
    public var isReminder: Bool { kind.isReminder }

    /// Two rows are equal when what was saved is: `createdAt` is the ledger's own
    /// bookkeeping, added when the row is read back.
    public static func == (lhs: LedgerRow, rhs: LedgerRow) -> Bool {
        lhs.eventID == rhs.eventID && lhs.channel == rhs.channel && lhs.contactID == rhs.contactID && lhs.kind == rhs.kind
            && lhs.state == rhs.state && lhs.fireAt == rhs.fireAt && lhs.attempts == rhs.attempts
            && lhs.lastError == rhs.lastError && lhs.nextAttemptAt == rhs.nextAttemptAt && lhs.sentAt == rhs.sentAt
            && lhs.via == rhs.via
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(eventID)
        hasher.combine(channel)
        hasher.combine(state)
        hasher.combine(fireAt)
    }
}

/// Where the dispatcher keeps what it did. Every `save` is its own short
/// transaction, so a crash at any instant loses nothing committed.
public protocol DeliveryLedger: Sendable {
    func row(eventID: String, channel: String) throws -> LedgerRow?
    /// Every channel's row for one event.
    func rows(eventID: String) throws -> [LedgerRow]
    /// Inserts or replaces the row for (eventID, channel).
    func save(_ row: LedgerRow, now: Int64) throws
    /// Saves `rows` in order, all in one transaction: a send's outcome together
    /// with the claim (`sending`) of the next one, so a pass commits once per send.
    func save(_ rows: [LedgerRow], now: Int64) throws
    /// The (event, channel) of every row whose event fired in `(after, upTo]`:
    /// one query instead of a lookup per due event.
    func keys(firedAfter after: Int64, upTo: Int64) throws -> Set<LedgerKey>
    /// Rows that still need work: `pending`, `sending` (a crash) and `retrying`.
    func unfinished() throws -> [LedgerRow]
    /// Rows in a state, newest first (for `outbox`).
    func rows(in states: Set<DeliveryState>) throws -> [LedgerRow]
    /// Every row of a reminder (any occasion) that fired after `after` and whose
    /// event no channel has `sent`: what fallbacks and problems are found in.
    func unsentReminderRows(firedAfter after: Int64) throws -> [LedgerRow]
    /// Of those, the rows of the events that have a row `missed` or `failed`
    /// fired after `after`: where problems are (and few, however long the ledger).
    func endedReminderRows(firedAfter after: Int64) throws -> [LedgerRow]
    /// Every row of `kind` that fired after `after` (notices, digests).
    func rows(kind: Message.Kind, firedAfter after: Int64) throws -> [LedgerRow]
    /// The end of the last dispatch pass (docs/design/reminders.md); nil on a fresh data dir.
    func watermark() throws -> Int64?
    func setWatermark(_ value: Int64) throws
    /// The first watermark this ledger ever had (a fresh data dir's "now − catch_up"):
    /// events that fired before it predate the data dir and are never looked at.
    /// nil until the first pass.
    func epoch() throws -> Int64?
    func setEpoch(_ value: Int64) throws
    /// Deletes rows whose event fired before `cutoff`; returns how many.
    @discardableResult
    func prune(firedBefore cutoff: Int64) throws -> Int
    /// Puts `failed` rows back as `retrying`, due at `now` with their attempts
    /// reset (every failed row, or those of the event ids named); returns how many.
    func retry(eventIDs: [String]?, now: Int64) throws -> Int
    /// Every row about one contact (reminders, asks, wishes), newest first:
    /// by fire time descending, then event id, then channel.
    func history(for contactID: String) throws -> [LedgerRow]
    /// The contacts with a `sent` wish whose `sentAt` is in `[start, end)`.
    func wishedContacts(sentFrom start: Int64, to end: Int64) throws -> Set<String>
    /// Takes the exclusive-delivery lock of this ledger (one dispatcher at a time
    /// delivers from it), waiting up to `wait` seconds; nil when another holder
    /// kept it that long. Released when the returned value is dropped.
    func deliveryLock(wait: Int) throws -> (any DeliveryLock)?
}

/// A held exclusive-delivery lock (`DeliveryLedger.deliveryLock(wait:)`): the
/// holder may deliver; dropping the last reference releases it.
public protocol DeliveryLock: AnyObject, Sendable {}

extension DeliveryLedger {
    /// Deliveries recorded lately, which planning from `now` must leave out:
    /// an event sent before its time moved later is not planned again (docs/design/reminders.md).
    public func recorded(around now: Int64, planner: Planner, contacts: [PlanningContact] = []) throws -> RecordedDeliveries {
        RecordedDeliveries(keys: try keys(firedAfter: now - planner.lookback(for: contacts) - 2 * 86_400, upTo: .max))
    }

    /// `recorded(around:planner:contacts:)` when the contacts are not read yet:
    /// the largest offset they set for themselves is enough.
    public func recorded(around now: Int64, planner: Planner, largestOwnOffset: Int) throws -> RecordedDeliveries {
        RecordedDeliveries(keys: try keys(firedAfter: now - planner.lookback(largestOwnOffset: largestOwnOffset) - 2 * 86_400,
                                          upTo: .max))
    }

    /// Row by row (fine for ledgers where each save is cheap).
    public func save(_ rows: [LedgerRow], now: Int64) throws {
        for row in rows { try save(row, now: now) }
    }
}

extension PlannedEvent {
    /// Splits an event id — `<contact>/<offset>/<YYYY-MM-DD>` (a birthday) or
    /// `<contact>/<kind>/<offset>/<YYYY-MM-DD>` (`anniversary`, `date:Graduation`, …)
    /// — back into its parts (the contact part percent-decoded); nil for other ids
    /// (asks, wishes, notices, digests).
    public static func parse(_ id: String) -> (contactID: String, occasion: Occasion, offset: Int, occurrence: LocalDate)? {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        let occasion: Occasion
        switch parts.count {
        case 3: occasion = .birthday
        case 4:
            guard let kind = Occasion(idSegment: parts[1]) else { return nil }
            occasion = kind
        default: return nil
        }
        guard let offset = Int(parts[parts.count - 2]), let date = LocalDate(iso: parts[parts.count - 1]) else { return nil }
        let contact = parts[0].replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%")
        return (contact, occasion, offset, date)
    }

    /// The id of the reminder "Remind me later" brings back (docs/design/asks-and-wishes.md):
    /// `<event-id>/snooze/1`, and for a snoozed one the next number, so a second
    /// click on the same notification names the same event (and is not sent twice).
    public static func snoozeID(after eventID: String) -> String {
        if let snoozed = snoozed(eventID) { return snoozed.base + "/snooze/\(snoozed.count + 1)" }
        return eventID + "/snooze/1"
    }

    /// A snoozed reminder's id split into the reminder it brings back and its
    /// number (`…/snooze/2` → (…, 2)); nil for every other id.
    public static func snoozed(_ id: String) -> (base: String, count: Int)? {
        guard let marker = id.range(of: "/snooze/", options: .backwards),
              let count = Int(id[marker.upperBound...]), count > 0 else { return nil }
        return (String(id[..<marker.lowerBound]), count)
    }
}

/// What identifies a ledger row: one event on one channel.
public struct LedgerKey: Hashable, Sendable {
    public var eventID: String
    public var channel: String

    public init(eventID: String, channel: String) {
        self.eventID = eventID
        self.channel = channel
    }

    public init(_ row: LedgerRow) {
        self.init(eventID: row.eventID, channel: row.channel)
    }
}
