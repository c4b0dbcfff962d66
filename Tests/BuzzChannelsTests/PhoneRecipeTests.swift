import BuzzTestKit
import Foundation
import Testing

/// The README's "Reminders on your phone" recipes, sent with `buzz send` to the
/// HTTP sink: the services' hosts replaced by the sink (`api_url` for Telegram and
/// Pushover, the URL's host for the others), everything else as printed.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PhoneRecipeTests {
    static func recipe() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n### Reminders on your phone\n"), "the README section is there")
        let rest = readme[start.upperBound...]
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
            let run = try await sandbox.run(["send", "--channel", channel, "--title", "Ada turns 37", "Tomorrow"], dataDir: false,
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
