import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

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
        let ledger = SQLiteLedger(store)
        let states: Set<DeliveryState> = failed ? [.failed] : Set(DeliveryState.allCases)
        let rows = try runtime { try ledger.rows(in: states) }
        if json {
            print(JSONObject.array(rows.map { row in
                var object = JSONObject()
                object.add("id", row.eventID)
                object.add("channel", row.channel)
                object.add("contact_id", row.contactID)
                object.add("status", row.state.rawValue)
                object.add("fire_at", context.clock.iso8601(row.fireAt))
                object.add("attempts", row.attempts)
                object.add("next_attempt_at", row.nextAttemptAt.map(context.clock.iso8601))
                object.add("sent_at", row.sentAt.map(context.clock.iso8601))
                object.add("error", row.lastError)
                return object.json
            }))
            return
        }
        if rows.isEmpty {
            print(failed ? "No failed deliveries." : "The outbox is empty.")
            return
        }
        for row in rows {
            var line = "\(padRight(row.state.rawValue, 9)) \(padRight(row.channel, 12)) \(row.eventID)"
            if let next = row.nextAttemptAt, row.state == .retrying { line += "  next try \(context.clock.iso8601(next))" }
            if let error = row.lastError { line += "  — " + OneLine.escaped(error) }
            print(line)
        }
    }
}

struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Put failed deliveries back, to be sent by the next tick (all, or the ids named).")

    @ParentCommand var root: Buzz

    @Argument(help: "Event ids (as `buzz outbox --failed` shows them); none means every failed delivery.")
    var ids: [String] = []

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let ledger = SQLiteLedger(store)
        // Every id named must have a failed delivery, or nothing is changed:
        // a typo must not pass for "retried".
        for id in ids {
            let rows = try runtime { try ledger.rows(eventID: id) }
            if rows.isEmpty {
                throw CLIError.request("\(id): no delivery with this id (buzz outbox --failed lists the failed ones)")
            }
            if !rows.contains(where: { $0.state == .failed }) {
                let states = rows.map { "\($0.channel) \($0.state.rawValue)" }.joined(separator: ", ")
                throw CLIError.request("\(id): nothing failed to retry (\(states))")
            }
        }
        let count = try runtime { try ledger.retry(eventIDs: ids.isEmpty ? nil : ids, now: context.now) }
        if count == 0 {
            print("nothing to retry: no failed deliveries")
            return
        }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        print("\(count) deliver\(count == 1 ? "y" : "ies") will be retried by the next tick")
    }
}
