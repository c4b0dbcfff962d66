import BuzzTestKit
import Foundation
import Testing

/// `buzz send`, `channels` and `doctor` as a user runs them, against the real test servers.
@Suite(.timeLimit(.minutes(2))) struct SendCommandTests {
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func sendThroughAWebhook() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let failing = HTTPSink(defaultStatus: 500)
        let failingBase = try await failing.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.hook]
            type = "webhook"
            url = "\(base.absoluteString)/hook?token=url-secret-123"

            [channels.down]
            type = "webhook"
            url = "\(failingBase.absoluteString)/hook?token=url-secret-123"
            [channels.down.headers]
            Authorization = { env = "HOOK_AUTH" }
            """)
        chmod(sandbox.configPath, 0o644)
        let ok = try await sandbox.run(["send", "--channel", "hook", "hello"])
        #expect(ok.status == 0, "\(ok)")
        // The token sits in the file and others can read it: one warning line, without the token.
        #expect(ok.stderrLines.count == 1 && ok.stderr.contains("chmod 600"), "\(ok)")
        #expect(!ok.stderr.contains("url-secret-123"))
        chmod(sandbox.configPath, 0o600)
        let requests = try await sink.requests()
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.headers["Idempotency-Key"]?.hasPrefix("send/") == true)
        let json = try #require(request.bodyJSON() as? [String: Any])
        #expect(json["event"] as? String == "message")
        #expect(json["body"] as? String == "hello")

        let bad = try await sandbox.run(["send", "--channel", "down", "hello"],
                                        environment: ["HOOK_AUTH": "Bearer header-secret-456"])
        #expect(bad.status == 1, "\(bad)")
        #expect(bad.stderrLines.count == 1)
        #expect(bad.stderr.contains("HTTP 500"))
        #expect(!bad.stderr.contains("url-secret-123"))
        #expect(!bad.stderr.contains("header-secret-456"))
        #expect(try await failing.requests().first?.headers["Authorization"] == "Bearer header-secret-456")

        let list = try await sandbox.run(["channels", "list"], environment: ["HOOK_AUTH": "Bearer header-secret-456"])
        #expect(list.status == 0)
        #expect(!list.stdout.contains("url-secret-123") && !list.stdout.contains("/hook"))

        let unknown = try await sandbox.run(["send", "--channel", "nowhere", "hello"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("nowhere"))
    }

    /// Webhooks go through the proxy the environment names (libcurl's variables), and
    /// straight to the server without one. In processes of their own: libcurl reads
    /// those variables from the process's environment, not from the command's.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func webhooksHonourTheProxyEnvironment() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let proxy = HTTPSink()
        let proxyBase = try await proxy.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[channels.hook]\ntype = \"webhook\"\nurl = \"\(base.absoluteString)/hook\"\n")
        chmod(sandbox.configPath, 0o600)
        let proxied = try await sandbox.run(["send", "--channel", "hook", "hello"],
                                            environment: ["http_proxy": proxyBase.absoluteString], process: true)
        #expect(proxied.status == 0, "\(proxied)")
        #expect(try await proxy.requests().map(\.path) == [base.absoluteString + "/hook"])  // absolute form: a proxy request
        #expect(try await sink.requests().isEmpty)
        let direct = try await sandbox.run(["send", "--channel", "hook", "hello"], process: true)
        #expect(direct.status == 0, "\(direct)")
        #expect(try await sink.requests().map(\.path) == ["/hook"])
        #expect(try await proxy.requests().count == 1)
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"))
    func sendThroughSMTPWithStartTLS() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(tls: true, auth: ("buzz", "smtp-secret-789"))
        let certificate = try #require(sink.certificatePath)
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.mail]
            type = "smtp"
            host = "127.0.0.1"
            port = \(port)
            username = "buzz"
            password_env = "SMTP_PASSWORD"
            from = "BirthdayBuzz <buzz@example.org>"
            to = "me@example.org"
            ca_file = "\(certificate)"
            """)
        let sent = try await sandbox.run(["send", "--channel", "mail", "--title", "Geburtstag von Jürgen", "Er wird 40."], environment: ["SMTP_PASSWORD": "smtp-secret-789"])
        #expect(sent.status == 0, "\(sent)")
        let mail = try #require(try await sink.waitForMessages(count: 1).first)
        #expect(mail.tls)
        #expect(mail.header("Date") != nil && mail.header("Message-ID") != nil)
        let subject = try await runPython("""
            import sys
            from email.header import decode_header, make_header
            print(str(make_header(decode_header(sys.argv[1]))), end="")
            """, [mail.header("Subject") ?? ""])
        #expect(subject.stdout == "Geburtstag von Jürgen")

        let wrong = try await sandbox.run(["send", "--channel", "mail", "x"],
                                          environment: ["SMTP_PASSWORD": "not-the-password"])
        #expect(wrong.status == 1)
        #expect(!wrong.stderr.contains("not-the-password"))
    }

    @Test(.enabled(if: ServerGate.allows(.exec), "needs /bin/sh"))
    func execPluginAndNoSessionBus() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.write("plugins/tempfail", "#!/bin/sh\ncat > \"$OUT\"\necho 'gateway busy' >&2\nexit 75\n")
        chmod(plugin, 0o700)
        chmod(sandbox.root + "/plugins", 0o700)
        chmod(sandbox.root, 0o700)
        try sandbox.writeConfig("""
            [channels.phone]
            type = "exec"
            command = ["\(plugin)"]
            env = { OUT = "\(sandbox.root)/stdin.json" }

            [channels.desk]
            type = "dbus"
            """)
        chmod(sandbox.configHome + "/birthdaybuzz", 0o700)
        let result = try await sandbox.run(["send", "--channel", "phone", "hi"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("temporary"))
        #expect(result.stderr.contains("gateway busy"))
        let received = try Data(contentsOf: URL(fileURLWithPath: sandbox.root + "/stdin.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: received) as? [String: Any])
        #expect(json["body"] as? String == "hi")

        // No session bus in the sandbox: one plain line, exit 1.
        let desktop = try await sandbox.run(["send", "--channel", "desk", "hi"])
        #expect(desktop.status == 1)
        #expect(desktop.stderrLines.count == 1)
        #expect(desktop.stderr.lowercased().contains("session bus"))
        #expect(desktop.stderr.hasPrefix("buzz: desk: "), "\(desktop)")  // named like every channel's failure
    }

    @Test(.enabled(if: ServerGate.allows(.http) && ServerGate.allows(.smtp), "needs the test servers"))
    func doctorNamesEachBrokenChannel() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.hook]
            type = "webhook"
            url = "http://127.0.0.1:9/hook"
            timeout = "2s"

            [channels.mail]
            type = "smtp"
            host = "127.0.0.1"
            port = 9
            security = "none"
            from = "buzz@example.org"
            to = "me@example.org"
            timeout = "2s"

            [channels.desk]
            type = "dbus"

            [channels.plugin]
            type = "exec"
            command = ["/nonexistent/buzz-plugin"]

            [channels.token]
            type = "webhook"
            url_env = "UNSET_HOOK_URL"
            """)
        chmod(sandbox.configHome + "/birthdaybuzz", 0o700)
        let result = try await sandbox.run(["doctor"])
        #expect(result.status == 1, "\(result)")
        let failures = result.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(failures.count == 5, "\(result)")
        for name in ["hook", "mail", "desk", "plugin", "token"] {
            #expect(failures.contains { $0.contains("channel \(name) ") }, "\(name) not named: \(result)")
        }
        #expect(failures.contains { $0.contains("UNSET_HOOK_URL") })
        #expect(failures.contains { $0.contains("/nonexistent/buzz-plugin") })
    }

    /// `--config cfg.toml` (no folder part) anchors the config's folder at the working
    /// directory: the exec plugin's folder checks and template overrides find it.
    @Test(.enabled(if: ServerGate.allows(.exec), "needs /bin/sh"))
    func aRelativeConfigPathWorksForExecPlugins() async throws {
        let sandbox = try Sandbox()
        chmod(sandbox.root, 0o700)
        let plugin = try sandbox.write("plugins/record", "#!/bin/sh\ncat > \"$OUT\"\n")
        chmod(plugin, 0o700)
        chmod(sandbox.root + "/plugins", 0o700)
        try sandbox.write("cfg.toml", """
            [channels.phone]
            type = "exec"
            command = ["\(plugin)"]
            env = { OUT = "\(sandbox.root)/stdin.json" }
            """)
        chmod(sandbox.root + "/cfg.toml", 0o600)
        try sandbox.write("templates/en/reminder.mustache", "Relative {{name}}\n\nbody\n")
        for config in ["cfg.toml", "./cfg.toml"] {
            let result = try await sandbox.run(["--config", config, "send", "--channel", "phone", "hi"])
            #expect(result.status == 0, "\(config): \(result)")
            let doctor = try await sandbox.run(["--config", config, "doctor"])
            #expect(doctor.stdout.contains(sandbox.root + "/templates"), "\(config): \(doctor)")
        }
        #expect(FileManager.default.fileExists(atPath: sandbox.root + "/stdin.json"))
    }

    /// A transfer polls its socket without sleeping only briefly (CurlEasy.spinBudget,
    /// 0.5 ms), then sleeps: a reply that takes seconds costs no more CPU than a fast one.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func aSlowReplyIsAwaitedAsleep() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        try await sink.script([["hang": 4]])
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[channels.hook]\ntype = \"webhook\"\nurl = \"\(base.absoluteString)/slow\"\ntimeout = \"2s\"\n")
        chmod(sandbox.configPath, 0o600)
        let binary = try #require(BuzzBinary.path)
        // bash's `times` prints its own CPU time, then its children's: "0m0.012s 0m0.004s" (user, system).
        let run = try await runProgram("/bin/bash", ["-c", "\"$0\" \"$@\" >/dev/null 2>&1; echo \"status $?\"; times",
                                                     binary, "--config", sandbox.configPath, "send", "--channel", "hook", "hello"])
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first == "status 1", "\(run)")  // the 2 s timeout: a temporary failure
        let children = try #require(lines.last?.split(separator: " "), "\(run)")
        let seconds = children.compactMap { field -> Double? in
            // "1m2.345s"
            guard let m = field.firstIndex(of: "m"), field.hasSuffix("s"), let minutes = Double(field[..<m]),
                  let rest = Double(field[field.index(after: m)..<field.index(before: field.endIndex)]) else { return nil }
            return minutes * 60 + rest
        }
        #expect(seconds.count == 2, "\(run)")
        // Spinning through the 2 s wait would cost about 2 s of CPU; sleeping costs milliseconds.
        #expect(seconds.reduce(0, +) < 1.0, "\(run)")
        #expect(try await sink.requests().count == 1)
    }
}
