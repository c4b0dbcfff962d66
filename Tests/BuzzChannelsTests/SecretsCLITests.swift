import BuzzTestKit
import Foundation
import Testing

/// Secrets a server echoes back (docs/design/channels.md): an inline header value and the
/// `Authorization: Basic …` that URL credentials become never reach the
/// ledger, `outbox`, `tick`, `send` or `channels test`; a channel's error is
/// scrubbed of its own secrets only.
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct SecretsCLITests {
    static let inlineKey = "inline key 12345"
    static let password = "pa ss-word9"
    static let basic = Data("bob:pa ss-word9".utf8).base64EncodedString()

    static func expectNoSecrets(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in [inlineKey, password, "pa%20ss-word9", basic] {
            #expect(!text.contains(secret), "\(secret) shows in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func echoedInlineHeaderAndBasicCredentialsAreScrubbedEverywhere() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        // A careless server: its 500 page quotes the request's credentials.
        try await sink.script([], default: ["status": 500, "body": "oops:", "echo_headers": ["X-Api-Key", "Authorization"]])
        let sandbox = try Sandbox()
        let port = try #require(base.port)
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["hook"]
            [channels.hook]
            type = "webhook"
            url = "http://bob:pa%20ss-word9@127.0.0.1:\(port)/hook"
            timeout = "5s"
            [channels.hook.headers]
            X-Api-Key = "\(Self.inlineKey)"
            """)
        chmod(sandbox.configPath, 0o600)

        let send = try await sandbox.run(["send", "--channel", "hook", "hello"])
        #expect(send.status == 1 && send.stderr.contains("HTTP 500"), "\(send)")
        #expect(send.stderr.contains("X-Api-Key: ***") && send.stderr.contains("Authorization: Basic ***"), "\(send)")
        Self.expectNoSecrets(send.stdout + send.stderr)
        // The server did get them: the scrubbing is of what comes back.
        let first = try #require(try await sink.requests().first)
        #expect(first.headers["X-Api-Key"] == Self.inlineKey)
        #expect(first.headers["Authorization"] == "Basic " + Self.basic)

        let test = try await sandbox.run(["channels", "test", "hook"])
        #expect(test.status == 1 && test.stderr.contains("X-Api-Key: ***"), "\(test)")
        Self.expectNoSecrets(test.stdout + test.stderr)

        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "u1", name: "Ada", bday: "1990-03-15"))
        #expect(try await sandbox.run(["import", file, "--now", "2027-01-01"]).status == 0)
        #expect(try await sandbox.run(["tick", "--now", "2027-01-02T00:00Z"]).status == 0)
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"])
        #expect(tick.status == 1 && tick.stdout.contains("X-Api-Key: ***"), "\(tick)")
        Self.expectNoSecrets(tick.stdout + tick.stderr)
        let json = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z", "--json"])
        Self.expectNoSecrets(json.stdout + json.stderr)
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.contains("HTTP 500"), "\(outbox)")
        Self.expectNoSecrets(outbox.stdout + outbox.stderr)
        let plain = try await sandbox.run(["outbox"])
        Self.expectNoSecrets(plain.stdout + plain.stderr)
    }

    /// One channel's secret ("connect to server") must not mangle another channel's error.
    @Test func aChannelsErrorIsScrubbedOfItsOwnSecretsOnly() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = ["other", "dead"]
            [channels.dead]
            type = "webhook"
            url = "http://127.0.0.1:9/hook"
            timeout = "5s"
            [channels.other]
            type = "webhook"
            url = "\(base.absoluteString)/hook"
            [channels.other.headers]
            X-Token = { env = "OTHER_TOKEN" }
            """)
        chmod(sandbox.configPath, 0o600)
        let environment = ["OTHER_TOKEN": "connect to server"]
        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "u1", name: "Ada", bday: "1990-03-15"))
        #expect(try await sandbox.run(["import", file, "--now", "2027-01-01"]).status == 0)
        #expect(try await sandbox.run(["tick", "--now", "2027-01-02T00:00Z"], environment: environment).status == 0)
        let tick = try await sandbox.run(["tick", "--now", "2027-03-14T09:00Z"], environment: environment)
        #expect(tick.status == 1, "\(tick)")
        #expect(tick.stdout.contains("Couldn't connect to server"), "\(tick)")
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.contains("Couldn't connect to server"), "\(outbox)")
        #expect(try await sink.requests().first?.headers["X-Token"] == "connect to server")
    }

    /// A password with spaces is scrubbed whole: the words of "the password 42"
    /// do not turn "check the password" into "check the ***".
    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"))
    func aPasswordWithSpacesIsScrubbedWhole() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(auth: ("buzz", "right-one-1"))
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.mail]
            type = "smtp"
            host = "127.0.0.1"
            port = \(port)
            security = "none"
            username = "buzz"
            password_env = "SMTP_PASSWORD"
            from = "buzz@example.org"
            to = "me@example.org"
            """)
        chmod(sandbox.configPath, 0o600)
        let wrong = try await sandbox.run(["channels", "test", "mail"],
                                          environment: ["SMTP_PASSWORD": "the password 42"])
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("login refused for buzz: check the password"), "\(wrong)")
        #expect(!wrong.stderr.contains("the password 42"))
    }
}
