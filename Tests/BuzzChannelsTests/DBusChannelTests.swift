import BuzzTestKit
import Foundation
import Testing
// `DBusChannel.Options` has no public initializer yet.
@testable import BirthdayBuzz
@testable import BuzzChannels

/// The dbus channel against a real `dbus-daemon` and python-dbusmock's notification server.
@Suite struct DBusChannelTests {
    static let gate = ServerGate.allows(.dbus)

    private func options(urgency: ChannelConfig.Urgency = .normal, expireTimeout: Int = -1) -> DBusChannel.Options {
        var options = DBusChannel.Options()
        options.urgency = urgency
        options.expireTimeout = expireTimeout
        return options
    }

    private func reminder(title: String = "Anna turns 40 tomorrow", body: String = "Saturday, 12 July",
                          kind: Message.Kind = .reminder, urgency: ChannelConfig.Urgency = .normal) -> Message {
        Message(kind: kind, id: "anna/1/2027-07-12", title: title, body: body, urgency: urgency)
    }

    /// Spaces and line breaks collapsed, so `dbus-send` output can be matched on one line.
    private func flat(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    // MARK: - The embedded default route

    /// With no config, `desktop` joins the default route only when a notification
    /// server runs on the session bus (or can be activated): a headless user bus
    /// must not make every `tick` exit 1 with a delivery that retries all day.
    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func theDefaultRouteHasDesktopOnlyWhenANotificationServerIsThere() async throws {
        let bare = try await PrivateBus.start(notificationServer: false)
        defer { bare.stop() }
        #expect(!DBusChannel.notificationServerAvailable(environment: bare.environment))
        let sandbox = try Sandbox()
        let file = try sandbox.write("c.vcf", VCard.card(uid: "ada", name: "Ada Lovelace", bday: "1990-03-15"))
        #expect(try await sandbox.run(["import", file, "--now", "2027-03-01"]).status == 0)
        let headless: [String: String?] = ["DBUS_SESSION_BUS_ADDRESS": bare.address]
        let upcoming = try await sandbox.run(["upcoming", "--json", "--now", "2027-03-01"], environment: headless)
        #expect(upcoming.stdout.contains(#""channels":["console"]"#), "\(upcoming)")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-15T09:30"], environment: headless)
        #expect(tick.status == 0, "\(tick)")

        let served = try await PrivateBus.start()
        defer { served.stop() }
        #expect(DBusChannel.notificationServerAvailable(environment: served.environment))
        let withServer = try await sandbox.run(["upcoming", "--json", "--now", "2027-03-01"],
                                               environment: ["DBUS_SESSION_BUS_ADDRESS": served.address])
        #expect(withServer.stdout.contains(#""channels":["console","desktop"]"#), "\(withServer)")
    }

    // MARK: - Against a notification server

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func deliversAReminderWithItsHints() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(urgency: .critical, expireTimeout: 5000),
                                  timeout: 5, environment: bus.environment)

        let id = try await channel.deliverReturningID(reminder())
        await channel.shutdown()

        #expect(id > 0)
        let log = try bus.log()
        #expect(log.contains(#"Notify "BirthdayBuzz" 0 "x-office-calendar" "Anna turns 40 tomorrow" "Saturday, 12 July" [] "#
            + #"{"urgency": 2, "category": "x-birthdaybuzz.reminder", "desktop-entry": "birthdaybuzz"} 5000"#), "\(log)")
        // The log does not show types; the recorded call does.
        let calls = flat(try await bus.recordedNotifyCalls())
        #expect(calls.contains(#"variant string "BirthdayBuzz" variant uint32 0"#), "\(calls)")
        #expect(calls.contains(#"dict entry( string "urgency" variant byte 2 )"#), "\(calls)")
        #expect(calls.contains(#"dict entry( string "category" variant string "x-birthdaybuzz.reminder" )"#), "\(calls)")
        #expect(calls.contains(#"dict entry( string "desktop-entry" variant string "birthdaybuzz" )"#), "\(calls)")
        #expect(calls.contains("variant int32 5000"), "\(calls)")
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func reusesOneConnectionForABatch() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5, environment: bus.environment)

        let first = try await channel.deliverReturningID(reminder(title: "one"))
        let afterFirst = await channel.connection.info()
        let second = try await channel.deliverReturningID(reminder(title: "two"))
        let afterSecond = await channel.connection.info()

        #expect(second == first + 1)
        #expect(afterFirst.opened == 1)
        #expect(afterSecond == afterFirst)
        let name = try #require(afterSecond.uniqueName)
        #expect(try await bus.connectedClients().contains(name))

        await channel.shutdown()
        let afterShutdown = await channel.connection.info()
        #expect(afterShutdown.uniqueName == nil)
        #expect(try await !bus.connectedClients().contains(name))
        // A channel used after shutdown opens a new connection rather than failing.
        _ = try await channel.deliverReturningID(reminder(title: "three"))
        #expect(await channel.connection.info().opened == 2)
        await channel.shutdown()
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func reconnectsAfterTheBusRestarts() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5, environment: bus.environment)
        _ = try await channel.deliverReturningID(reminder(title: "before logout"))

        try await bus.restart()
        let id = try await channel.deliverReturningID(reminder(title: "after login"))
        await channel.shutdown()

        #expect(id == 1, "a fresh server numbers from 1")
        #expect(await channel.connection.info().opened == 2)
        #expect(try bus.log().contains(#""after login""#))
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func anAskHasTheAskCategoryAndItsOwnUrgency() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(urgency: .critical), timeout: 5,
                                  environment: bus.environment)

        _ = try await channel.deliverReturningID(reminder(title: "When is Ben's birthday?", kind: .ask, urgency: .low))
        await channel.shutdown()

        let log = try bus.log()
        #expect(log.contains(#"{"urgency": 0, "category": "x-birthdaybuzz.ask", "desktop-entry": "birthdaybuzz"}"#), "\(log)")
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)),
          arguments: ["Geburtstag von Jürgen", "O'Brien", #"Say "hi" to Zoë 🎂"#, "Ünïcödé\ttab"])
    func textArrivesIntact(title: String) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5, environment: bus.environment)

        _ = try await channel.deliverReturningID(reminder(title: title, body: "\(title) — morgen"))
        await channel.shutdown()

        let log = try bus.log()
        #expect(log.contains(#""\#(title)" "\#(title) — morgen""#), "\(log)")
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func aBodyIsEscapedOnlyForAServerThatReadsMarkup() async throws {
        let message = reminder(title: "Anna & Ben <3", body: "Anna & Ben <3 O'Brien")

        let markupBus = try await PrivateBus.start()
        defer { markupBus.stop() }
        let markupChannel = DBusChannel(name: "desktop", options: options(), timeout: 5,
                                        environment: markupBus.environment)
        _ = try await markupChannel.deliverReturningID(message)
        await markupChannel.shutdown()
        #expect(try markupBus.log().contains(#""Anna & Ben <3" "Anna &amp; Ben &lt;3 O'Brien""#))

        let plainBus = try await PrivateBus.start(capabilities: "body actions")
        defer { plainBus.stop() }
        let plainChannel = DBusChannel(name: "desktop", options: options(), timeout: 5,
                                       environment: plainBus.environment)
        _ = try await plainChannel.deliverReturningID(message)
        await plainChannel.shutdown()
        #expect(try plainBus.log().contains(#""Anna & Ben <3" "Anna & Ben <3 O'Brien""#))
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func validateSucceedsWithANotificationServer() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5, environment: bus.environment)

        try await channel.validate()
        await channel.shutdown()

        #expect(try bus.log().contains("GetServerInformation"))
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func findsTheBusThroughXDGRuntimeDir() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        // What cron sees: no DBUS_SESSION_BUS_ADDRESS, only a runtime directory.
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5,
                                  environment: ["XDG_RUNTIME_DIR": bus.directory.path])

        #expect(try await channel.deliverReturningID(reminder()) > 0)
        await channel.shutdown()
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func aSlowServerIsATemporaryFailureAndTheConnectionStaysUsable() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 0.3, environment: bus.environment)
        _ = try await channel.deliverReturningID(reminder(title: "quick"))

        // The server holds the call until the test lets it go (at most 10 s), so only
        // our 0.3 s timeout can end the wait; the bound is loose (the whole suite on
        // two cores was once 3.7 s slow to schedule us). No fixed sleep: the server
        // answers as soon as the release file appears.
        let release = bus.directory.appendingPathComponent("release-notify").path
        try await bus.replaceNotify(with: """
            import os, time
            deadline = time.time() + 10
            while not os.path.exists(\(String(reflecting: release))) and time.time() < deadline: time.sleep(0.01)
            ret = 99
            """)
        let started = ContinuousClock.now
        let error = try await #require(throws: DeliveryError.self) {
            try await channel.deliver(reminder(title: "slow"))
        }
        #expect(ContinuousClock.now - started < .milliseconds(5500))
        #expect(error.isTemporary)
        #expect(error.message == "desktop: the notification server did not answer within 0.3 s")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))

        try await bus.replaceNotify(with: "ret = 42")
        #expect(try await channel.deliverReturningID(reminder(title: "quick again")) == 42)
        #expect(await channel.connection.info().opened == 1)
        await channel.shutdown()
    }

    @Test(.enabled(if: gate, "needs dbus-daemon and python3-dbusmock"), .timeLimit(.minutes(1)))
    func aBusWithoutANotificationServerIsATemporaryFailure() async throws {
        let bus = try await PrivateBus.start(notificationServer: false)
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 5, environment: bus.environment)

        let attempts: [@Sendable () async throws -> Void] = [
            { try await channel.deliver(reminder()) },
            { try await channel.validate() },
        ]
        for attempt in attempts {
            let error = try await #require(throws: DeliveryError.self) { try await attempt() }
            #expect(error.isTemporary)
            #expect(error.message.contains("no notification server"), "\(error)")
            #expect(!error.message.contains("\n"))
        }
        await channel.shutdown()
    }

    // MARK: - Without a bus

    @Test func aMissingBusIsATemporaryFailureInOneLine() async throws {
        let socket = TestFolders.temporary.appendingPathComponent("buzz-no-bus-\(UUID().uuidString)").path
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 2,
                                  environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + socket])

        let attempts: [@Sendable () async throws -> Void] = [
            { try await channel.deliver(reminder()) },
            { try await channel.validate() },
        ]
        for attempt in attempts {
            let error = try await #require(throws: DeliveryError.self) { try await attempt() }
            #expect(error.isTemporary)
            #expect(error.message.contains("session bus"), "\(error)")
            #expect(error.message.contains(socket), "\(error)")
            #expect(!error.message.contains("\n"))
        }
        await channel.shutdown()
    }

    @Test func noBusAnywhereSaysWhereItLooked() async throws {
        let empty = TestFolders.temporary.appendingPathComponent("buzz-run-user-\(UUID().uuidString)")
        let channel = DBusChannel(name: "desktop", options: options(), timeout: 2,
                                  connection: DBusConnection(environment: [:], runUserDirectory: empty.path))

        let error = try await #require(throws: DeliveryError.self) { try await channel.deliver(reminder()) }
        #expect(error.isTemporary)
        #expect(error.message.hasPrefix("desktop: no D-Bus session bus (is a desktop session running?"), "\(error)")
        #expect(error.message.contains("DBUS_SESSION_BUS_ADDRESS is unset"))
        #expect(error.message.contains(empty.path + "/"), "\(error)")
        #expect(!error.message.contains("\n"))
    }

    // MARK: - Pure parts

    @Test func theAddressComesFromTheEnvironmentThenTheRuntimeDirectory() throws {
        let root = TestFolders.temporary.appendingPathComponent("buzz-addr-\(UUID().uuidString)")
        let runtime = root.appendingPathComponent("my runtime")
        let runUser = root.appendingPathComponent("run-user")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: runUser.appendingPathComponent("1000"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        func address(_ environment: [String: String]) -> String? {
            DBusConnection.sessionBusAddress(environment: environment, uid: 1000, runUserDirectory: runUser.path)
        }
        #expect(address(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x", "XDG_RUNTIME_DIR": runtime.path]) == "unix:path=/x")
        #expect(address(["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime.path]) == nil)

        // A plain file named `bus` is not a bus.
        #expect(FileManager.default.createFile(atPath: runtime.appendingPathComponent("bus").path, contents: Data()))
        #expect(address(["XDG_RUNTIME_DIR": runtime.path]) == nil)
        try FileManager.default.removeItem(at: runtime.appendingPathComponent("bus"))

        try bindSocket(at: runUser.appendingPathComponent("1000/bus").path)
        #expect(address([:]) == "unix:path=" + DBusConnection.escapeAddressValue(runUser.path) + "/1000/bus")

        try bindSocket(at: runtime.appendingPathComponent("bus").path)
        let expected = "unix:path=" + DBusConnection.escapeAddressValue(runtime.path) + "/bus"
        #expect(address(["XDG_RUNTIME_DIR": runtime.path]) == expected)
        #expect(expected.hasSuffix("/my%20runtime/bus"))
    }

    @Test(arguments: [
        ("/run/user/1000/bus", "/run/user/1000/bus"),
        ("/tmp/a b", "/tmp/a%20b"),
        ("/tmp/x,y=z;", "/tmp/x%2cy%3dz%3b"),
        ("/tmp/ü", "/tmp/%c3%bc"),
    ])
    func addressValuesArePercentEncoded(path: String, escaped: String) {
        #expect(DBusConnection.escapeAddressValue(path) == escaped)
    }

    @Test(arguments: [
        (ChannelConfig.Urgency.low, ChannelConfig.Urgency.normal, UInt8(0)),
        (.normal, .normal, 1),
        (.critical, .normal, 2),
        (.low, .critical, 2),
        (.critical, .low, 0),
    ])
    func aMessageUrgencyOverridesTheChannelUnlessNormal(channel: ChannelConfig.Urgency,
                                                       message: ChannelConfig.Urgency, byte: UInt8) {
        let urgency = DBusChannel.urgency(of: reminder(urgency: message), channel: channel)
        #expect(DBusChannel.urgencyByte(urgency) == byte)
    }

    @Test func categoriesFollowTheMessageKind() {
        #expect(DBusChannel.category(of: .reminder) == "x-birthdaybuzz.reminder")
        #expect(DBusChannel.category(of: .message) == "x-birthdaybuzz.reminder")
        #expect(DBusChannel.category(of: .ask) == "x-birthdaybuzz.ask")
    }

    @Test func errorsReadAsOneLine() {
        let timeout = DBusChannel.deliveryError(
            for: .error(name: "org.freedesktop.DBus.Error.NoReply", message: "Did not receive a reply"), timeout: 10)
        #expect(timeout.message == "the notification server did not answer within 10 s")
        let other = DBusChannel.deliveryError(
            for: .error(name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected"), timeout: 10)
        #expect(other.message == "D-Bus error org.freedesktop.DBus.Error.AccessDenied: Rejected")
        #expect(other.isTemporary)
    }

    /// Leaves a listening-less Unix socket file at `path`, which is all the address lookup checks for.
    private func bindSocket(at path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
    }
}
