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
    /// Whether the read was complete, so contacts gone from the source were
    /// removed (false: failed, or something in it could not be read).
    public var pruned: Bool { status == .synced && summary.unpruned.isEmpty }
}

/// Reads sources into the store: one reading thread parses cards while the
/// calling thread writes them (two cores, two stages), shared by `import`,
/// `sync`, `tick` and `run`.
public struct SourceSync {
    public let store: BuzzDatabase
    public let now: Int64
    public let includeByDefault: Bool

    public init(store: BuzzDatabase, now: Int64, includeByDefault: Bool) {
        self.store = store
        self.now = now
        self.includeByDefault = includeByDefault
    }

    /// Brings one source up to date in its own transaction. With
    /// `onlyIfChanged`, a source whose fingerprint matches the stored one is
    /// not read (`unchanged`). Never throws for the source's own failures
    /// (they are the report's `failed`); throws what the store cannot do.
    public func sync(_ source: any ContactSourceType, onlyIfChanged: Bool = false,
                     warn: (String) -> Void = { _ in }, progress: (Int) -> Void = { _ in }) throws -> SourceReport {
        var report = SourceReport(id: source.id, label: source.label, typeName: source.typeName, status: .synced)
        // Whether it is due needs the times and the fingerprint, not the per-card state (read only to sync).
        if onlyIfChanged, let summary = try store.sourceState(source.id, withState: false), !source.isDue(last: summary, now: now) {
            report.status = .unchanged
            return report
        }
        let last = try store.sourceState(source.id)
        do {
            report.summary = try store.syncSource(source.id, label: source.label, now: now,
                                                  includeByDefault: includeByDefault) { session in
                var outcome = try SourceSync.pump(into: session, warn: warn, progress: progress) { bytesRead, emit in
                    try source.read(previousState: last?.state, full: !onlyIfChanged, bytesRead: bytesRead, emit: emit)
                }
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
        return report
    }

    /// Runs `read` on a thread of its own and writes what it emits into
    /// `session` on this one; returns what `read` returned. Per-card problems
    /// go to `warn` (`file: card 3 (UID x): …`), bytes read to `progress`.
    public static func pump<T: Sendable>(
        into session: ImportSession, warn: (String) -> Void, progress: (Int) -> Void,
        read: @escaping @Sendable (_ bytesRead: (Int) -> Void, _ emit: (String, ImportEntry) throws -> Void) throws -> T
    ) throws -> T {
        let pipe = EntryPipe()
        let result = ResultBox<T>()
        let reader = Thread {
            var batch: [EntryPipe.Item] = []
            var bytes = 0
            batch.reserveCapacity(EntryPipe.batchSize)
            do {
                let value = try read({ bytes += $0 }) { file, entry in
                    batch.append(EntryPipe.Item(file: file, entry: entry))
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
        do {
            while let (items, bytes) = try pipe.take() {
                for item in items {
                    switch item.entry {
                    case .card(let card, let cardProblems):
                        for problem in cardProblems { warn("\(item.file): \(problem); kept without a birthday") }
                        try session.add(card: card)
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
