import BirthdayBuzz
import BuzzDaemon
import BuzzTestKit
import Foundation
import Synchronization
import Testing
@testable import BuzzCommands

/// `buzz run`, the daemon, as a child process against the real HTTP sink:
/// it sleeps until a reminder's minute, delivers it, re-plans on SIGHUP, stops
/// cleanly on SIGTERM, and refuses a second instance.
///
/// Reminder times have minute resolution, so no test waits for a minute of the
/// real clock: each daemon starts with `run --now` (its clock starts there, then
/// advances in real time, docs/design/command-line.md). The reminders fire at `fireMinute`; a test
/// that watches one fire starts the daemon a few seconds before it, one that
/// needs it due starts just after (catch-up delivers it at once).
@Suite(.timeLimit(.minutes(2)))
struct RunCommandTests {
    /// When the reminders fire: 2027-05-10T09:00:00Z.
    static let fireMinute = Date(timeIntervalSince1970: 1_809_939_600)

    /// `--now` for `seconds` after `fireMinute` (negative: before it).
    static func pinned(_ seconds: Int) -> String {
        ISO8601DateFormatter().string(from: fireMinute.addingTimeInterval(TimeInterval(seconds)))
    }

    /// `[reminders]` that fire once, at `minute`, on `minute`'s UTC day.
    static func config(sink: URL, fireAt minute: Date?) -> String {
        let time = minute.map { date -> String in
            let utc = Calendar.utc.dateComponents([.hour, .minute], from: date)
            return String(format: "time = \"%02d:%02d\"", utc.hour ?? 0, utc.minute ?? 0)
        } ?? ""
        return """
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            offsets = [0]
            channels = ["hook"]
            \(time)
            [channels.hook]
            type = "webhook"
            url = "\(sink.absoluteString)/hook"
            timeout = "5s"
            """
    }

    /// A card born (in 1990) on `minute`'s UTC day.
    static func card(bornOn minute: Date, name: String = "Ada Lovelace") -> String {
        let day = Calendar.utc.dateComponents([.month, .day], from: minute)
        return VCard.card(uid: "run-test-1", name: name,
                          bday: String(format: "1990-%02d-%02d", day.month ?? 1, day.day ?? 1))
    }

    /// The one test that watches a reminder fire in real time: the daemon's clock
    /// starts 3 s before the fire time, and the reminder goes out 3 s later, not at once.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func deliversAtTheFireTimeAndStopsOnSIGTERM() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let minute = Self.fireMinute
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute))
        let imported = try await sandbox.run(["import", file, "--now", Self.pinned(-3_600)])
        #expect(imported.status == 0, "\(imported)")

        let daemon = try DaemonProcess(sandbox, now: Self.pinned(-3))
        try await daemon.waitUntilReady()
        // The clock reads whole seconds: the fire time is at least 2 s of real time after the start.
        let requests = try await daemon.waitForDeliveries(sink, count: 1, notBefore: daemon.startedAt.addingTimeInterval(2))
        #expect(daemon.log.contains("next wake 2027-05-10T09:00:00+00:00"), "planned, not caught up: \(daemon.log)")
        let request = try #require(requests.first)
        let key = try #require(request.headers["Idempotency-Key"])
        #expect(key.hasPrefix("run-test-1/0/"), "\(key)")

        #expect(kill(daemon.pid, SIGTERM) == 0)
        let status = try await daemon.waitForExit(within: .seconds(10))
        #expect(status == 0, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir + "/run.pid"))
        let log = daemon.log
        #expect(log.contains("sent \(key) via hook"), "\(log)")
        #expect(log.contains("stopped"), "\(log)")
        #expect(!log.contains("Ada"), "contact names are logged at debug level only: \(log)")
        #expect(try await sink.requests().count == 1)
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func sigtermLetsTheSendInFlightFinish() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        try await sink.script([["status": 200, "hang": 3]])  // the sink records the request, then waits 3 s
        let minute = Self.fireMinute
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute))
        #expect(try await sandbox.run(["import", file, "--now", Self.pinned(-60)]).status == 0)

        // Started just after the fire time: the first pass delivers it (catch-up).
        let daemon = try DaemonProcess(sandbox, now: Self.pinned(30))
        try await daemon.waitUntilReady()
        _ = try await daemon.waitForDeliveries(sink, count: 1, notBefore: .distantPast)
        #expect(kill(daemon.pid, SIGTERM) == 0)  // while the sink still holds the answer back
        #expect(try await daemon.waitForExit(within: .seconds(15)) == 0, "\(daemon.log)")
        let log = daemon.log
        let sent = try #require(log.range(of: "sent run-test-1/0/"), "\(log)")
        let stopped = try #require(log.range(of: "stopped"), "\(log)")
        #expect(sent.lowerBound < stopped.lowerBound)
        let rows = try await sandbox.jsonRows(["outbox", "--json"])
        #expect(rows.count == 1 && rows.first?["status"] == .string("sent"), "\(rows)")
        #expect(try await sink.requests().count == 1)
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func importSignalsTheDaemonToReplan() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        let config = Self.config(sink: base, fireAt: nil)
        try sandbox.writeConfig(config)
        chmod(sandbox.configPath, 0o600)

        // No contacts: nothing planned, the daemon sleeps without a deadline.
        let daemon = try DaemonProcess(sandbox, now: Self.pinned(30),
                                       environment: ["BUZZ_LOG_LEVEL": "debug", "BUZZ_TEST_TOKEN": "env-secret-123"])
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("nothing planned")

        // A broken config at reload: one error line, the daemon keeps the old one.
        try sandbox.writeConfig(config + "\n[reminders]\n")
        #expect(kill(daemon.pid, SIGHUP) == 0)
        try await daemon.waitForLog("reload failed")
        let failures = daemon.log.split(separator: "\n").filter { $0.contains("reload failed") }
        #expect(failures.count == 1 && failures[0].contains("config.toml"), "\(daemon.log)")
        #expect(daemon.isRunning)

        // A reminder of a contact imported (included) before its time, and an
        // import that sends SIGHUP: the daemon reloads the config, reads the
        // contact and delivers the reminder, whose time has just passed (catch-up).
        let minute = Self.fireMinute
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute))
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute))
        let imported = try await sandbox.run(["import", file, "--now", Self.pinned(-60)])
        #expect(imported.status == 0, "\(imported)")
        try await daemon.waitForLog("reloaded")
        let requests = try await daemon.waitForDeliveries(sink, count: 1, notBefore: .distantPast)
        #expect(requests.first?.headers["Idempotency-Key"]?.hasPrefix("run-test-1/0/") == true)
        #expect(daemon.log.contains("Ada Lovelace"), "debug level names the contact: \(daemon.log)")
        #expect(!daemon.log.contains("env-secret-123"), "the environment stays out of the log, even at debug level")

        #expect(kill(daemon.pid, SIGINT) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir + "/run.pid"))
    }

    /// docs/design/reminders.md catch-up through `run` + SIGHUP: a new offset whose fire time
    /// is already behind the daemon's last pass is delivered at the reload, not
    /// passed over in silence.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func aReloadDeliversAReminderWhoseTimeMovedBehindTheLastPass() async throws {
        // The daemon starts a minute after the fire time.
        let minute = Self.fireMinute
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        let config = Self.config(sink: base, fireAt: minute)
        try sandbox.writeConfig(config.replacingOccurrences(of: "offsets = [0]", with: "offsets = [1]"))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute))
        // Imported (and so included) before that minute: not "included after its time".
        #expect(try await sandbox.run(["import", file, "--now", Self.pinned(-60)]).status == 0)

        let daemon = try DaemonProcess(sandbox, now: Self.pinned(60))
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("next wake")  // the first pass is done: the watermark is now
        #expect(try await sink.requests().isEmpty)
        try sandbox.writeConfig(config)  // the day-of reminder, at a minute already past
        #expect(kill(daemon.pid, SIGHUP) == 0)
        let requests = try await daemon.waitForDeliveries(sink, count: 1, notBefore: Date())
        let key = try #require(requests.first?.headers["Idempotency-Key"])
        #expect(key.hasPrefix("run-test-1/0/"), "\(key)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        #expect(try await sink.requests().count == 1)
    }

    /// `buzz set` changes what is due: it signals the daemon, which re-plans and
    /// delivers the contact's new day-before reminder at its minute (docs/design/occasions.md).
    /// The daemon's clock starts 5 s before that minute (if `set` and the reload
    /// take longer, the reminder is caught up at the reload instead).
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func contactSettingsSignalTheDaemonToReplan() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        let minute = Self.fireMinute
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute))
        chmod(sandbox.configPath, 0o600)
        // Born the day after: with offsets [0] nothing fires today.
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute.addingTimeInterval(86_400)))
        #expect(try await sandbox.run(["import", file, "--now", Self.pinned(-3_600)]).status == 0)
        let daemon = try DaemonProcess(sandbox, now: Self.pinned(-5))
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("next wake")
        let set = try await sandbox.run(["set", "run-test-1", "--offsets", "0,1"])
        #expect(set.status == 0, "\(set)")
        try await daemon.waitForLog("reloaded")
        let requests = try await daemon.waitForDeliveries(sink, count: 1, notBefore: daemon.startedAt.addingTimeInterval(4))
        #expect(requests.first?.headers["Idempotency-Key"]?.hasPrefix("run-test-1/1/") == true, "\(requests)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }

    /// A SIGHUP that loaded a template nested ~3,000 deep killed the daemon (stack
    /// overflow): now the reload fails in one line and the old templates stay.
    @Test func aReloadWithATemplateNestedTooDeepKeepsTheOldOnes() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nchannels = [\"console\"]\n")
        chmod(sandbox.configPath, 0o600)
        let daemon = try DaemonProcess(sandbox)
        try await daemon.waitUntilReady()

        let body = String(repeating: "{{#today}}", count: 3_000) + "x" + String(repeating: "{{/today}}", count: 3_000)
        let template = try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache", "Hi {{name}}\n\n\(body)\n")
        #expect(kill(daemon.pid, SIGHUP) == 0)
        try await daemon.waitForLog("reload failed")
        let failures = daemon.log.split(separator: "\n").filter { $0.contains("reload failed") }
        #expect(failures.count == 1 && failures[0].contains("\(template):3:321: sections nested more than 32 deep"),
                "\(daemon.log)")
        #expect(daemon.isRunning)

        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }

    /// SIGTERM during a pass of 40 heavy reminders (titles of 20,000 names; 100,000
    /// once took minutes each to render) to a slow webhook (0.3 s per
    /// answer, so the pass would take 12 s): the send in flight finishes, the
    /// daemon exits within a couple of seconds, nothing is left `sending`, and
    /// the reminders not yet sent wait `pending` for the next start.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func sigtermStopsAPassOfHeavyMessagesPromptly() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        try await sink.script([], default: ["status": 200, "hang": 0.3])
        // Reminders at the minute before the daemon's clock starts: due as it starts.
        let minute = Self.fireMinute
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute))
        chmod(sandbox.configPath, 0o600)
        _ = try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache",
                              String(repeating: "{{name}}", count: 20_000) + "\n\nToday.\n")
        let today = Calendar.utc.dateComponents([.month, .day], from: minute)
        let cards = (0..<40).map { index in
            VCard.card(uid: "heavy-\(index)", name: "Person \(index)",
                       bday: String(format: "1990-%02d-%02d", today.month ?? 1, today.day ?? 1))
        }.joined()
        let file = try sandbox.write("contacts.vcf", cards)
        // Imported (and included) before that minute.
        #expect(try await sandbox.run(["import", file, "--now", Self.pinned(-60)]).status == 0)

        let daemon = try DaemonProcess(sandbox, now: Self.pinned(60), environment: ["BUZZ_LOG_LEVEL": "info"])
        // The daemon compiles the 20,000-tag template before it publishes its pid: a few seconds
        // in a debug build while the whole suite loads both cores (100,000 tags took over 20 s,
        // seen with gdb in a full run). A deadline, not a wait: it costs nothing when the start is quick.
        try await daemon.waitUntilReady(within: .seconds(90))
        // The first reminder has reached the webhook (the log says "sent" only once the pass ends).
        let deadline = ContinuousClock.now + .seconds(60)
        while try await sink.requests().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let signalled = ContinuousClock.now
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log.suffix(2_000))")
        let took = ContinuousClock.now - signalled
        #expect(took < .seconds(3), "stopped \(took) after SIGTERM")
        // Stopped mid-pass: some went out, the rest wait; none is half-done (`sending`).
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.status == 0 && !outbox.stdout.contains("\"status\":\"sending\""), "\(outbox.stdout.prefix(500))")
        #expect(outbox.stdout.contains("\"status\":\"pending\""), "\(outbox.stdout.prefix(500))")
        let posted = try await sink.requests().count
        #expect(posted >= 1 && posted < 40, "\(posted) posted")
    }

    /// SIGTERM is the service group's graceful-shutdown signal: the delivery
    /// loop is shut down first (it logs "stopped"), then its parts in the
    /// reverse of their start order; the pid file is removed and the status is 0.
    /// SIGINT alike.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalShutsTheServiceGroupDownGracefully(signal: Int32) async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nchannels = [\"console\"]\n")
        chmod(sandbox.configPath, 0o600)
        let daemon = try DaemonProcess(sandbox, environment: ["BUZZ_LOG_LEVEL": "debug"])
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("nothing planned")

        #expect(kill(daemon.pid, signal) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir + "/run.pid"))
        let lines = daemon.log.split(separator: "\n").map(String.init)
        func index(_ text: String, service: String? = nil) -> Int? {
            lines.firstIndex { line in line.contains(text) && (service.map { line.contains("sl-service=\($0) ") } ?? true) }
        }
        let order = [index("Signal caught. Shutting down the group."),
                     index("Triggering graceful shutdown for service", service: "buzz run"),
                     index("] stopped"),
                     index("Triggering graceful shutdown for service", service: "notification listener"),
                     index("Triggering graceful shutdown for service", service: "source watcher"),
                     index("Triggering graceful shutdown for service", service: "timer")]
        #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted(),
                "\(order)\n\(daemon.log)")
    }

    @Test func aSecondRunOnTheSameDataDirIsRefused() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nchannels = [\"console\"]\n")
        chmod(sandbox.configPath, 0o600)
        let daemon = try DaemonProcess(sandbox)
        try await daemon.waitUntilReady()

        let second = try await sandbox.run(["run"])
        #expect(second.status == 2, "\(second)")
        #expect(second.stderrLines.count == 1, "\(second)")
        #expect(second.stderr.contains("already running") && second.stderr.contains("pid \(daemon.pid)"), "\(second)")
        // `run --now` is a run too (its clock starts at --now): refused the same way.
        let pinned = try await sandbox.run(["run", "--now", "2027-01-01"])
        #expect(pinned.status == 2 && pinned.stderrLines.count == 1 && pinned.stderr.contains("already running"),
                "\(pinned)")

        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")

        // A pid file left by a killed daemon is stale: a command that would
        // signal it stays silent, and a new run takes it over.
        try Data("999999\n".utf8).write(to: URL(fileURLWithPath: sandbox.dataDir + "/run.pid"))
        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "u1", name: "Grace Hopper", bday: "1906-12-09"))
        let imported = try await sandbox.run(["import", file])
        #expect(imported.status == 0 && imported.stderr.isEmpty, "\(imported)")
        let again = try DaemonProcess(sandbox)
        try await again.waitUntilReady()
        #expect(kill(again.pid, SIGTERM) == 0)
        #expect(try await again.waitForExit(within: .seconds(10)) == 0, "\(again.log)")
    }
}

/// The wall-clock timer on its own: due, woken, cancelled, stopped. Nothing
/// here depends on how busy the machine is: the order of events is checked,
/// not how long they took.
@Suite struct WallClockTimerTests {
    /// Returns once `timer` has a wait suspended (no sleep standing for "the wait has started").
    static func waitUntilWaiting(_ timer: WallClockTimer) async {
        while !timer.isWaiting { await Task.yield() }
    }

    @Test func firesAtTheInstantAndWakesOnRequest() async throws {
        let timer = try WallClockTimer()
        let target = WallClockTimer.now() + 1
        #expect(try await timer.wait(until: target) == .due)
        #expect(WallClockTimer.now() >= target)
        // The kernel's expiry of the timerfd ended the wait (not some other
        // wake-up that happened to come after the instant), once.
        #expect(timer.expiryCount == 1)

        // A past instant fires at once.
        #expect(try await timer.wait(until: WallClockTimer.now() - 60) == .due)

        // wake() before a wait: that wait returns at once; during one: it ends it.
        timer.wake()
        #expect(try await timer.wait(until: nil) == .woken)
        async let woken = timer.wait(until: WallClockTimer.now() + 3_600)
        await Self.waitUntilWaiting(timer)
        timer.wake()
        #expect(try await woken == .woken)
        #expect(timer.expiryCount == 2)  // the past instant's; the hour never came
    }

    @Test func cancellationEndsTheWait() async throws {
        let timer = try WallClockTimer()
        let waiting = Task { try await timer.wait(until: nil) }
        await Self.waitUntilWaiting(timer)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    /// `stop()` (the timer's service, at shutdown) ends a wait and every later one.
    @Test func stopEndsTheWaitAndLaterOnes() async throws {
        let timer = try WallClockTimer()
        let waiting = Task { try await timer.wait(until: WallClockTimer.now() + 3_600) }
        await Self.waitUntilWaiting(timer)
        timer.stop()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await #expect(throws: CancellationError.self) { try await timer.wait(until: nil) }
        timer.stop()  // idempotent
    }
}

extension Calendar {
    fileprivate static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}

/// `buzz run` started in a sandbox, with its standard error in a file.
final class DaemonProcess {
    let pid: Int32
    /// Just before the process started: its clock (`--now`) starts no earlier.
    let startedAt: Date
    private let process: Process
    private let logPath: String
    private let pidPath: String

    /// - Parameters:
    ///   - now: `run --now`: where the daemon's clock starts (it then advances in real time).
    ///   - keepsStandardOutput: false sends standard output (the console channel's messages) to /dev/null;
    ///     the log (standard error) is kept either way.
    init(_ sandbox: Sandbox, now: String? = nil, keepsStandardOutput: Bool = true,
         environment overrides: [String: String] = [:]) throws {
        let binary = try #require(BuzzBinary.path, "buzz binary not found: build it or set BUZZ_BIN")
        logPath = sandbox.root + "/run-\(UUID().uuidString.lowercased()).log"
        pidPath = sandbox.dataDir + "/run.pid"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--data-dir", sandbox.dataDir, "run"] + (now.map { ["--now", $0] } ?? [])
        process.environment = sandbox.environment.merging(overrides) { _, new in new }
        process.currentDirectoryURL = URL(fileURLWithPath: sandbox.root)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = keepsStandardOutput ? log : FileHandle.nullDevice
        process.standardError = log
        startedAt = Date()
        try process.run()
        self.process = process
        pid = process.processIdentifier
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
    }

    var isRunning: Bool { process.isRunning }

    /// Standard output and error so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the daemon has written its pid (it answers SIGHUP from then on).
    func waitUntilReady(within limit: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await poll("the pid file", within: limit, sourceLocation: sourceLocation) {
            let text = (try? String(contentsOfFile: pidPath, encoding: .utf8)) ?? ""
            return text.trimmingCharacters(in: .whitespacesAndNewlines) == String(pid)
        }
    }

    func waitForLog(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await poll("\"\(text)\" in the log", within: .seconds(20), sourceLocation: sourceLocation) { log.contains(text) }
    }

    /// Polls the sink until it holds `count` requests; none may arrive before `notBefore`.
    func waitForDeliveries(_ sink: HTTPSink, count: Int, notBefore: Date,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws -> [RecordedRequest] {
        let deadline = max(notBefore, Date()).addingTimeInterval(30)
        while true {
            let checkedAt = Date()
            let requests = try await sink.requests()
            if checkedAt < notBefore.addingTimeInterval(-0.5) {
                #expect(requests.isEmpty, "delivered before its minute: \(log)", sourceLocation: sourceLocation)
            }
            if requests.count >= count { return requests }
            guard Date() < deadline, process.isRunning else {
                Issue.record("no delivery by \(deadline) (running: \(process.isRunning)):\n\(log)", sourceLocation: sourceLocation)
                return requests
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The exit status once the process ends within `limit`; nil when it does not.
    ///
    /// Read from /proc while the child is a zombie too: Foundation.Process on Linux
    /// notices an exit only when a socket the child inherited closes, and a process
    /// another test spawns at the same moment can inherit and hold that socket
    /// (swift-corelibs-foundation#4795), so `isRunning` may stay true for a while.
    func waitForExit(within limit: Duration) async throws -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while process.isRunning {
            if let status = Self.zombieStatus(pid) { return status }
            if clock.now > deadline {
                Issue.record("buzz run still running \(limit) after the signal:\n\(log)")
                return nil
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// The exit status of `pid` when it has exited but is not reaped yet (state Z in
    /// /proc/PID/stat; field 52 is its wait status); 128 + signal when killed.
    private static func zombieStatus(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let paren = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: paren)...].split(separator: " ")
        guard fields.count > 49, fields[0] == "Z", let wait = Int32(fields[49].trimmingCharacters(in: .whitespacesAndNewlines)) else {
            return nil
        }
        return wait & 0x7F == 0 ? (wait >> 8) & 0xFF : 128 + (wait & 0x7F)
    }

    private func poll(_ what: String, within limit: Duration, sourceLocation: SourceLocation,
                      _ done: () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while !done() {
            guard clock.now < deadline, process.isRunning else {
                Issue.record("waited for \(what) (running: \(process.isRunning)):\n\(log)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// `run` with a vdir source (docs/design/sources.md): synced at start, watched with
/// inotify, re-planned after a change.
extension RunCommandTests {
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func aCardRenamedIntoAWatchedVdirIsPlannedSoonAfterAndFires() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        // The daemon's clock starts 8 s before: start, sync, write, plan (the watch
        // waits ~2 s for writes to settle), then fire. Planned before the fire time,
        // the log says when it wakes next; planned after it (a loaded machine), the
        // catch-up sends it at once. Either way within 8 s of the rename.
        let minute = Self.fireMinute
        let sandbox = try Sandbox()
        let book = sandbox.root + "/contacts/personal"
        _ = try sandbox.write("contacts/personal/other.vcf",
                              VCard.card(uid: "other-1", name: "Otto Other", bday: "1970-01-01"))
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute) + """

            [sources.phone]
            type = "vdir"
            path = "\(sandbox.root)/contacts"
            recursive = true
            """)
        chmod(sandbox.configPath, 0o600)

        let daemon = try DaemonProcess(sandbox, now: Self.pinned(-8))
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("synced phone: 1 added")
        let fireAt = String(ISO8601DateFormatter().string(from: minute).dropLast()) + "+00:00"
        #expect(!daemon.log.contains("next wake \(fireAt)"), "\(daemon.log)")

        // As vdirsyncer and khard write: a temp file in the folder, renamed over the card's name.
        let temp = book + "/.tmp-\(UUID().uuidString.lowercased())"
        try Self.card(bornOn: minute).write(toFile: temp, atomically: false, encoding: .utf8)
        let renamedAt = ContinuousClock.now
        #expect(rename(temp, book + "/run-test-1.vcf") == 0)
        while !daemon.log.contains("next wake \(fireAt)") {
            if try await !sink.requests().isEmpty { break }  // planned late, and caught up
            guard ContinuousClock.now - renamedAt < .seconds(8) else {
                Issue.record("neither planned nor sent within 8 s of the rename:\n\(daemon.log)")
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Only the new file is read (Otto's is unchanged, so not read again).
        #expect(daemon.log.contains("synced phone: 1 added, 0 updated, 0 unchanged, 0 removed"), "\(daemon.log)")

        let requests = try await daemon.waitForDeliveries(sink, count: 1, notBefore: daemon.startedAt.addingTimeInterval(7))
        #expect(requests.first?.headers["Idempotency-Key"]?.hasPrefix("run-test-1/0/") == true, "\(requests)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        #expect(!daemon.log.contains("Ada"), "contact names are logged at debug level only: \(daemon.log)")
    }

    @Test func aReplacedFolderAndANewBookAreSeen() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("contacts/a/one.vcf", VCard.card(uid: "one", name: "One", bday: "1970-01-01"))
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            [reminders]
            channels = ["console"]
            [sources.phone]
            type = "vdir"
            path = "\(sandbox.root)/contacts"
            recursive = true
            """)
        let daemon = try DaemonProcess(sandbox)
        try await daemon.waitUntilReady()
        /// Waits for the `count`th "synced phone: …" line and returns it.
        func syncLine(_ count: Int) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(15)
            while true {
                let lines = daemon.log.split(separator: "\n").filter { $0.contains("synced phone: ") }
                if lines.count >= count { return String(lines[count - 1].split(separator: "synced phone: ").last ?? "") }
                guard ContinuousClock.now < deadline else {
                    Issue.record("no sync line #\(count):\n\(daemon.log)")
                    return ""
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(try await syncLine(1) == "1 added, 0 updated, 0 unchanged, 0 removed, 0 skipped")

        // A new address book appears; then a card in it (the contacts not read count as unchanged).
        try FileManager.default.createDirectory(atPath: sandbox.root + "/contacts/b", withIntermediateDirectories: true)
        #expect(try await syncLine(2) == "0 added, 0 updated, 1 unchanged, 0 removed, 0 skipped")
        _ = try sandbox.write("contacts/b/two.vcf", VCard.card(uid: "two", name: "Two", bday: "1970-01-02"))
        #expect(try await syncLine(3) == "1 added, 0 updated, 1 unchanged, 0 removed, 0 skipped")

        // The whole folder replaced by a rename (a restore from backup): the old contacts go, the new one comes.
        _ = try sandbox.write("restored/x/three.vcf", VCard.card(uid: "three", name: "Three", bday: "1970-01-03"))
        try FileManager.default.moveItem(atPath: sandbox.root + "/contacts", toPath: sandbox.root + "/old")
        #expect(rename(sandbox.root + "/restored", sandbox.root + "/contacts") == 0)
        #expect(try await syncLine(4) == "1 added, 0 updated, 0 unchanged, 2 removed, 0 skipped")
        // And the replacement is watched in turn.
        _ = try sandbox.write("contacts/x/four.vcf", VCard.card(uid: "four", name: "Four", bday: "1970-01-04"))
        #expect(try await syncLine(5) == "1 added, 0 updated, 1 unchanged, 0 removed, 0 skipped")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }
}

/// `[export] ics = "PATH"`: `run` writes the calendar at start and again after a change.
extension RunCommandTests {
    @Test func runRewritesTheExportedCalendarAfterAChange() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            [reminders]
            channels = ["console"]
            [export]
            ics = "~/cal/birthdays.ics"
            """)
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "u1", name: "Grace Hopper", bday: "1906-12-09")
            + VCard.card(uid: "u2", name: "Alan Turing"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let path = sandbox.home + "/cal/birthdays.ics"
        let daemon = try DaemonProcess(sandbox)
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("wrote the calendar")
        let first = try String(contentsOfFile: path, encoding: .utf8)
        #expect(first.contains("DTSTART;VALUE=DATE:19061209") && !first.contains("Alan"), "\(first)")
        let set = try await sandbox.run(["set-birthday", "u2", "1912-06-23"])
        #expect(set.status == 0, "\(set)")
        try await daemon.waitForLog("reloaded")
        let deadline = Date().addingTimeInterval(10)
        while !((try? String(contentsOfFile: path, encoding: .utf8))?.contains("19120623") ?? false), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("DTSTART;VALUE=DATE:19120623"), "\(daemon.log)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }
}

/// A CardDAV server never holds up a reminder: `run` syncs beside its
/// deliveries, stops at once on SIGTERM whatever a server does, and tries a
/// failing server again with backoff.
extension RunCommandTests {
    /// The server takes the connection and never answers (the request would
    /// time out after 30 s): the reminder still goes out at its time, and
    /// SIGTERM stops the daemon within a second.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func aSilentCardDAVServerHoldsUpNeitherAReminderNorTheStop() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let silent = try SilentServer()
        let minute = Self.fireMinute
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, fireAt: minute)
            + "\n[sources.cloud]\ntype = \"carddav\"\nurl = \"\(silent.url)\"\ntimeout = \"30s\"\n")
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", Self.card(bornOn: minute))
        #expect(try await sandbox.run(["import", file, "--now", Self.pinned(-3_600)]).status == 0)

        // The clock starts 2 s before the fire time; the start-up sync hangs on the server.
        // (Both limits below leave a loaded machine room, with two cores
        // shared by a dozen builds: on an idle one the reminder goes out at its
        // second and the stop takes milliseconds; before, both waited for the
        // request's 30 s timeout.)
        let daemon = try DaemonProcess(sandbox, now: Self.pinned(-2))
        try await daemon.waitUntilReady()
        _ = try await daemon.waitForDeliveries(sink, count: 1, notBefore: daemon.startedAt.addingTimeInterval(1))
        let delivered = Date().timeIntervalSince(daemon.startedAt)
        #expect(delivered < 12, "delivered \(delivered) s after the start, for 2 s:\n\(daemon.log)")
        try await daemon.waitForLog("next wake")
        #expect(!daemon.log.contains("cloud"), "the sync is still waiting for the server:\n\(daemon.log)")

        let signalled = ContinuousClock.now
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
        let took = ContinuousClock.now - signalled
        #expect(took < .seconds(5), "stopped \(took) after SIGTERM:\n\(daemon.log)")
        #expect(daemon.log.contains("stopped"), "\(daemon.log)")
        withExtendedLifetime(silent) {}
    }

    /// `run --now` a year ahead with a server that refuses the connection: one
    /// failure, one log line, the next try 30 s later (it was thousands of tries a second).
    @Test func anUnreachableCardDAVServerIsTriedAgainWithBackoffNotInALoop() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nchannels = [\"console\"]\n"
            + "[sources.cloud]\ntype = \"carddav\"\nurl = \"\(try SilentServer.refusedURL())\"\n")
        chmod(sandbox.configPath, 0o600)
        let daemon = try DaemonProcess(sandbox, now: "2030-06-01T12:00:00Z")
        try await daemon.waitUntilReady()
        try await daemon.waitForLog("source cloud: not synced")
        try await Task.sleep(for: .seconds(1))
        let log = daemon.log
        let failures = log.split(separator: "\n").filter { $0.contains("cloud: not synced") }
        #expect(failures.count == 1, "\(log.prefix(3_000))")
        #expect(failures.first?.contains("trying again at 2030-06-01T12:00:3") == true, "\(log.prefix(3_000))")
        #expect(log.split(separator: "\n").count < 12, "\(log.prefix(3_000))")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(5)) == 0, "\(daemon.log)")
    }
}
