import BirthdayBuzz
import BuzzDaemon
import BuzzChannels
import BuzzStore
import BuzzTestKit
import Foundation
import Logging
import Testing
@testable import BuzzCommands

/// Escalation when unseen: a `dbus` channel with `escalate` shows every
/// reminder resident, and one the user neither acted on nor dismissed within
/// `escalate_after` goes on to the escalate channels, once.
///
/// `buzz run`'s loop runs in-process on a `VirtualClock` (hours pass at once),
/// against python-dbusmock's notification server on a private bus; the
/// escalate channel is a webhook to the HTTP sink. The user's acts are the
/// server's signals, emitted through dbusmock.
@Suite(.timeLimit(.minutes(2)))
struct EscalationTests {
    static let gate = ServerGate.allows(.dbus) && ServerGate.allows(.http)
    /// 2027-05-10T09:00:00Z: the day-of reminders fire.
    static let fire: Int64 = 1_809_939_600
    static let day: Int64 = 86_400
    /// Seconds from `fire` to next year's (2028 is a leap year).
    static let nextYear: Int64 = 366 * 86_400

    static func config(sink: URL, offsets: String = "[0]", after: String = "3h") -> String {
        """
        [general]
        timezone = "UTC"
        locale = "en"
        [reminders]
        offsets = \(offsets)
        channels = ["desktop"]
        time = "09:00"
        [channels.desktop]
        type = "dbus"
        timeout = "5s"
        escalate = ["phone"]
        escalate_after = "\(after)"
        [channels.phone]
        type = "webhook"
        url = "\(sink.absoluteString)/phone"
        timeout = "5s"

        """
    }

    /// A sandbox with `names` (uids: their lowercased names), all born on May 10.
    static func world(_ config: String, names: [String]) async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(config)
        chmod(sandbox.configPath, 0o600)
        let cards = names.map { VCard.card(uid: $0.lowercased(), name: $0, bday: "1990-05-10") }.joined()
        let file = try sandbox.write("contacts.vcf", cards)
        let imported = try await sandbox.run(["import", file, "--now", "2027-05-08T08:00:00Z"])
        #expect(imported.status == 0, "\(imported)")
        return sandbox
    }

    /// The daemon as `RunCommand` wires it, on `clock`, with the bus in its environment.
    static func daemon(_ sandbox: Sandbox, bus: PrivateBus, clock: VirtualClock) throws -> BirthdayDaemon {
        let settings = GlobalSettings(config: sandbox.configPath, dataDir: sandbox.dataDir, now: nil)
        let context = try Context(settings, environment: sandbox.environment.merging(bus.environment) { _, bus in bus })
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

    /// A daemon running on its own task until `stop`.
    struct Running {
        let daemon: BirthdayDaemon
        let clock: VirtualClock
        let task: Task<Void, any Error>

        init(_ sandbox: Sandbox, bus: PrivateBus, at now: Int64) throws {
            clock = VirtualClock(now: now)
            daemon = try EscalationTests.daemon(sandbox, bus: bus, clock: clock)
            let daemon = daemon
            task = Task { try await daemon.run() }
        }

        func stop() async throws {
            daemon.requests.requestStop()
            clock.wake()
            try await task.value
            daemon.pidFile.release()  // RunCommand's part
        }
    }

    /// The escalations the sink received: their Idempotency-Keys (the event ids), in order.
    static func escalated(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().filter { $0.path == "/phone" }.compactMap { $0.headers["Idempotency-Key"] }
    }

    /// The notification ids the server gave each contact's reminder, from the store.
    static func ids(_ store: BuzzDatabase, count: Int) throws -> [String: UInt32] {
        var ids: [String: UInt32] = [:]
        for id in 1...UInt32(count) {
            let shown = try #require(try store.shownNotification(id: id))
            ids[shown.contactID] = id
        }
        return ids
    }

    static func waitFor(_ what: String, within limit: Duration = .seconds(15), _ done: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try !done() {
            guard ContinuousClock.now < deadline else {
                Issue.record("waited \(limit) for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Four reminders shown at 09:00:30 on a server without the `actions`
    /// capability (no buttons: escalation does not need them), all resident.
    /// Ana's is dismissed by the user (reason 2): seen. Bo's is left open. Cy's
    /// expires (reason 1). Di's gets a forged "dismissed" from another bus name.
    /// At 12:00:30 Bo's, Cy's and Di's go to the phone, once each, as ledger rows
    /// escalated from desktop; the daemon then sleeps until next year's reminders.
    /// A second daemon (after a crash between the rows and the mark, as the
    /// store says) sends nothing again.
    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3 for the HTTP sink"))
    func unseenRemindersEscalateOnceAndADismissedOneDoesNot() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let sandbox = try await Self.world(Self.config(sink: base), names: ["Ana", "Bo", "Cy", "Di"])

        let shownAt = Self.fire + 30
        let deadline = shownAt + 3 * 3_600
        let first = try Running(sandbox, bus: bus, at: shownAt)
        #expect(await first.clock.nextWait() == deadline, "asleep until the first escalation is due")
        let store = first.daemon.store
        // Every one resident (expire_timeout 0, the last word of each logged Notify), without actions.
        let calls = try bus.log().components(separatedBy: #"Notify "BirthdayBuzz""#).dropFirst()
        #expect(calls.count == 4 && calls.allSatisfy { $0.contains(#" [] {"#) && $0.contains(#""birthdaybuzz"} 0"#) },
                "\(calls)")
        let ids = try Self.ids(store, count: 4)
        let ana = try #require(ids["ana"]), bo = try #require(ids["bo"]), cy = try #require(ids["cy"]), di = try #require(ids["di"])
        #expect(try store.watchedNotifications().count == 4)

        try await bus.forgeSignal("NotificationClosed", ["uint32:\(di)", "uint32:2"])
        try await bus.emitNotificationClosed(id: ana, reason: 2)
        try await bus.emitNotificationClosed(id: cy, reason: 1)
        try await Self.waitFor("the closes") { try store.shownNotification(id: cy)?.closedReason == 1 }
        #expect(try store.shownNotification(id: ana)?.escalation == .acknowledged)
        #expect(try store.shownNotification(id: cy)?.escalation == .watching, "expired is not seen")
        #expect(try store.shownNotification(id: di)?.escalation == .watching, "a forged close acknowledges nothing")
        #expect(try store.shownNotification(id: di)?.closedReason == nil)
        #expect(try await Self.escalated(sink).isEmpty)

        first.clock.advance(to: deadline)
        let next = await first.clock.nextWait()
        #expect(next == Self.fire + Self.nextYear, "nothing else to wake for: \(String(describing: next))")
        let sent = try await Self.escalated(sink)
        #expect(sent.sorted() == ["bo/0/2027-05-10", "cy/0/2027-05-10", "di/0/2027-05-10"], "\(sent)")
        _ = bo
        let ledger = store.deliveryLedger
        let row = try #require(try ledger.row(eventID: "bo/0/2027-05-10", channel: "phone"))
        #expect(row.via == .escalated(from: "desktop") && row.kind == .reminder && row.fireAt == Self.fire
                && row.state == .sent && row.contactID == "bo", "\(row)")
        #expect(try ledger.row(eventID: "ana/0/2027-05-10", channel: "phone") == nil)
        #expect(try store.watchedNotifications().isEmpty)
        try await first.stop()

        // A crash after the rows were written and before the mark: the store still says "watching".
        var again = try #require(try store.shownNotification(id: bo))
        again.escalation = .watching
        try store.recordShown(again)
        let second = try Running(sandbox, bus: bus, at: deadline + 600)
        #expect(await second.clock.nextWait() == Self.fire + Self.nextYear)
        #expect(try await Self.escalated(sink).count == 3, "escalated once, across the restart")
        #expect(try store.watchedNotifications().isEmpty)
        try await second.stop()
    }

    /// The notification server restarts after showing the day-before reminder
    /// (its notification is gone, no `NotificationClosed`): it is unseen and
    /// escalates at its time, although the new server gave the day-of
    /// reminder the same id 1 meanwhile. The day-of one is acted on (a click on
    /// its body, the "default" action, from the new server): seen, never escalated.
    /// The daemon restarts in between: what the store knew is kept.
    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3 for the HTTP sink"))
    func aReminderWhoseServerRestartedEscalatesAndOneActedOnDoesNot() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let sandbox = try await Self.world(Self.config(sink: base, offsets: "[0, 1]", after: "1d"), names: ["Ana"])

        let dayBefore = Self.fire - Self.day + 30
        let first = try Running(sandbox, bus: bus, at: dayBefore)
        #expect(await first.clock.nextWait() == Self.fire, "the day-of reminder comes before the escalation")
        let store = first.daemon.store
        let oldServer = try #require(try store.shownNotification(id: 1)?.server)
        try await first.stop()

        try await bus.restartNotificationServer()
        let newServer = try await bus.notificationServerName()
        #expect(newServer != oldServer)
        let second = try Running(sandbox, bus: bus, at: Self.fire - 60)
        #expect(await second.clock.nextWait() == Self.fire)
        second.clock.advance(to: Self.fire)
        #expect(await second.clock.nextWait() == dayBefore + Self.day)
        let dayOf = try #require(try store.shownNotification(id: 1, server: newServer))
        #expect(dayOf.eventID == "ana/0/2027-05-10" && dayOf.escalation == .watching)
        #expect(try store.shownNotification(id: 1, server: oldServer)?.escalation == .watching, "kept apart")
        try await bus.emitActionInvoked(id: 1, key: "default")
        try await Self.waitFor("the click") { try store.shownNotification(id: 1, server: newServer)?.escalation == .acknowledged }
        #expect(try await Self.escalated(sink).isEmpty)

        second.clock.advance(to: dayBefore + Self.day)
        #expect(await second.clock.nextWait() == Self.fire + Self.nextYear - Self.day, "next year's day-before reminder")
        #expect(try await Self.escalated(sink) == ["ana/1/2027-05-10"])
        second.clock.advance(to: Self.fire + Self.day + 30)
        _ = await second.clock.nextWait()
        #expect(try await Self.escalated(sink) == ["ana/1/2027-05-10"])
        #expect(try store.deliveryLedger.row(eventID: "ana/0/2027-05-10", channel: "phone") == nil, "seen: no escalation row")
        try await second.stop()
    }

    /// A real peer: dunst under Xvfb. Both reminders stay (resident; dunst's
    /// own default would expire them after 10 s), dunst's signals reach the
    /// daemon (it sends them only to the connection that asked), and the one
    /// the user closes (`dunstctl close`: reason 2) is seen; the other, left
    /// open, escalates at `escalate_after`, once.
    @Test(.enabled(if: ServerGate.allows(.dunst) && ServerGate.allows(.http), "needs dunst, Xvfb, dbus-daemon and python3"))
    func withDunstTheNotificationTheUserClosedIsSeenAndTheOpenOneEscalates() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let bus = try await PrivateBus.start(notificationServer: false)
        defer { bus.stop() }
        let dunst = try await DunstServer.start(on: bus)
        defer { dunst.stop() }
        let sandbox = try await Self.world(Self.config(sink: base), names: ["Ana", "Bo"])

        let deadline = Self.fire + 30 + 3 * 3_600
        let daemon = try Running(sandbox, bus: bus, at: Self.fire + 30)
        #expect(await daemon.clock.nextWait() == deadline)
        let store = daemon.daemon.store
        let shown = try store.watchedNotifications()
        #expect(Set(shown.map(\.contactID)) == ["ana", "bo"], "\(shown)")

        let closed = try await dunst.control(["close"])
        #expect(closed.status == 0, "\(closed)")
        try await Self.waitFor("dunst's NotificationClosed") { try store.watchedNotifications().count == 1 }
        let seen = try shown.compactMap { try store.shownNotification(id: $0.id, server: $0.server) }
            .filter { $0.escalation == .acknowledged }
        #expect(seen.count == 1 && seen.first?.closedReason == 2, "\(seen)")
        let open = try #require(try store.watchedNotifications().first)
        let shownByDunst = try await dunst.control(["count", "displayed"])
        #expect(shownByDunst.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(shownByDunst)")

        daemon.clock.advance(to: deadline)
        #expect(await daemon.clock.nextWait() == Self.fire + Self.nextYear)
        #expect(try await Self.escalated(sink) == [open.eventID])
        try await daemon.stop()
    }

    /// `doctor` warns that only `buzz run` escalates, unless a daemon runs.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func doctorWarnsWhenNoDaemonRuns() async throws {
        let sandbox = try await Self.world(Self.config(sink: URL(string: "http://127.0.0.1:9")!), names: ["Ana"])
        let warning = "warn  channel desktop sets escalate, but no buzz run daemon is running"
        let alone = try await sandbox.run(["doctor"])
        #expect(alone.stdout.contains(warning), "\(alone)")

        let daemon = try DaemonProcess(sandbox, now: "2027-05-08T08:00:00Z")
        try await daemon.waitForLog("next wake")
        let beside = try await sandbox.run(["doctor"])
        #expect(!beside.stdout.contains("sets escalate"), "\(beside)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }

    static func load(_ toml: String) throws(ConfigError) -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "config.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!,
                       types: ConfigTypes(channels: ChannelRegistry().configTypes, sources: []))
    }

    @Test(arguments: [
        ("escalate = [\"nowhere\"]",
         "config.toml:3:1: channels.desktop.escalate: no channel named \"nowhere\" (define [channels.nowhere])"),
        ("escalate = [\"desktop\"]",
         "config.toml:3:1: channels.desktop.escalate: names the channel itself (\"desktop\"): an unseen notification must go on to another channel"),
        ("escalate = []",
         "config.toml:3:1: channels.desktop.escalate: is empty: name the channels an unseen reminder goes on to, e.g. [\"phone\"], or remove the key"),
        ("escalate = [\"phone\"]\nexpire_timeout = 5000",
         "config.toml:4:1: channels.desktop.expire_timeout: must be 0 (resident) or unset when escalate is set: a notification that expires would escalate although the user never had the chance to dismiss it"),
        ("escalate = [\"phone\"]\nexpire_timeout = -1",
         "config.toml:4:1: channels.desktop.expire_timeout: must be 0 (resident) or unset when escalate is set: a notification that expires would escalate although the user never had the chance to dismiss it"),
        ("escalate = [\"phone\"]\nescalate_after = \"0s\"",
         "config.toml:4:1: channels.desktop.escalate_after: must be longer than 0s and at most 7d"),
        ("escalate = [\"phone\"]\nescalate_after = \"8d\"",
         "config.toml:4:1: channels.desktop.escalate_after: must be longer than 0s and at most 7d"),
        ("escalate_after = \"1h\"",
         "config.toml:3:1: channels.desktop.escalate_after: is set but escalate is not: name the channels to escalate to, e.g. escalate = [\"phone\"]"),
        ("escalate = \"phone\"",
         "config.toml:3:1: channels.desktop.escalate: expected an array of strings, found string"),
    ])
    func configErrors(_ keys: String, _ expected: String) throws {
        do {
            _ = try Self.load("[channels.desktop]\ntype = \"dbus\"\n\(keys)\n[channels.phone]\ntype = \"console\"\n")
            Issue.record("loaded: \(keys)")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func escalateNamesOtherChannelsWithADefaultDelay() throws {
        let config = try Self.load("""
            [channels.desktop]
            type = "dbus"
            escalate = ["phone", "mail", "phone"]
            expire_timeout = 0
            [channels.laptop]
            type = "dbus"
            escalate = ["desktop"]
            escalate_after = "90m"
            [channels.phone]
            type = "console"
            [channels.mail]
            type = "console"
            """)
        let desktop = try DBusChannel.options(of: try #require(config.channel(named: "desktop")))
        #expect(desktop.escalate == ["phone", "mail"] && desktop.escalateAfter == 3 * 3_600 && desktop.expireTimeout == 0)
        let laptop = try DBusChannel.options(of: try #require(config.channel(named: "laptop")))
        #expect(laptop.escalate == ["desktop"] && laptop.escalateAfter == 90 * 60)
        // `channels list` and `doctor` say where an unseen one goes.
        #expect(DBusChannel.target(of: desktop, environment: [:])
                == "desktop notifications (session bus, urgency normal; unseen after 3h: phone, mail)")
        #expect(DBusChannel.target(of: DBusChannel.Options(), environment: [:])
                == "desktop notifications (session bus, urgency normal)")
    }
}
