import BirthdayBuzz
import Foundation
import Synchronization

/// The delivery ledger in memory, for dispatcher tests (the SQLite one is tested against a real file).
public final class InMemoryLedger: DeliveryLedger {
    private struct State {
        var rows: [LedgerKey: LedgerRow] = [:]
        var watermark: Int64?
        var epoch: Int64?
        var saves: [LedgerRow] = []
    }

    private let state = Mutex(State())
    /// Whether a `deliveryLock` is held (shared with the lock, which clears it).
    private let locked = Lock()

    public init() {}

    private static func key(_ eventID: String, _ channel: String) -> LedgerKey { LedgerKey(eventID: eventID, channel: channel) }

    public func row(eventID: String, channel: String) throws -> LedgerRow? {
        state.withLock { $0.rows[Self.key(eventID, channel)] }
    }

    public func rows(eventID: String) throws -> [LedgerRow] {
        state.withLock { $0.rows.values.filter { $0.eventID == eventID } }.sorted { $0.channel < $1.channel }
    }

    public func save(_ row: LedgerRow, now: Int64) throws {
        state.withLock {
            var row = row
            row.createdAt = $0.rows[Self.key(row.eventID, row.channel)]?.createdAt ?? now
            $0.rows[Self.key(row.eventID, row.channel)] = row
            $0.saves.append(row)
        }
    }

    public func unsentReminderRows(firedAfter after: Int64) throws -> [LedgerRow] {
        state.withLock { state in
            let sent = Set(state.rows.values.filter { $0.state == .sent }.map(\.eventID))
            return state.rows.values.filter { $0.isReminder && $0.fireAt > after && !sent.contains($0.eventID) }
        }.sorted { ($0.fireAt, $0.eventID, $0.createdAt ?? Int64(0), $0.channel) < ($1.fireAt, $1.eventID, $1.createdAt ?? Int64(0), $1.channel) }
    }

    public func endedReminderRows(firedAfter after: Int64) throws -> [LedgerRow] {
        let rows = try unsentReminderRows(firedAfter: .min)
        let ended = Set(rows.filter { $0.fireAt > after && ($0.state == .missed || $0.state == .failed) }.map(\.eventID))
        return rows.filter { ended.contains($0.eventID) }
    }

    public func rows(kind: Message.Kind, firedAfter after: Int64) throws -> [LedgerRow] {
        state.withLock { $0.rows.values.filter { $0.kind == kind && $0.fireAt > after } }
            .sorted { ($0.fireAt, $0.eventID, $0.channel) < ($1.fireAt, $1.eventID, $1.channel) }
    }

    public func keys(firedAfter after: Int64, upTo: Int64) throws -> Set<LedgerKey> {
        state.withLock { state in
            Set(state.rows.values.filter { $0.fireAt > after && $0.fireAt <= upTo }.map { Self.key($0.eventID, $0.channel) })
        }
    }

    public func unfinished() throws -> [LedgerRow] {
        state.withLock { $0.rows.values.filter { [.pending, .sending, .retrying].contains($0.state) } }
            .sorted { ($0.fireAt, $0.eventID, $0.channel) < ($1.fireAt, $1.eventID, $1.channel) }
    }

    public func rows(in states: Set<DeliveryState>) throws -> [LedgerRow] {
        // Newest first, as the SQLite ledger orders them (`outbox` lists them so).
        state.withLock { $0.rows.values.filter { states.contains($0.state) } }
            .sorted { (-$0.fireAt, $0.eventID, $0.channel) < (-$1.fireAt, $1.eventID, $1.channel) }
    }

    public func watermark() throws -> Int64? { state.withLock { $0.watermark } }

    public func setWatermark(_ value: Int64) throws { state.withLock { $0.watermark = value } }

    public func epoch() throws -> Int64? { state.withLock { $0.epoch } }

    public func setEpoch(_ value: Int64) throws { state.withLock { $0.epoch = value } }

    @discardableResult
    public func prune(firedBefore cutoff: Int64) throws -> Int {
        state.withLock { state in
            let old = state.rows.filter { $0.value.fireAt < cutoff && ![.pending, .sending, .retrying].contains($0.value.state) }
            for key in old.keys { state.rows[key] = nil }
            return old.count
        }
    }

    public func retry(eventIDs: [String]?, now: Int64) throws -> Int {
        state.withLock { state in
            let ids = eventIDs.map(Set.init)
            var count = 0
            for (key, var row) in state.rows where row.state == .failed && ids.map({ $0.contains(row.eventID) }) ?? true {
                row.state = .retrying
                row.nextAttemptAt = now
                row.attempts = 0
                state.rows[key] = row
                count += 1
            }
            return count
        }
    }

    public func history(for contactID: String) throws -> [LedgerRow] {
        state.withLock { $0.rows.values.filter { $0.contactID == contactID } }
            .sorted { (-$0.fireAt, $0.eventID, $0.channel) < (-$1.fireAt, $1.eventID, $1.channel) }
    }

    public func wishedContacts(sentFrom start: Int64, to end: Int64) throws -> Set<String> {
        state.withLock { state in
            Set(state.rows.values.filter { row in
                row.kind == .wish && row.state == .sent && row.sentAt.map { $0 >= start && $0 < end } ?? false
            }.map(\.contactID))
        }
    }

    /// Exclusive within this ledger (one process's tests): a second taker waits
    /// up to `wait` seconds for the first to drop its lock.
    public func deliveryLock(wait: Int) throws -> (any DeliveryLock)? {
        let deadline = Date().addingTimeInterval(TimeInterval(wait))
        while true {
            if locked.flag.withLock({ held in
                if held { return false }
                held = true
                return true
            }) { return Held(locked) }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    private final class Lock: Sendable {
        let flag = Mutex(false)
    }

    private final class Held: DeliveryLock {
        private let lock: Lock
        init(_ lock: Lock) { self.lock = lock }
        deinit { lock.flag.withLock { $0 = false } }
    }

    /// Every row as saved, in order (to check "written before and after each send").
    public var history: [LedgerRow] { state.withLock { $0.saves } }

    /// All rows, by event id then channel.
    public var all: [LedgerRow] { state.withLock { Array($0.rows.values) }.sorted { ($0.eventID, $0.channel) < ($1.eventID, $1.channel) } }
}

/// A plain renderer for dispatcher tests: title "<name> <days>", no templates.
public struct PlainRenderer: ReminderRendering {
    public init() {}

    public func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int, routing: RoutingNote?) -> Message {
        Message(kind: .reminder, id: event.id, title: "\(contact.name) in \(daysUntil)",
                body: routing.map { "fallback for \($0.fallbackFor.joined(separator: ",")): \($0.problem)" } ?? "",
                contact: .init(id: contact.id, name: contact.name), occurrence: event.occurrence, daysUntil: daysUntil)
    }

    /// Title "Missed: N", body one line per entry: "<name> <occasion> <date>: <reason> — <hint>".
    public func notice(_ entries: [NoticeEntry], today: LocalDate) -> Message {
        Message(kind: .notice, id: "", title: "Missed: \(entries.count)",
                body: entries.map { "\($0.name) \($0.occasion.rawValue) \($0.date): \($0.reason) — \($0.hint)" }
                    .joined(separator: "\n"))
    }
}
