import Foundation
import Synchronization
import Testing
@testable import BirthdayBuzz
@testable import BuzzChannels

/// The pieces of notification actions (docs/design/asks-and-wishes.md) on a private bus: the dbus
/// channel's actions and the listener for the server's signals.
@Suite(.timeLimit(.minutes(1)))
struct NotificationListenerTests {
    static let gate = ServerGate.allows(.dbus)

    /// Records what it is told, for the tests to wait on.
    final class Recorder: NotificationActionRecorder, Sendable {
        /// What the listener heard (a class, so the listener's closure can hold it).
        final class Signals: Sendable {
            private let list = Mutex<[NotificationSignal]>([])
            func withLock<T>(_ body: (inout [NotificationSignal]) -> T) -> T { list.withLock { body(&$0) } }
        }

        let shownIDs = Mutex<[(UInt32, String, String)]>([])
        /// The server that answered each `Notify` with actions.
        let servers = Mutex<[String]>([])
        let signals = Signals()
        /// The channel sends a notification with actions over this listener's connection.
        let listener: NotificationListener

        init(environment: [String: String] = [:]) {
            let signals = signals
            listener = NotificationListener(environment: environment) { signal in signals.withLock { $0.append(signal) } }
        }

        func shown(notification id: UInt32, server: String, message: Message, channel: String) {
            shownIDs.withLock { $0.append((id, message.id, channel)) }
            servers.withLock { $0.append(server) }
        }

        func heard(_ signal: NotificationSignal) { signals.withLock { $0.append(signal) } }

        func waitFor(_ what: String, _ done: ([NotificationSignal]) -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !done(signals.withLock { $0 }) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("waited for \(what); heard \(signals.withLock { $0 })")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    static func message(daysUntil: Int, kind: Message.Kind = .reminder) -> Message {
        Message(kind: kind, id: "ana/\(daysUntil)/2027-07-12", title: "Ana", body: "today",
                contact: .init(id: "ana", name: "Ana"), daysUntil: daysUntil)
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"))
    func onlyTheDayOfReminderCarriesActionsAndOnlyWithTheCapabilityAndARecorder() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let recorder = Recorder(environment: bus.environment)
        defer { recorder.listener.stop() }
        let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 5,
                                  environment: bus.environment, actions: recorder)
        let dayOf = try await channel.deliverReturningID(Self.message(daysUntil: 0))
        _ = try await channel.deliverReturningID(Self.message(daysUntil: 1))
        _ = try await channel.deliverReturningID(Self.message(daysUntil: 0, kind: .anniversary))
        await channel.shutdown()
        let plain = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 5, environment: bus.environment)
        _ = try await plain.deliverReturningID(Self.message(daysUntil: 0))
        await plain.shutdown()

        let shown = recorder.shownIDs.withLock { $0 }
        #expect(shown.count == 1 && shown.first?.0 == dayOf && shown.first?.1 == "ana/0/2027-07-12"
                && shown.first?.2 == "desktop", "\(shown)")
        let calls = try bus.log().components(separatedBy: "Notify ").dropFirst()
        #expect(calls.map { $0.contains(#"["birthdaybuzz-wish", "Send wishes", "birthdaybuzz-snooze", "Remind me later"]"#) }
                == [true, false, false, false], "\(calls)")

        let noActions = try await PrivateBus.start()  // dbusmock's default capabilities
        defer { noActions.stop() }
        let other = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 5,
                                environment: noActions.environment, actions: recorder)
        _ = try await other.deliverReturningID(Self.message(daysUntil: 0))
        await other.shutdown()
        #expect(recorder.shownIDs.withLock { $0.count } == 1)
        #expect(try noActions.log().contains(#"" [] {"#))
    }

    /// dunst and GNOME Shell send `ActionInvoked` only to the connection that
    /// called `Notify` (python-dbusmock broadcasts it): the notification with
    /// actions goes out over the listener's connection, so the click reaches it.
    /// The sender of `Notify` is read off the bus with dbus-monitor, and the click
    /// is sent to it alone.
    @Test(.enabled(if: gate && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-monitor"),
                   "needs dbus-daemon, dbus-monitor and python3-dbusmock"))
    func aClickSentOnlyToTheConnectionThatAskedIsHeard() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let watched = bus.directory.appendingPathComponent("monitor.txt")
        _ = FileManager.default.createFile(atPath: watched.path, contents: nil)
        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        monitor.arguments = ["--address", bus.address, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"]
        monitor.standardOutput = try FileHandle(forWritingTo: watched)
        monitor.standardError = FileHandle.nullDevice
        try monitor.run()
        defer { monitor.terminate() }
        func seen() -> String { (try? String(contentsOf: watched, encoding: .utf8)) ?? "" }
        func wait(_ what: String, _ done: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !done() {
                guard ContinuousClock.now < deadline else { throw PrivateBus.StartError(description: "waited for \(what): \(seen())") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        try await wait("dbus-monitor") { seen().contains("NameLost") || seen().contains("NameAcquired") }

        let recorder = Recorder(environment: bus.environment)
        defer { recorder.listener.stop() }
        let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 5,
                                  environment: bus.environment, actions: recorder)
        let id = try await channel.deliverReturningID(Self.message(daysUntil: 0))
        await channel.shutdown()
        try await wait("the Notify call") { seen().contains("member=Notify") }
        let line = try #require(seen().split(separator: "\n").first { $0.contains("member=Notify") })
        let sender = try #require(line.split(separator: " ").first { $0.hasPrefix("sender=") }?.dropFirst("sender=".count))

        let unicast = try await runPython("""
            import sys, dbus, dbus.lowlevel
            bus = dbus.bus.BusConnection(sys.argv[1])
            message = dbus.lowlevel.SignalMessage('/org/freedesktop/Notifications', 'org.freedesktop.Notifications', 'ActionInvoked')
            message.set_destination(sys.argv[2])
            message.append(dbus.UInt32(int(sys.argv[3])), 'birthdaybuzz-snooze', signature='us')
            bus.send_message(message)
            bus.flush()
            """, [bus.address, String(sender), String(id)])
        #expect(unicast.status == 0, "\(unicast)")
        try await recorder.waitFor("the click sent to \(sender) alone") {
            $0.contains { if case .actionInvoked(id, "birthdaybuzz-snooze", _) = $0 { true } else { false } }
        }
    }

    /// The notification comes with the unique name of the server that answered
    /// `Notify`, and every signal with its sender's: a click forged by another
    /// connection, sent to the listener's by name, is told from the server's.
    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"))
    func theServerThatShowedItAndEachSignalsSenderAreKnown() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let recorder = Recorder(environment: bus.environment)
        defer { recorder.listener.stop() }
        let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 5,
                                  environment: bus.environment, actions: recorder)
        let id = try await channel.deliverReturningID(Self.message(daysUntil: 0))
        await channel.shutdown()
        let server = try await bus.notificationServerName()
        #expect(recorder.servers.withLock { $0 } == [server])

        try await bus.forgeSignal("ActionInvoked", ["uint32:\(id)", "string:birthdaybuzz-wish"])
        try await bus.forgeSignal("NotificationClosed", ["uint32:\(id)", "uint32:2"])
        try await bus.emitActionInvoked(id: id, key: "birthdaybuzz-snooze")
        try await recorder.waitFor("the forged click and close, and the server's click") { signals in
            signals.contains(.actionInvoked(id: id, key: "birthdaybuzz-snooze", sender: server))
                && signals.contains { if case .closed(id, 2, let sender?) = $0 { sender != server } else { false } }
                && signals.contains { if case .actionInvoked(id, "birthdaybuzz-wish", let sender?) = $0 { sender != server } else { false } }
        }
    }

    /// A notification with buttons stays until the user acts on it (dunst's
    /// default expiry of 10 s would take the buttons with it); the others keep
    /// the server's default, and a channel's own `expire_timeout` always wins.
    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"))
    func aNotificationWithActionsIsResidentUnlessTheChannelSetsATimeout() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let recorder = Recorder(environment: bus.environment)
        defer { recorder.listener.stop() }
        for expire in [nil, 8000, -1] as [Int?] {
            let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(expireTimeout: expire), timeout: 5,
                                      environment: bus.environment, actions: recorder)
            _ = try await channel.deliverReturningID(Self.message(daysUntil: 0))
            _ = try await channel.deliverReturningID(Self.message(daysUntil: 1))
            await channel.shutdown()
        }
        #expect(recorder.shownIDs.withLock { $0.count } == 3)
        // Each logged call is a line that ends with its expire_timeout; the typed record says it is an int32.
        let log = try bus.log()
        let timeouts = log.split(separator: "\n").filter { $0.contains(" Notify ") }.map {
            $0.split(separator: " ").last.map(String.init) ?? ""
        }
        #expect(timeouts == ["0", "-1", "8000", "8000", "-1", "-1"], "\(log)")
        let typed = try await bus.recordedNotifyCalls().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(typed.contains("variant int32 0"), "\(typed)")
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"))
    func hearsClicksAndClosesInOrderAndStopsCleanly() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let recorder = Recorder()
        let listener = NotificationListener(environment: bus.environment) { recorder.heard($0) }
        listener.start()
        listener.start()  // one listener, however often it is started
        try await recorder.waitFor("listening") { $0 == [.listening] }
        #expect(listener.isRunning)

        try await bus.emitActionInvoked(id: 3, key: "birthdaybuzz-snooze")
        try await bus.emitNotificationClosed(id: 3, reason: 2)
        try await recorder.waitFor("the click and the close") { $0.count == 3 }
        // Each with the unique name of the connection that sent it: here the server.
        let server = try await bus.notificationServerName()
        #expect(recorder.signals.withLock { $0 } == [.listening, .actionInvoked(id: 3, key: "birthdaybuzz-snooze", sender: server),
                                                     .closed(id: 3, reason: 2, sender: server)])

        let connected = try await bus.connectedClients()
        listener.stop()
        try await recorder.waitFor("the end") { $0.last == .stopped(problem: nil) }
        #expect(!listener.isRunning)
        // Its connection is closed (each dbus-send is a client of its own, gone when it answers).
        #expect(try await bus.connectedClients().count == connected.count - 1)
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"))
    func aBusThatGoesAwayEndsTheListenerAndAStartConnectsAgain() async throws {
        let bus = try await PrivateBus.start(capabilities: "actions body")
        defer { bus.stop() }
        let recorder = Recorder()
        let listener = NotificationListener(environment: bus.environment) { recorder.heard($0) }
        listener.start()
        try await recorder.waitFor("listening") { $0 == [.listening] }
        try await bus.restart()
        try await recorder.waitFor("the hang-up") { signals in
            if case .stopped(let problem?) = signals.last { return problem.contains("hung up") }
            return false
        }
        #expect(!listener.isRunning)
        listener.start()
        try await recorder.waitFor("listening again") { $0.last == .listening }
        try await bus.emitActionInvoked(id: 1, key: "birthdaybuzz-wish")
        let server = try await bus.notificationServerName()
        try await recorder.waitFor("the click") { $0.last == .actionInvoked(id: 1, key: "birthdaybuzz-wish", sender: server) }
        listener.stop()
    }

    @Test func noBusMeansAStoppedListenerWithAReason() async throws {
        let recorder = Recorder()
        let listener = NotificationListener(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent-buzz/bus"]) { recorder.heard($0) }
        listener.start()
        try await recorder.waitFor("the failure") { signals in
            if case .stopped(let problem?) = signals.last { return problem.contains("no D-Bus session bus") }
            return false
        }
    }
}
