import BuzzTestKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The test servers themselves, checked with plain clients (URLSession, Python's
/// http.client and smtplib), so that adapter tests can trust them.
@Suite("Test servers", .timeLimit(.minutes(1)))
struct TestServersTests {
    // MARK: HTTP sink

    private static func session(timeout: TimeInterval) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    private static let session = session(timeout: 10)

    private func post(
        _ url: URL, body: Data, headers: [String: String] = [:], session: URLSession = Self.session
    ) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test("HTTP sink answers its script in order, then the default, and records every request",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func httpScriptAndLog() async throws {
        let sink = HTTPSink()
        try await sink.start()
        defer { sink.stop() }
        try await sink.script([["status": 500, "body": "boom"]], default: ["status": 200, "body": "fine"])

        let json = Data(#"{"text":"Happy birthday, O'Brien!"}"#.utf8)
        let (firstBody, first) = try await post(sink.url("/hook?n=1"), body: json,
                                                headers: ["Content-Type": "application/json", "X-Buzz-Test": "one"])
        #expect(first.statusCode == 500)
        #expect(String(decoding: firstBody, as: UTF8.self) == "boom")

        let binary = Data([0xFF, 0x00, 0x41, 0x0A])
        let (secondBody, second) = try await post(sink.url("/hook"), body: binary,
                                                  headers: ["Content-Type": "application/octet-stream"])
        #expect(second.statusCode == 200)
        #expect(String(decoding: secondBody, as: UTF8.self) == "fine")

        let recorded = try await sink.requests()
        try #require(recorded.count == 2, "recorded: \(recorded)")
        #expect(recorded.map(\.seq) == [0, 1])
        #expect(recorded[0].method == "POST")
        #expect(recorded[0].path == "/hook?n=1")
        #expect(recorded[0].headers["content-type"] == "application/json")
        #expect(recorded[0].headers["X-BUZZ-TEST"] == "one")
        #expect(recorded[0].headers.values("x-buzz-test") == ["one"])
        #expect(recorded[0].body == json)
        #expect(recorded[0].bodyText == #"{"text":"Happy birthday, O'Brien!"}"#)
        #expect((recorded[0].bodyJSON() as? [String: String])?["text"] == "Happy birthday, O'Brien!")
        #expect(recorded[0].status == 500)
        #expect(recorded[0].connection > 0)
        #expect(recorded[1].body == binary)
        #expect(recorded[1].bodyText == nil)
        #expect(recorded[1].status == 200)

        try await sink.clearRequests()
        #expect(try await sink.requests().isEmpty)
    }

    @Test("HTTP sink sends scripted headers such as Retry-After, and --status sets the default",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func httpRetryAfterAndDefaultStatus() async throws {
        let sink = HTTPSink(defaultStatus: 503)
        try await sink.start()
        defer { sink.stop() }
        try await sink.script([["status": 429, "headers": ["Retry-After": "7"]]])

        let (_, limited) = try await post(sink.url("/hook"), body: Data("a".utf8))
        #expect(limited.statusCode == 429)
        #expect(limited.value(forHTTPHeaderField: "Retry-After") == "7")

        let (_, unavailable) = try await post(sink.url("/hook"), body: Data("b".utf8))
        #expect(unavailable.statusCode == 503)
        #expect(unavailable.value(forHTTPHeaderField: "Retry-After") == nil)
    }

    @Test("A hanging HTTP response makes a 1 s client timeout fire; the request is still recorded",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func httpHangTimesOut() async throws {
        let sink = HTTPSink()
        try await sink.start()
        defer { sink.stop() }
        try await sink.script([["hang": 60]])

        let impatient = Self.session(timeout: 1)
        let clock = ContinuousClock()
        let started = clock.now
        await #expect {
            _ = try await post(sink.url("/slow"), body: Data("x".utf8), session: impatient)
        } throws: { error in
            (error as? URLError)?.code == .timedOut
        }
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(40))  // long before the 60 s hang ends, even on a busy machine

        // The sink serves others while one connection hangs.
        let (_, next) = try await post(sink.url("/after"), body: Data("y".utf8))
        #expect(next.statusCode == 200)
        let recorded = try await sink.requests()
        #expect(recorded.map(\.path) == ["/slow", "/after"])
    }

    @Test("HTTP sink keeps a connection alive: one client connection shows one connection id",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func httpKeepAlive() async throws {
        let sink = HTTPSink()
        try await sink.start()
        defer { sink.stop() }
        let client = """
        import http.client, sys
        for _ in range(2):
            connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
            for n in range(3):
                connection.request("POST", "/k%d" % n, body=b"ping", headers={"Content-Type": "text/plain"})
                response = connection.getresponse()
                response.read()
                print(response.status, response.getheader("Connection"))
            connection.close()
        """
        let output = try await runPython(client, [String(sink.port)])
        #expect(output.status == 0, "\(output)")
        #expect(output.stdout == String(repeating: "200 None\n", count: 6))

        let recorded = try await sink.requests()
        try #require(recorded.count == 6)
        let first = Set(recorded[0..<3].map(\.connection))
        let second = Set(recorded[3..<6].map(\.connection))
        #expect(first.count == 1)
        #expect(second.count == 1)
        #expect(first != second)
    }

    @Test("stop() ends the HTTP sink process",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func httpStop() async throws {
        let process = try await startProcess("http_sink.py")
        let pid = try #require(process.processIdentifier)
        #expect(process.isRunning)
        #expect(kill(pid, 0) == 0)
        process.stop()
        #expect(!process.isRunning)
        // Ended: gone, or a zombie that Foundation has not reaped yet (it notices
        // exits late while other tests spawn processes; stop() does not wait for that).
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let zombie = stat.lastIndex(of: ")").map { stat[stat.index(after: $0)...].dropFirst().first == "Z" } ?? false
        #expect(kill(pid, 0) == -1 || zombie, "\(stat)")
        process.stop()  // idempotent

        let sink = HTTPSink()
        try await sink.start()
        let url = sink.url("/after-stop")
        sink.stop()
        #expect(!sink.isRunning)
        await #expect(throws: (any Error).self) {
            _ = try await post(url, body: Data("x".utf8), session: Self.session(timeout: 2))
        }
    }

    @Test("A server that cannot start throws a clear error with its stderr",
          .enabled(if: ServerGate.allows(.http), "needs \(ServerGate.python)"))
    func startFailureIsClear() async throws {
        do {
            _ = try await startProcess("http_sink.py", arguments: ["--port", "not-a-port"])
            Issue.record("expected an error")
        } catch {
            let text = String(describing: error)
            #expect(text.hasPrefix("http_sink.py did not start: "), "\(text)")
            #expect(text.contains("invalid int value"), "\(text)")
        }
        do {
            _ = try await startProcess("no_such_sink.py")
            Issue.record("expected an error")
        } catch {
            #expect(String(describing: error).hasPrefix("no_such_sink.py did not start: "))
        }
    }

    // MARK: SMTP sink

    private static let sendMail = """
    import smtplib, sys
    port, sender, recipients = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    message = "From: %s\\r\\nTo: %s\\r\\nSubject: Happy birthday\\r\\n\\r\\nHallo Anna!\\r\\n.dot\\r\\n" % (sender, recipients[0])
    client = smtplib.SMTP("127.0.0.1", port, timeout=10)
    try:
        refused = client.sendmail(sender, recipients, message.encode("utf-8"))
        print("OK", " ".join("%s=%d" % (address, code) for address, (code, _) in sorted(refused.items())))
    except smtplib.SMTPDataError as error:
        print("DATA", error.smtp_code)
    except smtplib.SMTPRecipientsRefused as error:
        print("RCPT", " ".join("%s=%d" % (a, c) for a, (c, _) in sorted(error.recipients.items())))
    client.quit()
    """

    @Test("SMTP sink (plain) records envelope and raw message",
          .enabled(if: ServerGate.allows(.smtp), "needs \(ServerGate.python) with aiosmtpd, and openssl"))
    func smtpPlain() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        defer { sink.stop() }
        #expect(sink.certificatePath == nil)
        #expect(sink.url.absoluteString == "smtp://127.0.0.1:\(port)")

        let output = try await runPython(Self.sendMail, [String(port), "buzz@example.org", "anna@example.org,ben@example.org"])
        #expect(output.stdout == "OK \n", "\(output)")

        let mail = try sink.messages()
        try #require(mail.count == 1)
        #expect(mail[0].mailFrom == "buzz@example.org")
        #expect(mail[0].rcptTos == ["anna@example.org", "ben@example.org"])
        #expect(mail[0].header("subject") == "Happy birthday")
        #expect(mail[0].header("To") == "anna@example.org")
        #expect(mail[0].body == "Hallo Anna!\r\n.dot\r\n")
        #expect(mail[0].data.hasPrefix("From: buzz@example.org\r\n"))
        #expect(mail[0].tls == false)
        #expect(mail[0].auth == nil)
    }

    @Test("SMTP sink rejects a recipient with 550 and fails DATA with 451 when asked",
          .enabled(if: ServerGate.allows(.smtp), "needs \(ServerGate.python) with aiosmtpd, and openssl"))
    func smtpRejectAndFail() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(rejectRecipient: "nobody@example.org", failData: 451, failTimes: 1)
        defer { sink.stop() }
        let arguments = [String(port), "buzz@example.org", "nobody@example.org,anna@example.org"]

        let first = try await runPython(Self.sendMail, arguments)
        #expect(first.stdout == "DATA 451\n", "\(first)")
        #expect(try sink.messages().isEmpty)

        let second = try await runPython(Self.sendMail, arguments)
        #expect(second.stdout == "OK nobody@example.org=550\n", "\(second)")
        let mail = try sink.messages()
        try #require(mail.count == 1)
        #expect(mail[0].rcptTos == ["anna@example.org"])
        // The refused attempt is kept apart: attempts() has it, with the code it got.
        #expect(try sink.attempts().map(\.refused) == [451, nil])

        let onlyRejected = try await runPython(Self.sendMail, [String(port), "buzz@example.org", "nobody@example.org"])
        #expect(onlyRejected.stdout == "RCPT nobody@example.org=550\n", "\(onlyRejected)")
    }

    @Test("STARTTLS sink refuses MAIL before STARTTLS and accepts after it, with AUTH",
          .enabled(if: ServerGate.allows(.smtp), "needs \(ServerGate.python) with aiosmtpd, and openssl"))
    func smtpStartTLS() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(tls: true, auth: ("buzz", "s3cret"))
        defer { sink.stop() }
        let certificate = try #require(sink.certificatePath)
        #expect(FileManager.default.fileExists(atPath: certificate))

        let client = """
        import smtplib, ssl, sys
        port, cafile = int(sys.argv[1]), sys.argv[2]
        client = smtplib.SMTP("127.0.0.1", port, timeout=10)
        client.ehlo()
        print("features", "starttls" in client.esmtp_features, "auth" in client.esmtp_features)
        print("before", client.docmd("MAIL FROM:<buzz@example.org>")[0])
        client.starttls(context=ssl.create_default_context(cafile=cafile))
        client.ehlo()
        print("after-tls", "auth" in client.esmtp_features, client.docmd("MAIL FROM:<buzz@example.org>")[0])
        client.rset()
        try:
            client.login("buzz", "wrong")
        except smtplib.SMTPAuthenticationError as error:
            print("bad-login", error.smtp_code)
        client.login("buzz", "s3cret")
        client.sendmail("buzz@example.org", ["anna@example.org"], b"Subject: secure\\r\\n\\r\\nover TLS\\r\\n")
        print("sent")
        client.quit()
        """
        let output = try await runPython(client, [String(port), certificate])
        #expect(output.stdout == """
            features True False
            before 530
            after-tls True 530
            bad-login 535
            sent

            """, "\(output)")

        let mail = try sink.messages()
        try #require(mail.count == 1)
        #expect(mail[0].tls)
        #expect(mail[0].auth == "buzz")
        #expect(mail[0].header("Subject") == "secure")
    }

    @Test("SMTP sink with AUTH but no TLS requires and accepts AUTH in the clear",
          .enabled(if: ServerGate.allows(.smtp), "needs \(ServerGate.python) with aiosmtpd, and openssl"))
    func smtpAuthWithoutTLS() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(auth: ("buzz", "pw"))
        defer { sink.stop() }
        let client = """
        import smtplib, sys
        client = smtplib.SMTP("127.0.0.1", int(sys.argv[1]), timeout=10)
        client.ehlo()
        print(client.docmd("MAIL FROM:<buzz@example.org>")[0])
        client.login("buzz", "pw")
        client.sendmail("buzz@example.org", ["anna@example.org"], b"Subject: plain auth\\r\\n\\r\\nhi\\r\\n")
        client.quit()
        print("sent")
        """
        let output = try await runPython(client, [String(port)])
        #expect(output.stdout == "530\nsent\n", "\(output)")
        let mail = try await sink.waitForMessages(count: 1)
        #expect(mail.map(\.auth) == ["buzz"])
        #expect(mail.map(\.tls) == [false])
    }
}
