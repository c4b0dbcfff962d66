import BuzzTestKit
import Foundation
import Synchronization
import Testing
@testable import BirthdayBuzz

@Suite struct DispatcherTests {
    static func config(_ extra: String = "") throws -> BuzzConfig {
        try BuzzConfig(toml: "[general]\ntimezone = \"Europe/Berlin\"\n" + extra, file: "t.toml", environment: [:],
                       systemTimeZone: TimeZone(identifier: "UTC")!, types: .shipped)
    }

    static func at(_ text: String, _ config: BuzzConfig) -> Int64 {
        PinnedNow(text)!.instant(in: WallClock(timeZone: config.general.timeZone))
    }

    struct Rig {
        let config: BuzzConfig
        let ledger = InMemoryLedger()
        let channel = RecordingChannel(name: "console")
        let dispatcher: Dispatcher

        init(_ config: BuzzConfig) {
            self.config = config
            let channel = self.channel
            dispatcher = Dispatcher(config: config, planner: Planner(config: config, defaultChannels: ["console"]),
                                    ledger: ledger, renderer: PlainRenderer(),
                                    channel: { _ in .success(channel) }, jitter: { 0.5 })
        }

        func pass(_ contacts: [PlanningContact], _ now: String) async throws -> DispatchReport {
            try await dispatcher.pass(contacts: contacts, now: DispatcherTests.at(now, config))
        }
    }

    static let ada = PlanningContact(id: "ada", name: "Ada", birthday: Birthday(month: 3, day: 15, year: 1990), includedAt: 0)

    @Test func deliversOncePerEventAcrossPasses() async throws {
        let rig = Rig(try Self.config())
        _ = try await rig.pass([Self.ada], "2027-03-10T12:00")  // first run: watermark starts catch_up back
        let dayBefore = try await rig.pass([Self.ada], "2027-03-14T09:05")
        #expect(dayBefore.sent == 1)
        #expect(rig.channel.delivered.map(\.id) == ["ada/1/2027-03-15"])
        let again = try await rig.pass([Self.ada], "2027-03-14T09:30")
        #expect(again.due == 0 && again.sent == 0)
        let dayOf = try await rig.pass([Self.ada], "2027-03-15T09:00")
        #expect(dayOf.sent == 1)
        _ = try await rig.pass([Self.ada], "2027-03-15T23:00")
        #expect(rig.channel.delivered.map(\.id) == ["ada/1/2027-03-15", "ada/0/2027-03-15"])
        #expect(rig.channel.delivered.first?.daysUntil == 1)
        // Written before and after the send.
        #expect(rig.ledger.history.prefix(2).map(\.state) == [.sending, .sent])
    }

    /// "Remind me later" (docs/design/asks-and-wishes.md): a `pending` `…/snooze/1` row with its time
    /// waits (no retry counted, `tick` exits 0), wakes the daemon at its time, is
    /// delivered then as the day-of reminder, and once.
    @Test func aSnoozedReminderWaitsForItsTimeThenComesBackOnce() async throws {
        let rig = Rig(try Self.config("[reminders]\noffsets = [0]\n"))
        _ = try await rig.pass([Self.ada], "2027-03-15T08:00")
        #expect(try await rig.pass([Self.ada], "2027-03-15T09:00").sent == 1)
        let id = PlannedEvent.snoozeID(after: "ada/0/2027-03-15")
        #expect(id == "ada/0/2027-03-15/snooze/1")
        let at = Self.at("2027-03-15T10:00", rig.config)
        try rig.ledger.save(LedgerRow(eventID: id, channel: "console", contactID: "ada", state: .pending, fireAt: at,
                                      nextAttemptAt: at), now: Self.at("2027-03-15T09:00", rig.config))

        let early = try await rig.pass([Self.ada], "2027-03-15T09:30")
        #expect(early.due == 0 && early.retrying == 0 && early.exitStatus == 0)
        #expect(try rig.dispatcher.nextWake(contacts: [Self.ada], now: Self.at("2027-03-15T09:30", rig.config)) == at)
        let due = try await rig.pass([Self.ada], "2027-03-15T10:00")
        #expect(due.sent == 1)
        #expect(rig.channel.delivered.map(\.id) == ["ada/0/2027-03-15", id])
        #expect(rig.channel.delivered.last?.daysUntil == 0)
        #expect(try await rig.pass([Self.ada], "2027-03-15T10:30").due == 0)
        #expect(rig.channel.delivered.count == 2)
        #expect(try rig.ledger.row(eventID: id, channel: "console")?.state == .sent)
    }

    @Test func aSnoozeDueAfterItsDayIsMissed() async throws {
        let rig = Rig(try Self.config("[reminders]\noffsets = [0]\n"))
        _ = try await rig.pass([Self.ada], "2027-03-15T08:00")
        #expect(try await rig.pass([Self.ada], "2027-03-15T09:00").sent == 1)
        let at = Self.at("2027-03-16T00:30", rig.config)
        try rig.ledger.save(LedgerRow(eventID: "ada/0/2027-03-15/snooze/1", channel: "console", contactID: "ada",
                                      state: .pending, fireAt: at, nextAttemptAt: at), now: at)
        let late = try await rig.pass([Self.ada], "2027-03-16T00:30")
        #expect(late.missed == 1 && late.sent == 0, "\(late)")
        #expect(try rig.ledger.row(eventID: "ada/0/2027-03-15/snooze/1", channel: "console")?.state == .missed)
    }

    @Test func snoozeIDsCountUpAndAreNoPlannedEvents() {
        #expect(PlannedEvent.snoozeID(after: "a%2Fb/0/2027-03-15/snooze/1") == "a%2Fb/0/2027-03-15/snooze/2")
        #expect(PlannedEvent.snoozed("a/anniversary/0/2027-03-15/snooze/3")?.base == "a/anniversary/0/2027-03-15")
        #expect(PlannedEvent.snoozed("a/0/2027-03-15") == nil)
        #expect(PlannedEvent.snoozed("a/0/2027-03-15/snooze/x") == nil)
        // Not a planned event: planning and `RecordedDeliveries` pass over it.
        #expect(PlannedEvent.parse("a/0/2027-03-15/snooze/1") == nil)
    }

    @Test func eachOutcomeIsCommittedWithTheNextClaim() async throws {
        let rig = Rig(try Self.config())
        let people = (0..<3).map { PlanningContact(id: "p\($0)", name: "P\($0)", birthday: Birthday(month: 3, day: 15), includedAt: 0) }
        _ = try await rig.pass(people, "2027-03-15T08:00")
        let report = try await rig.pass(people, "2027-03-15T09:00")
        #expect(report.sent == 3)
        // InMemoryLedger saves a batch row by row: claim p0; p0 sent + claim p1; p1 sent + claim p2; p2 sent.
        #expect(rig.ledger.history.map { "\($0.eventID.prefix(2)) \($0.state)" }
                == ["p0 sending", "p0 sent", "p1 sending", "p1 sent", "p2 sending", "p2 sent"])
        #expect(rig.ledger.history.allSatisfy { $0.state != .sending || $0.attempts == 1 })
        // Never two rows `sending` at once: the one in flight is the only one a crash can repeat.
        var sending: Set<String> = []
        for row in rig.ledger.history {
            if row.state == .sending { sending.insert(row.eventID) } else { sending.remove(row.eventID) }
            #expect(sending.count <= 1)
        }
    }

    @Test func freshDataDirSendsNoBacklog() async throws {
        let rig = Rig(try Self.config())
        // First ever run on Jan 1 at 10:00: the Dec 31 day-before reminder (09:00) is a day late.
        let jan1 = PlanningContact(id: "j", name: "J", birthday: Birthday(month: 1, day: 1), includedAt: 0)
        let report = try await rig.pass([jan1], "2027-01-01T10:00")
        #expect(report.sent == 1)  // the day-of reminder, 1 h late, is inside catch-up
        #expect(rig.channel.delivered.map(\.id) == ["j/0/2027-01-01"])
    }

    @Test func catchUpInsideAndOutsideTheWindow() async throws {
        let rig = Rig(try Self.config("[reminders]\ncatch_up = \"2h\"\n"))
        _ = try await rig.pass([Self.ada], "2027-03-01T00:00")
        // Machine off from Mar 1 until Mar 15 10:30: the day-before reminder (Mar 14 09:00) is 25 h late → missed;
        // the day-of one (09:00) is 1.5 h late → sent.
        let report = try await rig.pass([Self.ada], "2027-03-15T10:30")
        #expect(report.missed == 1)
        #expect(report.sent == 1)
        // The missed one is not sent late; it is announced, once, in a notice.
        #expect(rig.channel.delivered.map(\.id) == ["ada/0/2027-03-15", "%notice/ada/1/2027-03-15"])
        #expect(try rig.ledger.row(eventID: "ada/1/2027-03-15", channel: "console")?.state == .missed)
        #expect(report.problems == 1 && report.exitStatus == 1)
    }

    @Test func aWeekOfflineGivesTodaysRemindersNotAWeekOfThem() async throws {
        let rig = Rig(try Self.config())
        let people = (10...20).map { PlanningContact(id: "p\($0)", name: "P\($0)", birthday: Birthday(month: 6, day: $0), includedAt: 0) }
        _ = try await rig.pass(people, "2027-06-09T20:00")
        let before = rig.channel.delivered.count  // p10's day-before reminder, 11 h late: inside catch-up
        let report = try await rig.pass(people, "2027-06-17T09:30")
        let reminders = rig.channel.delivered.dropFirst(before).filter { $0.kind != .notice }
        #expect(Set(reminders.map(\.id)) == ["p17/0/2027-06-17", "p18/1/2027-06-18"])
        #expect(report.missed > 10)
        // Nothing missed is sent late: one notice lists every missed reminder.
        let notices = rig.channel.delivered.filter { $0.kind == .notice }
        #expect(notices.count == 1)
        #expect(notices.first?.body.split(separator: "\n").count == report.missed)
        _ = try await rig.pass(people, "2027-06-17T10:30")
        #expect(rig.channel.delivered.filter { $0.kind == .notice }.count == 1)  // announced once
    }

    @Test func includedAfterFireTimeIsSkipped() async throws {
        let rig = Rig(try Self.config())
        _ = try await rig.pass([], "2027-03-15T08:00")
        let late = PlanningContact(id: "ada", name: "Ada", birthday: Birthday(month: 3, day: 15),
                                   includedAt: Self.at("2027-03-15T09:30", rig.config))
        let report = try await rig.pass([late], "2027-03-15T10:00")
        #expect(report.skipped == 1)
        #expect(rig.channel.delivered.isEmpty)
    }

    @Test func temporaryFailuresBackOffThenDeliverOnce() async throws {
        let rig = Rig(try Self.config())
        _ = try await rig.pass([Self.ada], "2027-03-14T08:00")
        rig.channel.failNext(.temporary("HTTP 500"), .temporary("HTTP 500"))
        let first = try await rig.pass([Self.ada], "2027-03-14T09:00")
        #expect(first.retrying == 1 && first.exitStatus == 1)
        let row = try #require(try rig.ledger.row(eventID: "ada/1/2027-03-15", channel: "console"))
        #expect(row.state == .retrying)
        #expect(row.nextAttemptAt == Self.at("2027-03-14T09:00:30", rig.config))  // 30 s × (0.8 + 0.4 × 0.5)
        let tooSoon = try await rig.pass([Self.ada], "2027-03-14T09:00:10")
        #expect(tooSoon.due == 0 && tooSoon.retrying == 1)
        _ = try await rig.pass([Self.ada], "2027-03-14T09:00:31")  // second failure: 60 s
        let third = try await rig.pass([Self.ada], "2027-03-14T09:02:00")
        #expect(third.sent == 1 && third.exitStatus == 0)
        #expect(rig.channel.delivered.map(\.id) == ["ada/1/2027-03-15"])
        #expect(try rig.ledger.row(eventID: "ada/1/2027-03-15", channel: "console")?.attempts == 3)
    }

    @Test func retryAfterWinsOverTheCap() async throws {
        let rig = Rig(try Self.config("[delivery]\nmax_backoff = \"1m\"\n"))
        _ = try await rig.pass([Self.ada], "2027-03-14T08:00")
        rig.channel.failNext(.temporary("HTTP 429", retryAfter: 600))
        _ = try await rig.pass([Self.ada], "2027-03-14T09:00")
        let row = try #require(try rig.ledger.row(eventID: "ada/1/2027-03-15", channel: "console"))
        #expect(row.nextAttemptAt == Self.at("2027-03-14T09:10", rig.config))
    }

    /// A server that says "come back in 10 minutes" (or cannot be reached) is not
    /// sent the pass's other messages: they wait for the same time, untried.
    @Test func aChannelThatSaysWaitHoldsTheRestOfThePass() async throws {
        let rig = Rig(try Self.config())
        let people = (0..<3).map { PlanningContact(id: "p\($0)", name: "P\($0)", birthday: Birthday(month: 3, day: 15), includedAt: 0) }
        _ = try await rig.pass(people, "2027-03-15T08:00")
        rig.channel.failNext(.temporary("HTTP 429", retryAfter: 600))
        let limited = try await rig.pass(people, "2027-03-15T09:00")
        #expect(limited.retrying == 3 && limited.sent == 0, "\(limited)")
        #expect(rig.channel.delivered.isEmpty)
        let retryAt = Self.at("2027-03-15T09:10", rig.config)
        for id in ["p0", "p1", "p2"] {
            let row = try #require(try rig.ledger.row(eventID: "\(id)/0/2027-03-15", channel: "console"))
            #expect(row.state == .retrying && row.nextAttemptAt == retryAt, "\(row)")
            #expect(row.attempts == (id == "p0" ? 1 : 0), "only the first was tried: \(row)")
        }
        #expect(try rig.ledger.row(eventID: "p1/0/2027-03-15", channel: "console")?.lastError?.hasPrefix("not tried") == true)
        // A failure that is about one message (a 500) does not hold the others.
        let later = try await rig.pass(people, "2027-03-15T09:10")
        #expect(later.sent == 3, "\(later)")

        let rig2 = Rig(try Self.config())
        _ = try await rig2.pass(people, "2027-03-15T08:00")
        rig2.channel.failNext(.temporary("HTTP 500"))
        let one = try await rig2.pass(people, "2027-03-15T09:00")
        #expect(one.sent == 2 && one.retrying == 1, "\(one)")
        // No connection at all: the same hold.
        let rig3 = Rig(try Self.config())
        _ = try await rig3.pass(people, "2027-03-15T08:00")
        rig3.channel.failNext(.unavailable("connection refused"))
        let down = try await rig3.pass(people, "2027-03-15T09:00")
        #expect(down.sent == 0 && down.retrying == 3 && rig3.channel.delivered.isEmpty, "\(down)")
    }

    @Test func permanentFailuresAndExhaustedAttemptsFail() async throws {
        let rig = Rig(try Self.config("[delivery]\nmax_attempts = 2\n"))
        _ = try await rig.pass([Self.ada], "2027-03-14T08:00")
        rig.channel.failNext(.permanent("HTTP 404"))
        let report = try await rig.pass([Self.ada], "2027-03-14T09:00")
        #expect(report.failed == 1)
        rig.channel.failNext(.temporary("down"), .temporary("down"))
        _ = try await rig.pass([Self.ada], "2027-03-15T09:00")
        _ = try await rig.pass([Self.ada], "2027-03-15T09:05")
        #expect(try rig.ledger.row(eventID: "ada/0/2027-03-15", channel: "console")?.state == .failed)
    }

    @Test func aCrashMidSendIsResentWithTheSameID() async throws {
        let rig = Rig(try Self.config())
        _ = try await rig.pass([Self.ada], "2027-03-14T08:00")
        // A previous process wrote `sending` and died.
        try rig.ledger.save(LedgerRow(eventID: "ada/1/2027-03-15", channel: "console", contactID: "ada", state: .sending,
                                      fireAt: Self.at("2027-03-14T09:00", rig.config), attempts: 1),
                            now: 0)
        let report = try await rig.pass([Self.ada], "2027-03-14T09:01")
        #expect(report.sent == 1)
        #expect(rig.channel.delivered.map(\.id) == ["ada/1/2027-03-15"])
    }

    @Test func undeliveredWhenItsDayEndsIsMissed() async throws {
        let rig = Rig(try Self.config())
        _ = try await rig.pass([Self.ada], "2027-03-15T08:00")
        rig.channel.failNext(.temporary("down"))
        _ = try await rig.pass([Self.ada], "2027-03-15T09:00")
        let report = try await rig.pass([Self.ada], "2027-03-16T00:30")
        #expect(report.missed == 1)
        // Not sent after its day; the channel, back now, carries the notice that says so.
        #expect(rig.channel.delivered.map(\.id) == ["%notice/ada/0/2027-03-15"])
        #expect(rig.channel.delivered.first?.body.contains("buzz wish Ada") == true)
    }

    @Test func backoffGrowsAndCaps() {
        let backoff = Backoff(cap: 3_600, maxAttempts: 8)
        #expect((1...8).map { backoff.delay(afterAttempt: $0, retryAfter: nil, jitter: 0.5) }
                == [30, 60, 120, 240, 480, 960, 1_920, 3_600])
        #expect(backoff.delay(afterAttempt: 1, retryAfter: 7_200, jitter: 0) == 7_200)
        #expect(backoff.delay(afterAttempt: 1, retryAfter: nil, jitter: 0) == 24)
        #expect(backoff.delay(afterAttempt: 1, retryAfter: nil, jitter: 0.999) == 36)
    }

    @Test func eventIDsParseBack() {
        let parts = PlannedEvent.parse("urn:uuid:a%2Fb%25c/1/2027-03-15")
        #expect(parts?.contactID == "urn:uuid:a/b%c")
        #expect(parts?.offset == 1)
        #expect(parts?.occurrence.description == "2027-03-15")
        #expect(PlannedEvent.parse("x/ask/1") == nil)
    }

    @Test func stoppingMidPassParksTheRestAsPending() async throws {
        let rig = Rig(try Self.config())
        let people = (0..<5).map { PlanningContact(id: "p\($0)", name: "P\($0)", birthday: Birthday(month: 3, day: 15), includedAt: 0) }
        _ = try await rig.pass(people, "2027-03-15T08:00")
        let sends = Counter()
        let stopped = try await rig.dispatcher.pass(contacts: people, now: Self.at("2027-03-15T09:00", rig.config),
                                                    shouldStop: { sends.next() > 2 })
        #expect(stopped.sent == 2)
        #expect(try rig.ledger.unfinished().map(\.state) == [.pending, .pending, .pending])
        let resumed = try await rig.pass(people, "2027-03-15T09:01")
        #expect(resumed.sent == 3)
        #expect(Set(rig.channel.delivered.map(\.id)).count == 5 && rig.channel.delivered.count == 5)
    }
}

/// Counts calls (for a `shouldStop` that says yes after a few sends).
final class Counter: Sendable {
    private let value = Mutex(0)

    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
