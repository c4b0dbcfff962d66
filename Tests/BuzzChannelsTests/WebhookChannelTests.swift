import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels

// Serialized: several tests expect one keep-alive connection over a batch, which a
// request slower than the channel's 5 s timeout (all tests at once) would end.
@Suite(.serialized) struct WebhookChannelTests {
    static func channel(_ url: String, preset: WebhookChannel.Preset = .generic, headers: [(String, WebhookChannel.HeaderValue)] = [],
                        body: String? = nil, contentType: String? = nil, timeout: Double = 5,
                        environment: [String: String] = [:], scrubber: SecretScrubber = SecretScrubber()) throws -> WebhookChannel {
        var options = WebhookChannel.Options(target: .url(url))
        options.preset = preset
        options.headers = headers.map { (name: $0.0, value: $0.1) }
        options.body = body
        options.contentType = contentType
        return try WebhookChannel(name: "hook", options: options, timeout: timeout,
                                  context: ChannelContext(environment: environment, configDirectory: nil, scrubber: scrubber))
    }

    static let reminder = Message(kind: .reminder, id: "urn:uuid:1/1/2027-03-15", title: "Ada turns 37 tomorrow",
                                  body: "Birthday: 2027-03-15", contact: .init(id: "urn:uuid:1", name: "Ada \"The\" O'Brien"),
                                  occurrence: LocalDate(year: 2027, month: 3, day: 15), daysUntil: 1, locale: "en")

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func genericBodyWithIdempotencyKey() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let hook = try Self.channel(base.absoluteString + "/hook?token=sekrit123")
        try await hook.deliver(Self.reminder)
        let requests = try await sink.requests()
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.method == "POST")
        #expect(request.headers["Idempotency-Key"] == Self.reminder.id)
        #expect(request.headers["Content-Type"] == "application/json")
        let json = try #require(request.bodyJSON() as? [String: Any])
        #expect(json["event"] as? String == "birthday.reminder")
        #expect(json["id"] as? String == Self.reminder.id)
        #expect(json["title"] as? String == Self.reminder.title)
        #expect((json["contact"] as? [String: Any])?["name"] as? String == "Ada \"The\" O'Brien")
        #expect(json["occurrence"] as? String == "2027-03-15")
        #expect(json["days_until"] as? Int == 1)
        #expect(json["to"] == nil)
        await hook.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func statusClassesAndRetryAfter() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let scrubber = SecretScrubber()
        let hook = try Self.channel(base.absoluteString + "/hook?token=sekrit123",
                                    headers: [("Authorization", .environment("HOOK_TOKEN"))],
                                    environment: ["HOOK_TOKEN": "Bearer header-secret-42"], scrubber: scrubber)
        try await sink.script([
            ["status": 500, "body": "oops token=sekrit123 header-secret-42"],
            ["status": 429, "headers": ["Retry-After": "7"]],
            ["status": 503, "headers": ["Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"]],
            ["status": 404],
            ["status": 408],
            ["status": 204],
        ])
        var errors: [DeliveryError] = []
        for _ in 0..<5 {
            do {
                try await hook.deliver(Self.reminder)
                Issue.record("expected a failure")
            } catch let error as DeliveryError {
                errors.append(error)
            }
        }
        try await hook.deliver(Self.reminder)
        #expect(errors.map(\.isTemporary) == [true, true, true, false, true])
        #expect(errors[0].message.hasPrefix("hook: HTTP 500 from http://127.0.0.1:"))
        #expect(!errors[0].message.contains("sekrit123"))
        #expect(!errors[0].message.contains("header-secret-42"))
        #expect(errors[1].retryAfter == 7)
        #expect((errors[2].retryAfter ?? 0) > 86_400)
        let requests = try await sink.requests()
        #expect(requests.count == 6)
        #expect(requests.allSatisfy { $0.headers["Authorization"] == "Bearer header-secret-42" })
        // One keep-alive connection for the whole batch.
        #expect(Set(requests.map(\.connection)).count == 1)
        await hook.shutdown()
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func timeoutsAndRefusedConnectionsAreTemporary() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        try await sink.script([["hang": 5]])
        let slow = try Self.channel(base.absoluteString + "/slow", timeout: 1)
        await #expect(throws: DeliveryError.self) { try await slow.deliver(Self.reminder) }
        do { try await slow.deliver(Self.reminder) } catch {}
        sink.stop()
        let closed = try Self.channel(base.absoluteString + "/gone", timeout: 2)
        do {
            try await closed.deliver(Self.reminder)
            Issue.record("delivered to a stopped server")
        } catch let error as DeliveryError {
            #expect(error.isTemporary)
            #expect(!error.message.contains("\n"))
        }
    }

    /// A self-hosted server behind a private CA: refused as it should be, with advice
    /// that works (`ca_file`), then reached with it.
    @Test(.enabled(if: ServerGate.allows(.http) && ServerGate.allows(.smtp), "needs python3 and openssl"),
          .timeLimit(.minutes(1)))
    func aPrivateCAIsTrustedThroughCAFile() async throws {
        let sink = HTTPSink()
        let directory = TestFolders.temporary.appendingPathComponent("buzz-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (secure, certificate) = try await sink.startTLS(in: directory)
        let strict = try Self.channel(secure.absoluteString + "/hook")
        let refused = await #expect(throws: DeliveryError.self) { try await strict.deliver(Self.reminder) }
        #expect(refused?.isTemporary == false)
        #expect(refused?.message.contains("set ca_file") == true, "\(String(describing: refused))")
        await strict.shutdown()

        var options = WebhookChannel.Options(target: .url(secure.absoluteString + "/hook"))
        options.caFile = certificate
        let trusting = try WebhookChannel(name: "hook", options: options, timeout: 5,
                                          context: ChannelContext(environment: [:], configDirectory: nil, scrubber: SecretScrubber()))
        try await trusting.deliver(Self.reminder)
        await trusting.shutdown()
        #expect(try await sink.requests().map(\.path) == ["/hook"])
    }

    /// A name from a vCard cannot ping a whole Slack channel, Mattermost team or Discord server.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func chatPresetsDefuseMentionsInNames() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let hostile = Message(kind: .reminder, id: "x/0/2027-03-15", title: "It's <!channel> @everyone & co's birthday today",
                              body: "<@U123> turns 30", contact: .init(id: "x", name: "<!channel> @everyone & co"))
        for preset in [WebhookChannel.Preset.slack, .mattermost, .discord] {
            let channel = try Self.channel(base.absoluteString + "/\(preset)", preset: preset)
            try await channel.deliver(hostile)
            await channel.shutdown()
        }
        let requests = try await sink.requests()
        guard requests.count == 3 else {
            Issue.record("expected 3 requests, got \(requests.count)")
            return
        }
        let slack = (requests[0].bodyJSON() as? [String: Any])?["text"] as? String
        #expect(slack == "*It's &lt;!channel&gt; @everyone &amp; co's birthday today*\n&lt;@U123&gt; turns 30")
        let mattermost = (requests[1].bodyJSON() as? [String: Any])?["text"] as? String
        #expect(mattermost == "*It's &lt;!channel&gt; @\u{200B}everyone &amp; co's birthday today*\n&lt;@\u{200B}U123&gt; turns 30")
        let discord = try #require(requests[2].bodyJSON() as? [String: Any])
        #expect(discord["content"] as? String == "**It's <!channel> @everyone & co's birthday today**\n<@U123> turns 30")
        #expect((discord["allowed_mentions"] as? [String: Any])?["parse"] as? [Any] != nil)
        #expect(((discord["allowed_mentions"] as? [String: Any])?["parse"] as? [Any])?.isEmpty == true)
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func presetsAndCustomBodies() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let slack = try Self.channel(base.absoluteString + "/slack", preset: .slack)
        try await slack.deliver(Self.reminder)
        let ntfy = try Self.channel(base.absoluteString + "/ntfy", preset: .ntfy)
        try await ntfy.deliver(Message(id: "n1", title: "Geburtstag von Jürgen", body: "morgen"))
        let matrix = try Self.channel(base.absoluteString + "/_matrix/client/v3/rooms/!r:x/send/m.room.message", preset: .matrix)
        try await matrix.deliver(Self.reminder)
        let json = try Self.channel(base.absoluteString + "/custom", body: #"{"text": "{{title}} for {{name}}"}"#,
                                    contentType: "application/json")
        try await json.deliver(Self.reminder)
        let form = try Self.channel(base.absoluteString + "/form", body: "to={{to}}&message={{body}}",
                                    contentType: "application/x-www-form-urlencoded")
        try await form.deliver(Message(kind: .ask, id: "a", title: "t", body: "Hi O'Brien & co = 100%",
                                       recipient: .phone("+49 170 1")))
        let requests = try await sink.requests()
        #expect(requests.count == 5)
        guard requests.count == 5 else { return }
        #expect((requests[0].bodyJSON() as? [String: Any])?["text"] as? String == "*Ada turns 37 tomorrow*\nBirthday: 2027-03-15")
        #expect(requests[1].bodyText == "morgen")
        #expect(requests[1].headers["Title"] == "=?UTF-8?B?" + Data("Geburtstag von Jürgen".utf8).base64EncodedString() + "?=")
        #expect(requests[2].method == "PUT")
        #expect(requests[2].path.hasSuffix("/send/m.room.message/urn%3Auuid%3A1%2F1%2F2027-03-15"))
        let custom = try #require(requests[3].bodyJSON() as? [String: Any])
        #expect(custom["text"] as? String == "Ada turns 37 tomorrow for Ada \"The\" O'Brien")
        #expect(requests[4].bodyText == "to=%2B49+170+1&message=Hi+O%27Brien+%26+co+%3D+100%25")
        await slack.shutdown()
    }

    /// Matrix: the txn id goes into the path even when the URL has a query
    /// (`?access_token=…`), and the message is an m.notice with an HTML body, the title in bold.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func matrixPutsTheTransactionIDInThePath() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let room = base.absoluteString + "/_matrix/client/v3/rooms/!r:x/send/m.room.message"
        let matrix = try Self.channel(room + "?access_token=tok-secret-1", preset: .matrix)
        var message = Self.reminder
        message.title = "Ada <b>\"The\"</b> & co"
        message.body = "line 1\nline 2"
        try await matrix.deliver(message)
        var options = WebhookChannel.Options(target: .url(room + "/"), preset: .matrix)
        options.msgtype = "m.text"
        let text = try WebhookChannel(name: "m", options: options, timeout: 5,
                                      context: ChannelContext(environment: [:], configDirectory: nil, scrubber: SecretScrubber()))
        try await text.deliver(Message(id: "t1", title: "Hi", body: ""))
        let requests = try await sink.requests()
        #expect(requests.map(\.method) == ["PUT", "PUT"])
        #expect(requests.first?.path == "/_matrix/client/v3/rooms/!r:x/send/m.room.message/urn%3Auuid%3A1%2F1%2F2027-03-15?access_token=tok-secret-1")
        #expect(requests.last?.path == "/_matrix/client/v3/rooms/!r:x/send/m.room.message/t1")
        let json = try #require(requests.first?.bodyJSON() as? [String: Any])
        #expect(json["msgtype"] as? String == "m.notice")
        #expect(json["body"] as? String == "Ada <b>\"The\"</b> & co\nline 1\nline 2")
        #expect(json["format"] as? String == "org.matrix.custom.html")
        #expect(json["formatted_body"] as? String
                == "<b>Ada &lt;b&gt;&quot;The&quot;&lt;/b&gt; &amp; co</b><br>line 1<br>line 2")
        let plain = try #require(requests.last?.bodyJSON() as? [String: Any])
        #expect(plain["msgtype"] as? String == "m.text")
        #expect(plain["formatted_body"] as? String == "<b>Hi</b>")
        await matrix.shutdown()
        await text.shutdown()
    }

    /// Inline header values and URL credentials are secrets; a header that never
    /// carries one (Content-Type, ntfy's Title) is not scrubbed from replies.
    @Test func inlineHeadersAndURLCredentialsAreRegistered() throws {
        let scrubber = SecretScrubber()
        _ = try Self.channel("http://bob:pa%20ss@127.0.0.1:9/hook",
                             headers: [("X-Api-Key", .literal("inline key 12345")), ("Content-Type", .literal("application/json")),
                                       ("Title", .literal("Birthdays"))],
                             scrubber: scrubber)
        let basic = Data("bob:pa ss".utf8).base64EncodedString()
        #expect(scrubber.scrub("want application/json for Birthdays, got inline key 12345, Basic \(basic)")
                == "want application/json for Birthdays, got ***, Basic ***")
    }

    @Test func missingEnvironmentIsASetupError() throws {
        var options = WebhookChannel.Options(target: .environment("NOPE_URL"))
        options.preset = .generic
        #expect(throws: ChannelSetupError.self) {
            try WebhookChannel(name: "hook", options: options, timeout: 5,
                               context: ChannelContext(environment: [:], configDirectory: nil, scrubber: SecretScrubber()))
        }
    }

    @Test func retryAfterForms() {
        #expect(WebhookChannel.retryAfter("120") == 120)
        #expect(WebhookChannel.retryAfter("soon") == nil)
        #expect((WebhookChannel.retryAfter("Wed, 21 Oct 2099 07:28:00 GMT") ?? 0) > 1e9)
        // Against the server's own Date header: its clock, not ours.
        #expect(WebhookChannel.retryAfter("Sun, 14 Mar 2027 10:30:00 GMT", serverDate: "Sun, 14 Mar 2027 09:05:00 GMT") == 5100)
        #expect(WebhookChannel.retryAfter("Sun, 14 Mar 2027 09:00:00 GMT", serverDate: "Sun, 14 Mar 2027 09:05:00 GMT") == 0)
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"), .timeLimit(.minutes(1)))
    func conformance() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let hook = try Self.channel(base.absoluteString + "/c")
        try await ChannelConformance.run(hook, recipient: .phone("+15550100")) {
            try await sink.requests().compactMap { ($0.bodyJSON() as? [String: Any])?["title"] as? String }
        }
    }
}
