import BuzzDaemon
import BuzzTestKit
import Foundation
import ServiceLifecycle
import Testing
@testable import BuzzCommands

/// No reminder ends in silence: fallback routes and notices, through tick's pass
/// run in process (`LibraryTick`; `buzz tick` itself where a kill is the point)
/// against real servers (an HTTP sink as the route, aiosmtpd or a second sink as
/// the fallback). Time moves with `--now`; nothing waits for the clock.
@Suite(.timeLimit(.minutes(3)),
       .enabled(if: ServerGate.allows(.http) && ServerGate.allows(.smtp), "needs python3 with aiosmtpd"))
struct NeverSilentTests {
    /// Reminders on the day at 09:00 UTC to `hook` (the route sink), with `extra`
    /// in `[reminders]`, a `mail` channel to the SMTP sink and a `phone` webhook.
    static func world(route: URL, smtpPort: Int? = nil, phone: URL? = nil, count: Int = 1,
                      extra: String = "") async throws -> Sandbox {
        let sandbox = try Sandbox()
        var channels = """
            [channels.hook]
            type = "webhook"
            url = "\(route.absoluteString)/hook"
            timeout = "5s"
            """
        if let smtpPort {
            channels += """

                [channels.mail]
                type = "smtp"
                host = "127.0.0.1"
                port = \(smtpPort)
                security = "none"
                from = "buzz@example.org"
                to = "me@example.org"
                """
        }
        if let phone {
            channels += """

                [channels.phone]
                type = "webhook"
                url = "\(phone.absoluteString)/phone"
                timeout = "5s"
                """
        }
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["hook"]
            offsets = [0]
            \(extra)
            \(channels)
            """)
        chmod(sandbox.configPath, 0o600)
        let cards = (0..<count).map { VCard.card(uid: "u\($0)", name: "Person \($0)", bday: "1990-03-15") }.joined()
        let file = try sandbox.write("contacts.vcf", cards)
        #expect(try await sandbox.run(["import", file, "--now", "2027-01-01"]).status == 0)
        #expect(try await LibraryTick.run(sandbox, now: "2027-01-02T00:00Z").status == 0)
        return sandbox
    }

    static func keys(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().compactMap { $0.headers["Idempotency-Key"] }
    }

    @Test func aRouteDownAllMorningGoesToTheFallbackOnceAfterFallbackAfter() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let smtp = SMTPSink()
        let port = try await smtp.start()
        let sandbox = try await Self.world(route: base, smtpPort: port, extra: "fallback = [\"mail\"]\nfallback_after = \"2h\"")
        try await route.script([], default: ["status": 500])
        for now in ["2027-03-15T09:00Z", "2027-03-15T10:00Z", "2027-03-15T10:59Z"] {
            let tick = try await LibraryTick.run(sandbox, now: now)
            #expect(tick.status == 1, "retrying: \(tick)")
            #expect(try smtp.messages().isEmpty, "not before the first attempt + 2h (\(now))")
        }
        let fallback = try await LibraryTick.run(sandbox, now: "2027-03-15T11:00Z", json: true)
        #expect(fallback.stdout.contains("\"channel\":\"mail\",\"status\":\"sent\""), "\(fallback)")
        let mail = try smtp.messages()
        #expect(mail.count == 1)
        #expect(mail.first?.data.contains("did not get through on hook: HTTP 500") == true, "\(mail.first?.data ?? "")")
        // The route's retries are closed: a route that recovers does not repeat it, and no later pass sends it again.
        try await route.script([], default: ["status": 200])
        let before = try await route.requests().count
        for now in ["2027-03-15T12:00Z", "2027-03-15T18:00Z", "2027-03-16T00:30Z"] {
            #expect(try await LibraryTick.run(sandbox, now: now).status == 0)
        }
        #expect(try await route.requests().count == before)
        #expect(try smtp.messages().count == 1)
        let outbox = try await sandbox.run(["outbox"])
        #expect(outbox.stdout.contains("fallback for hook"), "\(outbox)")
        let show = try await sandbox.run(["show", "Person 0"])
        #expect(show.stdout.contains("fallback for hook"), "\(show)")
    }

    @Test func aPermanentRefusalGoesToTheFallbackAtOnce() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let smtp = SMTPSink()
        let port = try await smtp.start()
        let sandbox = try await Self.world(route: base, smtpPort: port, extra: "fallback = [\"mail\"]")
        try await route.script([["status": 404, "body": "no such hook"]])
        let tick = try await LibraryTick.run(sandbox, now: "2027-03-15T09:00Z")
        #expect(tick.status == 1, "the route failed: \(tick)")
        #expect(try smtp.messages().count == 1)
        // Delivered by the fallback: not a problem, so no notice follows.
        _ = try await LibraryTick.run(sandbox, now: "2027-03-16T00:30Z")
        #expect(try smtp.messages().count == 1)
        #expect(try await route.requests().count == 1)
    }

    @Test func aRouteThatDeliveredLeavesTheFallbackSilent() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let smtp = SMTPSink()
        let port = try await smtp.start()
        let sandbox = try await Self.world(route: base, smtpPort: port, extra: "fallback = [\"mail\"]\nfallback_after = \"1h\"")
        for now in ["2027-03-15T09:00Z", "2027-03-15T11:00Z", "2027-03-15T23:30Z", "2027-03-16T00:30Z"] {
            #expect(try await LibraryTick.run(sandbox, now: now).status == 0)
        }
        #expect(try await Self.keys(route) == ["u0/0/2027-03-15"])
        #expect(try smtp.messages().isEmpty)
    }

    @Test func aRouteDownAllDayWithoutFallbackIsAnnouncedOnceAfterTheDay() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let sandbox = try await Self.world(route: base)
        try await route.script([], default: ["status": 500])
        for now in ["2027-03-15T09:00Z", "2027-03-15T15:00Z", "2027-03-15T23:50Z"] {
            _ = try await LibraryTick.run(sandbox, now: now)
        }
        #expect(try await Self.keys(route).allSatisfy { $0 == "u0/0/2027-03-15" })
        try await route.script([], default: ["status": 200])  // back after midnight
        let after = try await LibraryTick.run(sandbox, now: "2027-03-16T00:05Z", json: true)
        #expect(after.status == 1, "the pass recorded a problem: \(after)")
        #expect(after.stdout.contains("\"problems\":1"), "\(after)")
        let notices = try await route.requests().filter { $0.headers["Idempotency-Key"]?.hasPrefix("%notice/") == true }
        #expect(notices.map { $0.headers["Idempotency-Key"] } == ["%notice/u0/0/2027-03-15"])
        #expect(notices.first?.bodyText?.contains("Person 0") == true, "\(notices)")
        #expect(notices.first?.bodyText?.contains("buzz wish") == true, "\(notices)")
        for now in ["2027-03-16T00:10Z", "2027-03-16T09:00Z", "2027-03-20T09:00Z"] {
            #expect(try await LibraryTick.run(sandbox, now: now).status == 0)
        }
        #expect(try await route.requests().filter { $0.headers["Idempotency-Key"]?.hasPrefix("%notice/") == true }.count == 1)
        // Shown where the user looks for a week: status, the bar, doctor.
        let status = try JSONRow.parseObject(try await sandbox.run(["status", "--json", "--now", "2027-03-20T09:00Z"]).stdout)
        #expect(status["problems"] == .int(1), "\(status)")
        let bar = try await sandbox.run(["status", "--waybar", "--now", "2027-03-20T09:00Z"])
        #expect(bar.stdout.contains("\"class\":[\"none\",\"problem\"]"), "\(bar)")
        let doctor = try await sandbox.run(["doctor", "--now", "2027-03-20T09:00Z"])
        #expect(doctor.stdout.contains("warn  not delivered: Person 0's birthday reminder for 2027-03-15 (missed:"), "\(doctor)")
        let weekLater = try JSONRow.parseObject(try await sandbox.run(["status", "--json", "--now", "2027-03-23T09:00Z"]).stdout)
        #expect(weekLater["problems"] == .int(0), "seven days: \(weekLater)")
        let quiet = try await sandbox.run(["status", "--waybar", "--now", "2027-03-23T09:00Z"])
        #expect(quiet.stdout.contains("\"class\":\"none\""), "\(quiet)")
    }

    @Test func aWeekOffIsOneNoticeAndNothingLate() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["hook"]
            [channels.hook]
            type = "webhook"
            url = "\(base.absoluteString)/hook"
            """)
        chmod(sandbox.configPath, 0o600)
        let cards = (5...9).map { VCard.card(uid: "d\($0)", name: "Day \($0)", bday: "1990-03-0\($0)") }.joined()
        let file = try sandbox.write("contacts.vcf", cards)
        #expect(try await sandbox.run(["import", file, "--now", "2027-03-01"]).status == 0)
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-02T12:00Z").status == 0)
        // The laptop stays shut until Mar 13: ten reminders (day before and day of) were due meanwhile.
        let back = try await LibraryTick.run(sandbox, now: "2027-03-13T08:00Z", json: true)
        #expect(back.status == 1, "\(back)")
        let requests = try await route.requests()
        #expect(requests.count == 1, "only the notice: \(requests.map { $0.headers["Idempotency-Key"] ?? "" })")
        let body = requests.first?.bodyText ?? ""
        for day in 5...9 { #expect(body.contains("Day \(day)"), "\(body)") }
        #expect(body.contains("Missed: 10 reminders"), "\(body)")
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-13T09:00Z").status == 0)
        #expect(try await route.requests().count == 1)
    }

    @Test func noticesTryTheNextChannelAndAreRetried() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let phone = HTTPSink()
        let phoneBase = try await phone.start()
        let sandbox = try await Self.world(route: base, phone: phoneBase, extra: "notices = [\"hook\", \"phone\"]")
        try await route.script([], default: ["status": 404])
        try await phone.script([], default: ["status": 503])
        let first = try await LibraryTick.run(sandbox, now: "2027-03-15T09:00Z")
        #expect(first.status == 1)
        // The hook refused the reminder and its notice for good; the phone is down for now.
        #expect(try await route.requests().count == 2)
        #expect(try await Self.keys(phone) == ["%notice/u0/0/2027-03-15"])
        _ = try await LibraryTick.run(sandbox, now: "2027-03-15T09:00:05Z")
        #expect(try await phone.requests().count == 1, "not before its retry time")
        try await phone.script([], default: ["status": 200])
        _ = try await LibraryTick.run(sandbox, now: "2027-03-15T10:00Z")
        #expect(try await Self.keys(phone) == ["%notice/u0/0/2027-03-15", "%notice/u0/0/2027-03-15"])
        _ = try await LibraryTick.run(sandbox, now: "2027-03-15T11:00Z")
        #expect(try await phone.requests().count == 2)
        #expect(try await route.requests().count == 2)
    }

    /// `kill -9` in the middle of a pass that sends fallbacks, then in the middle
    /// of the notice: nothing is lost, at most one duplicate per kill, with the same id.
    @Test func killedWhileSendingFallbacksAndNoticesLosesNothing() async throws {
        let route = HTTPSink()
        let base = try await route.start()
        let phone = HTTPSink()
        let phoneBase = try await phone.start()
        // 30 fallbacks answered in 0.5 s each: the kill after the third lands among them
        // even when a loaded machine is seconds late (12 × 0.3 s was once too few in CI).
        let sandbox = try await Self.world(route: base, phone: phoneBase, count: 30, extra: "fallback = [\"phone\"]")
        try await route.script([], default: ["status": 404])
        try await phone.script([], default: ["status": 200, "hang": 0.5])
        let binary = try #require(BuzzBinary.path)
        /// `buzz tick --now NOW` on `sandbox`'s data dir, running in the background (to be killed).
        func startTick(_ sandbox: Sandbox, _ now: String) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--data-dir", sandbox.dataDir, "tick", "--now", now]
            process.environment = sandbox.environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        let process = try startTick(sandbox, "2027-03-15T09:00Z")
        try await TickCommandTests.waitForRequests(phone, atLeast: 3)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let beforeKill = try await phone.requests().count
        #expect(beforeKill < 30, "the kill should land among the fallbacks (\(beforeKill) sent)")
        try await phone.script([], default: ["status": 200])
        _ = try await sandbox.run(["tick", "--now", "2027-03-15T09:00:30Z"])
        let keys = try await Self.keys(phone)
        let expected = Set((0..<30).map { "u\($0)/0/2027-03-15" })
        #expect(Set(keys) == expected)
        #expect(keys.count - expected.count <= 1, "at most one duplicate: \(keys)")

        // A second birthday whose fallback refuses too: its notice is in flight when killed.
        let other = try await Self.world(route: base, phone: phoneBase, extra: "fallback = [\"phone\"]\nnotices = [\"phone\"]")
        try await route.script([], default: ["status": 404])
        try await phone.script([["status": 404]], default: ["status": 200, "hang": 2])
        let seen = try await phone.requests().count
        let noticeRun = try startTick(other, "2027-03-15T09:00Z")
        try await TickCommandTests.waitForRequests(phone, atLeast: seen + 2)  // the fallback's 404, then the notice
        kill(noticeRun.processIdentifier, SIGKILL)
        noticeRun.waitUntilExit()
        try await phone.script([], default: ["status": 200])
        _ = try await other.run(["tick", "--now", "2027-03-15T09:01Z"])
        _ = try await other.run(["tick", "--now", "2027-03-15T10:00Z"])
        let notices = try await Self.keys(phone).filter { $0.hasPrefix("%notice/") }
        #expect(notices == ["%notice/u0/0/2027-03-15", "%notice/u0/0/2027-03-15"], "resent once, same id: \(notices)")
    }

    /// `run` wakes at the day end of a reminder still waiting for its retry, so
    /// the problem is announced then, not at the next reminder (the daemon on a
    /// virtual clock).
    @Test func theDaemonWakesAtTheDayEndAndAnnounces() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(RunCommandTests.config(sink: base, fireAt: RunCommandTests.fireMinute))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", RunCommandTests.card(bornOn: RunCommandTests.fireMinute))
        #expect(try await sandbox.run(["import", file, "--now", "2027-05-01"]).status == 0)
        let fire = Int64(RunCommandTests.fireMinute.timeIntervalSince1970)
        let dayEnd = (fire / 86_400 + 1) * 86_400  // UTC midnight after the birthday
        // Down, and asks to be left alone until long after the day.
        try await sink.script([["status": 503, "headers": ["Retry-After": "200000"]]], default: ["status": 200])

        let clock = VirtualClock(now: fire - 60)
        let daemon = try DaemonLoopTests.daemon(sandbox, clock: clock)
        let running = Task { try await daemon.run() }
        #expect(await clock.nextWait() == fire)
        clock.advance(to: fire)
        #expect(await clock.nextWait() == dayEnd, "the day end comes before the server's retry time")
        try await TickCommandTests.waitForRequests(sink, atLeast: 1)
        clock.advance(to: dayEnd)
        try await TickCommandTests.waitForRequests(sink, atLeast: 2)
        daemon.requests.requestStop()
        clock.wake()
        try await running.value
        daemon.pidFile.release()
        let keys = try await Self.keys(sink)
        #expect(keys.count == 2 && keys.last?.hasPrefix("%notice/run-test-1/0/") == true, "\(keys)")
    }
}
