import BuzzTestKit
import Foundation

/// dunst, a real notification server, on a `PrivateBus` started without
/// python-dbusmock, drawing on its own Xvfb display. Unlike dbusmock, dunst
/// sends its signals only to the connection that asked for the notification,
/// and closes a notification itself: `dunstctl close` is the user's dismissal
/// (`NotificationClosed` reason 2). Everything it started is stopped by `stop()`.
final class DunstServer {
    static let xvfb = "/usr/bin/Xvfb", dunst = "/usr/bin/dunst", dunstctl = "/usr/bin/dunstctl"

    /// Whether Debian's dunst and xvfb are installed.
    static var present: Bool {
        [xvfb, dunst, dunstctl].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private let bus: PrivateBus
    private var processes: [Process] = []

    private init(bus: PrivateBus) {
        self.bus = bus
    }

    deinit {
        stop()
    }

    /// Starts Xvfb on a free display and dunst on it, serving `bus`; returns once dunst owns the name.
    static func start(on bus: PrivateBus) async throws -> DunstServer {
        let server = DunstServer(bus: bus)
        do {
            try await server.startProcesses()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// Runs `dunstctl arguments…` against this dunst.
    func control(_ arguments: [String]) async throws -> ProcessOutput {
        try await runProgram("/usr/bin/env", ["DBUS_SESSION_BUS_ADDRESS=" + bus.address, Self.dunstctl] + arguments)
    }

    func stop() {
        for process in processes.reversed() where !hasEnded(process) {
            // Children of Foundation's Process inherit a mask that blocks SIGTERM (see PrivateBus).
            kill(process.processIdentifier, SIGKILL)
            waitForEnd(process)  // not waitUntilExit(): see hasEnded
        }
        processes = []
    }

    private func startProcesses() async throws {
        // A display nobody uses: its socket is not there (Xvfb refuses a taken one, and we try another).
        var display: Int?
        for _ in 0..<5 {
            let candidate = Int.random(in: 200...899)
            guard !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(candidate)") else { continue }
            let xvfb = try launch(Self.xvfb, [":\(candidate)", "-screen", "0", "640x480x24", "-nolisten", "tcp"], environment: [:])
            let started = try await waitFor("Xvfb :\(candidate)", within: .seconds(10)) {
                !xvfb.isRunning || FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(candidate)")
            }
            if started, xvfb.isRunning {
                display = candidate
                break
            }
        }
        guard let display else { throw PrivateBus.StartError(description: "Xvfb found no free display") }
        let config = bus.directory.appendingPathComponent("dunstrc")
        try "[global]\n    font = Monospace 8\n".write(to: config, atomically: true, encoding: .utf8)
        let dunst = try launch(Self.dunst, ["-config", config.path],
                               environment: ["DISPLAY": ":\(display)", "DBUS_SESSION_BUS_ADDRESS": bus.address])
        let bus = bus
        let owned = try await waitFor("dunst to own org.freedesktop.Notifications", within: .seconds(20)) {
            guard dunst.isRunning else { return true }
            return (try? await bus.notificationServerName()) != nil
        }
        guard owned, dunst.isRunning else { throw PrivateBus.StartError(description: "dunst did not start") }
    }

    private func launch(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.append(process)
        return process
    }

    /// Polls `done` every 50 ms; false when `limit` passed first.
    private func waitFor(_ what: String, within limit: Duration, _ done: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await done() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
