import BirthdayBuzz
import BuzzDaemon
import BuzzTestKit
import Logging
import Synchronization
import Testing

/// BuzzDaemon's `DaemonLoop` alone, in virtual time, with rounds that only
/// record what they were asked: when it sleeps, what wakes it, how a failed
/// pass backs off, and how it stops.
@Suite(.timeLimit(.minutes(1)))
struct DaemonLoopLibraryTests {
    /// What the loop asked of the rounds, in order.
    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
        /// The next wakes the passes return, then nil; a nil entry means "throw".
        let plan: Mutex<[Int64??]>

        init(plan: [Int64??]) {
            self.plan = Mutex(plan)
        }

        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk full" }
    }

    struct Rounds: DaemonRounds {
        let journal: Journal

        mutating func start() async { journal.add("start") }
        mutating func prepare(after wake: DaemonWake) async { journal.add("prepare \(wake)") }
        mutating func pass(now: Int64) async throws -> Int64? {
            journal.add("pass \(now)")
            let next = journal.plan.withLock { $0.isEmpty ? .some(nil) : $0.removeFirst() }
            guard let next else { throw Failure() }
            return next
        }
        func timestamp(_ instant: Int64) -> String { "\(instant)" }
        mutating func finish() async { journal.add("finish") }
    }

    static var logger: Logger {
        var logger = Logger(label: "daemon-loop-test") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        return logger
    }

    @Test func sleepsUntilEachWakeBacksOffAfterAFailureAndStops() async throws {
        // 1000: a pass planning 1100; then two failures (30 s, then 60 s later); then nothing planned.
        let journal = Journal(plan: [.some(1_100), .none, .none, .some(nil)])
        let clock = VirtualClock(now: 1_000)
        let requests = DaemonRequests()
        let loop = DaemonLoop(clock: clock, requests: requests, logger: Self.logger)
        let running = Task {
            var rounds = Rounds(journal: journal)
            try await loop.run(&rounds)
        }
        #expect(await clock.nextWait() == 1_100)
        clock.advance(to: 1_100)
        #expect(await clock.nextWait() == 1_100 + DaemonLoop.firstRetryDelay)
        clock.advance(to: 1_130)
        #expect(await clock.nextWait() == 1_130 + 2 * DaemonLoop.firstRetryDelay)
        clock.advance(to: 1_190)
        #expect(await clock.nextWait() == nil)  // nothing planned: only a wake ends the sleep

        // SIGHUP's request, then a source change: each is one round, prepared for what it was.
        requests.requestReload()
        clock.wake()
        #expect(await clock.nextWait() == nil)
        requests.requestSync()
        clock.wake()
        #expect(await clock.nextWait() == nil)
        requests.requestStop()
        clock.wake()
        try await running.value
        #expect(journal.all == ["start",
                                "prepare clock", "pass 1000", "prepare clock", "pass 1100",
                                "prepare clock", "pass 1130", "prepare clock", "pass 1190",
                                "prepare reload", "pass 1190", "prepare sourcesChanged", "pass 1190",
                                "finish"])
    }

    /// Cancelled while it sleeps (the group cancelled it): the rounds still finish.
    @Test func cancellationEndsTheLoopAndTheRoundsFinish() async throws {
        let journal = Journal(plan: [])
        let clock = VirtualClock(now: 1_000)
        let loop = DaemonLoop(clock: clock, requests: DaemonRequests(), logger: Self.logger)
        let running = Task {
            var rounds = Rounds(journal: journal)
            try await loop.run(&rounds)
        }
        #expect(await clock.nextWait() == nil)
        running.cancel()
        await #expect(throws: CancellationError.self) { try await running.value }
        #expect(journal.all.last == "finish")
    }
}
