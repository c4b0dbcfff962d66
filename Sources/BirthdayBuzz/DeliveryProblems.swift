/// A reminder that reached nobody: no channel has `sent` it, nothing is left to
/// try (no row waits for a retry, no fallback or escalation channel remains),
/// and at least one of its rows ended `missed` or `failed`.
///
/// Digests, notices and asks are never problems, and neither is a snoozed
/// reminder (the reminder itself reached the user before it was snoozed).
public struct DeliveryProblem: Sendable, Hashable {
    public var eventID: String
    public var contactID: String
    public var occasion: Occasion
    public var occurrence: LocalDate
    public var fireAt: Int64
    /// `missed` when any row was missed (its time or its day passed), else `failed`.
    public var state: DeliveryState
    /// Every channel that had a row for it, in the order they were first tried.
    public var channels: [String]
    /// The last error recorded, one line, scrubbed; a fixed text when none was.
    public var reason: String
}

public enum DeliveryProblems {
    /// The problems among `rows` — rows of reminders whose events no channel
    /// has sent (`DeliveryLedger.unsentReminderRows`) — oldest first.
    public static func find(in rows: [LedgerRow]) -> [DeliveryProblem] {
        byEvent(rows.filter(\.isReminder)).compactMap { problem($0.id, $0.rows) }
            .sorted { ($0.fireAt, $0.eventID) < ($1.fireAt, $1.eventID) }
    }

    /// `rows` grouped by event, in the order each event first appears.
    static func byEvent(_ rows: [LedgerRow]) -> [(id: String, rows: [LedgerRow])] {
        var index: [String: Int] = [:]
        var groups: [(id: String, rows: [LedgerRow])] = []
        for row in rows {
            if let at = index[row.eventID] {
                groups[at].rows.append(row)
            } else {
                index[row.eventID] = groups.count
                groups.append((row.eventID, [row]))
            }
        }
        return groups
    }

    /// One event's problem, or nil when it is not one (yet).
    public static func problem(_ eventID: String, _ rows: [LedgerRow]) -> DeliveryProblem? {
        guard let parts = PlannedEvent.parse(eventID), let first = rows.first else { return nil }
        if rows.contains(where: { $0.state == .sent }) { return nil }
        if rows.contains(where: { [.pending, .sending, .retrying].contains($0.state) }) { return nil }
        let ended = rows.filter { $0.state == .missed || $0.state == .failed }
        guard !ended.isEmpty else { return nil }  // all skipped: not a problem
        let tried = rows.sorted { ($0.createdAt ?? $0.fireAt, $0.channel) < ($1.createdAt ?? $1.fireAt, $1.channel) }
        let reason = tried.last(where: { $0.lastError != nil && $0.state != .skipped })?.lastError
            ?? (ended.contains { $0.state == .missed } ? "its day ended before any channel delivered it" : "no channel delivered it")
        return DeliveryProblem(eventID: eventID, contactID: first.contactID, occasion: parts.occasion,
                               occurrence: parts.occurrence, fireAt: rows.map(\.fireAt).min() ?? first.fireAt,
                               state: ended.contains { $0.state == .missed } ? .missed : .failed,
                               channels: tried.map(\.channel), reason: reason)
    }
}

extension DeliveryLedger {
    /// The problems among reminders that fired after `after`, oldest first.
    public func problems(firedAfter after: Int64) throws -> [DeliveryProblem] {
        DeliveryProblems.find(in: try endedReminderRows(firedAfter: after))
    }
}
