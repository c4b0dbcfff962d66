/// Renders a digest's message (templates live with the caller).
public protocol DigestRendering: Sendable {
    func digest(_ content: DigestContent, id: String) -> Message
}

/// Delivers the configured digests (`[digests.NAME]`) with the reminders' rules:
/// each scheduled send is a ledger event `%digest/<NAME>/<date>` with one row
/// per channel, written before and after the send; one whose fire time passed
/// while nothing ran is caught up within `reminders.catch_up`, else recorded
/// `missed` (not a problem: the next digest covers it); a temporary failure is
/// retried with the same backoff until the end of its day.
///
/// It runs after the reminder pass (`tick`, `run`), under the same dispatch lock,
/// and adds to the same `DispatchReport`. Nothing here reads a clock.
public final class DigestDispatcher: Sendable {
    public let schedule: DigestSchedule
    public let ledger: any DeliveryLedger
    public let catchUp: Int
    public let backoff: Backoff
    private let renderer: any DigestRendering
    private let sender: ChannelSender

    public init(config: BuzzConfig, prepared: [String: any Sendable] = [:], ledger: any DeliveryLedger,
                renderer: any DigestRendering,
                channel: @escaping @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>,
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                scrub: @escaping @Sendable (String, String) -> String = { text, _ in text }) {
        var schedule = DigestSchedule(config: config)
        schedule.prepared = prepared
        self.schedule = schedule
        self.ledger = ledger
        catchUp = config.reminders.catchUp
        backoff = Backoff(cap: config.delivery.maxBackoff, maxAttempts: config.delivery.maxAttempts)
        self.renderer = renderer
        sender = ChannelSender(backoff: backoff, channel: channel, jitter: jitter, scrub: scrub)
    }

    /// What the contacts say besides planning: how many have no birthday and are not skipped.
    public typealias MissingCount = @Sendable () throws -> Int

    /// One digest send for one channel.
    private struct Work {
        var row: LedgerRow
        var name: String
        var date: LocalDate
    }

    /// Delivers every digest due at `now`: retries that are due, and scheduled
    /// sends whose fire time passed since `watermark` (the reminder pass's
    /// watermark as it was *before* that pass moved it; nil on a fresh data dir)
    /// or that moved behind it less than `catch_up` ago (a changed `time`, a digest
    /// just configured). With `dryRun`, writes and sends nothing. `unfinished`: the
    /// ledger's unfinished rows as the caller read them for the reminder pass (a
    /// reminder pass leaves digest rows alone); nil reads them here.
    public func pass(contacts: [PlanningContact], missingCount: MissingCount, watermark: Int64?, now: Int64,
                     dryRun: Bool = false, unfinished: [LedgerRow]? = nil,
                     shouldStop: @Sendable () -> Bool = { false }) async throws -> DispatchReport {
        var report = DispatchReport()
        var work: [Work] = []
        var queued: Set<LedgerKey> = []

        func record(_ row: LedgerRow) throws {
            if !dryRun { try ledger.save(row, now: now) }
            report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: row.state, error: row.lastError))
        }

        // Rows left unfinished: a crash mid-send, retries, pending rows.
        for row in try unfinished ?? ledger.unfinished() where row.kind == .digest {
            guard let parts = DigestSchedule.parse(row.eventID), schedule.digest(named: parts.name) != nil else {
                var done = row
                done.state = .skipped
                done.lastError = "the digest is no longer configured"
                try record(done)
                report.skipped += 1
                continue
            }
            let date = parts.date ?? schedule.clock.localDate(at: row.fireAt)
            if now >= dayEnd(date) {
                var done = row
                done.state = .missed
                done.lastError = row.lastError ?? "its day ended before it could be delivered"
                try record(done)
                report.missed += 1
                continue
            }
            if row.state == .retrying, let next = row.nextAttemptAt, next > now {
                report.retrying += 1
                continue
            }
            queued.insert(LedgerKey(row))
            work.append(Work(row: row, name: parts.name, date: date))
        }

        // Scheduled sends that became due.
        let since = watermark ?? (now - Int64(catchUp))
        let epoch = try ledger.epoch() ?? since
        let windowStart = max(epoch, min(since, now - Int64(catchUp)))
        let due = schedule.events(after: windowStart, upTo: now)
        // Widened by two days: a changed `time` moves a send's fire time but not its id.
        let recorded = due.isEmpty ? [] : try ledger.keys(firedAfter: windowStart - 2 * 86_400, upTo: now + 2 * 86_400)
        for event in due {
            for name in event.channels {
                let key = LedgerKey(eventID: event.id, channel: name)
                if queued.contains(key) || recorded.contains(key) { continue }
                var row = LedgerRow(eventID: event.id, channel: name, contactID: "", kind: .digest, state: .pending,
                                    fireAt: event.fireAt)
                if now - event.fireAt >= Int64(catchUp) || now >= dayEnd(event.date) {
                    // Not a problem (DeliveryProblems counts reminders only): the next digest covers it.
                    row.state = .missed
                    row.lastError = event.fireAt > since ? "due while BirthdayBuzz was not running"
                        : "its time had passed when it was planned (changed settings or clock)"
                    try record(row)
                    report.missed += 1
                } else {
                    work.append(Work(row: row, name: event.name, date: event.date))
                }
            }
        }
        report.due = work.count
        guard !work.isEmpty else { return report }

        var contents: [String: DigestContent] = [:]
        var missing: Int?
        func content(_ item: Work) throws -> DigestContent? {
            if let known = contents[item.row.eventID] { return known }
            guard let digest = schedule.digest(named: item.name) else { return nil }
            if missing == nil { missing = try missingCount() }
            // Problems are found by their reminders' fire times: those that fired after the
            // previous scheduled send (a manual send: the last one before it). A reminder that
            // fired just before a digest and became a problem only after it (still retrying
            // then) is in neither digest; the notice for it still tells the user.
            let previous = schedule.previousFire(digest, before: DigestSchedule.parse(item.row.eventID)?.manual != nil
                                                 ? item.row.fireAt + 1 : schedule.fireTime(digest, on: item.date))
            let made = schedule.content(digest, from: item.date, contacts: contacts,
                                        problems: try ledger.problems(firedAfter: previous), missingCount: missing ?? 0)
            contents[item.row.eventID] = made
            return made
        }

        for (index, item) in work.enumerated() {
            if dryRun {
                // Rendered as it would be sent, so the preview is the message's own title.
                let title = try content(item).map { renderer.digest($0, id: item.row.eventID).title } ?? item.name
                report.deliveries.append(.init(id: item.row.eventID, channel: item.row.channel, status: .pending, error: nil,
                                               preview: .init(name: item.name, occasion: "digest", date: item.date, title: title)))
                continue
            }
            if shouldStop() {
                try ledger.save(work[index...].map(\.row), now: now)  // `pending`: resumed next time
                report.due = index
                break
            }
            guard let content = try content(item) else { continue }
            if let digest = schedule.digest(named: item.name), !digest.empty, content.isEmpty {
                var row = item.row
                row.state = .skipped
                row.lastError = "nothing ahead and empty = false"
                try record(row)
                report.skipped += 1
                continue
            }
            var row = item.row
            row.state = .sending
            row.attempts += 1
            try ledger.save(row, now: now)  // before the send: a crash now means "resend with the same id"
            row = await sender.attempt(renderer.digest(content, id: row.eventID), claimed: row, now: now, report: &report).0
            try ledger.save(row, now: now)
        }
        return report
    }

    /// The message `buzz digest NAME` sends (or, with `--dry-run`, shows) at `now`:
    /// today's look-ahead and the problems since the last scheduled send.
    public func message(named name: String, id: String, contacts: [PlanningContact], missingCount: Int,
                        now: Int64) throws -> (Message, DigestContent)? {
        guard let digest = schedule.digest(named: name) else { return nil }
        let content = schedule.content(digest, from: schedule.clock.localDate(at: now), contacts: contacts,
                                       problems: try ledger.problems(firedAfter: schedule.previousFire(digest, before: now + 1)),
                                       missingCount: missingCount)
        return (renderer.digest(content, id: id), content)
    }

    /// Sends a digest now, by hand, under `%digest/<NAME>/manual/<n>` (n: the next
    /// number not in the ledger), once per channel of the digest; the scheduled
    /// send is left alone. A temporary failure is retried by `tick` and `run`.
    public func sendNow(named name: String, contacts: [PlanningContact], missingCount: Int,
                        now: Int64) async throws -> DispatchReport? {
        guard let digest = schedule.digest(named: name) else { return nil }
        let prefix = DigestSchedule.manualID(name: name, number: 0).dropLast()
        let used = try ledger.rows(kind: .digest, firedAfter: .min).compactMap { row -> Int? in
            row.eventID.hasPrefix(prefix) ? DigestSchedule.parse(row.eventID)?.manual : nil
        }
        let id = DigestSchedule.manualID(name: name, number: (used.max() ?? 0) + 1)
        guard let (message, _) = try message(named: name, id: id, contacts: contacts, missingCount: missingCount, now: now)
        else { return nil }
        var report = DispatchReport()
        report.due = digest.channels.count
        for channelName in digest.channels {
            var row = LedgerRow(eventID: id, channel: channelName, contactID: "", kind: .digest, state: .sending,
                                fireAt: now, attempts: 1)
            try ledger.save(row, now: now)
            row = await sender.attempt(message, claimed: row, now: now, report: &report).0
            try ledger.save(row, now: now)
        }
        return report
    }

    /// When `run` should wake for digests after `now`: the next scheduled send, or a retry.
    public func nextWake(now: Int64, unfinished: [LedgerRow]? = nil) throws -> Int64? {
        let nextFire = schedule.next(after: now).first?.fireAt
        let nextRetry = try (unfinished ?? ledger.unfinished()).filter { $0.kind == .digest }.map { row -> Int64 in
            row.state == .retrying ? max(row.nextAttemptAt ?? now, now + 1) : now + 1
        }.min()
        return [nextFire, nextRetry].compactMap(\.self).min()
    }

    /// The end of a digest's day, local time: one not out by then is `missed`.
    private func dayEnd(_ date: LocalDate) -> Int64 {
        schedule.clock.instant(of: date.adding(days: 1), secondsAfterMidnight: 0)
    }
}

extension DispatchReport {
    /// Adds another pass's counts and deliveries (the digests' after the reminders').
    public mutating func add(_ other: DispatchReport) {
        due += other.due
        sent += other.sent
        failed += other.failed
        retrying += other.retrying
        missed += other.missed
        skipped += other.skipped
        deliveries += other.deliveries
    }
}
