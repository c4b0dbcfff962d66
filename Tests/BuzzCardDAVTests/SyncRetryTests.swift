import BirthdayBuzz
import BuzzTestKit
import BuzzStore
import Foundation
import Testing
@testable import BuzzSources

/// When a carddav source is synced by the clock, and how a failing one backs
/// off (`SyncRetry`): no server, only the times and the store.
@Suite struct SyncRetryTests {
    static func source(interval: Int = 900) -> CardDAVSource {
        CardDAVSource(id: "cloud", label: "cloud", options: CardDAVSourceOptions(url: "http://127.0.0.1:9/", interval: interval),
                      context: SourceContext(environment: [:], configDirectory: nil))
    }

    @Test func theDelayDoublesFromThirtySecondsUpToTheInterval() {
        let delays = (1...8).map { SyncRetry.delay(afterFailures: $0, interval: 900) }
        #expect(delays == [30, 60, 120, 240, 480, 900, 900, 900])
        #expect(SyncRetry.delay(afterFailures: 1_000, interval: 3_600) == 3_600)
        #expect(SyncRetry(after: SyncRetry(failures: 2, at: 0), now: 1_000, interval: 900) == SyncRetry(failures: 3, at: 1_120))
    }

    @Test func aRetryFurtherAheadThanAnIntervalIsFromAClockSetBack() {
        let retry = SyncRetry(failures: 1, at: 1_030)
        #expect(retry.holds(at: 1_000, interval: 900))
        #expect(!retry.holds(at: 1_030, interval: 900))
        #expect(!retry.holds(at: 100, interval: 900), "the clock went back 15 min or more: tried now")
    }

    @Test func aCardDAVSourceIsDueOnItsIntervalOnTheCommandsClock() {
        let source = Self.source()
        let synced = SourceState(label: "cloud", syncedAt: 10_000)
        #expect(source.isDue(last: nil, now: 10_000))
        #expect(!source.isDue(last: synced, now: 10_899))
        #expect(source.isDue(last: synced, now: 10_900))
        #expect(source.isDue(last: synced, now: 9_000), "synced \"later than now\": the clock was set back")
        #expect(source.nextSync(after: synced) == 10_900)
    }

    /// `run`'s next sync of a failing source is its retry, and a sync that
    /// fails records the next one (a refused connection: nothing listens on port 9).
    @Test func aFailedSyncRecordsItsRetryAndTheNextAttemptWaitsForIt() throws {
        let folder = TestFolders.temporary.appendingPathComponent("buzz-retry-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try BuzzDatabase(directory: folder)
        let source = Self.source()
        let now: Int64 = 1_900_000_000  // a --now years ahead of the real clock
        #expect(try #require(SourceSync.nextAttempt(of: source, store: store, now: now)) <= now, "never synced: due")

        let report = try SourceSync(store: store, now: now, includeByDefault: true).sync(source, onlyIfChanged: true)
        #expect(report.status == .failed, "\(report)")
        #expect(report.retryAt == now + 30)
        #expect(try SyncRetry.load("cloud", from: store) == SyncRetry(failures: 1, at: now + 30))
        #expect(SourceSync.nextAttempt(of: source, store: store, now: now + 1) == now + 30)
        // Within the backoff, tick and run leave it alone; `buzz sync` (not only if changed) tries at once.
        let waiting = try SourceSync(store: store, now: now + 10, includeByDefault: true).sync(source, onlyIfChanged: true)
        #expect(waiting.status == .unchanged)
        let forced = try SourceSync(store: store, now: now + 10, includeByDefault: true).sync(source)
        #expect(forced.status == .failed && forced.retryAt == now + 10 + 60)
    }
}
