import BirthdayBuzz
import Logging
import Synchronization

/// What the daemon's signals, its source watcher and its shutdown ask of the
/// loop: flags the loop takes on its next round (set them, then `wake()` the clock).
public final class DaemonRequests: Sendable {
    private struct Flags {
        var stop = false
        var reload = false
        var sync = false
    }

    private let flags = Mutex(Flags())

    public init() {}

    public var stopRequested: Bool { flags.withLock { $0.stop } }
    public func requestStop() { flags.withLock { $0.stop = true } }
    public func requestReload() { flags.withLock { $0.reload = true } }
    public func requestSync() { flags.withLock { $0.sync = true } }

    /// Whether a reload was asked for since the last call.
    public func takeReload() -> Bool {
        flags.withLock { flags in
            defer { flags.reload = false }
            return flags.reload
        }
    }

    /// Whether a watched source changed since the last call.
    public func takeSync() -> Bool {
        flags.withLock { flags in
            defer { flags.sync = false }
            return flags.sync
        }
    }
}

/// Why the loop starts a round.
public enum DaemonWake: Sendable, Equatable {
    /// SIGHUP: read the config again, then plan.
    case reload
    /// A watched source changed (or a sync asked to run once more).
    case sourcesChanged
    /// The clock: a fire time, a retry, a jump of the clock, or the first round.
    case clock
}

/// What one daemon does in its rounds; `DaemonLoop` decides when they run.
///
/// `buzz run`'s rounds (`BirthdayDaemon` in BuzzCommands) sync the sources,
/// deliver what is due under the dispatch lock and say when the next reminder,
/// retry or sync is; a test's may only count. The value lives in the loop's
/// task, so it need not be `Sendable`.
public protocol DaemonRounds {
    /// Before the first round.
    mutating func start() async
    /// What to do about `wake` before the pass: a reload, a sync.
    mutating func prepare(after wake: DaemonWake) async
    /// One pass at `now`; returns when to wake next (nil: nothing planned). A
    /// pass that throws is tried again after a delay that doubles per failure.
    mutating func pass(now: Int64) async throws -> Int64?
    /// An instant as the log shows it (in the config's time zone).
    func timestamp(_ instant: Int64) -> String
    /// After the last round, also when the loop ends by an error.
    mutating func finish() async
}

/// The daemon's loop: a round, then sleep on the clock until the next wake the
/// round asked for (no timer in between), until a stop is requested.
///
/// Every "now" comes from `clock`, and so does every sleep: a `VirtualClock`
/// runs the loop through days in milliseconds. A SIGHUP, a source change or a
/// jump of the clock ends the sleep early (`DaemonRequests`, `ClockWake`).
///
/// ```swift
/// var rounds = MyRounds()
/// try await DaemonLoop(clock: timer, requests: requests, logger: logger).run(&rounds)
/// ```
public struct DaemonLoop: Sendable {
    public let clock: any DaemonClock
    public let requests: DaemonRequests
    public let logger: Logger

    /// A failed pass (database locked, disk full) is tried again after this
    /// many seconds, doubling per failure up to `maxRetryDelay`.
    public static let firstRetryDelay: Int64 = 30
    public static let maxRetryDelay: Int64 = 900

    public init(clock: any DaemonClock, requests: DaemonRequests, logger: Logger) {
        self.clock = clock
        self.requests = requests
        self.logger = logger
    }

    /// Runs rounds until a stop is requested or the task is cancelled
    /// (`CancellationError` from the clock's wait).
    public func run<Rounds: DaemonRounds>(_ rounds: inout Rounds) async throws {
        await rounds.start()
        do {
            try await loop(&rounds)
        } catch {
            await rounds.finish()
            throw error
        }
        await rounds.finish()
    }

    private func loop<Rounds: DaemonRounds>(_ rounds: inout Rounds) async throws {
        var failures = 0
        while !requests.stopRequested {
            if requests.takeReload() {
                _ = requests.takeSync()  // the reload syncs what changed anyway
                await rounds.prepare(after: .reload)
            } else if requests.takeSync() {
                await rounds.prepare(after: .sourcesChanged)
            } else {
                await rounds.prepare(after: .clock)
            }
            let now = clock.now()
            var next: Int64?
            do {
                next = try await rounds.pass(now: now)
                failures = 0
            } catch {
                failures += 1
                let delay = min(Self.firstRetryDelay << min(failures - 1, 10), Self.maxRetryDelay)
                logger.error("dispatch pass failed: \(oneLine(error)); trying again in \(delay) s")
                next = now + delay
            }
            if requests.stopRequested { break }
            if let next {
                logger.info("next wake \(rounds.timestamp(next))")
            } else {
                logger.info("nothing planned (no included contact with a birthday); waiting for a change")
            }
            if try await clock.wait(until: next) == .clockChanged {
                logger.notice("the wall clock changed (set, or resumed from suspend); planning again")
            }
        }
    }
}

/// An error as one log line (an error that is `CustomStringConvertible` says it best).
private func oneLine(_ error: any Error) -> String {
    "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
}
