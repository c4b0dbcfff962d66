import ArgumentParser
import BirthdayBuzz
import BuzzStore
import CurlSupport

struct DigestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Send a digest ([digests.NAME]) now, or show it with --dry-run.",
        discussion: """
            Lists the occasions of the digest's look-ahead from today, the reminders no channel delivered since \
            its last scheduled send, and how many contacts have no birthday. Sent through the digest's channels \
            under the id %digest/NAME/manual/N; the scheduled digests are not changed by it. --dry-run prints the \
            message and records nothing. Exit 0: sent (or shown); 1: a channel failed or waits for a retry \
            (tick and run retry it); 2: no such digest.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "The digest's name: the NAME of a [digests.NAME] table.")
    var name: String

    @Flag(help: "Print the digest as it would be sent now; send and record nothing.")
    var dryRun = false

    func run() async throws {
        let context = try Context(root.global)
        let name = name
        let digests = context.config.digests
        guard digests.contains(where: { $0.name == name }) else {
            let known = digests.map(\.name)
            throw CLIError.request("no digest named \"\(name)\" in \(context.configPath)"
                                   + (known.isEmpty ? " (configure one in a [digests.NAME] table)"
                                      : " (configured: " + known.joined(separator: ", ") + ")"))
        }
        let store = try context.openStore()
        let lock = dryRun ? nil : try runtime { try context.ledger(store).deliveryLock(wait: context.config.delivery.lockWait) }
        if !dryRun, lock == nil {
            throw CLIError.runtime("another dispatcher is busy with \(context.dataDirectory); try again in a moment")
        }
        defer { withExtendedLifetime(lock) {} }
        let wiring = try DispatchWiring(context: context, store: store)
        let contacts = try runtime { try store.plannableContacts(for: wiring.dispatcher.planner) }
        let missing = try runtime { try DispatchWiring.missingCount(store)() }
        let now = context.now
        if dryRun {
            let id = DigestSchedule.manualID(name: name, number: 0).dropLast() + "N"
            guard let (message, _) = try runtime({
                try wiring.digests.message(named: name, id: String(id), contacts: contacts, missingCount: missing, now: now)
            }) else { return }
            let channels = digests.first { $0.name == name }?.channels ?? []
            print("would send \(channels.joined(separator: ", ")): \(OneLine.escaped(message.title))")
            print("")
            print(message.body)
            print("")
            print("dry run: nothing sent or recorded")
            return
        }
        let report = try await runtime {
            try await BlockingExecutor.commands.run {
                try await wiring.digests.sendNow(named: name, contacts: contacts, missingCount: missing, now: now)
            }
        }
        await wiring.shutdown()
        guard let report else { return }
        for delivery in report.deliveries {
            print("\(padRight(delivery.status.rawValue, 10)) \(padRight(delivery.channel, 12)) \(delivery.id)"
                  + (delivery.error.map { " — " + OneLine.escaped($0) } ?? ""))
        }
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}
