import BirthdayBuzz
import BuzzStore
import Foundation
import Synchronization

/// What became of one source in a sync (`sync`'s line or JSON object per source).
public struct SourceReport: Sendable {
    public enum Status: String, Sendable {
        /// Read and written.
        case synced
        /// Not read: nothing changed since the last sync (`tick`, `run`).
        case unchanged
        /// Could not be read; nothing of it was written or pruned.
        case failed
    }

    public var id: String
    public var label: String
    public var typeName: String
    public var status: Status
    public var summary = ImportSummary()
    /// Why it failed, or why it was not pruned; nil when neither.
    public var reason: String?
    /// After a failure of a source synced by the clock: when it is tried again (`SyncRetry`).
    public var retryAt: Int64?
    /// Whether the read was complete, so contacts gone from the source were
    /// removed (false: failed, or something in it could not be read).
    public var pruned: Bool { status == .synced && summary.unpruned.isEmpty }
}

/// Reads sources into the store: one reading thread parses cards while the
/// calling thread writes them (two cores, two stages), shared by `import`,
/// `sync`, `tick` and `run`.
public struct SourceSync: Sendable {
    public let store: BuzzDatabase
    public let now: Int64
    public let includeByDefault: Bool
    /// True once the caller no longer waits for the sync (`tick` past its
    /// budget, `run` stopping): a read that has not begun to write then
    /// writes nothing, and its failure is not counted against the source.
    public let shouldStop: @Sendable () -> Bool

    public init(store: BuzzDatabase, now: Int64, includeByDefault: Bool,
                shouldStop: @escaping @Sendable () -> Bool = { false }) {
        self.store = store
        self.now = now
        self.includeByDefault = includeByDefault
        self.shouldStop = shouldStop
    }

    /// Brings one source up to date in its own transaction. With
    /// `onlyIfChanged`, a source whose fingerprint matches the stored one is
    /// not read (`unchanged`), nor one that failed lately and waits for its
    /// retry (`SyncRetry`). Never throws for the source's own failures
    /// (they are the report's `failed`); throws what the store cannot do.
    ///
    /// The transaction opens only once the reading thread has its first cards
    /// (or has ended): a server's answers (discovery, listings, multigets) come
    /// before any card, so while a server is slow or silent nothing holds the
    /// store, and deliveries writing their ledger never wait for it.
    public func sync(_ source: any ContactSourceType, onlyIfChanged: Bool = false,
                     warn: (String) -> Void = { _ in }, debug: (String) -> Void = { _ in },
                     progress: (Int) -> Void = { _ in }) throws -> SourceReport {
        var report = SourceReport(id: source.id, label: source.label, typeName: source.typeName, status: .synced)
        let interval = source.syncInterval
        let retry = interval == nil ? nil : try SyncRetry.load(source.id, from: store)
        if onlyIfChanged {
            // Whether it is due needs the times and the fingerprint, not the per-card state (read only to sync).
            if let summary = try store.sourceState(source.id, withState: false), !source.isDue(last: summary, now: now) {
                report.status = .unchanged
                return report
            }
            if let retry, let interval, retry.holds(at: now, interval: interval) {
                report.status = .unchanged
                return report
            }
        }
        let last = try store.sourceState(source.id)
        let started = ContinuousClock.now
        do {
            let reading = SourceReading<SourceOutcome> { bytesRead, emit in
                try source.read(previousState: last?.state, full: !onlyIfChanged, bytesRead: bytesRead, emit: emit)
            }
            do {
                try reading.waitForData()
                guard !shouldStop() else { throw SourceError.runtime("stopped while it was being read") }
            } catch {
                reading.cancel()
                throw error
            }
            report.summary = try store.syncSource(source.id, label: source.label, now: now,
                                                  includeByDefault: includeByDefault) { session in
                var outcome = try reading.drain(into: session, warn: warn, debug: debug, progress: progress)
                // A type that does not say what it saw gets a fingerprint taken after reading.
                if outcome.fingerprint == nil { outcome.fingerprint = source.fingerprint() }
                for line in outcome.skipped { warn(line) }
                session.countSkipped(outcome.skipped.count)
                if case .incomplete(let reason) = outcome.coverage { report.reason = reason + "; nothing pruned" }
                return outcome
            }
        } catch let error as SourceError {
            report.status = .failed
            report.reason = error.message
        } catch let error as StoreError {
            throw error
        } catch {
            report.status = .failed
            report.reason = "\(error)"
        }
        if report.reason == nil, !report.summary.unpruned.isEmpty {
            report.reason = "something that could not be read may be one of its contacts; nothing pruned"
        }
        if let interval, !shouldStop() {
            if report.status == .failed {
                // Counted from when the failure was known: a request that timed out took its time.
                let elapsed = (ContinuousClock.now - started).components.seconds
                let next = SyncRetry(after: retry, now: now + elapsed, interval: interval)
                try next.save(source.id, in: store)
                report.retryAt = next.at
            } else if retry != nil {
                try SyncRetry.remove(source.id, from: store)
            }
        }
        return report
    }

    /// Runs `read` on a thread of its own and writes what it emits into
    /// `session` on this one; returns what `read` returned. Per-card problems
    /// go to `warn` (`file: card 3 (UID x): …`), what only a debug log tells to
    /// `debug`, bytes read to `progress`.
    public static func pump<T: Sendable>(
        into session: ImportSession, warn: (String) -> Void, debug: (String) -> Void = { _ in }, progress: (Int) -> Void,
        read: @escaping @Sendable (_ bytesRead: (Int) -> Void, _ emit: (String, ImportEntry) throws -> Void) throws -> T
    ) throws -> T {
        try SourceReading(read).drain(into: session, warn: warn, debug: debug, progress: progress)
    }

    /// When `run` should next sync `source` by the clock: when its interval has
    /// passed since its last sync (`nextSync`), or later while a failure's
    /// retry waits; nil for a source synced only when it changes (vdir, file).
    public static func nextAttempt(of source: any ContactSourceType, store: BuzzDatabase, now: Int64) -> Int64? {
        guard var next = source.nextSync(after: try? store.sourceState(source.id, withState: false)) else { return nil }
        guard let interval = source.syncInterval else { return next }
        // Synced "later than now": the clock was set back (or an earlier `--now`); due now.
        if next > now + Int64(interval) { next = now }
        if let retry = try? SyncRetry.load(source.id, from: store), retry.holds(at: now, interval: interval) {
            next = max(next, retry.at)
        }
        return next
    }
}

/// When a source synced by the clock (CardDAV) is tried again after failed
/// syncs: 30 s after the first, doubling with each failure up to the
/// source's interval, so a server that is down, refuses the login or never
/// answers is asked a few times an interval, never in a loop. Kept in the
/// store (`meta`), so `tick` after `tick`, and `run` after a restart, keep
/// the pace; removed by the next sync that works. `buzz sync` tries at once.
public struct SyncRetry: Sendable, Equatable {
    /// Failed syncs in a row.
    public var failures: Int
    /// Not tried again before this time (seconds since 1970, on the command's clock).
    public var at: Int64

    public static let firstDelay: Int64 = 30

    public init(failures: Int, at: Int64) {
        self.failures = failures
        self.at = at
    }

    /// The retry after one more failure at `now`.
    public init(after previous: SyncRetry?, now: Int64, interval: Int) {
        failures = (previous?.failures ?? 0) + 1
        at = now + SyncRetry.delay(afterFailures: failures, interval: interval)
    }

    /// 30 s, 60 s, 120 s, … up to `interval`.
    public static func delay(afterFailures failures: Int, interval: Int) -> Int64 {
        let doubled = firstDelay << Int64(min(max(failures - 1, 0), 20))
        return max(min(doubled, Int64(interval)), 1)
    }

    /// Whether the source still waits at `now`. A retry time further ahead than
    /// one interval came from a clock since set back (or an earlier `--now`): it does not hold.
    public func holds(at now: Int64, interval: Int) -> Bool {
        now < at && at <= now + Int64(interval)
    }

    static func key(_ id: String) -> String { "source_retry:" + id }

    public static func load(_ id: String, from store: BuzzDatabase) throws -> SyncRetry? {
        guard let text = try store.meta(key(id)) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count == 2, let failures = Int(fields[0]), let at = Int64(fields[1]) else { return nil }
        return SyncRetry(failures: failures, at: at)
    }

    public func save(_ id: String, in store: BuzzDatabase) throws {
        try store.setMeta(SyncRetry.key(id), "\(failures) \(at)")
    }

    public static func remove(_ id: String, from store: BuzzDatabase) throws {
        try store.removeMeta(key(id))
    }
}

/// One read on a thread of its own, started at once, whose cards are taken
/// (`drain`) on the calling thread; `waitForData` waits for the first of them
/// without taking any.
final class SourceReading<T: Sendable>: Sendable {
    private let pipe = EntryPipe()
    private let result = ResultBox<T>()

    init(_ read: @escaping @Sendable (_ bytesRead: (Int) -> Void, _ emit: (String, ImportEntry) throws -> Void) throws -> T) {
        let pipe = pipe, result = result
        let reader = Thread {
            var batch: [EntryPipe.Item] = []
            var bytes = 0
            batch.reserveCapacity(EntryPipe.batchSize)
            do {
                let value = try read({ bytes += $0 }) { file, entry in
                    // The columns are computed here: the writing thread is the slower stage.
                    var columns: CardColumns?
                    if case .card(let card, _) = entry, !card.isGroup { columns = CardColumns(card) }
                    batch.append(EntryPipe.Item(file: file, entry: entry, columns: columns))
                    if batch.count == EntryPipe.batchSize {
                        guard pipe.put(&batch, bytes: bytes) else { throw CancellationError() }
                        bytes = 0
                    }
                }
                _ = pipe.put(&batch, bytes: bytes)
                result.value.withLock { $0 = value }
                pipe.finish(error: nil)
            } catch {
                pipe.finish(error: error)
            }
        }
        reader.start()
    }

    /// Until the first cards are there or the read has ended; throws what ended a read that emitted nothing.
    func waitForData() throws { try pipe.waitForData() }

    /// Nobody will take the cards: a reader waiting for room gives up.
    func cancel() { pipe.cancel() }

    /// Writes every card into `session`; returns what the read returned.
    func drain(into session: ImportSession, warn: (String) -> Void, debug: (String) -> Void = { _ in },
               progress: (Int) -> Void) throws -> T {
        do {
            while let (items, bytes) = try pipe.take() {
                for item in items {
                    switch item.entry {
                    case .card(let card, let cardProblems):
                        for problem in cardProblems { warn("\(item.file): \(problem); kept without a birthday") }
                        // Not a problem of the card (the rest of it is kept): a line for a debug log only.
                        if let zone = card.unreadTimeZone {
                            debug("\(item.file): UID \(card.id): TZ \"\(OneLine.escaped(zone))\" is not a time zone this system knows; ignored")
                        }
                        try session.add(card: card, columns: item.columns)
                    case .skipped(let problem):
                        warn("\(item.file): \(problem); skipped")
                        session.skip(problem)
                    }
                }
                progress(bytes)
                pipe.giveBack(items)
            }
        } catch {
            pipe.cancel()
            throw error
        }
        guard let value = result.value.withLock({ $0.take() }) else {
            throw SourceError.runtime("the reading thread ended without a result")
        }
        return value
    }
}

/// What the reading thread hands back, once.
private final class ResultBox<T: Sendable>: Sendable {
    let value = Mutex<T?>(nil)
}
