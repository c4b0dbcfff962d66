import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import BuzzSources
import BuzzStore
import CurlSupport
import Foundation

struct TickCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tick",
        abstract: "Deliver everything due now (with catch-up) and retries that are due, then exit.",
        discussion: """
            For cron and systemd timers. First syncs the configured sources that changed since their last \
            sync (a file's or a folder's files' size, mtime or inode; a carddav source's interval), unless \
            --no-sync or --dry-run; a source that cannot be read, or is not read within [sync] tick_budget \
            (default 20s), is reported, keeps its contacts and is tried again with backoff. Exit 0: all good, nothing due, or another \
            dispatcher is busy; 1: some delivery failed or waits for a retry. --now only moves the clock: it \
            really sends.
            """)

    @ParentCommand var root: Buzz

    @Flag(help: "Show what would go where; send and record nothing.")
    var dryRun = false

    @Flag(help: "JSON output: counts and deliveries.")
    var json = false

    @Flag(help: "Do not sync the configured sources first.")
    var noSync = false

    func run() async throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        if !noSync, !dryRun, !context.config.sources.isEmpty {
            // Sources first, so a birthday entered on the phone since the last
            // tick is due in this one; but a server does not hold up the
            // reminders: past `[sync] tick_budget` they go out with the contacts
            // as they were. Notes go to stderr: stdout stays the report.
            let sources = try context.configuredSources()
            let budget = context.config.sync.tickBudget
            let outcomes = await BackgroundSync.run(sources, context: context, store: store, budget: budget)
            var changed = false
            for (source, outcome) in zip(sources, outcomes) {
                guard let outcome else {
                    printWarning("sync \(source.label): not synced within the tick budget (\(budget) s); its contacts are kept as they were")
                    continue
                }
                outcome.warnings.forEach(printWarning)
                if let error = outcome.error { throw CLIError.runtime(error) }
                guard let report = outcome.report, report.status != .unchanged else { continue }
                if report.status == .failed || report.changedContacts || report.reason != nil || report.summary.skipped > 0 {
                    printWarning("sync " + report.line)
                }
                changed = changed || report.changedContacts
            }
            if changed { notifyRunningDaemon(dataDirectory: context.dataDirectory) }
        }
        let lockWait = dryRun ? 0 : context.config.delivery.lockWait
        let ledger = context.ledger(store)
        guard let lock = try runtime({ try ledger.deliveryLock(wait: lockWait) }) else {
            let note = dryRun ? "another dispatcher is delivering now; showing nothing"
                : "another dispatcher is busy with \(context.dataDirectory); nothing sent (it will deliver)"
            if json {
                // stdout stays one JSON object (nothing done here); the note goes to stderr.
                printWarning(note)
                print(try DispatchReport().json())
            } else {
                print(note)
            }
            return
        }
        defer { withExtendedLifetime(lock) {} }
        let wiring = try DispatchWiring(context: context, store: store, consoleToStandardError: json)
        let contacts = try runtime { try store.plannableContacts(for: wiring.dispatcher.planner) }
        let now = context.now
        let dryRun = dryRun
        let report = try await runtime {
            // Reminders, then the digests (`[digests.NAME]`), in one report.
            try await BlockingExecutor.commands.run { try await wiring.pass(contacts: contacts, store: store, now: now, dryRun: dryRun) }
        }
        await wiring.shutdown()
        if json {
            print(try report.json())
        } else {
            print(report.summary(dryRun: dryRun))
        }
        if !dryRun, let pinger = HealthPinger(config: context.config, environment: context.environment) {
            // After the report is out: a slow or dead monitor never holds up a
            // delivery, and a failed ping is one warning, not an exit status.
            if let warning = await pinger.ping(report.healthOutcome("tick")) { printWarning("warning: " + warning) }
        }
        if !dryRun, report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}

extension BlockingExecutor {
    /// The threads `tick` and `digest` deliver on, made on first use and kept for
    /// the process's life (a `BlockingExecutor`'s threads never end). Four, so
    /// that runs sharing one process (the tests') do not queue behind one
    /// another's blocking transfers; the one-off process uses one of them.
    static let commands = BlockingExecutor(name: "birthdaybuzz.deliver", threads: 4)
}

extension DispatchReport {
    /// `tick --json` (docs/design/command-line.md): the counts, then each delivery.
    struct JSONShape: Encodable {
        struct Delivery: Encodable {
            var id: String
            var channel: String
            var status: String
            var error: String?
            /// `--dry-run`: what would be sent (null otherwise).
            var preview: Preview?
        }

        struct Preview: Encodable {
            var name: String
            var occasion: String
            var date: String
            var title: String
        }

        var due, sent, failed, retrying, missed, skipped: Int
        /// Reminders no channel delivered, announced (or to be) in a notice by this pass.
        var problems: Int
        var deliveries: [Delivery]
    }

    func json() throws -> String {
        try CLIJSONEncoder.encode(JSONShape(
            due: due, sent: sent, failed: failed, retrying: retrying, missed: missed, skipped: skipped, problems: problems,
            deliveries: deliveries.map { delivery in
                .init(id: delivery.id, channel: delivery.channel, status: delivery.status.rawValue, error: delivery.error,
                      preview: delivery.preview.map { .init(name: $0.name, occasion: $0.occasion, date: $0.date.description,
                                                            title: $0.title) })
            }))
    }

    func summary(dryRun: Bool) -> String {
        var lines: [String] = []
        for delivery in deliveries {
            let status = dryRun && delivery.status == .pending ? "would send" : delivery.status.rawValue
            if let preview = delivery.preview {
                // `would send desktop      Dana Scully, birthday 2027-03-15: "Dana Scully's birthday is tomorrow" (id)`
                lines.append("\(padRight(status, 10)) \(padRight(delivery.channel, 12)) \(OneLine.escaped(preview.name)), "
                             + "\(preview.occasion) \(preview.date): \"\(OneLine.escaped(preview.title))\" (\(delivery.id))")
                continue
            }
            lines.append("\(padRight(status, 10)) \(padRight(delivery.channel, 12)) \(delivery.id)"
                         + (delivery.error.map { " — " + OneLine.escaped($0) } ?? ""))
        }
        if dryRun {
            lines.append("dry run: \(due) due; nothing sent or recorded")
        } else {
            lines.append(countsLine("tick"))
        }
        return lines.joined(separator: "\n")
    }
}
