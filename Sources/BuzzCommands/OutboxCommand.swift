import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

/// One `outbox --json` row: a ledger entry.
struct OutboxRow: Encodable {
    var id: String
    var channel: String
    var contactID: String
    var status: String
    var fireAt: String
    var attempts: Int
    var nextAttemptAt: String?
    var sentAt: String?
    var error: String?
    /// `fallback for NAME` or `escalated from NAME`; null for the event's own route.
    var via: String?

    enum CodingKeys: String, CodingKey {
        case id, channel, contactID = "contact_id", status, fireAt = "fire_at", attempts
        case nextAttemptAt = "next_attempt_at", sentAt = "sent_at", error, via
    }

    init(_ row: LedgerRow, clock: WallClock) {
        id = row.eventID
        channel = row.channel
        contactID = row.contactID
        status = row.state.rawValue
        fireAt = clock.iso8601(row.fireAt)
        attempts = row.attempts
        nextAttemptAt = row.nextAttemptAt.map(clock.iso8601)
        sentAt = row.sentAt.map(clock.iso8601)
        error = row.lastError
        via = row.via?.label
    }
}

struct OutboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Show the delivery ledger: what is waiting, what failed, what went out.")

    @ParentCommand var root: Buzz

    @Flag(help: "Only failed deliveries (put them back with `buzz retry`).")
    var failed = false

    @Flag(help: "JSON output.")
    var json = false

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let ledger = context.ledger(store)
        let states: Set<DeliveryState> = failed ? [.failed] : Set(DeliveryState.allCases)
        let rows = try runtime { try ledger.rows(in: states) }
        if json {
            print(try CLIJSONEncoder.encodeLines(rows.map { OutboxRow($0, clock: context.clock) }))
            return
        }
        if rows.isEmpty {
            print(failed ? "No failed deliveries." : "The outbox is empty.")
            return
        }
        for row in rows {
            var line = "\(padRight(row.state.rawValue, 9)) \(padRight(row.channel, 12)) \(row.eventID)"
            if let via = row.via { line += "  (\(via.label))" }
            if let next = row.nextAttemptAt, row.state == .retrying { line += "  next try \(context.clock.iso8601(next))" }
            if let error = row.lastError { line += "  — " + OneLine.escaped(error) }
            print(line)
        }
    }
}
