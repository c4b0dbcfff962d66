import BirthdayBuzz
import BuzzStore
import Foundation

/// `buzz wish CONTACT --at HH:MM` and `--cancel`: a wish that `tick` and `run`
/// send at a time of the contact's birthday (`ScheduledWish`), kept in the
/// ledger as a `pending` row of `<contact-id>/wish/<occurrence>` with its fire time.
extension WishFlow {
    /// The contact's scheduled wish, if one waits (pending, or being retried).
    func scheduled(_ contact: Contact) throws -> LedgerRow? {
        try runtime { try ask.context.ledger(ask.store).history(for: contact.id) }
            .filter { $0.kind == .wish && [.pending, .retrying, .sending].contains($0.state) }
            .min { $0.fireAt < $1.fireAt }
    }

    /// "on 2027-03-15 at 09:00 Asia/Tokyo (2027-03-15T01:00:00+01:00 your time) by sms"
    static func when(_ row: LedgerRow, contact: Contact, ours: WallClock) -> String {
        let theirs = ScheduledWish.clock(for: contact.card.timeZone, ours: ours)
        let zone = contact.card.timeZone.map { " " + $0.description } ?? ""
        let local = zone.isEmpty || theirs.offset(at: row.fireAt) == ours.offset(at: row.fireAt)
            ? "" : " (\(ours.iso8601(row.fireAt)) your time)"
        return "on \(theirs.localDate(at: row.fireAt)) at \(TheirDay.clockText(row.fireAt, theirs))\(zone)\(local) via \(row.channel)"
    }

    /// Schedules the wish for `secondsAfterMidnight` on the contact's next birthday
    /// (their clock), replacing one already scheduled. Only a route that sends by
    /// itself can wait for its time: share and compose need the user, and are refused.
    func schedule(_ contact: Contact, at secondsAfterMidnight: Int) throws {
        let context = ask.context
        if contact.isDeceased { throw CLIError.request("\(contact.name): in memory (deceased); no wish is scheduled") }
        guard let birthday = contact.birthday else {
            throw CLIError.request("\(contact.name) has no birthday on file: nothing to schedule a wish for (ask for it: buzz ask)")
        }
        let route = try ask.chooseRoute(for: contact, doing: "wish", offerRoutes: offerRoutes)
        guard let channel = route.channel, route.kind != .share else {
            throw CLIError.request("\(contact.name): a wish by \(AskFlow.how(route)) needs you to send it, so it cannot be "
                                   + "scheduled; schedule one by sms or email through a channel (ask.sms, ask.email), "
                                   + "or send it now without --at")
        }
        let clock = ScheduledWish.clock(for: contact.card.timeZone, ours: context.clock)
        let (occurrence, fireAt) = ScheduledWish.schedule(birthday, secondsAfterMidnight: secondsAfterMidnight, clock: clock,
                                                          now: context.now, feb29: context.config.reminders.feb29)
        let eventID = Self.eventID(contactID: contact.id, occurrence: occurrence.date)
        let history = try runtime { try context.ledger(ask.store).history(for: contact.id) }
        if let sent = history.first(where: { $0.eventID == eventID && $0.state == .sent }) {
            throw CLIError.request("\(contact.name) was already wished by \(sent.channel) for the birthday of \(occurrence.date)")
        }
        var row = LedgerRow(eventID: eventID, channel: channel, contactID: contact.id, kind: .wish, state: .pending,
                            fireAt: fireAt)
        if ask.dryRun {
            print("\(contact.name): would schedule a wish \(Self.when(row, contact: contact, ours: context.clock))"
                  + (route.address.map { " to \($0)" } ?? ""))
            return
        }
        let ledger = context.ledger(ask.store)
        // One scheduled wish per contact: an earlier one (another time, route or birthday) gives way.
        var writes = history.filter { $0.kind == .wish && [.pending, .retrying].contains($0.state)
            && LedgerKey($0) != LedgerKey(row) }.map { old -> LedgerRow in
            var replaced = old
            replaced.state = .skipped
            replaced.nextAttemptAt = nil
            replaced.lastError = "replaced by a wish scheduled by hand"
            return replaced
        }
        row.attempts = 0
        writes.append(row)
        try runtime { try ledger.save(writes, now: context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)  // a daemon re-plans its wake-up
        say("\(contact.name): wish scheduled \(Self.when(row, contact: contact, ours: context.clock))")
    }

    /// Removes the contact's scheduled wish (its row is closed `skipped`, so
    /// `show` keeps the history); says so when there was none.
    func cancel(_ contact: Contact, reason: String = "cancelled by hand (buzz wish --cancel)", quiet: Bool = false) throws {
        let context = ask.context
        let waiting = try runtime { try context.ledger(ask.store).history(for: contact.id) }
            .filter { $0.kind == .wish && [.pending, .retrying].contains($0.state) }
        guard !waiting.isEmpty else {
            if !quiet { say("\(contact.name): no wish is scheduled") }
            return
        }
        if ask.dryRun {
            for row in waiting { print("\(contact.name): would cancel the wish \(Self.when(row, contact: contact, ours: context.clock))") }
            return
        }
        let closed = waiting.map { row -> LedgerRow in
            var done = row
            done.state = .skipped
            done.nextAttemptAt = nil
            done.lastError = reason
            return done
        }
        try runtime { try context.ledger(ask.store).save(closed, now: context.now) }
        if !quiet {
            for row in waiting { say("\(contact.name): cancelled the wish \(Self.when(row, contact: contact, ours: context.clock))") }
        }
    }

    private func say(_ line: String) { ask.say(line) }
}

extension UpcomingRow {
    /// A scheduled wish: `"occasion": "wish"`, the contact's birthday as `occurrence`,
    /// offset 0, and the one channel that sends it.
    init(wish row: LedgerRow, name: String, clock: WallClock) {
        id = row.eventID
        contactID = row.contactID
        self.name = name
        occasion = "wish"
        occurrence = ScheduledWish.parse(row.eventID)?.occurrence.description ?? clock.localDate(at: row.fireAt).description
        offsetDays = 0
        fireAt = clock.iso8601(row.fireAt)
        channels = [row.channel]
    }

    /// The `upcoming` line of a scheduled wish.
    static func wishLine(_ row: LedgerRow, name: String, clock: WallClock) -> String {
        let occurrence = ScheduledWish.parse(row.eventID)?.occurrence.description ?? "?"
        return "\(clock.iso8601(row.fireAt))  \(name) — wish (\(occurrence)) → \(row.channel)"
    }

    /// Scheduled wishes that fire after `now` (up to `until`), by fire time; not
    /// those of a contact gone or deceased (the next pass closes them unsent).
    static func scheduledWishes(ledger: any DeliveryLedger, store: BuzzDatabase, now: Int64, until: Int64?) throws -> [LedgerRow] {
        try ledger.rows(kind: .wish, firedAfter: now)
            .filter { [.pending, .retrying].contains($0.state) && $0.fireAt <= (until ?? .max) }
            .filter { row in try store.contact(id: row.contactID).map { !$0.isDeceased } ?? false }
            .sorted { ($0.fireAt, $0.eventID) < ($1.fireAt, $1.eventID) }
    }
}
