import BuzzTestKit
import Foundation
import Testing
@testable import BirthdayBuzz

/// docs/design/reminders.md, catch-up: no event passes without a delivery or a ledger row that
/// says why, whatever moved its fire time behind the watermark; and an event the
/// ledger holds is never planned or sent again when its time moves later.
///
/// Each test runs passes with one configuration, then changes it (a new
/// dispatcher over the same ledger, as `run` does on SIGHUP and the next `tick` does).
@Suite struct CatchUpTests {
    /// Dispatchers over one ledger and one recording channel; `config` swaps the settings.
    final class World {
        let ledger = InMemoryLedger()
        let channel = RecordingChannel(name: "console")
        var config: BuzzConfig

        init(_ toml: String) throws { config = try CatchUpTests.config(toml) }

        func reconfigure(_ toml: String) throws { config = try CatchUpTests.config(toml) }

        var dispatcher: Dispatcher {
            let channel = self.channel
            return Dispatcher(config: config, planner: Planner(config: config, defaultChannels: ["console"]),
                              ledger: ledger, renderer: PlainRenderer(), channel: { _ in .success(channel) },
                              jitter: { 0.5 })
        }

        /// A pass at `now`, local time of the current config unless it carries an offset.
        @discardableResult
        func pass(_ contacts: [PlanningContact], _ now: String) async throws -> DispatchReport {
            try await dispatcher.pass(contacts: contacts, now: instant(now))
        }

        func instant(_ text: String) -> Int64 {
            PinnedNow(text)!.instant(in: WallClock(timeZone: config.general.timeZone))
        }

        func upcoming(_ contacts: [PlanningContact], _ now: String) throws -> [String] {
            let planner = Planner(config: config, defaultChannels: ["console"])
            let at = instant(now)
            return planner.upcoming(contacts, now: at, limit: 10, recorded: try ledger.recorded(around: at, planner: planner))
                .map(\.id)
        }

        var delivered: [String] { channel.delivered.map(\.id) }

        func state(_ id: String) throws -> DeliveryState? { try ledger.row(eventID: id, channel: "console")?.state }
    }

    static func config(_ toml: String) throws -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "t.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!, types: .shipped)
    }

    static let berlin = "[general]\ntimezone = \"Europe/Berlin\"\n"
    static let ada = PlanningContact(id: "ada", name: "Ada", birthday: Birthday(month: 3, day: 15, year: 1990), includedAt: 0)

    @Test func anEarlierReminderTimeOnTheDayIsStillDelivered() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"09:00\"\n")
        try await world.pass([Self.ada], "2027-03-15T06:00")
        try await world.pass([Self.ada], "2027-03-15T08:30")  // watermark 08:30: nothing due yet
        try world.reconfigure(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"08:00\"\n")
        let report = try await world.pass([Self.ada], "2027-03-15T08:35")  // 08:00 is now behind the watermark
        #expect(report.sent == 1)
        #expect(world.delivered == ["ada/0/2027-03-15"])
    }

    @Test func anEarlierTimeBeyondCatchUpIsRecordedMissed() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"23:00\"\ncatch_up = \"1h\"\n")
        try await world.pass([Self.ada], "2027-03-15T06:00")
        try await world.pass([Self.ada], "2027-03-15T12:00")
        try world.reconfigure(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"09:00\"\ncatch_up = \"1h\"\n")
        let report = try await world.pass([Self.ada], "2027-03-15T12:05")
        #expect(report.missed == 1 && report.sent == 0)
        #expect(try world.state("ada/0/2027-03-15") == .missed)
        let reason = try world.ledger.row(eventID: "ada/0/2027-03-15", channel: "console")?.lastError
        #expect(reason?.contains("had passed when it was planned") == true, "\(reason ?? "nil")")
    }

    @Test func aChangedTimeZoneThatMovesTheTimeBackIsDelivered() async throws {
        // 09:00 in New York is 14:00Z; in Berlin 08:00Z. Switched at 10:00Z.
        let newYork = "[general]\ntimezone = \"America/New_York\"\n[reminders]\noffsets = [0]\n"
        let world = try World(newYork)
        try await world.pass([Self.ada], "2027-03-15T05:00Z")
        try await world.pass([Self.ada], "2027-03-15T10:00Z")
        try world.reconfigure(Self.berlin + "[reminders]\noffsets = [0]\n")
        let report = try await world.pass([Self.ada], "2027-03-15T10:05Z")
        #expect(report.sent == 1 && world.delivered == ["ada/0/2027-03-15"])
        // Switching back does not send it again at New York's 09:00.
        try world.reconfigure(newYork)
        let later = try await world.pass([Self.ada], "2027-03-15T14:05Z")
        #expect(later.sent == 0 && world.delivered.count == 1)
    }

    @Test func aNewOffsetWhoseTimeHasPassedIsDeliveredOrRecorded() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0]\n")
        try await world.pass([Self.ada], "2027-03-01T06:00")
        try await world.pass([Self.ada], "2027-03-14T09:30")
        // Day-before and week-before reminders added at 09:40 on Mar 14.
        try world.reconfigure(Self.berlin + "[reminders]\noffsets = [0, 1, 7]\n")
        let report = try await world.pass([Self.ada], "2027-03-14T09:40")
        // 40 minutes late: inside catch-up; the week-before one is announced, never sent late.
        #expect(world.delivered == ["ada/1/2027-03-15", "%notice/ada/7/2027-03-15"])
        #expect(report.missed == 1)
        #expect(try world.state("ada/7/2027-03-15") == .missed, "six days late: recorded, not sent")
    }

    @Test func aClockSteppedBackStillSeesNewEventsBehindTheWatermark() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [1]\n")
        try await world.pass([Self.ada], "2027-03-14T06:00")
        try await world.pass([Self.ada], "2027-03-14T12:00")  // Ada's day-before reminder sent at 09:00's pass
        #expect(world.delivered == ["ada/1/2027-03-15"])
        // The clock is stepped back to 08:00; Bob is imported (included) at 08:30.
        let bob = PlanningContact(id: "bob", name: "Bob", birthday: Birthday(month: 3, day: 15),
                                  includedAt: world.instant("2027-03-14T08:30"))
        try await world.pass([Self.ada, bob], "2027-03-14T08:00")
        let report = try await world.pass([Self.ada, bob], "2027-03-14T09:05")
        #expect(report.sent == 1)
        #expect(world.delivered == ["ada/1/2027-03-15", "bob/1/2027-03-15"], "Ada's is not sent twice")
    }

    @Test func aContactImportedJustAfterItsTimeIsRecordedSkipped() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0]\n")
        try await world.pass([], "2027-03-15T06:00")
        try await world.pass([], "2027-03-15T09:05")
        // Imported at 09:10 for a 09:00 reminder: the next pass (09:15) looks behind the watermark.
        let late = PlanningContact(id: "ada", name: "Ada", birthday: Birthday(month: 3, day: 15),
                                   includedAt: world.instant("2027-03-15T09:10"))
        let report = try await world.pass([late], "2027-03-15T09:15")
        #expect(report.skipped == 1 && world.delivered.isEmpty)
        #expect(try world.state("ada/0/2027-03-15") == .skipped)
    }

    @Test func aSentReminderWhoseTimeMovesLaterIsNotPlannedOrSentAgain() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"09:00\"\n")
        try await world.pass([Self.ada], "2027-03-15T06:00")
        try await world.pass([Self.ada], "2027-03-15T09:00")
        #expect(world.delivered == ["ada/0/2027-03-15"])
        try world.reconfigure(Self.berlin + "[reminders]\noffsets = [0]\ntime = \"10:00\"\n")
        #expect(try world.upcoming([Self.ada], "2027-03-15T09:30") == ["ada/0/2028-03-15"],
                "the sent one is not listed again at its new time")
        let report = try await world.pass([Self.ada], "2027-03-15T10:05")
        #expect(report.sent == 0 && report.due == 0)
        #expect(world.delivered == ["ada/0/2027-03-15"])
        let wake = try world.dispatcher.nextWake(contacts: [Self.ada], now: world.instant("2027-03-15T09:30"))
        #expect(wake == world.instant("2028-03-15T10:00"), "the daemon does not wake for the sent one")
    }

    @Test func aFreshDataDirRecordsNothingFromBeforeItExisted() async throws {
        let world = try World(Self.berlin + "[reminders]\noffsets = [0, 1, 7]\n")
        // First run ever at 10:00 on the birthday: the day-of reminder (1 h late) goes out;
        // the day-before and week-before ones predate the data dir: no rows at all.
        let report = try await world.pass([Self.ada], "2027-03-15T10:00")
        #expect(report.sent == 1 && report.missed == 0)
        #expect(try world.state("ada/1/2027-03-15") == nil && world.state("ada/7/2027-03-15") == nil)
    }
}
