import BuzzTestKit
import Foundation
import Synchronization
import Testing
@testable import BirthdayBuzz

/// Fallback chains and their timing in the dispatcher alone (in-memory ledger,
/// channels that record or fail as told); the same against real servers is in
/// NeverSilentTests.
@Suite struct FallbackTests {
    /// A channel that fails every delivery with `error` while `down`, and records what it took.
    final class Flaky: NotificationChannel {
        let name: String
        private let state: Mutex<(down: Bool, delivered: [Message])>
        let error: DeliveryError

        init(_ name: String, down: Bool = true, error: DeliveryError = .temporary("down")) {
            self.name = name
            self.error = error
            state = Mutex((down, []))
        }

        var delivered: [Message] { state.withLock { $0.delivered } }
        func setDown(_ down: Bool) { state.withLock { $0.down = down } }

        func deliver(_ message: Message) async throws {
            try state.withLock { state in
                if state.down { throw error }
                state.delivered.append(message)
            }
        }

        func shutdown() async {}
    }

    struct Rig {
        let config: BuzzConfig
        let ledger = InMemoryLedger()
        let channels: [String: Flaky]
        let dispatcher: Dispatcher

        init(_ extra: String, channels: [Flaky]) throws {
            config = try DispatcherTests.config(extra)
            let byName = Dictionary(uniqueKeysWithValues: channels.map { ($0.name, $0) })
            self.channels = byName
            dispatcher = Dispatcher(config: config, planner: Planner(config: config, defaultChannels: ["r"]),
                                    ledger: ledger, renderer: PlainRenderer(),
                                    channel: { name in
                                        byName[name].map { .success($0) } ?? .failure(.permanent("\(name): no such channel"))
                                    },
                                    jitter: { 0.5 })
        }

        @discardableResult
        func pass(_ contacts: [PlanningContact], _ now: String) async throws -> DispatchReport {
            try await dispatcher.pass(contacts: contacts, now: DispatcherTests.at(now, config))
        }

        func nextWake(_ contacts: [PlanningContact], _ now: String) throws -> Int64? {
            try dispatcher.nextWake(contacts: contacts, now: DispatcherTests.at(now, config))
        }
    }

    static let ada = PlanningContact(id: "ada", name: "Ada", birthday: Birthday(month: 3, day: 15, year: 1990), includedAt: 0)

    /// The chain route → a → b, each after fallback_after of the one before, each once.
    @Test func eachFallbackFollowsThePreviousOneAfterFallbackAfter() async throws {
        let route = Flaky("r"), first = Flaky("a"), second = Flaky("b", down: false)
        let rig = try Rig("[reminders]\noffsets = [0]\nchannels = [\"r\"]\nfallback = [\"a\", \"b\"]\nfallback_after = \"2h\"\n"
                          + "[channels.r]\ntype = \"console\"\n[channels.a]\ntype = \"console\"\n[channels.b]\ntype = \"console\"\n",
                          channels: [route, first, second])
        try await rig.pass([Self.ada], "2027-03-15T08:00")
        try await rig.pass([Self.ada], "2027-03-15T09:00")  // T: the route's first attempt
        #expect(try rig.nextWake([Self.ada], "2027-03-15T09:00:01") ?? 0 <= DispatcherTests.at("2027-03-15T11:00", rig.config))
        try await rig.pass([Self.ada], "2027-03-15T10:59")
        #expect(try rig.ledger.row(eventID: "ada/0/2027-03-15", channel: "a") == nil)
        try await rig.pass([Self.ada], "2027-03-15T11:00")
        let fallbackRow = try #require(try rig.ledger.row(eventID: "ada/0/2027-03-15", channel: "a"))
        #expect(fallbackRow.via == .fallback(for: ["r"]) && fallbackRow.state == .retrying)
        try await rig.pass([Self.ada], "2027-03-15T12:59")
        #expect(second.delivered.isEmpty, "not before a's first attempt + 2h")
        try await rig.pass([Self.ada], "2027-03-15T13:00")
        #expect(second.delivered.map(\.id) == ["ada/0/2027-03-15"])
        #expect(second.delivered.first?.body == "fallback for r: down")
        // Delivered: the route's and a's retries are closed, nothing is sent again, nothing announced.
        route.setDown(false)
        first.setDown(false)
        for now in ["2027-03-15T14:00", "2027-03-15T20:00", "2027-03-16T01:00"] { try await rig.pass([Self.ada], now) }
        #expect(route.delivered.isEmpty && first.delivered.isEmpty && second.delivered.count == 1)
        #expect(try rig.ledger.row(eventID: "ada/0/2027-03-15", channel: "r")?.state == .skipped)
        #expect(try rig.ledger.row(eventID: "ada/0/2027-03-15", channel: "r")?.lastError == "delivered by b (fallback for r)")
        #expect(try rig.ledger.problems(firedAfter: 0).isEmpty)
    }

    /// A reminder late in the day: the fallback comes an hour before the day ends, not after it.
    @Test func aLateReminderFallsBackAnHourBeforeTheDayEnds() async throws {
        let route = Flaky("r"), phone = Flaky("p", down: false)
        let rig = try Rig("[reminders]\noffsets = [0]\ntime = \"21:30\"\nchannels = [\"r\"]\nfallback = [\"p\"]\nfallback_after = \"4h\"\n"
                          + "[channels.r]\ntype = \"console\"\n[channels.p]\ntype = \"console\"\n",
                          channels: [route, phone])
        try await rig.pass([Self.ada], "2027-03-15T08:00")
        try await rig.pass([Self.ada], "2027-03-15T21:30")
        try await rig.pass([Self.ada], "2027-03-15T22:59")
        #expect(phone.delivered.isEmpty)
        try await rig.pass([Self.ada], "2027-03-15T23:00")
        #expect(phone.delivered.count == 1)
    }

    /// Groups and anniversaries: their own fallback, else inherited; `[]` turns it off.
    @Test func groupsAndAnniversariesInheritOrOverride() throws {
        let config = try DispatcherTests.config("""
            [reminders]
            fallback = ["p"]
            fallback_after = "3h"
            [anniversaries]
            fallback_after = "1h"
            [groups.family]
            fallback = ["m"]
            [groups.quiet]
            fallback = []
            [channels.p]
            type = "console"
            [channels.m]
            type = "console"
            """)
        let planner = Planner(config: config, defaultChannels: ["console"])
        func contact(_ categories: [String]) -> PlanningContact {
            var contact = Self.ada
            contact.categories = categories
            return contact
        }
        #expect(planner.route(for: contact([]), occasion: .birthday).fallback == ["p"])
        #expect(planner.route(for: contact([]), occasion: .birthday).fallbackAfter == 10_800)
        #expect(planner.route(for: contact(["Family"]), occasion: .birthday).fallback == ["m"])
        #expect(planner.route(for: contact(["quiet"]), occasion: .birthday).fallback == [])
        #expect(planner.route(for: contact(["family"]), occasion: .anniversary).fallback == ["m"])
        #expect(planner.route(for: contact([]), occasion: .anniversary).fallbackAfter == 3_600)
    }

    /// Missed while the machine was off: announced, never sent late through a fallback.
    @Test func aMissedReminderIsNeverSentThroughAFallback() async throws {
        let route = Flaky("r", down: false), phone = Flaky("p", down: false)
        let rig = try Rig("[reminders]\noffsets = [0]\nchannels = [\"r\"]\nfallback = [\"p\"]\nnotices = [\"r\"]\n"
                          + "[channels.r]\ntype = \"console\"\n[channels.p]\ntype = \"console\"\n",
                          channels: [route, phone])
        try await rig.pass([Self.ada], "2027-03-01T08:00")
        let report = try await rig.pass([Self.ada], "2027-03-15T23:00")
        #expect(report.missed == 1 && report.problems == 1)
        #expect(phone.delivered.isEmpty)
        #expect(route.delivered.map(\.id) == ["%notice/ada/0/2027-03-15"])
        #expect(route.delivered.first?.body == "Ada birthday 2027-03-15: due while BirthdayBuzz was not running — buzz wish Ada")
    }

    /// The first fallback refuses for good: the second is tried in the same pass,
    /// and the reminder is no problem (nothing is announced).
    @Test func aFallbackRefusedForGoodHandsOnAtOnce() async throws {
        let route = Flaky("r", error: .permanent("r: gone")), first = Flaky("a", error: .permanent("a: gone"))
        let second = Flaky("b", down: false)
        let rig = try Rig("[reminders]\noffsets = [0]\nchannels = [\"r\"]\nfallback = [\"a\", \"b\"]\n"
                          + "[channels.r]\ntype = \"console\"\n[channels.a]\ntype = \"console\"\n[channels.b]\ntype = \"console\"\n",
                          channels: [route, first, second])
        try await rig.pass([Self.ada], "2027-03-15T08:00")
        let report = try await rig.pass([Self.ada], "2027-03-15T09:00")
        #expect(second.delivered.map(\.id) == ["ada/0/2027-03-15"])
        #expect(second.delivered.first?.body == "fallback for r: a: gone")  // the last error, naming its channel
        #expect(report.problems == 0 && report.failed == 2 && report.sent == 1)
    }

    /// An evening reminder nobody saw escalates after midnight: it is still sent
    /// (until the end of the next day), with the line saying why, and once.
    @Test func anEscalationAfterMidnightIsStillSent() async throws {
        let desktop = Flaky("desktop", down: false), phone = Flaky("phone", down: false)
        let rig = try Rig("[reminders]\noffsets = [0]\ntime = \"22:00\"\nchannels = [\"desktop\"]\n"
                          + "[channels.phone]\ntype = \"console\"\n", channels: [desktop, phone])
        try await rig.pass([Self.ada], "2027-03-15T08:00")
        try await rig.pass([Self.ada], "2027-03-15T22:00")
        #expect(desktop.delivered.count == 1)
        // What `buzz run` writes when the notification was not seen within 3 h.
        try rig.ledger.save(LedgerRow(eventID: "ada/0/2027-03-15", channel: "phone", contactID: "ada", state: .pending,
                                      fireAt: DispatcherTests.at("2027-03-15T22:00", rig.config),
                                      nextAttemptAt: DispatcherTests.at("2027-03-16T01:00", rig.config),
                                      via: .escalated(from: "desktop")), now: 0)
        try await rig.pass([Self.ada], "2027-03-16T01:00")
        #expect(phone.delivered.map(\.id) == ["ada/0/2027-03-15"])
        #expect(phone.delivered.first?.body == "fallback for desktop: the notification was not seen")
        try await rig.pass([Self.ada], "2027-03-16T02:00")
        #expect(phone.delivered.count == 1)
    }
}
