import BuzzTestKit
import Foundation
import Testing

/// `buzz tick` against the real HTTP sink: exactly-once delivery through faults (docs/design/reminders.md).
@Suite(.timeLimit(.minutes(3)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct TickCommandTests {
    /// A sandbox whose reminders go to `hook` (the sink), in UTC at 09:00, with `count` contacts born on `date`.
    static func world(sink: URL, count: Int = 1, birthday: String = "1990-03-15", extra: String = "",
                      timeout: String = "5s") async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["hook"]
            \(extra)
            [channels.hook]
            type = "webhook"
            url = "\(sink.absoluteString)/hook"
            timeout = "\(timeout)"
            """)
        chmod(sandbox.configPath, 0o600)
        let cards = (0..<count).map { VCard.card(uid: "u\($0)", name: "Person \($0)", bday: birthday) }.joined()
        let file = try sandbox.write("contacts.vcf", cards)
        let imported = try await sandbox.run(["import", file, "--now", "2027-01-01"])
        #expect(imported.status == 0, "\(imported)")
        // A first tick long before, so the watermark is set and nothing is backlog (in
        // process: set-up, not the command under test).
        let first = try await LibraryTick.run(sandbox, now: "2027-01-02T00:00Z")
        #expect(first.status == 0, "\(first)")
        return sandbox
    }

    /// Polls the sink until it has seen `count` requests (at most a minute).
    static func waitForRequests(_ sink: HTTPSink, atLeast count: Int) async throws {
        for _ in 0..<3_000 {
            if try await sink.requests().count >= count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the sink never saw \(count) requests")
    }

    static func keys(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().compactMap { $0.headers["Idempotency-Key"] }
    }

    @Test func oncePerEventAcrossRepeatedTicks() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        for now in ["2027-03-14T09:00Z", "2027-03-14T09:01Z", "2027-03-14T12:00Z", "2027-03-15T09:00Z", "2027-03-15T09:30Z"] {
            let tick = try await sandbox.run(["tick", "--now", now, "--json"])
            #expect(tick.status == 0, "\(tick)")
        }
        #expect(try await Self.keys(sink) == ["u0/1/2027-03-15", "u0/0/2027-03-15"])  // day-before, then day-of
        let body = try #require(try await sink.requests().first?.bodyJSON() as? [String: Any])
        #expect(body["event"] as? String == "birthday.reminder")
        #expect((body["title"] as? String)?.contains("Person 0") == true)
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.components(separatedBy: "\"status\":\"sent\"").count == 3)
    }

    /// docs/design/reminders.md catch-up through `tick`: `reminders.time` moved earlier than now
    /// on the birthday still delivers; moved later again, the sent reminder is
    /// neither listed by `upcoming` nor sent a second time.
    @Test func aReminderTimeMovedBehindTheLastTickIsStillDeliveredOnce() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base, extra: "offsets = [0]\ntime = \"09:00\"")
        #expect(try await sandbox.run(["tick", "--now", "2027-03-15T08:30Z"]).status == 0)
        let config = try String(contentsOfFile: sandbox.configPath, encoding: .utf8)
        try sandbox.writeConfig(config.replacingOccurrences(of: "time = \"09:00\"", with: "time = \"08:00\""))
        let tick = try await sandbox.run(["tick", "--now", "2027-03-15T08:35Z", "--json"])
        #expect(tick.status == 0, "\(tick)")
        #expect(try await Self.keys(sink) == ["u0/0/2027-03-15"])

        try sandbox.writeConfig(config.replacingOccurrences(of: "time = \"09:00\"", with: "time = \"10:00\""))
        let upcoming = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-03-15T09:00Z"])
        #expect(upcoming.first?["id"] == .string("u0/0/2028-03-15"), "\(upcoming)")
        let later = try await sandbox.run(["tick", "--now", "2027-03-15T10:05Z", "--json"])
        #expect(later.status == 0 && later.stdout.contains("\"due\":0"), "\(later)")
        #expect(try await Self.keys(sink) == ["u0/0/2027-03-15"])
    }

    @Test func tickJSONAndCatchUpWindow() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base, extra: "catch_up = \"2h\"")
        // Off from Jan 2 until Mar 15 10:30: the day-before reminder is missed, the day-of one (1.5 h late) is sent.
        let tick = try await sandbox.run(["tick", "--now", "2027-03-15T10:30Z", "--json"])
        #expect(tick.status == 1, "a missed reminder is a problem: \(tick)")
        let report = try JSONRow.parseObject(tick.stdout)
        #expect(report["due"] == .int(1) && report["sent"] == .int(1) && report["missed"] == .int(1))
        #expect(report["failed"] == .int(0) && report["retrying"] == .int(0) && report["skipped"] == .int(0))
        #expect(report["problems"] == .int(1), "\(tick)")
        // The missed one is announced (through the route, the only channel), not sent late.
        #expect(try await Self.keys(sink) == ["u0/0/2027-03-15", "%notice/u0/1/2027-03-15"])
    }

    @Test func fiveHundredTwiceThenOKIsDeliveredOnceAfterBackoff() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        try await sink.script([["status": 500], ["status": 500]])
        let first = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(first.status == 1, "\(first)")  // waiting for a retry
        let tooEarly = try await sandbox.run(["tick", "--now", "2027-03-14T09:00:05Z"])
        #expect(tooEarly.status == 1)
        #expect(try await sink.requests().count == 1)
        _ = try await sandbox.run(["tick", "--now", "2027-03-14T09:01Z"])   // second 500
        let third = try await sandbox.run(["tick", "--now", "2027-03-14T09:05Z"])
        #expect(third.status == 0, "\(third)")
        let statuses = try await sink.requests().map(\.status)
        #expect(statuses == [500, 500, 200])
        #expect(Set(try await Self.keys(sink)) == ["u0/1/2027-03-15"])
    }

    @Test func retryAfterIsRespected() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        try await sink.script([["status": 429, "headers": ["Retry-After": "600"]]])
        _ = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        _ = try await sandbox.run(["tick", "--now", "2027-03-14T09:05Z"])  // before Retry-After: nothing sent
        #expect(try await sink.requests().count == 1)
        let later = try await sandbox.run(["tick", "--now", "2027-03-14T09:10:01Z"])
        #expect(later.status == 0, "\(later)")
        #expect(try await sink.requests().map(\.status) == [429, 200])
    }

    @Test func killedMidBatchLosesNothing() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base, count: 20)
        // Slow answers, so the batch is in flight when the process is killed.
        try await sink.script([], default: ["status": 200, "hang": 0.3])
        let binary = try #require(BuzzBinary.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--data-dir", sandbox.dataDir, "tick", "--now", "2027-03-14T09:00Z"]
        process.environment = sandbox.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Kill it once the batch is under way (a few sends answered), however slow the machine.
        try await Self.waitForRequests(sink, atLeast: 3)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let beforeKill = try await sink.requests().count
        #expect(beforeKill > 0 && beforeKill < 20, "the kill should land mid-batch (\(beforeKill) received)")
        try await sink.script([], default: ["status": 200])
        let second = try await sandbox.run(["tick", "--now", "2027-03-14T09:00:30Z"])
        #expect(second.status == 0, "\(second)")
        let keys = try await Self.keys(sink)
        let expected = Set((0..<20).map { "u\($0)/1/2027-03-15" })
        #expect(Set(keys) == expected)
        #expect(keys.count - expected.count <= 1, "at most one duplicate: \(keys.count) requests")
    }

    @Test func twoTicksAtOnceSendEachOnce() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base, count: 15)
        try await sink.script([], default: ["status": 200, "hang": 0.05])
        async let first = sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        async let second = sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.status == 0 }, "\(results)")
        let keys = try await Self.keys(sink)
        #expect(keys.count == 15)
        #expect(Set(keys).count == 15)
    }

    @Test func dryRunSendsNothing() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        let dry = try await sandbox.run(["tick", "--dry-run", "--now", "2027-03-14T09:00Z"])
        #expect(dry.status == 0)
        // Per message: the channel, the contact's name, the occasion and date, the rendered title (and the id).
        #expect(dry.stdout == "would send hook         Person 0, birthday 2027-03-15: \"Person 0's birthday is tomorrow\" (u0/1/2027-03-15)\n"
                + "dry run: 1 due; nothing sent or recorded\n", "\(dry)")
        let json = try await sandbox.run(["tick", "--dry-run", "--json", "--now", "2027-03-14T09:00Z"])
        #expect(json.stdout.contains(#""preview":{"name":"Person 0","occasion":"birthday","date":"2027-03-15","title":"Person 0's birthday is tomorrow"}"#),
                "\(json)")
        #expect(try await sink.requests().isEmpty)
        let real = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(real.status == 0)
        #expect(try await Self.keys(sink) == ["u0/1/2027-03-15"])
    }

    @Test func busyDispatcherMakesTheSecondTickExitZero() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base, count: 8, extra: "[delivery]\nlock_wait = \"1s\"", timeout: "60s")
        // The first request is held until the other two ticks have given up: the
        // first tick holds the lock all that while, however slow the machine (its
        // webhook waits up to a minute for the answer).
        try await sink.script([["status": 200, "hold": true]], default: ["status": 200])
        async let slow = sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        try await Self.waitForRequests(sink, atLeast: 1)  // the first tick holds the lock now
        async let busyJSON = sandbox.run(["tick", "--json", "--now", "2027-03-14T09:00Z"])
        let busy = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(busy.status == 0, "\(busy)")
        #expect(busy.stdout.contains("another dispatcher is busy"))
        // With --json, stdout stays a JSON object (nothing done) and the note goes to stderr.
        let quiet = try await busyJSON
        try await sink.release()
        #expect(quiet.status == 0, "\(quiet)")
        #expect(quiet.stdout == "{\"due\":0,\"sent\":0,\"failed\":0,\"retrying\":0,\"missed\":0,\"skipped\":0,\"problems\":0,\"deliveries\":[]}\n",
                "\(quiet)")
        #expect(quiet.stderr.contains("another dispatcher is busy"), "\(quiet)")
        #expect(try await slow.status == 0)
        #expect(try await Self.keys(sink).count == 8)
    }

    @Test func failedDeliveriesShowInTheOutboxAndRetryPutsThemBack() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        try await sink.script([["status": 404, "body": "no such hook"]])
        let failed = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(failed.status == 1)
        let outbox = try await sandbox.run(["outbox", "--failed"])
        #expect(outbox.stdout.contains("failed") && outbox.stdout.contains("u0/1/2027-03-15") && outbox.stdout.contains("HTTP 404"))
        let json = try JSONRow.parseArray(try await sandbox.run(["outbox", "--failed", "--json"]).stdout)
        #expect(json.count == 1 && json.first?["status"] == .string("failed") && json.first?["attempts"] == .int(1))
        // A typo among the ids changes nothing and says which id.
        let typo = try await sandbox.run(["retry", "u0/1/2027-03-15", "u0/1/2027-03-51", "--now", "2027-03-14T09:10Z"])
        #expect(typo.status == 2, "\(typo)")
        #expect(typo.stderr.contains("u0/1/2027-03-51: no delivery with this id"), "\(typo)")
        #expect(try await sandbox.run(["outbox", "--failed"]).stdout.contains("u0/1/2027-03-15"))
        let retry = try await sandbox.run(["retry", "u0/1/2027-03-15", "--now", "2027-03-14T09:10Z"])
        #expect(retry.status == 0, "\(retry)")
        let again = try await sandbox.run(["tick", "--now", "2027-03-14T09:11Z"])
        #expect(again.status == 0, "\(again)")
        // The 404, the notice that says so (the hook took it), and the retried reminder.
        #expect(try await sink.requests().map(\.status) == [404, 200, 200])
        #expect(try await Self.keys(sink) == ["u0/1/2027-03-15", "%notice/u0/1/2027-03-15", "u0/1/2027-03-15"])
        #expect(try await sandbox.run(["outbox", "--failed"]).stdout.contains("No failed deliveries"))
        // Nothing failed: nothing to do, like a tick with nothing due (docs/design/command-line.md: 0).
        let nothing = try await sandbox.run(["retry"])
        #expect(nothing.status == 0 && nothing.stdout.contains("nothing to retry"), "\(nothing)")
        let sent = try await sandbox.run(["retry", "u0/1/2027-03-15"])
        #expect(sent.status == 2 && sent.stderr.contains("nothing failed to retry (hook sent)"), "\(sent)")
    }

    /// ~3,000 nested sections segfaulted tick (stack overflow in swift-mustache's parser).
    @Test func aTemplateNestedTooDeepStopsTickWithItsPlace() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        let body = String(repeating: "{{#today}}", count: 3_000) + "x" + String(repeating: "{{/today}}", count: 3_000)
        let template = try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache", "Hi {{name}}\n\n\(body)\n")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 2, "\(tick)")
        #expect(tick.stderrLines == ["buzz: \(template):3:321: sections nested more than 32 deep"], "\(tick)")
        #expect(try await sink.requests().isEmpty)
    }

    @Test func aBrokenTemplateStopsTickBeforeAnythingIsSent() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await Self.world(sink: base)
        let template = try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache",
                                         "{{#today}}Today: {{name}}\n\nBody\n")
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 2, "\(tick)")
        #expect(tick.stderr.contains(template + ":"), "\(tick)")
        #expect(try await sink.requests().isEmpty)
        // A good override is used.
        try Data("Reminder for {{name}}\n\nIt is {{date}}.\n".utf8).write(to: URL(fileURLWithPath: template))
        let fixed = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(fixed.status == 0, "\(fixed)")
        let body = try #require(try await sink.requests().first?.bodyJSON() as? [String: Any])
        #expect(body["title"] as? String == "Reminder for Person 0")
    }

    /// A CardDAV server that takes the connection and never answers (a request
    /// would time out after 30 s): `tick` waits `[sync] tick_budget` (1 s here)
    /// for it, says so, and delivers; the next tick does not wait for it again
    /// at once (the source backs off).
    @Test func aSilentCardDAVServerHoldsTickUpOnlyForItsBudget() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let silent = try SilentServer()
        let sandbox = try await Self.world(sink: base, extra: "[sync]\ntick_budget = \"1s\"")
        let config = try String(contentsOfFile: sandbox.configPath, encoding: .utf8)
        // A second server that answers at once (the sink refuses PROPFIND): it is not held up behind the
        // silent one (each source has its own transfer thread), so it fails for its own reason, in time.
        try sandbox.writeConfig(config + "\n[sources.cloud]\ntype = \"carddav\"\nurl = \"\(silent.url)\"\ntimeout = \"30s\"\n"
                                + "\n[sources.other]\ntype = \"carddav\"\nurl = \"\(base)/dav/\"\n")
        chmod(sandbox.configPath, 0o600)
        let started = ContinuousClock.now
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        let took = ContinuousClock.now - started
        #expect(tick.status == 0, "\(tick)")
        #expect(took < .seconds(10), "tick took \(took)")  // 1 s and the deliveries; before, the 30 s timeout
        #expect(tick.stderr.contains("sync cloud: not synced within the tick budget (1 s); its contacts are kept"), "\(tick)")
        #expect(tick.stderr.contains("sync other: not synced: "), "\(tick)")
        #expect(!tick.stderr.contains("sync other: not synced within the tick budget"), "\(tick)")
        #expect(tick.stdout.contains("1 due, 1 sent"), "\(tick)")
        #expect(try await Self.keys(sink) == ["u0/1/2027-03-15"])

        // Ten seconds later: the source waits for its retry, so the tick does not wait at all.
        let again = try await sandbox.run(["tick", "--now", "2027-03-14T09:00:10Z"])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
        withExtendedLifetime(silent) {}
    }
}
