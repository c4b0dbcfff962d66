import BuzzTestKit
import Foundation
import Testing

/// `buzz ask` as a user runs it, against the real SMTP and HTTP servers.
@Suite(.timeLimit(.minutes(2))) struct AskCommandTests {
    static func world(smtpPort: Int? = nil, smsURL: URL? = nil) throws -> Sandbox {
        let sandbox = try Sandbox()
        var config = "[general]\ntimezone = \"UTC\"\nlocale = \"en\"\n[ask]\nsender_name = \"Alex\"\n"
        if smtpPort != nil { config += "email = \"mail\"\n" }
        if smsURL != nil { config += "sms = \"gateway\"\n" }
        if let smtpPort {
            config += """
                [channels.mail]
                type = "smtp"
                host = "127.0.0.1"
                port = \(smtpPort)
                security = "none"
                from = "Alex <alex@example.org>"
                to = "alex@example.org"

                """
        }
        if let smsURL {
            config += """
                [channels.gateway]
                type = "webhook"
                url = "\(smsURL.absoluteString)/sms"
                content_type = "application/x-www-form-urlencoded"
                body = "to={{to}}&message={{body}}"

                """
        }
        try sandbox.writeConfig(config)
        chmod(sandbox.configPath, 0o600)
        return sandbox
    }

    static func importCards(_ sandbox: Sandbox, _ cards: [String]) async throws {
        let file = try sandbox.write("contacts.vcf", cards.joined())
        let result = try await sandbox.run(["import", file])
        #expect(result.status == 0, "\(result)")
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"))
    func emailAskOnceThenCooldown() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let sandbox = try Self.world(smtpPort: port)
        try await Self.importCards(sandbox, [
            VCard.card(uid: "nb", name: "No Birthday Person", emails: ["nb@example.org"]),
            VCard.card(uid: "de", name: "Jürgen Weiß", emails: ["jw@example.de"], extra: ["LANG:de-AT"]),
        ])
        let dry = try await sandbox.run(["ask", "No Birthday Person", "--dry-run"])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("by email to nb@example.org via channel mail"))
        #expect(dry.stdout.contains("What's your birthday"))
        #expect(try sink.messages().isEmpty)

        let sent = try await sandbox.run(["ask", "No Birthday Person"])
        #expect(sent.status == 0, "\(sent)")
        let mail = try #require(try await sink.waitForMessages(count: 1).first)
        #expect(mail.rcptTos == ["nb@example.org"])
        let again = try await sandbox.run(["ask", "No Birthday Person"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("--force"))
        #expect(try sink.messages().count == 1)
        let missing = try await sandbox.run(["list", "--missing"])
        #expect(missing.stdout.contains("asked") && missing.stdout.contains("by email"))

        // German for LANG:de-AT.
        let german = try await sandbox.run(["ask", "Jürgen"])
        #expect(german.status == 0, "\(german)")
        let messages = try await sink.waitForMessages(count: 2)
        let body = try #require(messages.last?.body.replacingOccurrences(of: "\r\n", with: ""))
        let text = String(data: Data(base64Encoded: body) ?? Data(), encoding: .utf8) ?? body
        #expect(text.contains("Geburtstag"), "\(text)")
        // The ask went through the ledger with its own event id.
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.contains("nb/ask/1") && outbox.stdout.contains("de/ask/1"))
    }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func smsToOneOfTwoCellsAndShare() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Self.world(smsURL: base)
        try await Self.importCards(sandbox, [
            VCard.card(uid: "two", name: "Two Cells", extra: ["TEL;TYPE=CELL:+49 170 1111111", "TEL;TYPE=CELL,PREF:+49 170 2222222"]),
        ])
        let sent = try await sandbox.run(["ask", "Two Cells"])
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.contains("using +491702222222"))
        let request = try #require(try await sink.requests().first)
        #expect(request.bodyText?.hasPrefix("to=%2B491702222222&message=Hey+Two") == true, "\(request.bodyText ?? "")")

        let share = try await sandbox.run(["ask", "Two Cells", "--via", "share", "--force"], environment: ["PATH": "/nonexistent"])
        #expect(share.status == 0, "\(share)")
        #expect(share.stdout.contains("What's your birthday"))
        #expect(share.stdout.contains("sms:+491702222222?body=Hey%20Two"))
        // A dry run of the share shows the same link (and records nothing).
        let dry = try await sandbox.run(["ask", "Two Cells", "--via", "share", "--dry-run"], environment: ["PATH": "/nonexistent"])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("sms:+491702222222?body=Hey%20Two"), "\(dry)")
    }

    /// `ask --missing` (a weekly cron job) passes over contacts asked within the
    /// cooldown instead of failing; `--via share` works even when `ask.order` leaves it out.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func missingPassesOverTheCooldownAndShareIsAlwaysThere() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            locale = "en"
            [ask]
            sms = "gateway"
            order = ["sms"]
            [channels.gateway]
            type = "webhook"
            url = "\(base.absoluteString)/sms"
            """)
        chmod(sandbox.configPath, 0o600)
        try await Self.importCards(sandbox, [
            VCard.card(uid: "ann", name: "Ann Phone", extra: ["TEL;TYPE=CELL:+43 660 1234567"]),
            VCard.card(uid: "ben", name: "Ben Phone", extra: ["TEL;TYPE=CELL:+43 660 7654321"]),
        ])
        let first = try await sandbox.run(["ask", "Ann", "--now", "2027-01-01T10:00"])
        #expect(first.status == 0, "\(first)")
        let weekly = try await sandbox.run(["ask", "--missing", "--yes", "--now", "2027-01-08T10:00"])
        #expect(weekly.status == 0, "\(weekly)")
        #expect(weekly.stdout.contains("Ann Phone was asked on 2027-01-01 by sms (again from 2027-01-31): not asked again yet"),
                "\(weekly)")
        #expect(try await sink.requests().count == 2)  // Ann once, Ben once

        let share = try await sandbox.run(["ask", "Ann", "--via", "share", "--force", "--now", "2027-01-09T10:00"],
                                          environment: ["PATH": "/nonexistent"])
        #expect(share.status == 0, "\(share)")
        #expect(share.stdout.contains("sms:+436601234567?body="), "\(share)")
        // --via email names the email route's own reason, not the others'.
        let email = try await sandbox.run(["ask", "Ann", "--via", "email", "--force"])
        #expect(email.status == 2)
        #expect(email.stderr == "buzz: Ann Phone: no way to ask by email (email: no email address)\n", "\(email)")
    }

    @Test(.enabled(if: ServerGate.allows(.exec), "needs /bin/sh"))
    func composeAndClipboardUseTheToolsOnPath() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\nlocale = \"en\"\n[ask]\nemail_mode = \"compose\"\norder = [\"email\", \"share\"]\n")
        chmod(sandbox.configPath, 0o600)
        try await Self.importCards(sandbox, [
            VCard.card(uid: "m", name: "Mail Only", emails: ["mail.only@example.org"]),
            VCard.card(uid: "x", name: "Sneaky", emails: ["a@b.c?attach=~/.ssh/id_rsa"]),
        ])
        // Fake xdg-open and wl-copy first on PATH: they record what they were given.
        let bin = sandbox.root + "/bin"
        try sandbox.write("bin/xdg-open", "#!/bin/sh\nprintf '%s' \"$1\" > \"\(sandbox.root)/opened\"\n")
        try sandbox.write("bin/wl-copy", "#!/bin/sh\ncat > \"\(sandbox.root)/clipboard\"\n")
        chmod(bin + "/xdg-open", 0o700)
        chmod(bin + "/wl-copy", 0o700)
        let path = bin + ":/usr/bin:/bin"
        let composed = try await sandbox.run(["ask", "Mail Only"], environment: ["PATH": path])
        #expect(composed.status == 0, "\(composed)")
        let opened = try String(contentsOfFile: sandbox.root + "/opened", encoding: .utf8)
        #expect(opened.hasPrefix("mailto:mail.only@example.org?subject=Quick%20question&body=Hey%20Mail%2C%20I%27m%20updating"))
        #expect(!opened.contains(" ") && !opened.contains("\n"))

        // The sneaky address is no address: share only, never handed to xdg-open.
        try? FileManager.default.removeItem(atPath: sandbox.root + "/opened")
        let shared = try await sandbox.run(["ask", "Sneaky"], environment: ["PATH": path, "WAYLAND_DISPLAY": "wayland-0"])
        #expect(shared.status == 0, "\(shared)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root + "/opened"))
        #expect(shared.stdout.contains("copied to the clipboard with"))
        let clipboard = try String(contentsOfFile: sandbox.root + "/clipboard", encoding: .utf8)
        #expect(clipboard.contains("What's your birthday"))
    }
}
