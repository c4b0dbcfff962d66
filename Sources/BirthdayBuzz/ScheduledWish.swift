import Foundation

/// A birthday wish to a contact set to go at a time of their birthday
/// (`buzz wish CONTACT --at HH:MM`): a ledger event `<contact-id>/wish/<occurrence>`
/// whose row waits `pending` with the fire time, on the channel of the route
/// that sends it (sms or email; never a route that needs the user).
///
/// Times are the contact's: the occurrence is their date, the time their wall
/// clock, and their day's end (after which an unsent wish is `missed`) is
/// midnight in their zone; without a known zone, the user's.
public enum ScheduledWish {
    /// The clock a contact's day is kept on: their zone when known, else ours.
    public static func clock(for zone: ContactTimeZone?, ours: WallClock) -> WallClock {
        zone.map { WallClock(timeZone: $0.timeZone) } ?? ours
    }

    /// The birthday a wish at `secondsAfterMidnight` (on `clock`) goes out on: today's
    /// when it is today there and that time has not passed, else the next one.
    public static func schedule(_ birthday: Birthday, secondsAfterMidnight: Int, clock: WallClock, now: Int64,
                                feb29: Feb29Policy) -> (occurrence: Occurrence, fireAt: Int64) {
        let today = clock.localDate(at: now)
        var occurrence = birthday.nextOccurrence(onOrAfter: today, feb29: feb29)
        var fireAt = clock.instant(of: occurrence.date, secondsAfterMidnight: secondsAfterMidnight)
        if fireAt <= now {
            occurrence = birthday.nextOccurrence(onOrAfter: today.adding(days: 1), feb29: feb29)
            fireAt = clock.instant(of: occurrence.date, secondsAfterMidnight: secondsAfterMidnight)
        }
        return (occurrence, fireAt)
    }

    /// The end of the occurrence day on the contact's clock.
    public static func dayEnd(_ occurrence: LocalDate, clock: WallClock) -> Int64 {
        clock.instant(of: occurrence.adding(days: 1), secondsAfterMidnight: 0)
    }

    /// `<contact-id>/wish/<YYYY-MM-DD>` split into the contact id (percent-decoded)
    /// and the occurrence; nil for other ids.
    public static func parse(_ id: String) -> (contactID: String, occurrence: LocalDate)? {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1] == "wish", let date = LocalDate(iso: String(parts[2])) else { return nil }
        let contact = parts[0].replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%")
        return (contact, date)
    }

    /// `HH:MM` as seconds after midnight; nil when it is not a time of day.
    public static func timeOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let hours = Int(parts[0]), let minutes = Int(parts[1]), (0..<24).contains(hours), (0..<60).contains(minutes)
        else { return nil }
        return hours * 3_600 + minutes * 60
    }

    /// The route a scheduled row is sent by, as the contact's card and the config
    /// are now: the first of the contact's routes whose channel is the row's (the
    /// address is the one the route picks today: a changed number is followed).
    public static func route(for card: ContactCard, channel: String, config: BuzzConfig) -> AskPlan.Route? {
        AskPlan(card: card, config: config).routes.first { $0.channel == channel && $0.kind != .share }
    }
}

/// Delivers scheduled wishes with the reminders' rules: a row is claimed
/// (`sending`) before its send and settled after; one whose time passed while
/// nothing ran is sent when less than `reminders.catch_up` late, else recorded
/// `missed`; a temporary failure is retried with the same backoff until the end
/// of the contact's day, then `missed`. Runs after the reminder pass (`tick`,
/// `run`), under the same dispatch lock, adding to the same report. Reads no clock.
public final class ScheduledWishDispatcher: Sendable {
    public let ledger: any DeliveryLedger
    public let catchUp: Int
    private let config: BuzzConfig
    private let ours: WallClock
    private let templates: MessageTemplates
    private let contact: @Sendable (String) throws -> Contact?
    private let sender: ChannelSender

    /// - Parameter contact: the contact with an id as the store has it now (nil when gone).
    public init(config: BuzzConfig, ledger: any DeliveryLedger, templates: MessageTemplates,
                contact: @escaping @Sendable (String) throws -> Contact?,
                channel: @escaping @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>,
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                scrub: @escaping @Sendable (String, String) -> String = { text, _ in text }) {
        self.ledger = ledger
        self.config = config
        catchUp = config.reminders.catchUp
        ours = WallClock(timeZone: config.general.timeZone)
        self.templates = templates
        self.contact = contact
        sender = ChannelSender(backoff: Backoff(cap: config.delivery.maxBackoff, maxAttempts: config.delivery.maxAttempts),
                               channel: channel, jitter: jitter, scrub: scrub)
    }

    /// The message a scheduled wish sends, through `route`.
    public func message(eventID: String, contact: Contact, occurrence: LocalDate, route: AskPlan.Route) -> Message? {
        guard let address = route.address else { return nil }
        let age = contact.birthday.flatMap { $0.nextOccurrence(onOrAfter: occurrence, feb29: config.reminders.feb29).age }
        let text = templates.renderWish(firstName: contact.card.firstName, name: contact.name, age: age,
                                        senderName: config.ask.senderName,
                                        locales: [contact.card.language, config.general.locale].compactMap { $0 })
        return Message(kind: .wish, id: eventID, title: text.title, body: text.body,
                       contact: .init(id: contact.id, name: contact.name), occurrence: occurrence, locale: text.locale,
                       recipient: route.kind == .sms ? .phone(address) : .email(address))
    }

    /// Sends every scheduled wish whose time has come (and due retries); records
    /// `missed` the ones too late and `skipped` the ones whose contact is gone or
    /// has died. With `dryRun`, writes and sends nothing. `unfinished` as the
    /// reminder pass read it; nil reads it here.
    public func pass(now: Int64, dryRun: Bool = false, unfinished: [LedgerRow]? = nil,
                     shouldStop: @Sendable () -> Bool = { false }) async throws -> DispatchReport {
        var report = DispatchReport()
        func record(_ row: LedgerRow, _ state: DeliveryState, _ why: String) throws {
            var done = row
            done.state = state
            done.nextAttemptAt = nil
            done.lastError = why
            if !dryRun { try ledger.save(done, now: now) }
            report.deliveries.append(.init(id: done.eventID, channel: done.channel, status: state, error: why))
            if state == .missed { report.missed += 1 } else { report.skipped += 1 }
        }
        for row in try unfinished ?? ledger.unfinished() where row.kind == .wish {
            guard let parts = ScheduledWish.parse(row.eventID) else { continue }
            guard let found = try contact(parts.contactID) else {
                try record(row, .skipped, "the contact is gone")
                continue
            }
            if found.isDeceased {
                try record(row, .skipped, "in memory (deceased): the scheduled wish is cancelled")
                continue
            }
            let clock = ScheduledWish.clock(for: found.card.timeZone, ours: ours)
            if now >= ScheduledWish.dayEnd(parts.occurrence, clock: clock) {
                try record(row, .missed, row.lastError ?? "its day ended before it could be sent")
                continue
            }
            switch row.state {
            case .pending where row.fireAt > now:
                continue  // not yet
            case .pending where now - row.fireAt >= Int64(catchUp):
                try record(row, .missed, "due while BirthdayBuzz was not running")
                continue
            case .retrying where (row.nextAttemptAt ?? now) > now:
                report.retrying += 1
                continue
            default:
                break
            }
            report.due += 1
            guard let route = ScheduledWish.route(for: found.card, channel: row.channel, config: config),
                  let message = message(eventID: row.eventID, contact: found, occurrence: parts.occurrence, route: route) else {
                var failed = row
                failed.state = .failed
                failed.lastError = "\(row.channel): \(found.name) can no longer be reached this way"
                if !dryRun { try ledger.save(failed, now: now) }
                report.failed += 1
                report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: .failed, error: failed.lastError))
                continue
            }
            if dryRun {
                report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: .pending, error: nil,
                                               preview: .init(name: found.name, occasion: "wish", date: parts.occurrence,
                                                              title: message.title)))
                continue
            }
            if shouldStop() { break }  // still `pending`/`retrying`: the next pass takes it
            var claimed = row
            claimed.state = .sending
            claimed.attempts += 1
            try ledger.save(claimed, now: now)  // before the send: a crash now means "resend with the same id"
            let (outcome, _) = await sender.attempt(message, claimed: claimed, now: now, report: &report)
            try ledger.save(outcome, now: now)
        }
        return report
    }

    /// When `run` should wake for scheduled wishes: the next fire time, a retry,
    /// or the end of a waiting wish's day (when it becomes `missed`).
    public func nextWake(now: Int64, unfinished: [LedgerRow]? = nil) throws -> Int64? {
        var wakes: [Int64] = []
        for row in try unfinished ?? ledger.unfinished() where row.kind == .wish {
            switch row.state {
            case .pending: wakes.append(max(row.fireAt, now + 1))
            case .retrying: wakes.append(max(row.nextAttemptAt ?? now + 1, now + 1))
            default: wakes.append(now + 1)
            }
            if let parts = ScheduledWish.parse(row.eventID), let found = try contact(parts.contactID) {
                let clock = ScheduledWish.clock(for: found.card.timeZone, ours: ours)
                wakes.append(max(ScheduledWish.dayEnd(parts.occurrence, clock: clock), now + 1))
            }
        }
        return wakes.min()
    }
}
