import BirthdayBuzz
import BuzzDaemon
import BuzzSources
import BuzzStore
import Foundation
import Logging
import Synchronization

/// Source syncs that run beside delivery, never in front of it:
/// each source on a thread of its own, so a server that is slow, silent or
/// endless holds up neither a reminder nor a stop. The store is safe to share:
/// its one connection serializes writes, and a sync opens its transaction only
/// once its cards are there (`SourceSync.sync`), so nothing waits for a server
/// while holding it.
enum BackgroundSync {
    /// What one source's sync came to: its report and the per-card warnings
    /// it gave, or the store error that stopped it.
    struct Outcome: Sendable {
        var report: SourceReport?
        var warnings: [String] = []
        /// Lines only a debug log shows (an unknown TZ on a card).
        var debug: [String] = []
        var error: String?
    }

    /// Syncs `source` on a new thread, then hands the outcome to `done` there.
    static func start(_ source: any ContactSourceType, syncer: SourceSync, onlyIfChanged: Bool,
                      done: @escaping @Sendable (Outcome) -> Void) {
        let thread = Thread {
            var outcome = Outcome()
            do {
                var warnings: [String] = []
                var debug: [String] = []
                let report = try syncer.sync(source, onlyIfChanged: onlyIfChanged, warn: { warnings.append($0) },
                                             debug: { debug.append($0) })
                outcome.report = report
                outcome.debug = debug
                outcome.warnings = warnings + report.duplicateWarnings
            } catch {
                outcome.error = "\(source.label): not synced: \(singleLine(error))"
            }
            done(outcome)
        }
        thread.name = "birthdaybuzz.sync"
        thread.start()
    }

    /// `tick`'s sync: every source at once, each on its own thread; waits for
    /// them up to `budget` seconds, then returns what finished, in the order
    /// given (nil: not finished in time). A read still going on after the budget
    /// writes nothing (`SourceSync.shouldStop`); the process leaves it behind,
    /// and it counts as a failure for the source's backoff, so the next tick
    /// does not wait for it again at once.
    static func run(_ sources: [any ContactSourceType], context: Context, store: BuzzDatabase,
                    budget: Int) async -> [Outcome?] {
        let outcomes = await runWithoutBackoff(sources, context: context, store: store, budget: budget)
        for (source, outcome) in zip(sources, outcomes) where outcome == nil {
            guard let interval = source.syncInterval else { continue }
            let retry = SyncRetry(after: try? SyncRetry.load(source.id, from: store), now: context.now + Int64(budget),
                                  interval: interval)
            try? retry.save(source.id, in: store)
        }
        return outcomes
    }

    private static func runWithoutBackoff(_ sources: [any ContactSourceType], context: Context, store: BuzzDatabase,
                                          budget: Int) async -> [Outcome?] {
        let results = Results(count: sources.count)
        let syncer = SourceSync(store: store, now: context.now, includeByDefault: context.config.contacts.includeByDefault,
                                shouldStop: { results.abandoned })
        for (index, source) in sources.enumerated() {
            start(source, syncer: syncer, onlyIfChanged: true) { results.put($0, at: index) }
        }
        // Waited for on a thread of its own, not on the cooperative pool.
        return await withCheckedContinuation { (continuation: CheckedContinuation<[Outcome?], Never>) in
            let waiter = Thread {
                continuation.resume(returning: results.wait(until: Date().addingTimeInterval(TimeInterval(budget))))
            }
            waiter.name = "birthdaybuzz.sync.wait"
            waiter.start()
        }
    }

    /// The outcomes as they come in, and whether the waiter has given up.
    private final class Results: @unchecked Sendable {
        private let condition = NSCondition()
        // Read and written only with `condition` locked.
        private var outcomes: [Outcome?]
        private var pending: Int
        private var gaveUp = false

        init(count: Int) {
            outcomes = Array(repeating: nil, count: count)
            pending = count
        }

        var abandoned: Bool {
            condition.lock()
            defer { condition.unlock() }
            return gaveUp
        }

        func put(_ outcome: Outcome, at index: Int) {
            condition.lock()
            defer { condition.unlock() }
            guard !gaveUp else { return }
            outcomes[index] = outcome
            pending -= 1
            condition.broadcast()
        }

        func wait(until deadline: Date) -> [Outcome?] {
            condition.lock()
            defer { condition.unlock() }
            while pending > 0, condition.wait(until: deadline) {}
            gaveUp = true
            return outcomes
        }
    }
}

/// `run`'s source syncs: started by the loop, each on its own thread, never
/// two of one source at once; when one ends, the loop is woken to plan again
/// (and to sync once more a source asked for while its sync ran).
final class DaemonSourceSyncs: Sendable {
    private struct State {
        /// Sources whose sync runs now.
        var running: Set<String> = []
        /// Sources asked for again while their sync ran.
        var again: Set<String> = []
        /// A sync ended since the loop last looked (it watches the folders again).
        var ended = false
        var stopping = false
        /// When each source's sync last started (the daemon's clock).
        var started: [String: Int64] = [:]
    }

    /// Seconds between two starts of a source by the clock, at least.
    static let minimumGap = SyncRetry.firstDelay

    private let state = Mutex(State())
    let store: BuzzDatabase
    let clock: any DaemonClock
    let logger: Logger
    let requests: DaemonRequests

    init(store: BuzzDatabase, clock: any DaemonClock, logger: Logger, requests: DaemonRequests) {
        self.store = store
        self.clock = clock
        self.logger = logger
        self.requests = requests
    }

    /// The sources whose sync runs now: the loop sets no timer for them (their end wakes it).
    var running: Set<String> { state.withLock { $0.running } }

    /// The earliest time the clock may start `id` again: `minimumGap` after its
    /// last start (a start "after now" is from before the clock was set back: none).
    func earliestClockStart(of id: String, now: Int64) -> Int64 {
        guard let started = state.withLock({ $0.started[id] }), started <= now else { return .min }
        return started + DaemonSourceSyncs.minimumGap
    }

    /// Whether a sync ended since the last call.
    func takeEnded() -> Bool {
        state.withLock { state in
            defer { state.ended = false }
            return state.ended
        }
    }

    /// Starts a sync of each of `sources` whose sync does not run now; one that
    /// does is synced again (only if changed) once it ends.
    func start(_ sources: [any ContactSourceType], context: Context, onlyIfChanged: Bool) {
        let now = clock.now()
        let fresh = state.withLock { state -> [any ContactSourceType] in
            guard !state.stopping else { return [] }
            var fresh: [any ContactSourceType] = []
            for source in sources {
                if state.running.contains(source.id) {
                    state.again.insert(source.id)
                } else {
                    state.running.insert(source.id)
                    state.started[source.id] = now
                    fresh.append(source)
                }
            }
            return fresh
        }
        guard !fresh.isEmpty else { return }
        let syncer = SourceSync(store: store, now: now, includeByDefault: context.config.contacts.includeByDefault,
                                shouldStop: { [self] in isStopping })
        let timeline = context.clock
        for source in fresh {
            BackgroundSync.start(source, syncer: syncer, onlyIfChanged: onlyIfChanged) { [self] outcome in
                self.log(outcome, clock: timeline)
                let (stopping, again) = state.withLock { state in
                    state.running.remove(source.id)
                    state.ended = true
                    return (state.stopping, state.again.remove(source.id) != nil)
                }
                guard !stopping else { return }
                if again { requests.requestSync() }
                clock.wake()
            }
        }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    /// No sync starts from now on, and one still reading writes nothing. Syncs
    /// are not waited for: a server that never answers must not hold up the stop
    /// (SQLite's journal keeps every committed write; one cut short is undone).
    func stop() {
        state.withLock { $0.stopping = true }
    }

    /// One line per source that was read or failed (each failure once, with
    /// when it is tried again); per-card warnings at debug level (they may name contacts).
    private func log(_ outcome: BackgroundSync.Outcome, clock: WallClock) {
        guard !isStopping else { return }
        for warning in outcome.warnings + outcome.debug { logger.debug("\(warning)") }
        if let error = outcome.error { logger.error("sync failed: \(error)") }
        guard let report = outcome.report else { return }
        switch report.status {
        case .unchanged: logger.debug("source \(report.line)")
        case .synced: logger.info("synced \(report.line)")
        case .failed:
            let retry = report.retryAt.map { "; trying again at \(clock.iso8601($0))" } ?? ""
            logger.warning("source \(report.line)\(retry)")
        }
    }
}

/// An error as one log line.
private func singleLine(_ error: any Error) -> String {
    ((error as? CLIError)?.message ?? "\(error)").split(whereSeparator: \.isNewline).joined(separator: " ")
}
