import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Put failed deliveries back, to be sent by the next tick (all, or the ids named).")

    @ParentCommand var root: Buzz

    @Argument(help: "Event ids (as `buzz outbox --failed` shows them); none means every failed delivery.")
    var ids: [String] = []

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let ledger = context.ledger(store)
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
