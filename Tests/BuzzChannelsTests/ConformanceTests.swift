import BirthdayBuzz
import Synchronization
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels

/// The channel conformance table: every standard channel type that talks to a
/// far end, and each form of the webhook type that takes its own path (a
/// preset that builds its own request or reads its own reply, an Apprise URL).
/// A new channel type is one more row, with a fixture for its far end
/// (Support/ChannelFixtures.swift).
enum ChannelCases {
    static let hookToken = "hook-token-Qw3"
    static let headerToken = "header-token-Xy9"
    static let botToken = "123456:bot-secret-Ab4"
    static let pushoverToken = "pushover-app-token-Cd5"
    static let appriseSecret = "apprise-pw-Ef6"

    static let http = ServerGate.allows(.http)

    typealias Case = ChannelConformance.Case
    typealias Start = @Sendable () async throws -> any ChannelConformanceFixture

    /// `start` when the far end's tools are here (or servers are required), else nil: the row's live checks are left out.
    static func gated(_ server: ServerGate.Server, _ start: @escaping Start) -> Start? {
        ServerGate.allows(server) ? start : nil
    }

    static let generic = Case("webhook (generic body)", type: "webhook", refusals: [
        .init("url = \"ftp://example.org/hook\"", names: "url"),
        .init("url = \"https://example.org/hook\"\npreset = \"carrier-pigeon\"", names: "preset"),
        .init("url = \"https://example.org/hook\"\nheaders = { X-Token = 7 }", names: "headers.X-Token"),
    ], start: gated(.http) {
        let options: @Sendable (String) -> String = { host in
            "url = \"http://\(host)/hook?token=\(hookToken)\"\nheaders = { Authorization = { env = \"HOOK_AUTH\" } }"
        }
        return try await WebhookFixture.start(options: options, environment: ["HOOK_AUTH": "Bearer " + headerToken],
                                              secrets: [hookToken, headerToken], silent: true)
    })

    static let slack = Case("webhook (slack preset, secret in the path)", type: "webhook", refusals: [
        .init("url = \"https://hooks.slack.com/services/A/B/C\"\npreset = \"slack\"\nmethod = 5", names: "method"),
    ], start: gated(.http) {
        let options: @Sendable (String) -> String = { host in "url = \"http://\(host)/services/T0/B0/\(hookToken)\"\npreset = \"slack\"" }
        // Slack's token is one segment of the path: the reply says back the whole path.
        return try await WebhookFixture.start(options: options, secrets: [hookToken], echoed: [])
    })

    static let telegram = Case("webhook (telegram preset)", type: "webhook", refusals: [
        .init("preset = \"telegram\"\nbot_token = \"1:x\"", names: "chat_id"),
    ], start: gated(.http) {
        let options: @Sendable (String) -> String = { host in
            "preset = \"telegram\"\nbot_token_env = \"BOT_TOKEN\"\nchat_id = \"42\"\napi_url = \"http://\(host)\""
        }
        return try await WebhookFixture.start(options: options, environment: ["BOT_TOKEN": botToken], secrets: [botToken],
                                              extraFarEnds: [FarEnd("HTTP 429 retry_after 5 in the reply", .temporary(retryAfter: 5))])
    })

    static let pushover = Case("webhook (pushover preset, token in the form)", type: "webhook", refusals: [
        .init("preset = \"pushover\"\ntoken = \"x\"", names: "user"),
    ], start: gated(.http) {
        let options: @Sendable (String) -> String = { host in
            "preset = \"pushover\"\ntoken = \"\(pushoverToken)\"\nuser = \"u1\"\napi_url = \"http://\(host)\""
        }
        return try await WebhookFixture.start(options: options, secrets: [pushoverToken])
    })

    static let apprise = Case("webhook (Apprise json:// URL, basic auth)", type: "webhook", refusals: [
        .init("url = \"json://example.org/hook?format=markdown\"", names: "url"),
        .init("url = \"pigeon://example.org/hook\"", names: "url"),
    ], start: gated(.http) {
        let options: @Sendable (String) -> String = { host in "url = \"json://buzz:\(appriseSecret)@\(host)/hook\"" }
        let basic = Data("buzz:\(appriseSecret)".utf8).base64EncodedString()
        return try await WebhookFixture.start(options: options, secrets: [appriseSecret, basic])
    })

    static let smtp = Case("smtp", type: "smtp", refusals: [
        .init("host = \"mail.example.org\"\nsecurity = \"none\"\nfrom = \"me@example.org\"", names: "security"),
        .init("host = \"127.0.0.1\"\nport = 70000\nfrom = \"me@example.org\"", names: "port"),
        .init("host = \"127.0.0.1\"\nsecurity = \"tls\"", names: "from"),
    ], start: gated(.smtp) { try await SMTPFixture.start() })

    static let exec = Case("exec", type: "exec", refusals: [
        .init("command = []", names: "command"),
        .init("command = [\"/bin/true\"]\nenv = { TOKEN = 7 }", names: "env.TOKEN"),
    ], start: gated(.exec) { try ExecFixture() })

    static let dbus = Case("dbus", type: "dbus", refusals: [
        .init("urgency = \"loud\"", names: "urgency"),
        .init("expire_timeout = -2", names: "expire_timeout"),
    ], holdsSecrets: false, sendsIdempotencyKey: false, start: gated(.dbus) { try await DBusFixture.start() })

    /// Prints; nothing on the far side can fail, so only its options are checked.
    static let console = Case("console", type: "console", refusals: [.init("colour = true", names: "colour")],
                              holdsSecrets: false, sendsIdempotencyKey: false, start: nil)

    static let all: [Case] = [generic, slack, telegram, pushover, apprise, smtp, exec, dbus, console]

    static let live = all.filter { $0.start != nil }
}

/// Runs each check of `ChannelConformance` over the table, one fresh far end per run;
/// one run at a time, so that the suite never holds more than one row's servers.
@Suite(.timeLimit(.minutes(1))) struct ChannelConformanceTests {
    static func fixture(_ row: ChannelConformance.Case) async throws -> any ChannelConformanceFixture {
        let start = try #require(row.start)
        return try await start()
    }

    @Test(arguments: ChannelCases.all)
    func badOptionsAreRefusedWithOneLineNamingTheOption(_ row: ChannelConformance.Case) {
        ChannelConformance.checkRefusals(row, types: ConformanceChannels.types)
    }

    @Test(arguments: ChannelCases.live)
    func failuresAreClassedTemporaryOrPermanent(_ row: ChannelConformance.Case) async throws {
        let fixture = try await Self.fixture(row)
        do {
            try await ChannelConformance.checkOutcomes(row, fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    @Test(arguments: ChannelCases.live.filter(\.holdsSecrets))
    func noErrorShowsASecret(_ row: ChannelConformance.Case) async throws {
        let fixture = try await Self.fixture(row)
        do {
            try await ChannelConformance.checkSecretsNeverShow(row, fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    @Test(arguments: ChannelCases.live.filter(\.sendsIdempotencyKey))
    func aRetryCarriesTheSameIdempotencyKey(_ row: ChannelConformance.Case) async throws {
        let fixture = try await Self.fixture(row)
        do {
            try await ChannelConformance.checkIdempotencyKeyReused(row, fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }
}

/// That each sample message arrives once with its title intact, run by the
/// adapters whose tests live elsewhere in this target too (webhook and smtp
/// run it in their own suites).
@Suite(.timeLimit(.minutes(1))) struct ConformanceTests {
    @Test(.enabled(if: ServerGate.allows(.exec), "needs /bin/sh"))
    func exec() async throws {
        let sandbox = try ExecChannelTests.Sandbox()
        let log = sandbox.path("titles.log")
        // The plugin records each message's title, one per line (python parses the JSON).
        let plugin = try sandbox.script("record", """
            exec \(ServerGate.python) -c 'import json,sys; m=json.load(sys.stdin); open(sys.argv[1],"a").write(m["title"]+"\\n")' "$1"
            """)
        let channel = sandbox.channel([plugin, log])
        try await ChannelConformance.run(channel, recipient: .phone("+15550100")) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }
    }

    @Test func console() async throws {
        let printed = PrintedText()
        let channel = ConsoleChannel(name: "console") { printed.append($0) }
        try await ChannelConformance.run(channel) {
            printed.text.split(separator: "\n").filter { $0.hasPrefix("🎂 ") }.map { line in
                var title = String(line.dropFirst(2))
                if let to = title.range(of: " (to ") { title = String(title[..<to.lowerBound]) }
                return title
            }
        }
    }

    @Test(.enabled(if: ServerGate.allows(.dbus), "needs dbus-daemon and python3-dbusmock"))
    func dbus() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 10, environment: bus.environment)
        try await ChannelConformance.run(channel) {
            // dbusmock logs: Notify "BirthdayBuzz" 0 "icon" "SUMMARY" "BODY" … — a summary may
            // itself hold quotes, so look for each sample title in its position.
            let calls = try bus.log().split(separator: "\n").filter { $0.contains(" Notify ") }
            return ChannelConformance.sampleMessages().map(\.title).flatMap { title in
                calls.filter { $0.contains("\"x-office-calendar\" \"\(title)\" ") }.map { _ in title }
            }
        }
    }
}

/// Text a console channel printed (the channel runs on any thread).
final class PrintedText: Sendable {
    private let storage = Mutex("")

    func append(_ text: String) { storage.withLock { $0 += text } }

    var text: String { storage.withLock { $0 } }
}
