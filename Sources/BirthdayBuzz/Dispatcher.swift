/// What one dispatch pass did (`tick --json`).
public struct DispatchReport: Sendable {
    public struct Delivery: Sendable, Hashable {
        public var id: String
        public var channel: String
        public var status: DeliveryState
        public var error: String?
        /// In a dry run, what would be sent: set for each delivery the pass would make.
        public var preview: Preview?
    }

    /// What a dry run shows of a message it would send: whom it is about, the
    /// occasion and its date, and the title as rendered — never only an id.
    public struct Preview: Sendable, Hashable {
        public var name: String
        public var occasion: Occasion
        public var date: LocalDate
        public var title: String
    }

    /// Deliveries attempted in this pass.
    public var due = 0
    public var sent = 0
    public var failed = 0
    /// Waiting for a later attempt (this pass's temporary failures and earlier ones not yet due).
    public var retrying = 0
    public var missed = 0
    public var skipped = 0
    public var deliveries: [Delivery] = []

    public init() {}

    /// 0 when everything due went out; 1 when something failed or waits for a retry.
    public var exitStatus: Int32 { failed > 0 || retrying > 0 ? 1 : 0 }
}

/// Renders the message for a reminder event (templates live with the caller).
public protocol ReminderRendering: Sendable {
    func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int) -> Message
}

/// Retry timing: exponential backoff with jitter, capped, never before a server's Retry-After.
public struct Backoff: Sendable {
    public var base: Int = 30
    public var cap: Int
    public var maxAttempts: Int

    public init(cap: Int, maxAttempts: Int, base: Int = 30) {
        self.cap = cap
        self.maxAttempts = maxAttempts
        self.base = base
    }

    /// Seconds to wait after the `attempt`-th failed attempt (1-based). `jitter` is in 0..<1.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?, jitter: Double) -> Int {
        let exponent = min(max(attempt - 1, 0), 30)
        let raw = min(Double(base) * Double(1 << exponent), Double(cap))
        // ±20 % so that many failed reminders do not come back in one burst.
        var delay = Int((raw * (0.8 + 0.4 * jitter)).rounded())
        delay = min(delay, cap)
        if let retryAfter { delay = max(delay, Int(retryAfter.rounded(.up))) }  // the server's word wins over the cap
        return max(delay, 1)
    }
}

/// Turns due events into deliveries that happen once (DESIGN §2, §7): the
/// ledger is written before and after every send, catch-up is bounded by the
/// watermark, temporary failures back off, late ones become `missed`.
///
/// Channels are handed in (built lazily by the caller); nothing here reads a clock.
public final class Dispatcher: Sendable {
    public let planner: Planner
    public let ledger: any DeliveryLedger
    public let catchUp: Int
    public let backoff: Backoff
    private let channel: @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>
    private let renderer: any ReminderRendering
    private let jitter: @Sendable () -> Double
    /// Removes secrets from a channel's error text: (text, channel name).
    private let scrub: @Sendable (String, String) -> String

    /// Ledger rows are kept this long (a year of history is enough for idempotency).
    public static let retention: Int64 = 400 * 86_400

    public init(config: BuzzConfig, planner: Planner, ledger: any DeliveryLedger, renderer: any ReminderRendering,
                channel: @escaping @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>,
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                scrub: @escaping @Sendable (String, String) -> String = { text, _ in text }) {
        self.planner = planner
        self.ledger = ledger
        catchUp = config.reminders.catchUp
        backoff = Backoff(cap: config.delivery.maxBackoff, maxAttempts: config.delivery.maxAttempts)
        self.channel = channel
        self.renderer = renderer
        self.jitter = jitter
        self.scrub = scrub
    }

    /// One piece of work: an event for one channel.
    private struct Work {
        var row: LedgerRow
        var event: PlannedEvent
        var contact: PlanningContact
    }

    /// The end of the event's occurrence day, local time: a reminder not out by then is `missed`.
    private func dayEnd(_ occurrence: LocalDate) -> Int64 {
        planner.clock.instant(of: occurrence.adding(days: 1), secondsAfterMidnight: 0)
    }

    /// Delivers everything due at `now`, resumes crashed and due retries, and
    /// moves the watermark to `now`. With `dryRun`, writes and sends nothing.
    ///
    /// `shouldStop` is asked before each send (the daemon's SIGTERM): the send in
    /// flight finishes, the rest is recorded `pending` for the next pass, so
    /// moving the watermark loses nothing.
    ///
    /// Three steps: `resume` the ledger's unfinished rows, `plan` the events
    /// that became due, then `deliver` them (or, dry, only report them).
    public func pass(contacts: [PlanningContact], now: Int64, dryRun: Bool = false,
                     shouldStop: @Sendable () -> Bool = { false }) async throws -> DispatchReport {
        var byID: [String: PlanningContact] = [:]
        byID.reserveCapacity(contacts.count)
        for contact in contacts { byID[contact.id] = contact }

        let storedWatermark = try ledger.watermark()
        let watermark = storedWatermark ?? (now - Int64(catchUp))
        // Events before the epoch predate this data dir (a first run sends no backlog);
        // a ledger from before epochs existed starts its epoch at its watermark.
        let storedEpoch = try ledger.epoch()
        let epoch = storedEpoch ?? watermark
        if !dryRun, storedEpoch == nil { try ledger.setEpoch(epoch) }

        var pass = Pass(now: now, dryRun: dryRun)
        try resume(&pass, contacts: byID)
        try plan(&pass, contacts: contacts, watermark: watermark, epoch: epoch)
        pass.report.due = pass.work.count
        if dryRun {
            // Rendered as a send would render it, so the preview is the message's own title.
            let today = planner.clock.localDate(at: now)
            for item in pass.work {
                let message = renderer.reminder(for: item.event, contact: item.contact,
                                                daysUntil: max(0, today.days(until: item.event.occurrence)))
                let preview = DispatchReport.Preview(name: item.contact.name, occasion: item.event.occasion,
                                                     date: item.event.occurrence, title: message.title)
                pass.report.deliveries.append(.init(id: item.row.eventID, channel: item.row.channel, status: .pending, error: nil,
                                                    preview: preview))
            }
        } else {
            try await deliver(&pass, shouldStop: shouldStop)
            try ledger.setWatermark(max(now, watermark))
            try ledger.prune(firedBefore: now - Dispatcher.retention)
        }
        return pass.report
    }

    /// What one pass carries from step to step.
    private struct Pass {
        let now: Int64
        let dryRun: Bool
        var report = DispatchReport()
        var work: [Work] = []
        /// Rows already in `work`, so planning does not add them twice.
        var queued: Set<LedgerKey> = []

        init(now: Int64, dryRun: Bool) {
            self.now = now
            self.dryRun = dryRun
        }
    }

    /// Writes a row that is settled without a send (skipped, missed), and reports it.
    private func record(_ row: LedgerRow, _ pass: inout Pass) throws {
        if !pass.dryRun { try ledger.save(row, now: pass.now) }
        pass.report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: row.state, error: row.lastError))
    }

    /// Rows left unfinished: a crash mid-send, due retries, pending rows.
    /// Asks share the ledger but are the ask flow's to resume. A snoozed
    /// reminder (`…/snooze/<n>`, DESIGN §6a) waits `pending` for its time.
    private func resume(_ pass: inout Pass, contacts byID: [String: PlanningContact]) throws {
        let now = pass.now
        for row in try ledger.unfinished() where row.isReminder {
            let snoozed = PlannedEvent.snoozed(row.eventID)
            guard let parts = PlannedEvent.parse(snoozed?.base ?? row.eventID), let contact = byID[parts.contactID],
                  var event = event(for: parts, contact: contact, fireAt: row.fireAt) else {
                // The contact is gone or no longer included: nothing to send.
                var done = row
                done.state = .skipped
                try record(done, &pass)
                pass.report.skipped += 1
                continue
            }
            if now >= dayEnd(event.occurrence) {
                var done = row
                done.state = .missed
                done.lastError = row.lastError ?? "its day ended before it could be delivered"
                try record(done, &pass)
                pass.report.missed += 1
                continue
            }
            if snoozed != nil {
                event.id = row.eventID
                if row.state == .pending, let time = row.nextAttemptAt, time > now { continue }  // not yet
            }
            if row.state == .retrying, let next = row.nextAttemptAt, next > now {
                pass.report.retrying += 1
                continue
            }
            pass.queued.insert(LedgerKey(row))
            pass.work.append(Work(row: row, event: event, contact: contact))
        }
    }

    /// New events: every one whose fire time passed since the last pass
    /// (watermark, now], and every one that moved behind the watermark without
    /// ever having been looked at (a changed time, time zone, offset or group,
    /// a clock stepped back, a contact imported late), as far back as the
    /// planner's look-back (DESIGN §2, catch-up). The ledger tells them apart
    /// from events already handled: each of those has a row, whatever its time.
    private func plan(_ pass: inout Pass, contacts: [PlanningContact], watermark: Int64, epoch: Int64) throws {
        let now = pass.now
        let windowStart = max(epoch, min(watermark, now - planner.lookback(for: contacts)))
        let due = planner.due(contacts, after: windowStart, upTo: now)
        // Widened by two days: a changed `reminders.time` or time zone moves an
        // event's fire time but not its id, and it must still count as recorded.
        let recorded = due.isEmpty ? [] : try ledger.keys(firedAfter: windowStart - 2 * 86_400, upTo: max(now, watermark) + 2 * 86_400)
        for (event, contact) in due {
            for name in event.channels {
                let key = LedgerKey(eventID: event.id, channel: name)
                if pass.queued.contains(key) || recorded.contains(key) { continue }
                var row = LedgerRow(eventID: event.id, channel: name, contactID: contact.id, kind: event.occasion == .birthday ? .reminder : .anniversary,
                                    state: .pending, fireAt: event.fireAt)
                if let included = contact.includedAt, included > event.fireAt {
                    row.state = .skipped
                    row.lastError = "included after the reminder's time"
                    try record(row, &pass)
                    pass.report.skipped += 1
                } else if now - event.fireAt >= Int64(catchUp) || now >= dayEnd(event.occurrence) {
                    row.state = .missed
                    row.lastError = event.fireAt > watermark
                        ? "due while BirthdayBuzz was not running"
                        : "its time had passed when it was planned (changed settings, contacts or clock)"
                    try record(row, &pass)
                    pass.report.missed += 1
                } else {
                    pass.work.append(Work(row: row, event: event, contact: contact))
                }
            }
        }
    }

    /// Sends the pass's work in order. A send's outcome is committed together
    /// with the next row's claim (`sending`), before that send: one commit per
    /// send, and still at most one row whose outcome is unrecorded (the one in
    /// flight).
    private func deliver(_ pass: inout Pass, shouldStop: @Sendable () -> Bool) async throws {
        let now = pass.now
        let today = planner.clock.localDate(at: now)
        var writes: [LedgerRow] = []
        writes.reserveCapacity(2)
        // Channels that said "not now" in this pass: their other messages wait
        // for the same retry time, untried (no attempt counted).
        var held: [String: (until: Int64?, reason: String)] = [:]
        for (index, item) in pass.work.enumerated() {
            if shouldStop() {
                writes.append(contentsOf: pass.work[index...].map(\.row))  // state `pending`: resumed next time
                pass.report.due = index
                break
            }
            if let hold = held[item.row.channel] {
                var row = item.row
                row.state = .retrying
                row.nextAttemptAt = hold.until
                row.lastError = hold.reason
                writes.append(row)  // committed with the next claim, or at the end
                pass.report.retrying += 1
                pass.report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: row.state, error: row.lastError))
                continue
            }
            var row = item.row
            row.state = .sending
            row.attempts += 1
            writes.append(row)
            try ledger.save(writes, now: now)  // before the send: a crash now means "resend with the same id"
            writes.removeAll(keepingCapacity: true)
            let (outcome, holdChannel) = await deliver(item, claimed: row, today: today, now: now, report: &pass.report)
            writes.append(outcome)
            if holdChannel {
                held[outcome.channel] = (outcome.nextAttemptAt, "not tried: the channel was not taking messages ("
                                         + (outcome.lastError ?? "temporary failure") + ")")
            }
        }
        try ledger.save(writes, now: now)
    }

    private func event(for parts: (contactID: String, occasion: Occasion, offset: Int, occurrence: LocalDate),
                       contact: PlanningContact, fireAt: Int64) -> PlannedEvent? {
        guard contact.isIncluded, let date = contact.date(of: parts.occasion) else { return nil }
        if parts.occasion == .anniversary, !planner.remindsAnniversaries { return nil }
        let route = planner.route(for: contact, occasion: parts.occasion)
        return PlannedEvent(id: PlannedEvent.id(contactID: contact.id, occasion: parts.occasion, offset: parts.offset,
                                                occurrence: parts.occurrence),
                            contactID: contact.id, name: contact.name, occurrence: parts.occurrence,
                            offsetDays: parts.offset, fireAt: fireAt,
                            age: date.year.map { parts.occurrence.year - $0 }, channels: route.channels,
                            occasion: parts.occasion)
    }

    /// Sends one claimed row; returns the row with its outcome, for the caller to
    /// commit, and whether the channel as a whole should wait (it will be retried).
    private func deliver(_ item: Work, claimed: LedgerRow, today: LocalDate, now: Int64,
                         report: inout DispatchReport) async -> (LedgerRow, holdChannel: Bool) {
        var row = claimed
        let message = renderer.reminder(for: item.event, contact: item.contact,
                                        daysUntil: max(0, today.days(until: item.event.occurrence)))
        var failure: DeliveryError?
        switch await channel(row.channel) {
        case .failure(let error):
            failure = error
        case .success(let adapter):
            do {
                try await adapter.deliver(message)
            } catch let error as DeliveryError {
                failure = error
            } catch {
                failure = .temporary("\(row.channel): \(error)")
            }
        }
        if let failure {
            row.lastError = scrub(failure.message, row.channel)
            if failure.isTemporary, row.attempts < backoff.maxAttempts {
                let wait = backoff.delay(afterAttempt: row.attempts, retryAfter: failure.retryAfter, jitter: jitter())
                row.state = .retrying
                row.nextAttemptAt = now + Int64(wait)
                report.retrying += 1
            } else {
                row.state = .failed
                row.nextAttemptAt = nil
                if failure.isTemporary { row.lastError = (row.lastError ?? "") + " (gave up after \(row.attempts) attempts)" }
                report.failed += 1
            }
        } else {
            row.state = .sent
            row.sentAt = now
            row.lastError = nil
            row.nextAttemptAt = nil
            report.sent += 1
        }
        report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: row.state, error: row.lastError))
        return (row, failure?.channelUnavailable == true && row.state == .retrying)
    }

    /// When `run` should wake next after `now`: the next fire time or the next retry.
    public func nextWake(contacts: [PlanningContact], now: Int64) throws -> Int64? {
        let nextFire = planner.upcoming(contacts, now: now, limit: 1,
                                        recorded: try ledger.recorded(around: now, planner: planner, contacts: contacts)).first?.fireAt
        let nextRetry = try ledger.unfinished().filter(\.isReminder).compactMap { row -> Int64? in
            // Retries, and snoozed reminders (`pending` until their time), at their time; the rest at once.
            row.state == .retrying || row.state == .pending ? max(row.nextAttemptAt ?? now, now + 1) : now + 1
        }.min()
        switch (nextFire, nextRetry) {
        case let (fire?, retry?): return min(fire, retry)
        case let (fire?, nil): return fire
        case let (nil, retry?): return retry
        default: return nil
        }
    }
}
