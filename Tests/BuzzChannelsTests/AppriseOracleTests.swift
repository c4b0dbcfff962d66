import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels

/// Apprise URLs, with Apprise itself as the oracle: the same title and body sent
/// by Apprise and by `buzz send` must reach the service by the same method and
/// path, with the credential in the same place and the target, title and body in
/// the same fields. Schemes with a host go to the HTTP sink from both; for the
/// services whose host Apprise fixes, Apprise runs as a library with `requests`
/// patched (`Servers/apprise_record.py`) and `buzz` goes to the sink through `api_url`.
@Suite(.timeLimit(.minutes(2))) struct AppriseOracleTests {
    static let title = "Ada turns 37 tomorrow"
    static let body = "Birthday: 2027-03-15 (Ada & Bob's party)"

    /// What one side sent, reduced to what is compared.
    struct Sent: CustomStringConvertible {
        var method: String
        var path: String
        var headers: [String: String]
        /// JSON object, or form fields.
        var fields: [String: Any]

        var description: String { "\(method) \(path) \(headers) \(fields)" }
    }

    static func sent(_ request: RecordedRequest) -> Sent {
        var headers: [String: String] = [:]
        for field in request.headers.fields { headers[field.name.lowercased()] = field.value }
        let fields = (request.bodyJSON() as? [String: Any]) ?? PhonePresetTests.form(request.body)
        return Sent(method: request.method, path: request.path, headers: headers, fields: fields)
    }

    /// What the `apprise` CLI and `apprise_record.py` import (0.5 s of CPU for each
    /// fresh start: Apprise loads every plugin), loaded once by their starter.
    static let appriseModules = PythonStarter.Preload(modules: ["pkg_resources", "requests", "apprise", "apprise.cli", "json"])

    /// Runs the `apprise` CLI; its request as the sink recorded it.
    static func appriseCLI(_ url: String, sink: HTTPSink) async throws -> Sent {
        try await sink.clearRequests()
        // Straight to the sink, whatever proxy the environment names.
        let run = try await runPythonScript("/usr/bin/apprise", ["-t", title, "-b", body, url],
                                            environment: ["no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1"], preload: appriseModules)
        #expect(run.status == 0, "\(run)")
        let requests = try await sink.requests()
        try #require(requests.count == 1, "apprise sent \(requests.count) requests: \(run)")
        return sent(requests[0])
    }

    /// Runs Apprise as a library with `requests` patched; the one call it made.
    static func appriseLibrary(_ url: String) async throws -> Sent {
        let script = ServerGate.serversDirectory.appendingPathComponent("apprise_record.py").path
        let run = try await runPythonScript(script, [url, title, body], preload: appriseModules)
        try #require(run.status == 0, "\(run)")
        let calls = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        try #require(calls.count == 1, "\(run.stdout)")
        let call = calls[0]
        let target = try #require(URLComponents(string: call["url"] as? String ?? ""))
        var headers: [String: String] = [:]
        for (name, value) in call["headers"] as? [String: String] ?? [:] { headers[name.lowercased()] = value }
        var fields: [String: Any] = [:]
        if let text = call["data"] as? String {
            fields = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
        } else if let form = call["data"] as? [String: Any] {
            fields = form
        }
        return Sent(method: call["method"] as? String ?? "", path: target.percentEncodedPath, headers: headers, fields: fields)
    }

    /// `buzz send` through a channel whose `url` is the Apprise URL.
    static func buzzSend(_ url: String, apiURL: String? = nil, sink: HTTPSink) async throws -> Sent {
        try await sink.clearRequests()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.hook]
            type = "webhook"
            url = "\(url)"
            \(apiURL.map { "api_url = \"\($0)\"" } ?? "")
            """)
        let run = try await sandbox.run(["send", "--channel", "hook", "--title", title, body])
        #expect(run.status == 0, "\(run)")
        // The URL is a secret: the file's mode draws the inline-secret warning, and no output shows any of it.
        #expect(run.stderr.contains("holds a secret inline"), "\(run)")
        let shown = run.stdout + run.stderr
        for fragment in ["secret-pw", "AsecretGotify", "secrethook", "V_secret", "Idsecret", "AAHsecret", "uQiRzpo4", "azGDORe"] {
            #expect(!shown.contains(fragment), "\(run)")
        }
        let requests = try await sink.requests()
        try #require(requests.count == 1, "buzz sent \(requests.count) requests: \(run)")
        return sent(requests[0])
    }

    static func string(_ value: Any?) -> String? {
        if let text = value as? String { return text.replacingOccurrences(of: "\r\n", with: "\n") }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// Same method, path, credential header and the named fields.
    static func compare(_ apprise: Sent, _ buzz: Sent, credential: String?, fields: [String],
                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(buzz.method == apprise.method, "apprise: \(apprise)\nbuzz: \(buzz)", sourceLocation: sourceLocation)
        #expect(buzz.path == apprise.path, "apprise: \(apprise)\nbuzz: \(buzz)", sourceLocation: sourceLocation)
        if let credential {
            #expect(apprise.headers[credential] != nil, "\(apprise)", sourceLocation: sourceLocation)
            #expect(buzz.headers[credential] == apprise.headers[credential], "apprise: \(apprise)\nbuzz: \(buzz)",
                    sourceLocation: sourceLocation)
        }
        for field in fields {
            #expect(string(apprise.fields[field]) != nil, "apprise has no \(field): \(apprise)", sourceLocation: sourceLocation)
            #expect(string(buzz.fields[field]) == string(apprise.fields[field]), "\(field)\napprise: \(apprise)\nbuzz: \(buzz)",
                    sourceLocation: sourceLocation)
        }
    }

    /// A text field that carries title and body together: both are in it, on both sides
    /// (on ours escaped as the service needs it: Apprise leaves mentions and `&` alone).
    static func carriesTitleAndBody(_ apprise: Sent, _ buzz: Sent, field: String, escaped: (String) -> String = { $0 },
                                    sourceLocation: SourceLocation = #_sourceLocation) {
        let appriseText = string(apprise.fields[field]) ?? ""
        #expect(appriseText.contains(title) && appriseText.contains(body), "\(field): \(apprise)", sourceLocation: sourceLocation)
        let buzzText = string(buzz.fields[field]) ?? ""
        #expect(buzzText.contains(escaped(title)) && buzzText.contains(escaped(body)), "\(field): \(buzz)", sourceLocation: sourceLocation)
    }

    /// HTML text as Telegram reads it: Apprise 1.2 sends `&` unescaped, we escape every value.
    static func htmlUnescaped(_ text: String?) -> String? {
        text?.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    @Test(.enabled(if: ServerGate.allows(.http) && ServerGate.allows(.apprise),
                   "needs Debian's apprise (scripts/deps.sh test installs it) and python3 for the HTTP sink"))
    func schemesWithAHost() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let host = "127.0.0.1:\(base.port ?? 0)"

        let json = "json://bob:secret-pw@\(host)/in/hook"
        Self.compare(try await Self.appriseCLI(json, sink: sink), try await Self.buzzSend(json, sink: sink),
                credential: "authorization", fields: ["version", "title", "message", "type"])

        let ntfy = "ntfy://bob:secret-pw@\(host)/family-birthdays"
        Self.compare(try await Self.appriseCLI(ntfy, sink: sink), try await Self.buzzSend(ntfy, sink: sink),
                credential: "authorization", fields: ["topic", "title", "message"])

        let gotify = "gotify://\(host)/gotify/AsecretGotifyTok"
        Self.compare(try await Self.appriseCLI(gotify, sink: sink), try await Self.buzzSend(gotify, sink: sink),
                credential: "x-gotify-key", fields: ["title", "message", "priority"])

        let mmost = "mmost://\(host)/chat/secrethooktoken1234567890"
        let appriseMM = try await Self.appriseCLI(mmost, sink: sink)
        let buzzMM = try await Self.buzzSend(mmost, sink: sink)
        Self.compare(appriseMM, buzzMM, credential: nil, fields: [])
        Self.carriesTitleAndBody(appriseMM, buzzMM, field: "text", escaped: WebhookChannel.mattermostEscaped)
        // Apprise's branding stays out.
        #expect(buzzMM.fields["username"] == nil && buzzMM.fields["icon_url"] == nil)
    }

    @Test(.enabled(if: ServerGate.allows(.http) && ServerGate.allows(.apprise),
                   "needs Debian's apprise (scripts/deps.sh test installs it) and python3 for the HTTP sink"))
    func schemesWhoseHostAppriseFixes() async throws {
        let sink = HTTPSink()
        let base = try await sink.start().absoluteString

        let discord = "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_secret"
        let appriseDiscord = try await Self.appriseLibrary(discord)
        let buzzDiscord = try await Self.buzzSend(discord, apiURL: base, sink: sink)
        Self.compare(appriseDiscord, buzzDiscord, credential: nil, fields: [])
        Self.carriesTitleAndBody(appriseDiscord, buzzDiscord, field: "content")
        #expect((buzzDiscord.fields["allowed_mentions"] as? [String: Any])?["parse"] as? [String] == [])

        let slack = "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdsecret"
        let appriseSlack = try await Self.appriseLibrary(slack)
        let buzzSlack = try await Self.buzzSend(slack, apiURL: base, sink: sink)
        Self.compare(appriseSlack, buzzSlack, credential: nil, fields: [])
        let first = { (sent: Sent) in (sent.fields["attachments"] as? [[String: Any]])?.first ?? [:] }
        for key in ["title", "text"] {
            #expect(Self.string(first(buzzSlack)[key]) == Self.string(first(appriseSlack)[key]), "\(key): \(appriseSlack) / \(buzzSlack)")
        }
        #expect(buzzSlack.fields["username"] == nil)

        let tgram = "tgram://123456789:AAHsecretBotToken_x/-1001234"
        let appriseTelegram = try await Self.appriseLibrary(tgram)
        let buzzTelegram = try await Self.buzzSend(tgram, apiURL: base, sink: sink)
        Self.compare(appriseTelegram, buzzTelegram, credential: nil, fields: ["chat_id", "parse_mode"])
        #expect(Self.htmlUnescaped(Self.string(buzzTelegram.fields["text"])) == Self.htmlUnescaped(Self.string(appriseTelegram.fields["text"])),
                "\(appriseTelegram) / \(buzzTelegram)")
        #expect(Self.string(buzzTelegram.fields["text"])?.contains("Ada &amp; Bob&#39;s") == true)

        let pover = "pover://uQiRzpo4DXghDmr9QzzfQu27cmVRsG@azGDORePK8gMaC0QOYAMyEEuzJnyUi"
        Self.compare(try await Self.appriseLibrary(pover), try await Self.buzzSend(pover, apiURL: base, sink: sink),
                credential: nil, fields: ["token", "user", "title", "message", "priority"])
    }

    @Test func mappingsAndRefusals() throws {
        func options(_ url: String, apiURL: String? = nil) throws -> WebhookChannel.Options {
            var values: [String: ConfigTable.Value] = ["url": .string(url)]
            if let apiURL { values["api_url"] = .string(apiURL) }
            return try TableReader.readAll(ConfigTable(path: ["channels", "x"], values: values), WebhookChannel.options(from:))
        }
        func resolved(_ url: String) throws -> String {
            guard case .url(let target) = try options(url).target else { return "" }
            return target
        }
        #expect(try resolved("jsons://example.org/x") == "https://example.org/x")
        #expect(try resolved("ntfy://family") == "https://ntfy.sh/")
        #expect(try options("ntfy://family").apprise?.shape == .ntfy(topic: "family"))
        #expect(try resolved("ntfys://ntfy.example.org/family") == "https://ntfy.example.org/")
        #expect(try resolved("gotifys://push.example.org/TOKEN") == "https://push.example.org/message")
        #expect(try resolved("mmosts://chat.example.org/TOKEN") == "https://chat.example.org:8065/hooks/TOKEN")
        #expect(try resolved("tgram://bot123:ABC/42") == "https://api.telegram.org")
        #expect(try options("tgram://123:ABC/42").phone?.token == .literal("123:ABC"))

        // Shown as the scheme and the host it resolves to: never the token in the host part.
        let pover = try options("pover://userkey@apptoken")
        #expect(WebhookChannel.target(of: pover, environment: [:]) == "POST pover://api.pushover.net (Apprise URL)")
        #expect(WebhookChannel.target(of: try options("discord://1/tok"), environment: [:]) == "POST discord://discord.com (Apprise URL)")
        #expect(WebhookChannel.holdsInlineSecret(try options("ntfy://family")))

        func problem(_ url: String, apiURL: String? = nil) -> String {
            do {
                _ = try options(url, apiURL: apiURL)
                return ""
            } catch {
                return "\(error)"
            }
        }
        let unknown = problem("signal://+15551234/+15554321")
        #expect(unknown.contains("\"signal://\"") && unknown.contains("exec") && unknown.contains("apprise"), "\(unknown)")
        let query = problem("ntfy://family?priority=high")
        #expect(query.contains("\"priority\"") && query.contains("not read"), "\(query)")
        #expect(!problem("tgram://123:ABC/1/2").isEmpty)  // one chat per URL
        #expect(!problem("json://example.org", apiURL: "http://127.0.0.1:1").isEmpty)  // the host is the URL's
        #expect(!problem("pover://apptoken").isEmpty)
        #expect(problem("pover://userkey@apptoken", apiURL: "http://127.0.0.1:1").isEmpty)
    }
}
