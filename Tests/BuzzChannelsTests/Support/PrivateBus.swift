import BuzzTestKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway session bus for one test: `dbus-daemon` on a socket in a fresh
/// temporary directory, optionally with Debian's python-dbusmock serving
/// `org.freedesktop.Notifications` (its `notification_daemon` template), which
/// logs every call it gets to `logFile`.
///
/// The socket is `<directory>/bus`, so `directory` also works as an
/// `XDG_RUNTIME_DIR`. Everything it started is stopped by `stop()`, or at the
/// latest in `deinit`.
final class PrivateBus {
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    let directory: URL
    /// `unix:path=<directory>/bus`
    let address: String
    /// python-dbusmock's call log; `nil` without a notification server.
    let logFile: URL?
    private let capabilities: String?
    private var daemon: Process?
    private var notificationServer: ServerHandle?

    /// Starts a bus, and on it a notification server unless `notificationServer` is false.
    ///
    /// - Parameter capabilities: the server's capabilities, space-separated
    ///   (dbusmock's default includes `body-markup`).
    static func start(notificationServer: Bool = true, capabilities: String? = nil) async throws -> PrivateBus {
        let directory = TestFolders.temporary
            .appendingPathComponent("buzz-dbus-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let bus = PrivateBus(directory: directory, withServer: notificationServer, capabilities: capabilities)
        do {
            try await bus.startProcesses()
        } catch {
            bus.stop()
            throw error
        }
        return bus
    }

    private init(directory: URL, withServer: Bool, capabilities: String?) {
        self.directory = directory
        self.address = "unix:path=" + directory.appendingPathComponent("bus").path
        self.logFile = withServer ? directory.appendingPathComponent("notifications.log") : nil
        self.capabilities = capabilities
    }

    deinit {
        stop()
    }

    /// The environment a process on this bus sees.
    var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address]
    }

    /// What the notification server logged so far.
    func log() throws -> String {
        guard let logFile else { return "" }
        // A restarted server (`restartNotificationServer`) truncates the file: what it logged before comes first.
        let earlier = (try? String(contentsOf: directory.appendingPathComponent("notifications.before-restart.log"),
                                   encoding: .utf8)) ?? ""
        return earlier + (try String(contentsOf: logFile, encoding: .utf8))
    }

    /// dbusmock's record of the `Notify` calls, as `dbus-send --print-reply` shows it:
    /// typed (`variant byte 2`), which the plain log is not.
    func recordedNotifyCalls() async throws -> String {
        try await dbusSend(["--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                            "org.freedesktop.DBus.Mock.GetMethodCalls", "string:Notify"])
    }

    /// Makes the server's `Notify` run `code` (Python; `args` are the call's arguments,
    /// `ret` the reply) — a slow or broken server on demand.
    func replaceNotify(with code: String) async throws {
        _ = try await dbusSend(["--dest=org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                "org.freedesktop.DBus.Mock.AddMethod", "string:org.freedesktop.Notifications",
                                "string:Notify", "string:susssasa{sv}i", "string:u", "string:" + code])
    }

    /// Makes the notification server emit `ActionInvoked(id, key)`, as a click on
    /// the action `key` of notification `id` does (dbusmock's `EmitSignal`, through
    /// python3-dbus, which python3-dbusmock depends on: `dbus-send` cannot send its `av`).
    func emitActionInvoked(id: UInt32, key: String) async throws {
        try await emit("ActionInvoked", "us", [String(id), key])
    }

    /// Makes the notification server emit `NotificationClosed(id, reason)` (2: dismissed by the user).
    func emitNotificationClosed(id: UInt32, reason: UInt32 = 2) async throws {
        try await emit("NotificationClosed", "uu", [String(id), String(reason)])
    }

    private func emit(_ signal: String, _ signature: String, _ arguments: [String]) async throws {
        let code = """
            import sys, dbus
            address, name, signature, values = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
            typed = [dbus.UInt32(int(v)) if t == 'u' else dbus.String(v) for t, v in zip(signature, values)]
            bus = dbus.bus.BusConnection(address)
            mock = bus.get_object('org.freedesktop.Notifications', '/org/freedesktop/Notifications')
            mock.EmitSignal('org.freedesktop.Notifications', name, signature, typed,
                            dbus_interface='org.freedesktop.DBus.Mock')
            """
        let output = try await runPython(code, [address, signal, signature] + arguments)
        guard output.status == 0 else {
            throw StartError(description: "EmitSignal \(signal) failed: \(output)")
        }
    }

    /// The unique names of the clients connected to the bus now.
    func connectedClients() async throws -> [String] {
        let reply = try await dbusSend(["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus.ListNames"])
        return reply.split(separator: "\"").map(String.init).filter { $0.hasPrefix(":") }
    }

    /// The unique name of the connection that owns `org.freedesktop.Notifications` (the server).
    func notificationServerName() async throws -> String {
        let reply = try await dbusSend(["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus.GetNameOwner", "string:org.freedesktop.Notifications"])
        guard let name = reply.split(separator: "\"").map(String.init).first(where: { $0.hasPrefix(":") }) else {
            throw StartError(description: "GetNameOwner named no owner: \(reply)")
        }
        return name
    }

    /// A bus neighbour's forgery: `dbus-send` (a connection of its own, not the
    /// notification server) sends the `Notifications` signal `member` with
    /// `arguments` (dbus-send's `uint32:1` form) to every other connection on the
    /// bus by its unique name, as a process that guessed ours would; returns the
    /// names it was sent to.
    @discardableResult
    func forgeSignal(_ member: String, _ arguments: [String]) async throws -> [String] {
        let server = try await notificationServerName()
        let targets = try await connectedClients().filter { $0 != server }
        for target in targets {
            _ = try await dbusSend(["--type=signal", "--dest=" + target, "/org/freedesktop/Notifications",
                                    "org.freedesktop.Notifications." + member] + arguments, printReply: false)
        }
        return targets
    }

    /// Stops the bus and its server and starts them again on the same socket,
    /// as a logout and login do; connections to the old bus see it hang up.
    func restart() async throws {
        stopProcesses()
        try await startProcesses()
    }

    /// Stops the notification server alone and starts a new one: the bus stays,
    /// the server comes back under a new unique name and numbers its
    /// notifications from 1 again; what the old one showed is gone, without a
    /// `NotificationClosed`. Its log goes on in the same file.
    func restartNotificationServer() async throws {
        if let server = notificationServer { Self.kill(server) }
        notificationServer = nil
        if logFile != nil { try Data(try log().utf8).write(to: directory.appendingPathComponent("notifications.before-restart.log")) }
        try await startNotificationServer()
    }

    /// Stops everything this bus started and removes its directory.
    func stop() {
        stopProcesses()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Processes

    private func startProcesses() async throws {
        let config = directory.appendingPathComponent("bus.conf")
        try Self.configuration(socket: directory.appendingPathComponent("bus").path)
            .write(to: config, atomically: true, encoding: .utf8)
        daemon = try launch("/usr/bin/dbus-daemon", ["--config-file=" + config.path, "--nofork"],
                            output: "dbus-daemon.out")
        try await waitFor("the bus to answer") { _ = try await self.dbusSend(
            ["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"]) }

        try await startNotificationServer()
    }

    /// Starts python-dbusmock's notification server on the bus (when this bus has one).
    private func startNotificationServer() async throws {
        guard let logFile else { return }
        var arguments = ["--template", "notification_daemon", "-l", logFile.path]
        if let capabilities {
            let parameters = try JSONSerialization.data(withJSONObject: ["capabilities": capabilities])
            arguments += ["-p", String(decoding: parameters, as: UTF8.self)]
        }
        notificationServer = try await launchNotificationServer(arguments)
        try await waitFor("python-dbusmock to own org.freedesktop.Notifications") {
            let reply = try await self.dbusSend(["--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                 "org.freedesktop.DBus.NameHasOwner",
                                                 "string:org.freedesktop.Notifications"])
            guard reply.contains("boolean true") else { throw StartError(description: "not yet") }
        }
    }

    private func stopProcesses() {
        for server in [notificationServer, daemon.map { .process($0, stdin: FileHandle.nullDevice) }].compactMap({ $0 }) {
            Self.kill(server)
        }
        notificationServer = nil
        daemon = nil
        // A killed dbus-daemon leaves its socket behind; a restart needs the path free.
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("bus"))
    }

    /// SIGKILL, and waits for the end as the kernel sees it (not `waitUntilExit()`: see
    /// `hasEnded`). Foundation spawns children from a Dispatch worker thread, whose signal
    /// mask (blocking SIGTERM) they inherit: `terminate()` would never end them.
    private static func kill(_ server: ServerHandle) {
        guard server.isRunning else { return }
        Glibc.kill(server.processIdentifier, SIGKILL)
        waitForEnd(pid: server.processIdentifier)
    }

    /// What python-dbusmock's notification server imports (0.09 s of CPU for each
    /// start from scratch), loaded once by its `PythonStarter`.
    private static let dbusmockModules = PythonStarter.Preload(
        modules: ["dbus", "dbus.mainloop.glib", "dbusmock", "dbusmock.__main__", "dbusmock.templates.notification_daemon"])

    /// `python3 -m dbusmock arguments…` on this bus, forked from a `PythonStarter`
    /// (else a process of its own), its output in `dbusmock.out`.
    private func launchNotificationServer(_ arguments: [String]) async throws -> ServerHandle {
        let output = directory.appendingPathComponent("dbusmock.out")
        if let starter = PythonStarter.shared(python: ServerGate.python, preload: Self.dbusmockModules),
           FileManager.default.createFile(atPath: output.path, contents: nil),
           let pid = try await starter.start(module: "dbusmock", arguments: arguments,
                                             environment: ["DBUS_SESSION_BUS_ADDRESS": address], directory: directory,
                                             output: output, errors: output, timeout: .seconds(30)) {
            return .forked(pid)
        }
        return .process(try launch(ServerGate.python, ["-m", "dbusmock"] + arguments, output: "dbusmock.out"),
                        stdin: FileHandle.nullDevice)
    }

    private func launch(_ executable: String, _ arguments: [String], output name: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        process.environment = environment
        let output = directory.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
            throw StartError(description: "cannot create \(output.path)")
        }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        return process
    }

    /// Retries `probe` every 50 ms for up to 10 s.
    private func waitFor(_ what: String, _ probe: () async throws -> Void) async throws {
        // A deadline, not a wait: python-dbusmock starts in well under a second alone, but took over
        // 10 s (its Python imports) while the whole suite loaded both cores.
        let deadline = ContinuousClock.now + .seconds(45)
        while true {
            do {
                try await probe()
                return
            } catch {
                if ContinuousClock.now > deadline {
                    let daemonOutput = (try? String(contentsOf: directory.appendingPathComponent("dbus-daemon.out"),
                                                    encoding: .utf8)) ?? ""
                    let mockOutput = (try? String(contentsOf: directory.appendingPathComponent("dbusmock.out"),
                                                  encoding: .utf8)) ?? ""
                    throw StartError(description: "timed out waiting for \(what): \(error)\n\(daemonOutput)\(mockOutput)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Runs `dbus-send --print-reply` on this bus and returns what it printed.
    private func dbusSend(_ arguments: [String], printReply: Bool = true) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
        process.arguments = ["--bus=" + address] + (printReply ? ["--print-reply", "--reply-timeout=10000"] : []) + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard status == 0 else {
            throw StartError(description: "dbus-send \(arguments.joined(separator: " ")) exited \(status): \(text)")
        }
        return text
    }

    private static func configuration(socket: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }
}
