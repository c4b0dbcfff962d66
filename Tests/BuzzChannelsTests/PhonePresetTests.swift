import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels

/// The telegram and pushover presets against the HTTP sink standing in for
/// the services (through `api_url`): request shapes, error classes, Telegram's
/// `retry_after`, doctor checks that send nothing, size limits, secrets.
@Suite(.timeLimit(.minutes(1))) struct PhonePresetTests {
    static let botToken = "123456:AAHsecretBotToken_x"
    static let appToken = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
    static let userKey = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"

    static func telegram(_ api: URL, chat: String = "-1001234", scrubber: SecretScrubber = SecretScrubber()) throws -> WebhookChannel {
        let table = ConfigTable(path: ["channels", "tg"], values: [
            "preset": .string("telegram"), "bot_token": .string(botToken), "chat_id": .string(chat),
            "api_url": .string(api.absoluteString),
        ])
        let options = try TableReader.readAll(table, WebhookChannel.options(from:))
        return try WebhookChannel(name: "tg", options: options, timeout: 2,
                                  context: ChannelContext(environment: [:], configDirectory: nil, scrubber: scrubber))
    }

    static func pushover(_ api: URL, scrubber: SecretScrubber = SecretScrubber()) throws -> WebhookChannel {
        let table = ConfigTable(path: ["channels", "po"], values: [
            "preset": .string("pushover"), "token_env": .string("PO_TOKEN"), "user": .string(userKey),
            "api_url": .string(api.absoluteString),
        ])
        let options = try TableReader.readAll(table, WebhookChannel.options(from:))
        return try WebhookChannel(name: "po", options: options, timeout: 2,
                                  context: ChannelContext(environment: ["PO_TOKEN": appToken], configDirectory: nil, scrubber: scrubber))
    }

    static let reminder = Message(kind: .reminder, id: "urn:uuid:1/1/2027-03-15", title: "Ada <3 & Bob turn 37",
                                  body: "Birthday: 2027-03-15 \"tomorrow\"", contact: .init(id: "urn:uuid:1", name: "Ada"),
                                  occurrence: LocalDate(year: 2027, month: 3, day: 15), daysUntil: 1, locale: "en")

    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func telegramSendMessageShape() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let channel = try Self.telegram(base)
        try await channel.deliver(Self.reminder)
        let request = try #require(try await sink.requests().first)
        #expect(request.method == "POST")
        #expect(request.path == "/bot\(Self.botToken)/sendMessage")
        #expect(request.headers["Content-Type"] == "application/json")
        let json = try #require(request.bodyJSON() as? [String: Any])
        #expect(json["chat_id"] as? Int == -1_001_234)
        #expect(json["parse_mode"] as? String == "HTML")
        #expect(json["text"] as? String == "<b>Ada &lt;3 &amp; Bob turn 37</b>\nBirthday: 2027-03-15 &quot;tomorrow&quot;")
        #expect(Set(json.keys) == ["chat_id", "text", "parse_mode"])
        // A channel name stays a string.
        let named = try Self.telegram(base, chat: "@family")
        try await named.deliver(Self.reminder)
        #expect((try await sink.requests().last?.bodyJSON() as? [String: Any])?["chat_id"] as? String == "@family")
        #expect(channel.displayURL == base.absoluteString)
        await channel.shutdown()
        await named.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func telegramErrorsAndRetryAfter() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let channel = try Self.telegram(base)
        try await sink.script([
            ["status": 429, "body": #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 17","parameters":{"retry_after":17}}"#],
            ["status": 401, "body": #"{"ok":false,"description":"Unauthorized \#(Self.botToken)"}"#],
            ["status": 403, "body": #"{"ok":false,"description":"Forbidden: bot was blocked by the user"}"#],
            ["status": 400, "body": #"{"ok":false,"description":"Bad Request: chat not found"}"#],
            ["status": 502, "body": "bad gateway"],
        ])
        var errors: [DeliveryError] = []
        for _ in 0..<5 {
            do {
                try await channel.deliver(Self.reminder)
                Issue.record("expected a failure")
            } catch let error as DeliveryError {
                errors.append(error)
            }
        }
        #expect(errors.map(\.isTemporary) == [true, false, false, false, true])
        #expect(errors[0].retryAfter == 17)
        #expect(errors[0].channelUnavailable)
        #expect(errors[4].retryAfter == nil)
        #expect(errors[3].message.contains("chat not found"))
        for error in errors {
            #expect(!error.message.contains("AAHsecretBotToken"), "\(error.message)")
        }
        await channel.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func telegramDoctorCallsGetMeOnly() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let channel = try Self.telegram(base)
        try await sink.script([["status": 200, "body": #"{"ok":true,"result":{"id":123456,"is_bot":true,"username":"buzz_bot"}}"#],
                               ["status": 401, "body": #"{"ok":false,"error_code":401,"description":"Unauthorized"}"#]])
        try await channel.validate()
        await #expect(throws: DeliveryError.self) { try await channel.validate() }
        do {
            try await channel.validate()
        } catch let error as DeliveryError {
            #expect(!error.isTemporary)
            #expect(!error.message.contains("AAHsecretBotToken"))
        }
        let requests = try await sink.requests()
        #expect(requests.map(\.method) == ["GET", "GET", "GET"])
        #expect(requests.allSatisfy { $0.path == "/bot\(Self.botToken)/getMe" })
        await channel.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func pushoverMessageShapeAndDoctor() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let channel = try Self.pushover(base)
        var urgent = Self.reminder
        urgent.urgency = .critical
        try await channel.deliver(urgent)
        var low = Self.reminder
        low.urgency = .low
        try await channel.deliver(low)
        try await sink.script([["status": 200, "body": #"{"status":1}"#],
                               ["status": 400, "body": #"{"user":"invalid","errors":["user key is invalid"],"status":0}"#],
                               ["status": 500, "body": "down \(Self.appToken)"]])
        try await channel.validate()
        var doctorError: DeliveryError?
        do { try await channel.validate() } catch let error as DeliveryError { doctorError = error }
        var sendError: DeliveryError?
        do { try await channel.deliver(Self.reminder) } catch let error as DeliveryError { sendError = error }

        let requests = try await sink.requests()
        #expect(requests.count == 5)
        let first = requests[0]
        #expect(first.method == "POST" && first.path == "/1/messages.json")
        #expect(first.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let fields = Self.form(first.body)
        #expect(fields == ["token": Self.appToken, "user": Self.userKey, "title": Self.reminder.title,
                           "message": Self.reminder.body, "priority": "1"])
        #expect(Self.form(requests[1].body)["priority"] == "-1")
        #expect(requests[2].path == "/1/users/validate.json" && requests[2].method == "POST")
        #expect(Self.form(requests[2].body) == ["token": Self.appToken, "user": Self.userKey])
        let doctor = try #require(doctorError)
        #expect(!doctor.isTemporary && doctor.message.contains("user key is invalid"))
        let send = try #require(sendError)
        #expect(send.isTemporary)
        #expect(!send.message.contains(Self.appToken) && !doctor.message.contains(Self.userKey))
        await channel.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func longDigestsAreCutToTheServiceLimit() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let lines = (1...400).map { "Person \($0) turns \($0 % 90) on 2027-03-\(String(format: "%02d", $0 % 28 + 1))" }
        let digest = Message(kind: .digest, id: "%digest/week/2027-03-01", title: "This week: 400 birthdays",
                             body: lines.joined(separator: "\n"))
        let pushover = try Self.pushover(base)
        try await pushover.deliver(digest)
        let telegram = try Self.telegram(base)
        try await telegram.deliver(digest)
        let requests = try await sink.requests()
        let message = try #require(Self.form(requests[0].body)["message"])
        #expect(message.utf16.count <= 1_024)
        let keptPushover = message.split(separator: "\n").dropLast().count
        #expect(message.hasSuffix("\n… and \(400 - keptPushover) more"))
        #expect(message.hasPrefix(lines[0] + "\n" + lines[1]))
        let text = try #require((requests[1].bodyJSON() as? [String: Any])?["text"] as? String)
        let plain = text.replacingOccurrences(of: "<b>", with: "").replacingOccurrences(of: "</b>", with: "")
        #expect(plain.utf16.count <= 4_096)
        let keptTelegram = plain.split(separator: "\n").count - 2  // the title line and the "… and N more" line
        #expect(plain.hasSuffix("\n… and \(400 - keptTelegram) more"))
        #expect(keptTelegram > 50)
        // A short message is left whole.
        #expect(WebhookChannel.cutToLimit("a\nb", limit: 1_024) == "a\nb")
        await pushover.shutdown()
        await telegram.shutdown()
    }

    @Test func phonePresetKeysAndSecrets() throws {
        func options(_ values: [String: ConfigTable.Value]) throws -> WebhookChannel.Options {
            try TableReader.readAll(ConfigTable(path: ["channels", "x"], values: values), WebhookChannel.options(from:))
        }
        let telegram = try options(["preset": .string("telegram"), "bot_token": .string(Self.botToken), "chat_id": .integer(42)])
        #expect(telegram.phone?.recipient == "42")
        let shown = WebhookChannel.target(of: telegram, environment: [:])
        #expect(shown == "POST https://api.telegram.org (telegram)")
        #expect(WebhookChannel.holdsInlineSecret(telegram))
        let fromEnv = try options(["preset": .string("pushover"), "token_env": .string("T"), "user": .string("u")])
        #expect(!WebhookChannel.holdsInlineSecret(fromEnv))
        #expect(WebhookChannel.target(of: fromEnv, environment: [:]) == "POST https://api.pushover.net (pushover)")
        #expect(throws: ConfigError.self) { try options(["preset": .string("telegram"), "chat_id": .integer(42)]) }
        #expect(throws: ConfigError.self) { try options(["preset": .string("pushover"), "token": .string("t")]) }
        #expect(throws: ConfigError.self) {
            try options(["preset": .string("telegram"), "bot_token": .string("t"), "chat_id": .integer(1), "url": .string("https://x")])
        }
    }

    @Test func phoneChannelsCannotCarryAsksOrWishes() throws {
        for channel in [#"preset = "telegram""# + "\nbot_token_env = \"T\"\nchat_id = 1",
                        #"preset = "pushover""# + "\ntoken_env = \"T\"\nuser = \"u\"",
                        #"url = "tgram://123:abc/42""#, #"url = "pover://user@token""#] {
            let text = """
                [channels.phone]
                type = "webhook"
                \(channel)

                [ask]
                sms = "phone"
                """
            #expect(throws: ConfigError.self, "\(channel)") {
                try BuzzConfig(toml: text, file: "config.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!,
                               types: ConfigTypes(channels: ChannelRegistry().configTypes, sources: []))
            }
            // As a reminder route it is fine.
            _ = try BuzzConfig(toml: text.replacingOccurrences(of: "[ask]\nsms", with: "[reminders]\nchannels = [\"phone\"]\n#"),
                               file: "config.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!,
                               types: ConfigTypes(channels: ChannelRegistry().configTypes, sources: []))
        }
    }
}

extension PhonePresetTests {
    /// An Apprise URL in url_env is read when the channel is built, and api_url goes with it.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func appriseURLFromTheEnvironmentWithAPIURL() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let table = ConfigTable(path: ["channels", "tg"], values: [
            "url_env": .string("TG_URL"), "api_url": .string(base.absoluteString),
        ])
        let options = try TableReader.readAll(table, WebhookChannel.options(from:))
        let context = ChannelContext(environment: ["TG_URL": "tgram://\(Self.botToken)/42"], configDirectory: nil, scrubber: SecretScrubber())
        let channel = try WebhookChannel(name: "tg", options: options, timeout: 2, context: context)
        #expect(channel.displayURL == "tgram://127.0.0.1:\(base.port ?? 0)")
        try await channel.deliver(Self.reminder)
        #expect(try await sink.requests().map(\.path) == ["/bot\(Self.botToken)/sendMessage"])
        await channel.shutdown()
        // With an http(s) URL in the variable, api_url means nothing: an error, not a silent no-op.
        let http = ChannelContext(environment: ["TG_URL": base.absoluteString + "/hook"], configDirectory: nil, scrubber: SecretScrubber())
        #expect(throws: ChannelSetupError.self) { try WebhookChannel(name: "tg", options: options, timeout: 2, context: http) }
    }
}
