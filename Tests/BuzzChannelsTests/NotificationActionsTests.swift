import BuzzTestKit
import Foundation
import Testing

/// Notification actions (docs/design/asks-and-wishes.md) end to end: `buzz run` against a private
/// bus with python-dbusmock's notification server and the SMTP sink. A click is
/// the server's `ActionInvoked` signal, emitted through dbusmock's `EmitSignal`.
///
/// The day-of reminder fires at `minute` (the contact imported before it), and
/// the daemon's clock starts 30 s after it (`run --now`), so its first pass
/// delivers it at once (catch-up): no test waits for a minute boundary, and
/// none depends on the real time of day. The snooze is "2s".
@Suite(.timeLimit(.minutes(2)))
struct NotificationActionsTests {
    static let gate = ServerGate.allows(.dbus) && ServerGate.allows(.smtp)
    static let actions = #"["birthdaybuzz-wish", "Send wishes", "birthdaybuzz-snooze", "Remind me later"]"#

    /// When the reminders fire: 2027-05-10T09:00:00Z.
    static let minute = Date(timeIntervalSince1970: 1_809_939_600)
    /// `--now` for the daemon (and `tick`): 30 s after `minute`.
    static let now = "2027-05-10T09:00:30Z"

    /// A sandbox whose day-of reminders go to the desktop at `minute`, wishes by mail to the sink.
    static func world(minute: Date, smtpPort: Int?) async throws -> Sandbox {
        let sandbox = try Sandbox()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? utc.timeZone
        let time = utc.dateComponents([.hour, .minute, .month, .day], from: minute)
        var config = """
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            offsets = [0]
            channels = ["desktop"]
            time = "\(String(format: "%02d:%02d", time.hour ?? 0, time.minute ?? 0))"
            snooze = "2s"
            [channels.desktop]
            type = "dbus"
            timeout = "5s"
            [ask]
            sender_name = "Alex"

            """
        if let smtpPort {
            config += """
                email = "mail"
                [channels.mail]
                type = "smtp"
                host = "127.0.0.1"
                port = \(smtpPort)
                security = "none"
                from = "Alex <alex@example.org>"
                timeout = "5s"

                """
        }
        try sandbox.writeConfig(config)
        chmod(sandbox.configPath, 0o600)
        let card = VCard.card(uid: "ana", name: "Ana Lima",
                              bday: String(format: "1990-%02d-%02d", time.month ?? 1, time.day ?? 1),
                              emails: ["ana@example.org"])
        let file = try sandbox.write("contacts.vcf", card)
        let before = ISO8601DateFormatter().string(from: minute.addingTimeInterval(-60))
        let imported = try await sandbox.run(["import", file, "--now", before])
        #expect(imported.status == 0, "\(imported)")
        return sandbox
    }

    /// The reminders the server was asked to show, one logged Notify call each
    /// (a body's line breaks stay in its entry).
    static func notifications(_ bus: PrivateBus) throws -> [String] {
        try allNotifications(bus).filter { $0.contains("birthday today") }
    }

    /// The notices that say how a "Send wishes" click went.
    static func notices(_ bus: PrivateBus) throws -> [String] {
        try allNotifications(bus).filter { $0.contains(#""x-office-calendar" "Send wishes""#) }
    }

    static func allNotifications(_ bus: PrivateBus) throws -> [String] {
        Array(try bus.log().components(separatedBy: #"Notify "BirthdayBuzz""#).dropFirst())
    }

    static func waitFor(_ what: String, within limit: Duration = .seconds(15), _ done: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while try !done() {
            guard ContinuousClock.now < deadline else {
                Issue.record("waited \(limit) for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3-aiosmtpd"))
    func sendWishesFromTheNotificationMailsOnceHoweverOftenItIsClicked() async throws {
        let minute = Self.minute
        let sink = SMTPSink()
        let port = try await sink.start()
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let sandbox = try await Self.world(minute: minute, smtpPort: port)

        let daemon = try DaemonProcess(sandbox, now: Self.now, environment: bus.environment)
        try await daemon.waitForLog("listening for notification actions")
        // Sent and kept: "listening" comes before the Notify, and a click before the id is kept finds nothing.
        try await daemon.waitForLog("sent ana/0/")
        let shown = try Self.notifications(bus)
        #expect(shown.count == 1 && shown[0].contains(Self.actions), "\(shown)")

        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-wish")
        let mail = try await sink.waitForMessages(count: 1)
        #expect(mail.count == 1 && mail.first?.rcptTos == ["ana@example.org"], "\(daemon.log)")
        // A click has no terminal: a notice (without buttons) says what happened.
        try await Self.waitFor("the notice") { try Self.notices(bus).count == 1 }
        let sent = try Self.notices(bus)[0]
        #expect(sent.contains("Ana Lima: wished by email at ana@example.org") && sent.contains(" [] {"), "\(sent)")

        // Clicked again (a server that keeps the notification): the ledger says wished already.
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-wish")
        try await daemon.waitForLog("no wish for ana from notification 1 (refused)")
        try await Self.waitFor("the second notice") { try Self.notices(bus).count == 2 }
        let refused = try Self.notices(bus)[1]
        #expect(refused.contains("again needs --force"), "\(refused)")
        // Another application's action on some notification, and an id we never showed: nothing happens.
        try await bus.emitActionInvoked(id: 1, key: "default")
        try await bus.emitActionInvoked(id: 77, key: "birthdaybuzz-wish")
        try await daemon.waitForLog("notification 77, which is not one this data dir showed")
        #expect(try sink.messages().count == 1)

        // Listening costs no wake-up while nothing happens (poll(2) without a timeout).
        // Threads that end meanwhile (a channel's, after the click) are no wake-up: the
        // window starts once the threads and their counts have settled (polled, so it
        // starts as soon as they have). The window itself is the measurement: it spans
        // several periods of any once-a-second timer.
        let before = try await daemon.settledWakeUps()
        #expect(!before.isEmpty)  // the counts are read at all
        try await Task.sleep(for: .seconds(3))
        let woken = daemon.wakeUps().filter { thread, count in count != before[thread] }
        #expect(woken.isEmpty, "buzz run woke while idle: \(woken)\n\(daemon.log)")

        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        #expect(!daemon.log.contains("Ana"), "contact names stay out of the log at info level: \(daemon.log)")
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.contains("ana/wish/"), "\(outbox)")
    }

    /// "Remind me later" on a notification the previous daemon showed: the new
    /// daemon hears it (the id is in the store), the reminder comes back once after
    /// `reminders.snooze`, with its actions, and "Send wishes" on it sends.
    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3-aiosmtpd"))
    func aSnoozeOnANotificationOfAnEarlierDaemonComesBackOnce() async throws {
        let minute = Self.minute
        let sink = SMTPSink()
        let port = try await sink.start()
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let sandbox = try await Self.world(minute: minute, smtpPort: port)

        let first = try DaemonProcess(sandbox, now: Self.now, environment: bus.environment)
        try await first.waitForLog("listening for notification actions")
        try await first.waitForLog("sent ana/0/")  // not stopped while the reminder is on its way
        #expect(try Self.notifications(bus).count == 1)
        #expect(kill(first.pid, SIGTERM) == 0)
        #expect(try await first.waitForExit(within: .seconds(10)) == 0, "\(first.log)")

        let second = try DaemonProcess(sandbox, now: Self.now, environment: bus.environment)
        try await second.waitForLog("listening for notification actions")
        try await second.waitForLog("next wake")
        #expect(try Self.notifications(bus).count == 1, "the reminder is in the ledger: not shown again")
        let clicked = Date()
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-snooze")
        try await second.waitForLog("snoozed ana/0/")
        try await Self.waitFor("the snoozed reminder") { try Self.notifications(bus).count == 2 }
        let waited = Date().timeIntervalSince(clicked)
        #expect(waited >= 1.0, "came back after \(waited) s, before its 2 s")
        let shown = try Self.notifications(bus)
        #expect(shown[1].contains(Self.actions), "\(shown)")
        try await second.waitForLog("sent ana/0/")
        #expect(second.log.contains("/snooze/1 via desktop"), "\(second.log)")

        // The same click again names the same snooze: it is not planned twice.
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-snooze")
        try await second.waitForLog("is already snoozed")
        // The server closed the first notification: a click on it is no longer ours.
        try await bus.emitNotificationClosed(id: 1)
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-snooze")
        try await second.waitForLog("notification 1, which is not one this data dir showed")

        // "Send wishes" on the snoozed notification.
        try await bus.emitActionInvoked(id: 2, key: "birthdaybuzz-wish")
        #expect(try await sink.waitForMessages(count: 1).count == 1, "\(second.log)")
        // The pass that ran the wish then plans its next wake: a second snooze (or the
        // snoozed reminder again) would be today, seconds away; nothing is left but
        // next year's reminder. Read from the log, not waited out on the clock.
        try await second.waitForLog("wish for ana done (from notification 2)")
        var afterWish = ""
        try await Self.waitFor("the next wake after the wish") {
            let log = second.log
            guard let wish = log.range(of: "wish for ana done (from notification 2)", options: .backwards) else { return false }
            afterWish = String(log[wish.upperBound...])
            return afterWish.contains("next wake ")
        }
        let nextWake = afterWish.components(separatedBy: "next wake ").dropFirst().first?.prefix(10) ?? ""
        #expect(nextWake == "2028-05-10", "\(second.log)")
        #expect(try Self.notifications(bus).count == 2, "\(second.log)")

        #expect(kill(second.pid, SIGTERM) == 0)
        #expect(try await second.waitForExit(within: .seconds(10)) == 0, "\(second.log)")
        let rows = try await sandbox.jsonRows(["outbox", "--json"])
        let snoozed = rows.filter { row in
            if case .string(let id) = row["id"] { return id.hasSuffix("/snooze/1") }
            return false
        }
        #expect(snoozed.count == 1 && snoozed.first?["status"] == .string("sent"), "\(rows)")
    }

    /// Any process on the session bus can send `ActionInvoked` or
    /// `NotificationClosed` to the daemon's connection by its unique name
    /// (dbus-send does, below): neither is acted on unless its sender is the
    /// server that answered the `Notify`, and after a restart of the daemon that
    /// server's name comes from the store. The server's own click still works.
    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3-aiosmtpd"))
    func clicksAndClosesFromAnyoneButTheServerAreIgnoredBeforeAndAfterARestart() async throws {
        let minute = Self.minute
        let sink = SMTPSink()
        let port = try await sink.start()
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let sandbox = try await Self.world(minute: minute, smtpPort: port)
        let ignored = "not the notification server that showed it"

        let first = try DaemonProcess(sandbox, now: Self.now, environment: bus.environment)
        try await first.waitForLog("listening for notification actions")
        try await first.waitForLog("sent ana/0/")  // shown, and its id and server kept
        #expect(try Self.notifications(bus).count == 1)
        let forgedTo = try await bus.forgeSignal("ActionInvoked", ["uint32:1", "string:birthdaybuzz-wish"])
        #expect(!forgedTo.isEmpty)
        try await first.waitForLog("a birthdaybuzz-wish click on notification 1 from :")
        #expect(first.log.contains(ignored), "\(first.log)")
        // A forged close would make the daemon forget the notification, and the real click after it.
        try await bus.forgeSignal("NotificationClosed", ["uint32:1", "uint32:2"])
        try await first.waitForLog("NotificationClosed on notification 1 from :")
        #expect(kill(first.pid, SIGTERM) == 0)
        #expect(try await first.waitForExit(within: .seconds(10)) == 0, "\(first.log)")
        #expect(try sink.messages().isEmpty, "\(first.log)")

        // A new daemon knows notification 1 from the store, with the server that showed it.
        let second = try DaemonProcess(sandbox, now: Self.now, environment: bus.environment)
        try await second.waitForLog("listening for notification actions")
        try await bus.forgeSignal("ActionInvoked", ["uint32:1", "string:birthdaybuzz-wish"])
        try await second.waitForLog(ignored)
        #expect(try sink.messages().isEmpty, "\(second.log)")
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-wish")
        let mail = try await sink.waitForMessages(count: 1)
        #expect(mail.first?.rcptTos == ["ana@example.org"], "\(second.log)")
        #expect(kill(second.pid, SIGTERM) == 0)
        #expect(try await second.waitForExit(within: .seconds(10)) == 0, "\(second.log)")
    }

    /// Without a daemon (`tick`), or on a server without the `actions` capability,
    /// the reminder carries no actions and nothing listens.
    @Test(.enabled(if: gate, "needs dbus-daemon, python3-dbusmock and python3-aiosmtpd"))
    func noActionsFromTickOrWithoutTheCapability() async throws {
        let minute = Self.minute
        let capable = try await PrivateBus.start(capabilities: "actions body")
        defer { capable.stop() }
        let fromTick = try await Self.world(minute: minute, smtpPort: nil)
        let tick = try await fromTick.run(["tick", "--now", Self.now], environment: ["DBUS_SESSION_BUS_ADDRESS": capable.address])
        #expect(tick.status == 0, "\(tick)")
        let ticked = try Self.notifications(capable)
        #expect(ticked.count == 1 && ticked[0].contains(#"" [] {"#), "\(ticked)")

        let plain = try await PrivateBus.start()  // dbusmock's default capabilities: no actions
        defer { plain.stop() }
        let sandbox = try await Self.world(minute: minute, smtpPort: nil)
        let daemon = try DaemonProcess(sandbox, now: Self.now, environment: plain.environment)
        try await daemon.waitForLog("next wake")
        let shown = try Self.notifications(plain)
        #expect(shown.count == 1 && shown[0].contains(#"" [] {"#), "\(shown)")
        #expect(!daemon.log.contains("listening for notification actions"), "\(daemon.log)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }
}

extension DaemonProcess {
    /// `wakeUps()` once two readings 100 ms apart agree (threads that were ending have
    /// ended), at most 10 s after the call.
    func settledWakeUps() async throws -> [String: Int] {
        var last = wakeUps()
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            let now = wakeUps()
            if now == last { return now }
            last = now
        }
        Issue.record("the daemon's threads did not settle within 10 s: \(last)")
        return last
    }

    /// Voluntary context switches of each of the daemon's threads so far, by thread
    /// id: unchanged while it is idle (a new thread is a wake-up too).
    func wakeUps() -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var counts: [String: Int] = [:]
        for task in tasks {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            if let count = line.flatMap({ Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }) {
                // The thread's name too, so a failure says which one woke.
                let name = status.split(separator: "\n").first { $0.hasPrefix("Name:") }?.dropFirst(5)
                    .trimmingCharacters(in: .whitespaces) ?? "?"
                counts[task + " " + name] = count
            }
        }
        return counts
    }
}
