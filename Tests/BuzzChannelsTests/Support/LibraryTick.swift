import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import CurlSupport
import Foundation
@testable import BuzzCommands

/// `buzz tick --now NOW [--json]` in this process, through the calls `TickCommand`
/// makes (`Context`, the store's delivery lock, `DispatchWiring`, its pass on a
/// `BlockingExecutor`, the report's `json()` or `summary`): for the tests whose
/// subject is delivery (routes, fallbacks, notices, retries), not the process.
/// What it leaves out is what those tests' configs do not use: syncing sources
/// first and the health ping. A config error is thrown (the binary exits 2 with
/// it); exit statuses, stderr and signals stay with the tests that start `buzz`.
enum LibraryTick {
    /// One executor for the test process, as `tick` makes one per process (its thread lives on).
    private static let executor = BlockingExecutor(name: "birthdaybuzz.test-deliver")

    /// What `buzz tick` would print on stdout and its exit status (0, or 1 when a
    /// delivery failed, waits for a retry or a problem was recorded).
    static func run(_ sandbox: Sandbox, now: String, json: Bool = false) async throws -> BuzzResult {
        let settings = GlobalSettings(config: nil, dataDir: sandbox.dataDir, now: now)
        let context = try Context(settings, environment: sandbox.environment)
        let store = try context.openStore()
        guard let lock = try context.ledger(store).deliveryLock(wait: context.config.delivery.lockWait) else {
            return BuzzResult(status: 0, stdout: "another dispatcher is busy with \(context.dataDirectory); nothing sent (it will deliver)\n",
                              stderr: "")
        }
        defer { withExtendedLifetime(lock) {} }
        let wiring = try DispatchWiring(context: context, store: store, consoleToStandardError: json)
        let contacts = try store.plannableContacts(for: wiring.dispatcher.planner)
        let instant = context.now
        let report = try await executor.run { try await wiring.pass(contacts: contacts, store: store, now: instant) }
        await wiring.shutdown()
        let stdout = (json ? try report.json() : report.summary(dryRun: false)) + "\n"
        return BuzzResult(status: report.exitStatus, stdout: stdout, stderr: "")
    }
}
