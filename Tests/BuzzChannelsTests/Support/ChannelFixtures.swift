import BirthdayBuzz
import BuzzChannels
import BuzzTestKit
import Foundation
import Testing

// The live far ends of the channel conformance table (ConformanceTests.swift):
// one fixture per kind of far end, each building its channel from an options
// table through the standard registry, as `buzz` does.

typealias FarEnd = ChannelConformance.FarEnd

/// Builds channels of the standard types from option tables.
enum ConformanceChannels {
    static let registry = ChannelRegistry()
    static let types = ConfigTypes(channels: registry.configTypes, sources: [])

    /// `[channels.conformance]` with `type` and `options`, loaded and checked by
    /// the config loader, then built by the registry; `timeout` (seconds) replaces
    /// the table's own, for a far end that never answers.
    static func make(_ typeName: String, _ options: String, environment: [String: String] = [:],
                     configDirectory: String? = nil, timeout: Double? = nil,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> any NotificationChannel {
        let name = ChannelConformance.channelName
        let toml = "[channels.\(name)]\ntype = \"\(typeName)\"\n\(options)\n"
        let config = try BuzzConfig(toml: toml, file: "config.toml", environment: environment,
                                    systemTimeZone: TimeZone(identifier: "UTC")!, types: types)
        var table = try #require(config.channel(named: name), sourceLocation: sourceLocation)
        if let timeout { table.timeout = timeout }
        return try registry.make(table, context: ChannelContext(environment: environment, configDirectory: configDirectory,
                                                                scrubber: SecretScrubber(), consoleOutput: { _ in }))
    }

    /// `127.0.0.1:PORT` of a port where a connection is refused.
    static func refusedHostPort() throws -> String {
        let url = try SilentServer.refusedURL()
        return String(url.dropFirst("http://".count).dropLast())
    }

    /// Delivers and shuts the channel down, whatever the outcome.
    static func deliverOnce(_ channel: any NotificationChannel, _ message: Message) async throws {
        do {
            try await channel.deliver(message)
        } catch {
            await channel.shutdown()
            throw error
        }
        await channel.shutdown()
    }
}

// MARK: - HTTP

/// A webhook of one form (a preset, an Apprise URL, the generic body) against
/// the HTTP sink. Every failing status comes with a reply that says the
/// channel's secrets back, in its body and in the request headers it echoes.
final class WebhookFixture: ChannelConformanceFixture {
    let sink: HTTPSink
    let channel: any NotificationChannel
    let secrets: [String]
    /// The secrets the reply says back as they are (a secret that is part of the URL's path comes back within the path).
    private let echoed: [String]
    let farEnds: [FarEnd]
    private let options: @Sendable (_ hostPort: String) -> String
    private let environment: [String: String]
    /// Includes a far end that never answers (the channel's timeout, made short).
    private let silent: Bool

    static let statuses: [(Int, ChannelConformance.Expected)] = [
        (408, .temporary), (500, .temporary), (503, .temporary),
        (400, .permanent), (401, .permanent), (403, .permanent), (404, .permanent), (410, .permanent),
        // Redirects are never followed: one is a reply that will not change.
        (301, .permanent),
    ]

    /// - options: the table's lines for a server at `hostPort`.
    /// - extraFarEnds: statuses only this form reads (Telegram's `retry_after` in its JSON).
    static func start(options: @escaping @Sendable (_ hostPort: String) -> String, environment: [String: String] = [:],
                      secrets: [String], echoed: [String]? = nil, extraFarEnds: [FarEnd] = [],
                      silent: Bool = false) async throws -> WebhookFixture {
        let sink = HTTPSink()
        try await sink.start()
        return try WebhookFixture(sink: sink, options: options, environment: environment, secrets: secrets,
                                  echoed: echoed ?? secrets, extraFarEnds: extraFarEnds, silent: silent)
    }

    private init(sink: HTTPSink, options: @escaping @Sendable (String) -> String, environment: [String: String],
                 secrets: [String], echoed: [String], extraFarEnds: [FarEnd], silent: Bool) throws {
        self.sink = sink
        self.options = options
        self.environment = environment
        self.secrets = secrets
        self.echoed = echoed
        self.silent = silent
        channel = try ConformanceChannels.make("webhook", options("127.0.0.1:\(sink.port)"), environment: environment)
        var farEnds: [FarEnd] = [.accepts, FarEnd("HTTP 429 Retry-After: 7", .temporary(retryAfter: 7), echoesSecrets: true)]
        farEnds += Self.statuses.map { FarEnd("HTTP \($0.0)", $0.1, echoesSecrets: true) }
        farEnds += extraFarEnds
        farEnds += [FarEnd("connection closed without an answer", .temporary), FarEnd("connection refused", .temporary)]
        if silent { farEnds.append(FarEnd("no answer in time", .temporary)) }
        self.farEnds = farEnds
    }

    var retryable: FarEnd? { FarEnd("HTTP 503", .temporary) }

    /// The scripted reply for a far end named "HTTP …", saying every secret back.
    private func reply(_ farEnd: FarEnd) -> [String: Any]? {
        guard farEnd.label.hasPrefix("HTTP ") else { return nil }
        let words = farEnd.label.dropFirst(5).split(separator: " ")
        guard let status = Int(words[0]) else { return nil }
        var reply: [String: Any] = ["status": status, "body": "you sent: " + echoed.joined(separator: " "),
                                    "echo_path": true, "echo_headers": true]
        if farEnd.label.contains("Retry-After: 7") { reply["headers"] = ["Retry-After": "7"] }
        if farEnd.label.contains("retry_after 5") {
            reply = ["status": status,
                     "body": #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5","parameters":{"retry_after":5}}"#]
        }
        if status == 301 { reply["headers"] = ["Location": "http://127.0.0.1:\(sink.port)/elsewhere"] }
        return reply
    }

    func deliver(_ message: Message, meeting farEnd: FarEnd) async throws {
        switch farEnd.label {
        case "accepts":
            try await sink.script([["status": 200]])
            try await channel.deliver(message)
        case "connection closed without an answer":
            // libcurl sends once more on a fresh connection when a kept-alive one closes unanswered.
            try await sink.script([["drop": true], ["drop": true]])
            try await channel.deliver(message)
        case "connection refused":
            let refused = try ConformanceChannels.make("webhook", options(try ConformanceChannels.refusedHostPort()),
                                                       environment: environment)
            try await ConformanceChannels.deliverOnce(refused, message)
        case "no answer in time":
            let server = try SilentServer()
            let slow = try ConformanceChannels.make("webhook", options("127.0.0.1:\(server.port)"), environment: environment,
                                                    timeout: 0.3)
            try await ConformanceChannels.deliverOnce(slow, message)
            withExtendedLifetime(server) {}
        default:
            guard let scripted = reply(farEnd) else { throw TestServerError(description: "no reply for \(farEnd.label)") }
            try await sink.script([scripted])
            try await channel.deliver(message)
        }
    }

    func idempotencyKeys() async throws -> [String] {
        try await sink.requests().map { $0.headers["Idempotency-Key"] ?? "(none)" }
    }

    func stop() async {
        await channel.shutdown()
        sink.stop()
    }
}

// MARK: - SMTP

/// An smtp channel with a password against three aiosmtpd sinks that require
/// it: one takes mail (and refuses or defers chosen recipients), one answers
/// 451 at the end of DATA once, one answers 554 there.
final class SMTPFixture: ChannelConformanceFixture {
    static let password = "smtp-pw-Zq8#x"
    static let wrongPassword = "wrong-pw-Kk2!y"
    static let from = "Buzz <buzz@example.org>"

    let accepting: SMTPSink
    let deferring: SMTPSink
    let refusing: SMTPSink
    let channel: any NotificationChannel
    private let deferringChannel: any NotificationChannel
    private let refusingChannel: any NotificationChannel

    static func options(port: String, passwordVariable: String = "SMTP_PASSWORD") -> String {
        """
        host = "127.0.0.1"
        port = \(port)
        security = "none"
        username = "buzz"
        password_env = "\(passwordVariable)"
        from = "\(from)"
        to = "me@example.org"
        """
    }

    static let environment = ["SMTP_PASSWORD": password, "WRONG_PASSWORD": wrongPassword]

    static func start() async throws -> SMTPFixture {
        let accepting = SMTPSink(), deferring = SMTPSink(), refusing = SMTPSink()
        let auth = ("buzz", password)
        async let one = accepting.start(auth: auth, rejectRecipient: "rejected@example.org", deferRecipient: "busy@example.org")
        async let two = deferring.start(auth: auth, failData: 451, failTimes: 1)
        async let three = refusing.start(auth: auth, failData: 554)
        _ = try await (one, two, three)
        return try SMTPFixture(accepting: accepting, deferring: deferring, refusing: refusing)
    }

    private init(accepting: SMTPSink, deferring: SMTPSink, refusing: SMTPSink) throws {
        self.accepting = accepting
        self.deferring = deferring
        self.refusing = refusing
        channel = try ConformanceChannels.make("smtp", Self.options(port: "\(accepting.port)"), environment: Self.environment)
        deferringChannel = try ConformanceChannels.make("smtp", Self.options(port: "\(deferring.port)"), environment: Self.environment)
        refusingChannel = try ConformanceChannels.make("smtp", Self.options(port: "\(refusing.port)"), environment: Self.environment)
    }

    var secrets: [String] {
        // AUTH PLAIN sends base64("\0user\0password"): that form must not show either.
        [Self.password, Self.wrongPassword, Data("\0buzz\0\(Self.password)".utf8).base64EncodedString()]
    }

    let farEnds: [FarEnd] = [
        .accepts,
        FarEnd("451 at the end of DATA", .temporary),
        FarEnd("554 at the end of DATA", .permanent),
        FarEnd("450 to RCPT", .temporary),
        FarEnd("550 to RCPT", .permanent),
        FarEnd("535 to AUTH (a wrong password)", .permanent),
        FarEnd("connection refused", .temporary),
        FarEnd("no greeting in time", .temporary),
    ]

    var retryable: FarEnd? { FarEnd("451 at the end of DATA", .temporary) }

    func deliver(_ message: Message, meeting farEnd: FarEnd) async throws {
        var message = message
        switch farEnd.label {
        case "accepts":
            try await channel.deliver(message)
        case "451 at the end of DATA":
            try await deferringChannel.deliver(message)
        case "554 at the end of DATA":
            try await refusingChannel.deliver(message)
        case "450 to RCPT":
            message.recipient = .email("busy@example.org")
            try await channel.deliver(message)
        case "550 to RCPT":
            message.recipient = .email("rejected@example.org")
            try await channel.deliver(message)
        case "535 to AUTH (a wrong password)":
            let wrong = try ConformanceChannels.make("smtp", Self.options(port: "\(accepting.port)", passwordVariable: "WRONG_PASSWORD"),
                                                     environment: Self.environment)
            try await ConformanceChannels.deliverOnce(wrong, message)
        case "connection refused":
            let port = try #require(try ConformanceChannels.refusedHostPort().split(separator: ":").last)
            try await ConformanceChannels.deliverOnce(
                try ConformanceChannels.make("smtp", Self.options(port: String(port)), environment: Self.environment), message)
        case "no greeting in time":
            let server = try SilentServer()
            let slow = try ConformanceChannels.make("smtp", Self.options(port: "\(server.port)"), environment: Self.environment,
                                                    timeout: 0.3)
            try await ConformanceChannels.deliverOnce(slow, message)
            withExtendedLifetime(server) {}
        default:
            Issue.record("no such far end: \(farEnd.label)")
        }
    }

    /// The Message-IDs of every mail that reached the end of DATA: the sink that
    /// deferred it first (the retryable attempt), then the one that took mail.
    func idempotencyKeys() async throws -> [String] {
        try (deferring.attempts() + accepting.attempts()).map { $0.header("Message-ID") ?? "(none)" }
    }

    func idempotencyKey(forEventID id: String) -> String {
        MailMessage.messageID(eventID: id, from: Mailbox(Self.from)!)
    }

    func stop() async {
        for channel in [channel, deferringChannel, refusingChannel] { await channel.shutdown() }
        accepting.stop()
        deferring.stop()
        refusing.stop()
    }
}

// MARK: - exec

/// An exec channel running a plugin script that records each payload, says
/// its token on standard error, and ends as the far end asks (an exit
/// status, a signal, a hang).
final class ExecFixture: ChannelConformanceFixture {
    static let token = "plugin-token-Hh7%w"

    let sandbox: ExecChannelTests.Sandbox
    let plugin: String
    let channel: any NotificationChannel

    static func options(command: String) -> String {
        "command = [\"\(command)\"]\nenv = { PLUGIN_TOKEN = \"\(token)\" }"
    }

    init() throws {
        sandbox = try ExecChannelTests.Sandbox()
        let directory = sandbox.directory
        plugin = try sandbox.script("plugin", """
            cat >> '\(directory)/payloads'
            echo >> '\(directory)/payloads'
            status=$(cat '\(directory)/next' 2>/dev/null || echo 0)
            echo "plugin: the service refused token $PLUGIN_TOKEN" >&2
            case "$status" in
                signal) kill -TERM $$ ;;
                hang) exec sleep 5 ;;
            esac
            exit "$status"
            """)
        channel = try ConformanceChannels.make("exec", Self.options(command: plugin), configDirectory: directory)
    }

    var secrets: [String] { [Self.token] }

    let farEnds: [FarEnd] = [
        .accepts,
        FarEnd("exit 75 (EX_TEMPFAIL)", .temporary, echoesSecrets: true),
        FarEnd("exit 1", .permanent, echoesSecrets: true),
        FarEnd("exit 64", .permanent, echoesSecrets: true),
        FarEnd("killed by a signal", .temporary, echoesSecrets: true),
        FarEnd("no end in time", .temporary, echoesSecrets: true),
        FarEnd("no such program", .permanent),
    ]

    var retryable: FarEnd? { FarEnd("exit 75 (EX_TEMPFAIL)", .temporary) }

    private func next(_ status: String) throws {
        try status.write(toFile: sandbox.path("next"), atomically: true, encoding: .utf8)
    }

    func deliver(_ message: Message, meeting farEnd: FarEnd) async throws {
        switch farEnd.label {
        case "accepts": try next("0")
        case "exit 75 (EX_TEMPFAIL)": try next("75")
        case "exit 1": try next("1")
        case "exit 64": try next("64")
        case "killed by a signal": try next("signal")
        case "no end in time":
            try next("hang")
            let slow = try ConformanceChannels.make("exec", Self.options(command: plugin), configDirectory: sandbox.directory,
                                                    timeout: 0.3)
            return try await ConformanceChannels.deliverOnce(slow, message)
        case "no such program":
            let missing = try ConformanceChannels.make("exec", Self.options(command: sandbox.path("no-such-plugin")),
                                                       configDirectory: sandbox.directory)
            return try await ConformanceChannels.deliverOnce(missing, message)
        default:
            Issue.record("no such far end: \(farEnd.label)")
        }
        try await channel.deliver(message)
    }

    /// The `id` of every payload the plugin was handed.
    func idempotencyKeys() async throws -> [String] {
        let text = (try? String(contentsOfFile: sandbox.path("payloads"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["id"] as? String ?? "(none)"
        }
    }

    func stop() async {
        await channel.shutdown()
    }
}

// MARK: - D-Bus

/// A dbus channel on a private session bus with dbusmock's notification
/// server; the failures are a bus without the server (the service is
/// missing), no bus at all, and a server whose Notify fails.
final class DBusFixture: ChannelConformanceFixture {
    let bus: PrivateBus
    let channel: any NotificationChannel

    init(bus: PrivateBus) throws {
        self.bus = bus
        channel = try ConformanceChannels.make("dbus", "", environment: bus.environment)
    }

    static func start() async throws -> DBusFixture {
        try DBusFixture(bus: try await PrivateBus.start())
    }

    var secrets: [String] { [] }

    /// The broken server comes last: it stays broken.
    let farEnds: [FarEnd] = [
        .accepts,
        FarEnd("no notification server on the bus", .temporary),
        FarEnd("no session bus", .temporary),
        FarEnd("Notify answers an error", .temporary),
    ]

    func deliver(_ message: Message, meeting farEnd: FarEnd) async throws {
        switch farEnd.label {
        case "accepts":
            try await channel.deliver(message)
        case "no notification server on the bus":
            let empty = try await PrivateBus.start(notificationServer: false)
            defer { empty.stop() }
            try await ConformanceChannels.deliverOnce(try ConformanceChannels.make("dbus", "", environment: empty.environment), message)
        case "no session bus":
            let nowhere = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + bus.directory.appendingPathComponent("no-bus").path]
            try await ConformanceChannels.deliverOnce(try ConformanceChannels.make("dbus", "", environment: nowhere), message)
        case "Notify answers an error":
            try await bus.replaceNotify(with: "raise dbus.exceptions.DBusException('out of bubbles', name='org.example.Broken')")
            try await channel.deliver(message)
        default:
            Issue.record("no such far end: \(farEnd.label)")
        }
    }

    func stop() async {
        await channel.shutdown()
        bus.stop()
    }
}
