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
        /// The contact's name; a notice's names; a digest's name.
        public var name: String
        /// `birthday`, `anniversary`, or `notice`, `digest` for those messages.
        public var occasion: String
        public var date: LocalDate
        public var title: String

        public init(name: String, occasion: String, date: LocalDate, title: String) {
            self.name = name
            self.occasion = occasion
            self.date = date
            self.title = title
        }
    }

    /// Deliveries attempted in this pass.
    public var due = 0
    public var sent = 0
    public var failed = 0
    /// Waiting for a later attempt (this pass's temporary failures and earlier ones not yet due).
    public var retrying = 0
    public var missed = 0
    public var skipped = 0
    /// Reminders no channel delivered that this pass announced, or tried to, in a notice.
    public var problems = 0
    /// Of those, and of earlier ones, the problems whose notice no channel has taken yet.
    public var noticesPending = 0
    public var deliveries: [Delivery] = []

    public init() {}

    /// 0 when everything due went out; 1 when something failed, waits for a retry,
    /// or a reminder reached nobody (a problem).
    public var exitStatus: Int32 { failed > 0 || retrying > 0 || problems > 0 ? 1 : 0 }
}

/// Why a reminder comes through a channel that is not its route's, for its text:
/// the channels that did not deliver it and what went wrong there.
public struct RoutingNote: Sendable, Hashable {
    public var fallbackFor: [String]
    public var problem: String

    public init(fallbackFor: [String], problem: String) {
        self.fallbackFor = fallbackFor
        self.problem = problem
    }
}

/// A reminder that reached nobody, as a notice and a digest tell it: whom,
/// which occasion and day, why, and what to do now.
public struct NoticeEntry: Sendable, Hashable {
    public var eventID: String
    public var name: String
    public var occasion: Occasion
    public var date: LocalDate
    public var reason: String
    /// A command that helps now (`buzz wish 'Dana Scully'`).
    public var hint: String

    public init(eventID: String, name: String, occasion: Occasion, date: LocalDate, reason: String, hint: String) {
        self.eventID = eventID
        self.name = name
        self.occasion = occasion
        self.date = date
        self.reason = reason
        self.hint = hint
    }

    /// `problem` told on `today`: a birthday that has come (today, or up to a
    /// week ago) can still get a wish (`buzz wish NAME`); for one still ahead (a
    /// reminder days before it was missed) or another occasion, `buzz show NAME`.
    public init(_ problem: DeliveryProblem, name: String, today: LocalDate) {
        let wish = problem.occasion == .birthday && problem.occurrence <= today && problem.occurrence.days(until: today) <= 7
        self.init(eventID: problem.eventID, name: name, occasion: problem.occasion, date: problem.occurrence,
                  reason: problem.reason, hint: (wish ? "buzz wish " : "buzz show ") + Self.shellQuoted(name))
    }

    /// A name as one shell word: unchanged when plain, else in single quotes.
    public static func shellQuoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || scalar.properties.numericType != nil || "-_.,@+".unicodeScalars.contains(scalar)
        }
        var quoted = "'"
        for character in text { quoted += character == "'" ? "'\\''" : String(character) }
        return plain ? text : quoted + "'"
    }
}

/// Renders the messages a dispatch pass sends (templates live with the caller).
public protocol ReminderRendering: Sendable {
    /// A reminder; with `routing`, one that comes by a fallback or an escalation.
    func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int, routing: RoutingNote?) -> Message
    /// A notice listing reminders that reached nobody; its id is the caller's to set.
    func notice(_ entries: [NoticeEntry], today: LocalDate) -> Message
}

extension ReminderRendering {
    public func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int) -> Message {
        reminder(for: event, contact: contact, daysUntil: daysUntil, routing: nil)
    }
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

/// Turns due events into deliveries that happen once (docs/design/reminders.md): the
/// ledger is written before and after every send, catch-up is bounded by the
/// watermark, temporary failures back off, late ones become `missed`.
///
/// Channels are handed in (built lazily by the caller); nothing here reads a clock.
public final class Dispatcher: Sendable {
    public let planner: Planner
    public let ledger: any DeliveryLedger
    public let catchUp: Int
    public let backoff: Backoff
    private let renderer: any ReminderRendering
    private let sender: ChannelSender

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
        self.renderer = renderer
        sender = ChannelSender(backoff: backoff, channel: channel, jitter: jitter, scrub: scrub)
    }

    /// One piece of work: an event for one channel.
    private struct Work {
        var row: LedgerRow
        var event: PlannedEvent
        var contact: PlanningContact
        /// Set for a fallback or an escalation.
        var routing: RoutingNote?
    }

    /// How far back fallbacks and notices look: a notice no channel takes is tried for 30 days.
    public static let noticeWindow: Int64 = 30 * 86_400

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
    /// `unfinished`: the ledger's unfinished rows when the caller has read them
    /// already (the digests' pass uses the same read); nil reads them here.
    public func pass(contacts: [PlanningContact], now: Int64, dryRun: Bool = false, unfinished: [LedgerRow]? = nil,
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
        try resume(&pass, contacts: byID, unfinished: unfinished ?? ledger.unfinished())
        try plan(&pass, contacts: contacts, watermark: watermark, epoch: epoch)
        pass.report.due = pass.work.count
        if dryRun {
            preview(pass.work, &pass)
        } else {
            try await deliver(pass.work, &pass, shouldStop: shouldStop)
        }
        // Then what the route did not deliver: fallbacks whose time has come, and
        // one notice of the reminders that reached nobody.
        // A fallback refused for good makes the next one due at once: rounds
        // until none is (at most one per fallback channel).
        for _ in 0..<(dryRun ? 1 : planner.longestFallbackChain) {
            let fallbacks = try dueFallbacks(contacts: byID, now: now).due
            guard !fallbacks.isEmpty, !shouldStop() else { break }
            pass.report.due += fallbacks.count
            if dryRun {
                preview(fallbacks, &pass)
            } else {
                try await deliver(fallbacks, &pass, shouldStop: shouldStop)
            }
        }
        if !shouldStop() { try await announceProblems(&pass, contacts: byID) }
        if !dryRun {
            try ledger.setWatermark(max(now, watermark))
            try ledger.prune(firedBefore: now - Dispatcher.retention)
        }
        return pass.report
    }

    /// A dry run's report of `work`: rendered as a send would render it, so the
    /// preview is the message's own title.
    private func preview(_ work: [Work], _ pass: inout Pass) {
        let today = planner.clock.localDate(at: pass.now)
        for item in work {
            let message = renderer.reminder(for: item.event, contact: item.contact,
                                            daysUntil: max(0, today.days(until: item.event.occurrence)), routing: item.routing)
            let preview = DispatchReport.Preview(name: item.contact.name, occasion: item.event.occasion.rawValue,
                                                 date: item.event.occurrence, title: message.title)
            pass.report.deliveries.append(.init(id: item.row.eventID, channel: item.row.channel, status: .pending, error: nil,
                                                preview: preview))
        }
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
    /// reminder (`…/snooze/<n>`, docs/design/asks-and-wishes.md) waits `pending` for its time.
    private func resume(_ pass: inout Pass, contacts byID: [String: PlanningContact], unfinished: [LedgerRow]) throws {
        let now = pass.now
        for row in unfinished where row.isReminder {
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
            // An escalation tells of a reminder nobody saw: for an evening reminder it
            // comes after midnight, and "you missed it yesterday" is still worth
            // sending, so it has until the end of the next day.
            let deadline = dayEnd(event.occurrence) + (row.via?.isEscalation == true ? 86_400 : 0)
            if now >= deadline {
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
            let routing = try row.via.map { try routingNote($0, eventID: row.eventID) }
            pass.work.append(Work(row: row, event: event, contact: contact, routing: routing))
        }
    }

    /// New events: every one whose fire time passed since the last pass
    /// (watermark, now], and every one that moved behind the watermark without
    /// ever having been looked at (a changed time, time zone, offset or group,
    /// a clock stepped back, a contact imported late), as far back as the
    /// planner's look-back (docs/design/reminders.md, catch-up). The ledger tells them apart
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
                var row = LedgerRow(eventID: event.id, channel: name, contactID: contact.id, kind: .reminder(of: event.occasion.kind),
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
    private func deliver(_ work: [Work], _ pass: inout Pass, shouldStop: @Sendable () -> Bool) async throws {
        guard !work.isEmpty else { return }
        let now = pass.now
        let today = planner.clock.localDate(at: now)
        var writes: [LedgerRow] = []
        writes.reserveCapacity(2)
        // Channels that said "not now" in this pass: their other messages wait
        // for the same retry time, untried (no attempt counted).
        var held: [String: (until: Int64?, reason: String)] = [:]
        for (index, item) in work.enumerated() {
            if shouldStop() {
                writes.append(contentsOf: work[index...].map(\.row))  // state `pending`: resumed next time
                pass.report.due -= work.count - index
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
            if outcome.state == .sent, let via = outcome.via {
                // Delivered by a fallback or an escalation: the event's rows still
                // waiting for a retry are closed, so a route that recovers late does
                // not repeat it (committed with this outcome).
                for other in try ledger.rows(eventID: outcome.eventID)
                where other.channel != outcome.channel && [.pending, .retrying].contains(other.state) {
                    var closed = other
                    closed.state = .skipped
                    closed.nextAttemptAt = nil
                    closed.lastError = "delivered by \(outcome.channel) (\(via.label))"
                    writes.append(closed)
                }
            }
            if holdChannel {
                held[outcome.channel] = (outcome.nextAttemptAt, "not tried: the channel was not taking messages ("
                                         + (outcome.lastError ?? "temporary failure") + ")")
            }
        }
        try ledger.save(writes, now: now)
    }

    // MARK: - Fallbacks

    /// A fallback whose time has come, or the time the next one comes.
    private struct FallbackPlan {
        var due: [Work] = []
        var next: Int64?
    }

    /// The fallback channels whose turn has come (and when the next one does).
    ///
    /// For each reminder no channel has sent: the route's rows are level 0,
    /// the row of the route's n-th fallback channel level n. Once level k has
    /// been tried (T: its first attempt) and has not delivered by
    /// `max(T, min(T + fallback_after, day end − 1 h))` — or every row of level
    /// k ended `failed` — level k + 1 gets its row. A fallback never starts
    /// for a reminder nobody tried (one recorded `missed` while the machine
    /// was off: that is announced, never sent late), nor after its day ended.
    private func dueFallbacks(contacts byID: [String: PlanningContact], now: Int64) throws -> FallbackPlan {
        guard planner.hasFallbacks else { return FallbackPlan() }
        var plan = FallbackPlan()
        for (id, rows) in DeliveryProblems.byEvent(try ledger.unsentReminderRows(firedAfter: now - Dispatcher.noticeWindow)) {
            guard let parts = PlannedEvent.parse(id), let contact = byID[parts.contactID],
                  let first = rows.first, now < dayEnd(parts.occurrence),
                  let event = event(for: parts, contact: contact, fireAt: first.fireAt) else { continue }
            let route = planner.route(for: contact, occasion: parts.occasion)
            let fallbacks = route.fallback.filter { !event.channels.contains($0) }
            guard !fallbacks.isEmpty else { continue }
            let routeRows = rows.filter { $0.via == nil }
            var level = routeRows
            var nextIndex = 0
            while nextIndex < fallbacks.count, let row = rows.first(where: { $0.channel == fallbacks[nextIndex] }) {
                level = [row]
                nextIndex += 1
            }
            guard nextIndex < fallbacks.count else { continue }  // every fallback has its row
            let tried = level.filter { $0.attempts > 0 || $0.via != nil }
            guard let start = tried.compactMap({ $0.createdAt }).min() else { continue }
            let deadline = max(start, min(start + Int64(route.fallbackAfter), dayEnd(parts.occurrence) - 3_600))
            let allFailed = !level.isEmpty && level.allSatisfy { [.failed, .skipped, .missed].contains($0.state) }
                && level.contains { $0.state == .failed }
            guard now >= deadline || allFailed else {
                plan.next = min(plan.next ?? deadline, deadline)
                continue
            }
            let routeChannels = routeRows.sorted { ($0.createdAt ?? 0, $0.channel) < ($1.createdAt ?? 0, $1.channel) }.map(\.channel)
            let row = LedgerRow(eventID: id, channel: fallbacks[nextIndex], contactID: first.contactID, kind: first.kind,
                                state: .pending, fireAt: first.fireAt, via: .fallback(for: routeChannels))
            plan.due.append(Work(row: row, event: event, contact: contact,
                                 routing: RoutingNote(fallbackFor: routeChannels, problem: Self.lastProblem(rows))))
        }
        return plan
    }

    /// The last error recorded on `rows` (the route's, then earlier fallbacks').
    /// With one channel named in the note, its name is not repeated in front
    /// ("did not get through on hook: HTTP 500", not "hook: hook: HTTP 500").
    private static func lastProblem(_ rows: [LedgerRow]) -> String {
        guard let last = rows.filter({ $0.lastError != nil }).max(by: { ($0.createdAt ?? 0) < ($1.createdAt ?? 0) }),
              let error = last.lastError else { return "not delivered in time" }
        let channels = Set(rows.map(\.channel))
        if channels.count == 1, error.hasPrefix(last.channel + ": ") { return String(error.dropFirst(last.channel.count + 2)) }
        return error
    }

    /// What a fallback or escalated row's reminder says about why it came this way.
    private func routingNote(_ via: DeliveryVia, eventID: String) throws -> RoutingNote {
        switch via {
        case .fallback(let channels):
            let rows = try ledger.rows(eventID: eventID).filter { $0.via == nil || channels.contains($0.channel) }
            return RoutingNote(fallbackFor: channels, problem: Self.lastProblem(rows))
        case .escalated(let channel):
            return RoutingNote(fallbackFor: [channel], problem: "the notification was not seen")
        }
    }

    // MARK: - Notices

    /// Announces every problem not announced yet, in one notice, through the
    /// first notice channel that takes it: a `%notice/<event id>`
    /// row per problem and channel tried, so each is announced once and a notice
    /// that no channel takes is tried again (backoff) for 30 days.
    private func announceProblems(_ pass: inout Pass, contacts byID: [String: PlanningContact]) async throws {
        let now = pass.now
        let since = now - Dispatcher.noticeWindow
        let problems = try ledger.problems(firedAfter: since)
        guard !problems.isEmpty else { return }
        var notices: [String: [LedgerRow]] = [:]
        for row in try ledger.rows(kind: .notice, firedAfter: since) {
            notices[String(row.eventID.dropFirst(Self.noticePrefix.count)), default: []].append(row)
        }
        var open = problems.filter { problem in !(notices[problem.eventID] ?? []).contains { $0.state == .sent } }
        guard !open.isEmpty else { return }
        pass.report.problems = open.count
        let today = planner.clock.localDate(at: now)
        for name in noticeChannels(for: open, contacts: byID) {
            // Not on a channel that refused it for good, nor before its retry time there.
            let ready = open.filter { problem in
                guard let row = notices[problem.eventID]?.first(where: { $0.channel == name }) else { return true }
                switch row.state {
                case .failed, .sent, .skipped, .missed: return false
                case .retrying: return (row.nextAttemptAt ?? now) <= now
                case .pending, .sending: return true
                }
            }
            guard !ready.isEmpty else { continue }
            let entries = ready.map { noticeEntry($0, contacts: byID, today: today) }
            var message = renderer.notice(entries, today: today)
            message.id = Self.noticePrefix + ready[0].eventID
            if pass.dryRun {
                pass.report.deliveries.append(.init(
                    id: message.id, channel: name, status: .pending, error: nil,
                    preview: .init(name: entries.map(\.name).joined(separator: ", "), occasion: "notice",
                                   date: ready[0].occurrence, title: message.title)))
                return
            }
            var claims = ready.map { problem -> LedgerRow in
                var row = notices[problem.eventID]?.first { $0.channel == name }
                    ?? LedgerRow(eventID: Self.noticePrefix + problem.eventID, channel: name, contactID: problem.contactID,
                                 kind: .notice, state: .pending, fireAt: problem.fireAt)
                row.state = .sending
                row.attempts += 1
                return row
            }
            try ledger.save(claims, now: now)  // before the send: a crash resends it with the same id
            let failure = await sender.send(message, through: name)
            for index in claims.indices {
                sender.settle(&claims[index], after: failure, now: now)
            }
            try ledger.save(claims, now: now)
            pass.report.deliveries.append(.init(id: message.id, channel: name, status: claims[0].state, error: claims[0].lastError))
            if failure == nil {
                let announced = Set(ready.map(\.eventID))
                open.removeAll { announced.contains($0.eventID) }
                // Announced: the same notice waiting for a retry elsewhere is closed.
                var closed: [LedgerRow] = []
                for id in announced {
                    for row in notices[id] ?? [] where row.channel != name && [.pending, .sending, .retrying].contains(row.state) {
                        var done = row
                        done.state = .skipped
                        done.nextAttemptAt = nil
                        done.lastError = "announced through \(name)"
                        closed.append(done)
                    }
                }
                try ledger.save(closed, now: now)
                if open.isEmpty { break }
            }
            for claim in claims {
                let id = String(claim.eventID.dropFirst(Self.noticePrefix.count))
                notices[id, default: []].removeAll { $0.channel == name }
                notices[id, default: []].append(claim)
            }
        }
        pass.report.noticesPending = open.count
    }

    static let noticePrefix = "%notice/"

    /// `[reminders] notices`, else the fallback channels, then the channels the
    /// problems' reminders went to, then `desktop`; each once.
    private func noticeChannels(for problems: [DeliveryProblem], contacts byID: [String: PlanningContact]) -> [String] {
        if let configured = planner.noticeChannels { return configured }
        var names = planner.fallbackChannels
        for problem in problems {
            if let contact = byID[problem.contactID] {
                names += planner.route(for: contact, occasion: problem.occasion).fallback
            }
        }
        for problem in problems { names += problem.channels }
        names.append("desktop")
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }

    private func noticeEntry(_ problem: DeliveryProblem, contacts byID: [String: PlanningContact], today: LocalDate) -> NoticeEntry {
        NoticeEntry(problem, name: byID[problem.contactID]?.name ?? problem.contactID, today: today)
    }

    private func event(for parts: (contactID: String, occasion: Occasion, offset: Int, occurrence: LocalDate),
                       contact: PlanningContact, fireAt: Int64) -> PlannedEvent? {
        guard contact.isIncluded, planner.reminds(parts.occasion.kind),
              parts.occasion.kind.isForTheDeceased == contact.isDeceased,
              let date = contact.date(of: parts.occasion, prepared: planner.prepared[parts.occasion.kind.name]) else { return nil }
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
        let message = renderer.reminder(for: item.event, contact: item.contact,
                                        daysUntil: max(0, today.days(until: item.event.occurrence)), routing: item.routing)
        let (row, failure) = await sender.attempt(message, claimed: claimed, now: now, report: &report)
        return (row, failure?.channelUnavailable == true && row.state == .retrying)
    }

    /// When `run` should wake next after `now`: the next fire time or the next retry.
    /// `unfinished` as for `pass`.
    public func nextWake(contacts: [PlanningContact], now: Int64, unfinished: [LedgerRow]? = nil) throws -> Int64? {
        let nextFire = planner.upcoming(contacts, now: now, limit: 1,
                                        recorded: try ledger.recorded(around: now, planner: planner, contacts: contacts)).first?.fireAt
        var wakes: [Int64] = []
        for row in try unfinished ?? ledger.unfinished() {
            if row.isReminder {
                // Retries, and snoozed reminders (`pending` until their time), at their time; the rest at once.
                wakes.append(row.state == .retrying || row.state == .pending ? max(row.nextAttemptAt ?? now, now + 1) : now + 1)
                // Its day end too: it becomes a problem then, and is announced.
                if let parts = PlannedEvent.parse(PlannedEvent.snoozed(row.eventID)?.base ?? row.eventID) {
                    wakes.append(max(dayEnd(parts.occurrence), now + 1))
                }
            } else if row.kind == .notice, row.fireAt > now - Dispatcher.noticeWindow {
                wakes.append(max(row.nextAttemptAt ?? now + 1, now + 1))  // the next retry of a notice
            }
        }
        if planner.hasFallbacks {
            var byID: [String: PlanningContact] = [:]
            byID.reserveCapacity(contacts.count)
            for contact in contacts { byID[contact.id] = contact }
            if let fallback = try dueFallbacks(contacts: byID, now: now).next { wakes.append(max(fallback, now + 1)) }
        }
        let nextRetry = wakes.min()
        switch (nextFire, nextRetry) {
        case let (fire?, retry?): return min(fire, retry)
        case let (fire?, nil): return fire
        case let (nil, retry?): return retry
        default: return nil
        }
    }
}
