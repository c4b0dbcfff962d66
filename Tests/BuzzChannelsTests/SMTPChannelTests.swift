import BirthdayBuzz
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels
import BuzzProcess
import CCurl
@testable import CurlSupport

@Suite struct SMTPChannelTests {
    static func channel(port: Int, security: SMTPChannel.Security = .none, to: [String] = ["me@example.org"],
                        username: String? = nil, password: ChannelConfig.SecretSource? = nil, caFile: String? = nil,
                        environment: [String: String] = [:], scrubber: SecretScrubber = SecretScrubber(),
                        host: String = "127.0.0.1") throws -> SMTPChannel {
        let options = SMTPChannel.Options(host: host, port: port, security: security, username: username, password: password,
                                         from: "BirthdayBuzz <buzz@example.org>", to: to, caFile: caFile)
        return try SMTPChannel(name: "mail", options: options, timeout: 10,
                               context: ChannelContext(environment: environment, configDirectory: nil, scrubber: scrubber))
    }

    static let reminder = Message(kind: .reminder, id: "urn:uuid:7/1/2027-03-15", title: "Geburtstag von Jürgen",
                                  body: "Jürgen wird morgen 40.", contact: .init(id: "urn:uuid:7", name: "Jürgen"), locale: "de")

    /// RFC 2047-decodes a header with Python's email package (an independent decoder).
    static func decodeHeader(_ value: String) async throws -> String {
        let output = try await runPython("""
            import sys
            from email.header import decode_header, make_header
            print(str(make_header(decode_header(sys.argv[1]))), end="")
            """, [value])
        return output.stdout
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func plainLoopbackDelivery() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let mail = try Self.channel(port: port, to: ["me@example.org", "you@example.org"])
        try await mail.deliver(Self.reminder)
        // The batch reuses one connection (the second mail at once: checking the
        // first below starts Python, which a loaded machine may take longer to
        // do than the connection is kept idle).
        var second = Self.reminder
        second.id = "urn:uuid:7/0/2027-03-15"
        try await mail.deliver(second)
        let both = try await sink.waitForMessages(count: 2)
        #expect(Set(both.compactMap(\.peer)).count == 1)
        let messages = Array(both.prefix(1))
        #expect(messages.map(\.rcptTos) == [["me@example.org", "you@example.org"]])  // one mail, one transaction
        let first = try #require(messages.first)
        #expect(first.mailFrom == "buzz@example.org")
        #expect(try await Self.decodeHeader(try #require(first.header("Subject"))) == "Geburtstag von Jürgen")
        #expect(first.header("Date") != nil)
        // Pinned: SHA-256 of the event id (first 32 hex digits) @ the sender's domain; a change would resend.
        #expect(first.header("Message-ID") == "<8101e679644287db24ccc988f0fc5a5f.buzz@example.org>")
        #expect(first.header("Bcc") == nil)
        #expect(first.header("To") == "me@example.org, you@example.org")
        let body = String(data: Data(base64Encoded: first.body.replacingOccurrences(of: "\r\n", with: ""))!, encoding: .utf8)
        #expect(body == "Jürgen wird morgen 40.")
        await mail.shutdown()
    }

    /// Parses a received message with Python's email package (an independent MIME
    /// decoder): the header named, the transfer encoding, the decoded body.
    static func parse(_ mail: ReceivedMail, header: String) async throws -> (header: String, encoding: String, body: String) {
        let output = try await runPython("""
            import sys, json, email, email.policy
            message = email.message_from_string(sys.argv[1], policy=email.policy.compat32)
            body = message.get_payload(decode=True).decode("utf-8")
            print(json.dumps([message.get(sys.argv[2]) or "", message["Content-Transfer-Encoding"] or "", body]), end="")
            """, [mail.data, header])
        let parts = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String])
        return (parts[0], parts[1], parts[2])
    }

    /// On the wire (checked against Dovecot too): a non-ASCII body is base64 of
    /// CRLF text, a long ASCII line goes quoted-printable (never a >998-octet 7bit
    /// line), a reminder says Auto-Submitted, and EHLO names the machine fully.
    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func mailOnTheWire() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let options = SMTPChannel.Options(host: "127.0.0.1", port: port, security: .none, username: nil, password: nil,
                                         from: "BirthdayBuzz <buzz@example.org>", to: ["me@example.org"], caFile: nil)
        let mail = try SMTPChannel(name: "mail", options: options, timeout: 10,
                                   context: ChannelContext(environment: [:], configDirectory: nil, scrubber: SecretScrubber()),
                                   ehloName: "buzz-host.example.net")
        var umlauts = Self.reminder
        umlauts.body = "Jürgen wird morgen 40.\nGratuliere!"
        try await mail.deliver(umlauts)
        let long = String(repeating: "All work and no play makes Jack a dull boy = ", count: 40)  // 1,800 octets
        let ask = Message(kind: .ask, id: "c/ask/1", title: "When is your birthday?", body: long + "\nshort line  ",
                          contact: .init(id: "c", name: "Jack"), locale: "en")
        try await mail.deliver(ask)
        let messages = try await sink.waitForMessages(count: 2)
        await mail.shutdown()

        let first = try await Self.parse(messages[0], header: "Auto-Submitted")
        #expect(first.encoding == "base64")
        #expect(first.body == "Jürgen wird morgen 40.\r\nGratuliere!")
        #expect(first.header == "auto-generated")
        #expect(messages[0].ehlo == "buzz-host.example.net")

        let second = try await Self.parse(messages[1], header: "Auto-Submitted")
        #expect(second.encoding == "quoted-printable")
        #expect(second.body.replacingOccurrences(of: "\r\n", with: "\n") == long + "\nshort line  \n")  // the last line break ends the message
        #expect(second.header == "")  // an ask is the user's own doing
        let longest = messages[1].data.components(separatedBy: "\r\n").map(\.utf8.count).max() ?? 0
        #expect(longest <= 78, "a line of \(longest) octets on the wire")
    }

    /// The EHLO name: the host name when fully qualified, else its canonical name, else none.
    @Test func ehloNameIsFullyQualifiedWhenKnown() {
        #expect(SMTPChannel.fullyQualifiedName(hostname: "box.example.org", canonicalName: { _ in nil }) == "box.example.org")
        #expect(SMTPChannel.fullyQualifiedName(hostname: "box", canonicalName: { _ in "box.lan.example.org." }) == "box.lan.example.org")
        #expect(SMTPChannel.fullyQualifiedName(hostname: "box", canonicalName: { _ in "box" }) == nil)
        #expect(SMTPChannel.fullyQualifiedName(hostname: "box", canonicalName: { _ in "localhost.localdomain" }) == nil)
        #expect(SMTPChannel.fullyQualifiedName(hostname: "box", canonicalName: { _ in "127.0.0.1" }) == nil)
        #expect(SMTPChannel.fullyQualifiedName(hostname: "", canonicalName: { _ in "x.example.org" }) == nil)
    }

    /// A recipient busy for now (450 to its RCPT) stops the whole transaction
    /// before DATA: nobody gets a copy, and the retry gives each address exactly one.
    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func aDeferredRecipientNeverDuplicatesTheOthersCopy() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(deferRecipient: "you@example.org")
        let mail = try Self.channel(port: port, to: ["me@example.org", "you@example.org"])
        let error = await #expect(throws: DeliveryError.self) { try await mail.deliver(Self.reminder) }
        #expect(error?.isTemporary == true, "\(String(describing: error))")
        #expect(try sink.messages().isEmpty)
        try await mail.deliver(Self.reminder)
        // The sink logs a message before it answers DATA, and `deliver` returns after
        // that answer: what the log holds now is all the retry sent (no wait needed).
        let messages = try sink.messages()
        #expect(messages.count == 1)
        #expect(messages.first?.rcptTos == ["me@example.org", "you@example.org"])
        await mail.shutdown()
    }

    @Test func aLoginRefusedForNowIsTemporary() {
        let denied = CurlError(CURLE_LOGIN_DENIED, buffer: "Authentication failed: 454")
        let later = SMTPChannel.classify(SMTPError(curl: denied, reply: 454), place: "mail: smtp.example.org:587",
                                         user: "me", detail: "", recipient: nil)
        #expect(later.isTemporary)
        #expect(later.message == "mail: smtp.example.org:587: login for me refused for now (server replied 454)")
        let wrong = SMTPChannel.classify(SMTPError(curl: denied, reply: 535), place: "mail: smtp.example.org:587",
                                         user: "me", detail: "", recipient: nil)
        #expect(!wrong.isTemporary)
        #expect(wrong.message.hasSuffix("login refused for me: check the password"))
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd and openssl"), .timeLimit(.minutes(1)))
    func startTLSWithAuth() async throws {
        let sink = SMTPSink()
        let port = try await sink.start(tls: true, auth: ("buzz", "pa55-w0rd!"))
        let certificate = try #require(sink.certificatePath)
        let scrubber = SecretScrubber()
        let mail = try Self.channel(port: port, security: .starttls, username: "buzz", password: .environment("SMTP_PW"),
                                    caFile: certificate, environment: ["SMTP_PW": "pa55-w0rd!"], scrubber: scrubber)
        try await mail.validate()
        try await mail.deliver(Self.reminder)
        let messages = try await sink.waitForMessages(count: 1)
        #expect(messages.first?.tls == true)
        #expect(messages.first?.auth == "buzz")
        // A wrong password is permanent, and the password never shows.
        let wrong = try Self.channel(port: port, security: .starttls, username: "buzz", password: .environment("SMTP_PW"),
                                     caFile: certificate, environment: ["SMTP_PW": "wrong-password-1"], scrubber: scrubber)
        do {
            try await wrong.deliver(Self.reminder)
            Issue.record("a wrong password delivered")
        } catch let error as DeliveryError {
            #expect(!error.isTemporary)
            #expect(!error.message.contains("wrong-password-1"))
        }
        // Without the CA the self-signed certificate is refused.
        let untrusted = try Self.channel(port: port, security: .starttls, username: "buzz", password: .environment("SMTP_PW"),
                                         environment: ["SMTP_PW": "pa55-w0rd!"])
        await #expect(throws: DeliveryError.self) { try await untrusted.deliver(Self.reminder) }
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func startTLSRequiredButNotOffered() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let mail = try Self.channel(port: port, security: .starttls)
        do {
            try await mail.deliver(Self.reminder)
            Issue.record("sent without TLS")
        } catch let error as DeliveryError {
            #expect(!error.isTemporary)
            #expect(error.message.contains("STARTTLS"))
        }
        #expect(try sink.messages().isEmpty)
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func hostileContactNameCannotInjectHeaders() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let mail = try Self.channel(port: port)
        let ask = Message(kind: .ask, id: "c/ask/1", title: "Hi\r\nBcc: x@y.example", body: "When is your birthday?",
                          contact: .init(id: "c", name: "Mallory\r\nBcc: x@y.example"), recipient: .email("mallory@example.org"))
        try await mail.deliver(ask)
        let messages = try await sink.waitForMessages(count: 1)
        let received = try #require(messages.first)
        #expect(received.rcptTos == ["mallory@example.org"])
        #expect(received.header("Bcc") == nil)
        #expect(received.headerFields.filter { $0.name.lowercased() == "to" }.count == 1)
        // An address that is not a plain addr-spec is refused before anything is sent.
        await #expect(throws: DeliveryError.self) {
            try await mail.deliver(Message(kind: .ask, id: "c/ask/2", title: "t", body: "b",
                                           recipient: .email("a@b.c?attach=~/.ssh/id_rsa")))
        }
    }

    /// A long name (issue 18: 984 characters made a Subject of over 998
    /// octets, and the server answered "500 Line too long" for good) and the
    /// longest a card can hold: every header is folded, the mail is taken, and
    /// the Subject and To decode to what was sent.
    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func longNamesAreFoldedAndTheMailIsTaken() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let mail = try Self.channel(port: port)
        let long = String(repeating: "A", count: 984)
        let longest = String(repeating: "Jürgen ", count: (VCardReader().maxLineBytes - 3) / 8)
            .trimmingCharacters(in: .whitespaces)
        for (index, name) in [long, longest].enumerated() {
            let reminder = Message(kind: .reminder, id: "urn:uuid:9/\(index)/2027-03-15", title: "Birthday of \(name)",
                                   body: "Tomorrow.", contact: .init(id: "urn:uuid:9", name: name), locale: "en")
            try await mail.deliver(reminder)
        }
        // An ask goes to the contact, the name in To as well as in the Subject.
        let ask = Message(kind: .ask, id: "c/ask/1", title: "When is your birthday, \(long)?", body: "Tell me.",
                          contact: .init(id: "c", name: long), recipient: .email("c@example.org"))
        try await mail.deliver(ask)
        let messages = try await sink.waitForMessages(count: 3)
        await mail.shutdown()
        for message in messages {
            let head = message.data.components(separatedBy: "\r\n\r\n")[0]
            let widest = head.components(separatedBy: "\r\n").map(\.utf8.count).max() ?? 0
            #expect(widest <= 78, "a header line of \(widest) octets")
        }
        // Python's email package (an independent decoder) reads the 984-character ones back.
        #expect(try await Self.decodeHeader(try #require(messages[0].header("Subject"))) == "Birthday of \(long)")
        #expect(try await Self.decodeHeader(try #require(messages[2].header("Subject"))) == "When is your birthday, \(long)?")
        #expect(try await Self.decodeHeader(try #require(messages[2].header("To"))) == "\(long) <c@example.org>")
        #expect(messages[2].rcptTos == ["c@example.org"])
        // The longest (over a megabyte of header) is too big for an argument: its words are decoded here.
        let subject = try #require(messages[1].header("Subject"))
        let words = subject.split(separator: " ")
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.count <= 75 })
        let bytes = try words.flatMap { word in try #require(Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))) }
        #expect(bytes == Array("Birthday of \(longest)".utf8))
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func refusalsAndTemporaryFailures() async throws {
        let refused = SMTPSink()
        let port = try await refused.start(rejectRecipient: "nobody@example.org")
        let mail = try Self.channel(port: port, to: ["nobody@example.org"])
        do {
            try await mail.deliver(Self.reminder)
            Issue.record("a refused recipient delivered")
        } catch let error as DeliveryError {
            #expect(!error.isTemporary, "\(error)")
            // The server's own words, as msmtp shows them, not libcurl's "RCPT failed: 550".
            #expect(error.message.contains("server replied 550 5.1.1 <nobody@example.org>: Recipient address rejected"),
                    "\(error)")
        }
        let busy = SMTPSink()
        let busyPort = try await busy.start(failData: 451)
        let later = try Self.channel(port: busyPort)
        do {
            try await later.deliver(Self.reminder)
            Issue.record("a 451 delivered")
        } catch let error as DeliveryError {
            #expect(error.isTemporary, "\(error)")
            #expect(error.message.contains("server replied 451 4.3.0 Temporary failure (test sink)"), "\(error)")
        }
    }

    @Test func passwordSources() throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-pw-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o700)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "file-secret-1\nsecond line\n".write(toFile: directory + "/pw", atomically: true, encoding: .utf8)
        let context = ChannelContext(environment: ["PW": "env-secret-1", "HOME": directory], configDirectory: directory,
                                     scrubber: SecretScrubber())
        func readSecret(_ secret: ChannelConfig.SecretSource, channel: String, context: ChannelContext) throws -> String {
            try SecretReader.read(secret, for: channel, environment: context.environment,
                                  configDirectory: context.configDirectory, resolvePath: context.resolvePath)
        }
        #expect(try readSecret(.environment("PW"), channel: "mail", context: context) == "env-secret-1")
        #expect(try readSecret(.file("pw"), channel: "mail", context: context) == "file-secret-1")
        #expect(try readSecret(.file("~/pw"), channel: "mail", context: context) == "file-secret-1")
        // argv, no shell: the `;` reaches echo as text.
        #expect(try readSecret(.command(["/bin/echo", "cmd-secret-1;", "x"]), channel: "mail", context: context)
                == "cmd-secret-1; x")
        #expect(throws: SecretError.self) {
            try readSecret(.command(["/bin/false"]), channel: "mail", context: context)
        }
        // Password stores reach their keys: the session bus and gpg variables pass, nothing else.
        let store = ChannelContext(environment: ["HOME": directory, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus",
                                                 "PASSWORD_STORE_DIR": "/srv/pass", "AWS_SECRET": "nope"],
                                   configDirectory: directory, scrubber: SecretScrubber())
        let shown = try readSecret(.command(["/bin/sh", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS|$PASSWORD_STORE_DIR|$AWS_SECRET\""]),
                                   channel: "mail", context: store)
        #expect(shown == "unix:path=/run/user/1/bus|/srv/pass|")
        // A config folder others can write is refused before the command runs.
        chmod(directory, 0o777)
        #expect(throws: SecretError.self) {
            try readSecret(.command(["/bin/echo", "x"]), channel: "mail", context: context)
        }
        chmod(directory, 0o700)
    }

    @Test func plainTextOnlyToLoopback() {
        #expect(throws: ChannelSetupError.self) { try Self.channel(port: 25, security: .none, host: "mail.example.org") }
        #expect(throws: ChannelSetupError.self) { try Self.channel(port: 25, password: .environment("UNSET_PW")) }
    }

    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"), .timeLimit(.minutes(1)))
    func conformance() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let mail = try Self.channel(port: port)
        try await ChannelConformance.run(mail, recipient: .email("sam@example.org")) {
            var titles: [String] = []
            for message in try sink.messages() {
                titles.append(try await Self.decodeHeader(message.header("Subject") ?? ""))
            }
            return titles
        }
    }
}
