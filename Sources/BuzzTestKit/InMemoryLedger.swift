import BirthdayBuzz
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
        state.withLock { $0.rows.values.filter { states.contains($0.state) } }.sorted { $0.eventID < $1.eventID }
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
