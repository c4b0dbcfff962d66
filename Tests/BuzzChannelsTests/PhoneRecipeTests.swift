import BuzzTestKit
import Foundation
import Testing

/// The "Reminders on your phone" recipes (docs/channels.md), sent with `buzz send` to the
/// HTTP sink: the services' hosts replaced by the sink (`api_url` for Telegram and
/// Pushover, the URL's host for the others), everything else as printed.
@Suite(.timeLimit(.minutes(1))) struct PhoneRecipeTests {
    static func recipe() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/channels.md"), encoding: .utf8)
        let start = try #require(page.range(of: "\n### Reminders on your phone\n"), "the section is on the channels page")
        let rest = page[start.upperBound...]
        let section = rest.range(of: "\n#").map { rest[..<$0.lowerBound] } ?? rest
        let open = try #require(section.range(of: "```toml\n"))
        let close = try #require(section[open.upperBound...].range(of: "\n```"))
        return String(section[open.upperBound..<close.lowerBound])
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func everyRecipeSends() async throws {
        let sink = HTTPSink()
        let base = try await sink.start().absoluteString
        var config = try Self.recipe()
        for preset in ["telegram", "pushover"] {
            config = config.replacingOccurrences(of: "preset = \"\(preset)\"\n", with: "preset = \"\(preset)\"\napi_url = \"\(base)\"\n")
        }
        config = config.replacingOccurrences(of: "https://ntfy.sh", with: base)
        let sandbox = try Sandbox()
        try sandbox.writeConfig(config)
        let environment: [String: String?] = [
            "BUZZ_TELEGRAM_TOKEN": "123456:recipeToken", "BUZZ_PUSHOVER_TOKEN": "recipeAppToken",
            "BUZZ_GOTIFY_URL": base + "/message?token=recipeGotify",
            "BUZZ_APPRISE_URL": "ntfy://127.0.0.1:\(URL(string: base)?.port ?? 0)/family",
        ]
        let expected = [
            "telegram": "/bot123456:recipeToken/sendMessage", "pushover": "/1/messages.json",
            "ntfy": "/my-long-secret-birthday-topic", "gotify": "/message?token=recipeGotify", "apprise": "/",
        ]
        #expect(Set(config.components(separatedBy: "[channels.").dropFirst().map { String($0.prefix { $0 != "]" }) })
                == Set(expected.keys))
        for (channel, path) in expected.sorted(by: { $0.key < $1.key }) {
            try await sink.clearRequests()
            let run = try await sandbox.run(["send", "--channel", channel, "--title", "Ada turns 37", "Tomorrow"],
                                            environment: environment)
            #expect(run.status == 0, "\(channel): \(run)")
            let requests = try await sink.requests()
            #expect(requests.map(\.path) == [path], "\(channel)")
            // The title is in the body (JSON, or a form: "Ada+turns+37"), or in ntfy's Title header.
            let request = try #require(requests.first)
            let text = (request.bodyText ?? "").replacingOccurrences(of: "+", with: " ") + (request.headers["Title"] ?? "")
            #expect(text.contains("Ada turns 37") && text.contains("Tomorrow"), "\(channel): \(text)")
        }
    }
}

/// `channels list`, `channels test` and `doctor` through the telegram and pushover
/// presets: no token in any output, doctor's checks send no message.
@Suite(.timeLimit(.minutes(1))) struct PhoneCommandTests {
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func tokensNeverShowAndDoctorSendsNothing() async throws {
        // One sink per service, so each answers its own channel whatever order doctor checks them in.
        let sink = HTTPSink()
        let base = try await sink.start().absoluteString
        let pushoverSink = HTTPSink()
        let pushoverBase = try await pushoverSink.start().absoluteString
        let botToken = "987654:inlineBotTokenXYZ"
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.tg]
            type = "webhook"
            preset = "telegram"
            bot_token = "\(botToken)"
            chat_id = 42
            api_url = "\(base)"

            [channels.po]
            type = "webhook"
            url = "pover://userKeyABC@appTokenXYZ"
            api_url = "\(pushoverBase)"
            """)
        chmod(sandbox.configPath, 0o600)
        let list = try await sandbox.run(["channels", "list"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("pover://127.0.0.1:"), "\(list)")
        // Each reply echoes the credentials, as a careless error page does.
        try await sink.script([
            ["status": 401, "body": #"{"ok":false,"description":"Unauthorized: \#(botToken)"}"#],
            ["status": 400, "body": #"{"ok":false,"description":"Bad Request: chat not found for \#(botToken)"}"#],
        ])
        try await pushoverSink.script([
            ["status": 400, "body": #"{"errors":["application token is invalid: appTokenXYZ userKeyABC"],"status":0}"#],
        ])
        let doctor = try await sandbox.run(["doctor"])
        let test = try await sandbox.run(["channels", "test", "tg"])
        #expect(test.status == 1, "\(test)")
        for output in [list.stdout + list.stderr, doctor.stdout + doctor.stderr, test.stdout + test.stderr] {
            for secret in ["inlineBotTokenXYZ", "appTokenXYZ", "userKeyABC"] {
                #expect(!output.contains(secret), "\(output)")
            }
        }
        #expect(doctor.stdout.contains("Telegram does not accept the bot token"), "\(doctor)")
        #expect(doctor.stdout.contains("Pushover does not accept"), "\(doctor)")
        let paths = try await sink.requests().map { $0.path.replacingOccurrences(of: botToken, with: "TOKEN") }
        #expect(paths == ["/botTOKEN/getMe", "/botTOKEN/sendMessage"])
        #expect(try await pushoverSink.requests().map(\.path) == ["/1/users/validate.json"])
    }
}
