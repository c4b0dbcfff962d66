/// One attempt of a claimed ledger row: send the message through its channel,
/// then settle the row — `sent`, or `retrying` with backoff, or `failed` (a
/// permanent error, or out of attempts). The reminder, notice and digest
/// dispatchers all go through it, so they count attempts and back off alike
/// (and so do `ask` and `wish`, which send one message at once).
public struct ChannelSender: Sendable {
    let backoff: Backoff
    let channel: @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>
    let jitter: @Sendable () -> Double
    /// Removes secrets from a channel's error text: (text, channel name).
    let scrub: @Sendable (String, String) -> String

    public init(backoff: Backoff, channel: @escaping @Sendable (String) async -> Result<any NotificationChannel, DeliveryError>,
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                scrub: @escaping @Sendable (String, String) -> String) {
        self.backoff = backoff
        self.channel = channel
        self.jitter = jitter
        self.scrub = scrub
    }

    /// Sends `message` through the channel named `name`; nil when it went out.
    public func send(_ message: Message, through name: String) async -> DeliveryError? {
        switch await channel(name) {
        case .failure(let error):
            return error
        case .success(let adapter):
            do {
                try await adapter.deliver(message)
                return nil
            } catch let error as DeliveryError {
                return error
            } catch {
                return .temporary("\(name): \(error)")
            }
        }
    }

    /// A claimed row's outcome (its `attempts` already counts this one).
    public func settle(_ row: inout LedgerRow, after failure: DeliveryError?, now: Int64) {
        guard let failure else {
            row.state = .sent
            row.sentAt = now
            row.lastError = nil
            row.nextAttemptAt = nil
            return
        }
        row.lastError = scrub(failure.message, row.channel)
        if failure.isTemporary, row.attempts < backoff.maxAttempts {
            row.state = .retrying
            row.nextAttemptAt = now + Int64(backoff.delay(afterAttempt: row.attempts, retryAfter: failure.retryAfter, jitter: jitter()))
        } else {
            row.state = .failed
            row.nextAttemptAt = nil
            if failure.isTemporary { row.lastError = (row.lastError ?? "") + " (gave up after \(row.attempts) attempts)" }
        }
    }

    /// Sends and settles one claimed row, counting the outcome in `report`.
    func attempt(_ message: Message, claimed: LedgerRow, now: Int64, report: inout DispatchReport) async -> (LedgerRow, DeliveryError?) {
        var row = claimed
        let failure = await send(message, through: row.channel)
        settle(&row, after: failure, now: now)
        switch row.state {
        case .sent: report.sent += 1
        case .retrying: report.retrying += 1
        default: report.failed += 1
        }
        report.deliveries.append(.init(id: row.eventID, channel: row.channel, status: row.state, error: row.lastError))
        return (row, failure)
    }
}
