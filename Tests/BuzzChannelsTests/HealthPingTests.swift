import BuzzDaemon
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzCommands

/// `[health]` pings after `tick`, against the real HTTP sink: a GET after a
/// healthy pass, a POST of the summary to the failure URL otherwise, and a dead
/// monitor that changes nothing but one warning line.
@Suite(.timeLimit(.minutes(3)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct HealthPingTests {
    /// The tick world of `TickCommandTests` with a `[health]` table; the pings
    /// of its setup tick are cleared.
    static func world(_ sink: HTTPSink, base: URL, health: String) async throws -> Sandbox {
        let sandbox = try await TickCommandTests.world(sink: base, extra: "offsets = [1]\n[health]\n" + health)
        try await sink.clearRequests()
        return sandbox
    }

    static func pings(_ sink: HTTPSink) async throws -> [RecordedRequest] {
        try await sink.requests().filter { !$0.path.hasPrefix("/hook") }
    }

    @Test func aHealthyTickGetsThePingURL() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink, base: base, health: "ping_url = \"\(base.absoluteString)/ping/abc\"")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 0, "\(tick)")
        let pings = try await Self.pings(sink)
        #expect(pings.map(\.method) == ["GET"], "\(pings)")
        #expect(pings.first?.path == "/ping/abc")
        #expect(try await sink.requests().count == 2)  // the reminder, then the ping
    }

    @Test func aFailedDeliveryPostsTheSummaryToFail() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink, base: base, health: "ping_url = \"\(base.absoluteString)/ping/abc/\"")
        try await sink.script([["status": 404]])
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 1, "\(tick)")  // as without a ping
        let pings = try await Self.pings(sink)
        #expect(pings.map(\.method) == ["POST"], "\(pings)")
        #expect(pings.first?.path == "/ping/abc/fail")
        // The reminder reached nobody (a problem); the notice that says so went through the hook.
        #expect(pings.first?.bodyText == "tick: 1 due, 0 sent, 1 failed, 0 retrying, 0 missed, 0 skipped, 1 not delivered anywhere")
    }

    /// A reminder still being retried is not a problem yet: the pass is healthy.
    @Test func aRetryingReminderIsNoProblemYet() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink, base: base, health: "ping_url = \"\(base.absoluteString)/ping/abc\"")
        try await sink.script([["status": 500]])
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 1, "\(tick)")  // retrying: exit 1 as before
        #expect(try await Self.pings(sink).map(\.method) == ["GET"])
    }

    @Test func anUptimeKumaFailURLGetsTheSummaryPercentEncoded() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink, base: base, health: """
            ping_url = "\(base.absoluteString)/api/push/T?status=up&msg=OK"
            fail_url = "\(base.absoluteString)/api/push/T?status=down&msg={summary}"
            """)
        try await sink.script([["status": 404]])
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 1, "\(tick)")
        let pings = try await Self.pings(sink)
        #expect(pings.map(\.method) == ["POST"], "\(pings)")
        #expect(pings.first?.path
                == "/api/push/T?status=down&msg=tick%3A%201%20due%2C%200%20sent%2C%201%20failed%2C%200%20retrying%2C%200%20missed%2C%200%20skipped%2C%201%20not%20delivered%20anywhere")
        #expect(pings.first?.bodyText == "tick: 1 due, 0 sent, 1 failed, 0 retrying, 0 missed, 0 skipped, 1 not delivered anywhere")
    }

    @Test func aQueryWithoutFailURLIsAConfigError() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[health]\nping_url = \"https://kuma.example/api/push/SECRET?status=up\"\n")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 2, "\(tick)")
        let lines = tick.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("[health]"), "\(tick)")
        #expect(!tick.stderr.contains("SECRET"))
    }

    /// `doctor` says where pings go (scheme and host only) and sends none.
    @Test func doctorShowsTheMonitorWithoutItsToken() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink, base: base, health: "ping_url = \"\(base.absoluteString)/ping/SECRET-TOKEN\"")
        let doctor = try await sandbox.run(["doctor"])
        let line = try #require(doctor.stdout.split(separator: "\n").first { $0.contains("health:") }, "\(doctor)")
        #expect(line.hasPrefix("ok    health: pings \(base.absoluteString) after each pass"), "\(line)")
        #expect(!doctor.stdout.contains("SECRET-TOKEN") && !doctor.stderr.contains("SECRET-TOKEN"))
        #expect(try await Self.pings(sink).isEmpty)
    }

    @Test func aDeadMonitorIsOneWarningAndNoOtherChange() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let sandbox = try await Self.world(sink, base: base, health: "ping_url = \"http://127.0.0.1:1/SECRET-TOKEN\"")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 0, "\(tick)")
        let lines = tick.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(tick)")
        #expect(lines.first?.contains("health ping to http://127.0.0.1:1") == true, "\(tick)")
        #expect(!tick.stderr.contains("SECRET-TOKEN") && !tick.stdout.contains("SECRET-TOKEN"))
        #expect(try await sink.requests().map(\.path) == ["/hook"])
    }

    /// The daemon in virtual time: a ping at its first pass, the delivery's
    /// outcome after the pass that sends it, and while idle one ping per
    /// `ping_every`, which wakes the loop (and nothing else does).
    @Test func anIdleDaemonPingsEveryPingEvery() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(RunCommandTests.config(sink: base, fireAt: RunCommandTests.fireMinute)
            + "\n[health]\nping_url = \"\(base.absoluteString)/ping/abc\"\nping_every = \"1h\"\n")
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", RunCommandTests.card(bornOn: RunCommandTests.fireMinute))
        #expect(try await sandbox.run(["import", file, "--now", "2027-05-01"]).status == 0)
        let fire = Int64(RunCommandTests.fireMinute.timeIntervalSince1970)
        let start = fire - 5_400  // 90 minutes before the reminder

        let clock = VirtualClock(now: start)
        let daemon = try DaemonLoopTests.daemon(sandbox, clock: clock)
        let running = Task { try await daemon.run() }
        #expect(await clock.nextWait() == start + 3_600)  // the idle ping comes before the reminder
        try await TickCommandTests.waitForRequests(sink, atLeast: 1)
        clock.advance(to: start + 3_600)
        #expect(await clock.nextWait() == fire)
        try await TickCommandTests.waitForRequests(sink, atLeast: 2)
        try await sink.script([["status": 404]], default: ["status": 200])  // the reminder fails for good
        clock.advance(to: fire)
        #expect(await clock.nextWait() == fire + 3_600)
        try await TickCommandTests.waitForRequests(sink, atLeast: 5)  // the reminder, its notice, the ping
        clock.advance(to: fire + 3_600)  // idle again: the failure is repeated
        #expect(await clock.nextWait() == fire + 7_200)
        try await TickCommandTests.waitForRequests(sink, atLeast: 6)

        daemon.requests.requestStop()
        clock.wake()
        try await running.value
        daemon.pidFile.release()
        let requests = try await sink.requests()
        #expect(requests.map { "\($0.method) \($0.path)" }
                == ["GET /ping/abc", "GET /ping/abc", "POST /hook", "POST /hook", "POST /ping/abc/fail", "POST /ping/abc/fail"],
                "\(requests)")
        #expect(requests.last?.bodyText == "run: 1 due, 0 sent, 1 failed, 0 retrying, 0 missed, 0 skipped, 1 not delivered anywhere")
    }
}
