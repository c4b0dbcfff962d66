import BirthdayBuzz
import BuzzDaemon
import BuzzTestKit
import Foundation
import Logging
import Testing
@testable import BuzzCommands

/// `buzz run`'s loop in-process, in virtual time: the daemon is handed a
/// `VirtualClock` that the test moves, so days pass at once and a clock set
/// back can be tried. Deliveries go to the real HTTP sink.
@Suite(.timeLimit(.minutes(1)))
struct DaemonLoopTests {
    /// 2027-05-09T09:00:00Z: the day-before reminder; the day-of one is a day later.
    static let dayBefore: Int64 = 1_809_853_200
    static let dayOf: Int64 = dayBefore + 86_400

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func sleepsUntilEachFireTimeDeliversOnceAndReplansWhenTheClockIsSetBack() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(RunCommandTests.config(sink: base, fireAt: RunCommandTests.fireMinute)
            .replacingOccurrences(of: "offsets = [0]", with: "offsets = [0, 1]"))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", RunCommandTests.card(bornOn: RunCommandTests.fireMinute))
        #expect(try await sandbox.run(["import", file, "--now", "2027-05-01"]).status == 0)

        let clock = VirtualClock(now: Self.dayBefore - 3_600)
        let daemon = try Self.daemon(sandbox, clock: clock)
        let running = Task { try await daemon.run() }

        // Asleep until the day-before reminder; nothing sent yet.
        #expect(await clock.nextWait() == Self.dayBefore)
        #expect(try await sink.requests().isEmpty)
        clock.advance(to: Self.dayBefore)
        #expect(await clock.nextWait() == Self.dayOf)
        #expect(try await Self.keys(sink) == ["run-test-1/1/2027-05-10"])

        // The clock set back an hour: the loop plans again; the ledger keeps it from sending twice.
        clock.jump(to: Self.dayBefore - 3_600)
        #expect(await clock.nextWait() == Self.dayOf)
        #expect(try await Self.keys(sink) == ["run-test-1/1/2027-05-10"])

        // A day later in no time: the day-of reminder, then a sleep until next year's first one.
        clock.advance(to: Self.dayOf + 5)
        let nextYear = await clock.nextWait()
        #expect(nextYear == Self.dayBefore + 366 * 86_400, "\(String(describing: nextYear))")  // 2028 is a leap year
        #expect(try await Self.keys(sink) == ["run-test-1/1/2027-05-10", "run-test-1/0/2027-05-10"])

        daemon.requests.requestStop()
        clock.wake()
        try await running.value
        daemon.pidFile.release()  // RunCommand's part
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir + "/run.pid"))
        // Waits, in virtual time: the first reminder, the second (twice: before and after
        // the jump), and next year's; nothing else woke the loop.
        #expect(clock.waits == [Self.dayBefore, Self.dayOf, Self.dayOf, Self.dayBefore + 366 * 86_400], "\(clock.waits)")
    }

    static func keys(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().compactMap { $0.headers["Idempotency-Key"] }
    }

    /// The daemon as `RunCommand` wires it, on `clock`, without the process's signals.
    static func daemon(_ sandbox: Sandbox, clock: VirtualClock) throws -> BirthdayDaemon {
        let settings = GlobalSettings(config: sandbox.configPath, dataDir: sandbox.dataDir, now: nil)
        let context = try Context(settings, environment: sandbox.environment)
        let store = try context.openStore()
        let pidFile = try RunPidFile.claim(dataDirectory: context.dataDirectory)
        var logger = Logger(label: "birthdaybuzz-test") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        let actions = NotificationActionDesk(store: store, environment: context.environment, logger: logger, clock: clock)
        let wiring = try DispatchWiring(context: context, store: store, notificationActions: actions)
        return BirthdayDaemon(store: store, initial: DaemonSetup(context: context, wiring: wiring), clock: clock,
                              pidFile: pidFile, logger: logger, actions: actions,
                              reload: { throw CLIError.runtime("no reload in this test") })
    }
}
