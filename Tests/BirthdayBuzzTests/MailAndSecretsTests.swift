import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct MailAndSecretsTests {
    static let from = Mailbox("BirthdayBuzz <buzz@example.org>")!

    static func headers(_ bytes: [UInt8]) -> [(String, String)] {
        let text = String(decoding: bytes, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n")[0]
        let unfolded = head.replacingOccurrences(of: "\r\n ", with: " ")
        return unfolded.components(separatedBy: "\r\n").map { line in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }

    @Test(arguments: ["a@b.c", "first.last+tag@example.co.uk", "o'brien@example.ie", "x@localhost"])
    func plainAddresses(_ text: String) {
        #expect(Mailbox.isPlainAddress(text))
    }

    @Test(arguments: ["a@b.c?attach=~/.ssh/id_rsa", "a b@c.d", "<a@b.c>", "a@b", "@b.c", "a@b.c\r\nBcc: x@y.z", "a&b@c.d", ""])
    func refusedAddresses(_ text: String) {
        #expect(!Mailbox.isPlainAddress(text))
    }

    @Test func mailboxParsing() throws {
        let named = try #require(Mailbox("\"Jürgen Weiß\" <j@example.de>"))
        #expect(named.name == "Jürgen Weiß")
        #expect(named.address == "j@example.de")
        #expect(Mailbox("Name <bad address@x.y>") == nil)
    }

    @Test func composeHeadersAndBody() throws {
        let to = try #require(Mailbox(name: "Jürgen", address: "j@example.de"))
        let bytes = MailMessage.compose(from: Self.from, to: to, subject: "Geburtstag von Jürgen",
                                        body: "Morgen wird Jürgen 40.\nGratuliere!", eventID: "urn:uuid:1/1/2027-03-15",
                                        date: Date(timeIntervalSince1970: 1_795_510_800))
        let headers = Self.headers(bytes)
        let names = headers.map(\.0)
        #expect(names == ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type",
                          "Content-Transfer-Encoding"])
        #expect(headers[0].1 == "Tue, 24 Nov 2026 09:00:00 +0000")
        #expect(headers[3].1 == "=?UTF-8?B?" + Data("Geburtstag von Jürgen".utf8).base64EncodedString() + "?=")
        #expect(headers[2].1.hasSuffix("<j@example.de>"))
        // The same event always gets the same Message-ID.
        let again = MailMessage.compose(from: Self.from, to: to, subject: "x", body: "y", eventID: "urn:uuid:1/1/2027-03-15",
                                        date: Date())
        #expect(Self.headers(again)[4].1 == headers[4].1)
        #expect(headers[4].1 == "<06e74d5f4ff0b1424feb8a69a428fa56.buzz@example.org>")
        let text = String(decoding: bytes, as: UTF8.self)
        let body = text.components(separatedBy: "\r\n\r\n")[1].replacingOccurrences(of: "\r\n", with: "")
        // RFC 2045 §6.8: the text's canonical form, CRLF line breaks, is what is encoded.
        #expect(String(data: Data(base64Encoded: body)!, encoding: .utf8) == "Morgen wird Jürgen 40.\r\nGratuliere!")
    }

    @Test func headerInjectionIsImpossible() throws {
        let to = try #require(Mailbox(name: "Eve\r\nBcc: victim@example.org", address: "eve@example.org"))
        let bytes = MailMessage.compose(from: Self.from, to: to, subject: "Hi\r\nBcc: other@example.org\nX: y",
                                        body: "body", eventID: "e", date: Date())
        let headers = Self.headers(bytes)
        #expect(!headers.contains { $0.0.lowercased() == "bcc" || $0.0 == "X" })
        #expect(headers.count == 8)
    }

    @Test func longSubjectsFoldIntoEncodedWords() {
        let subject = String(repeating: "Geburtstagsgrüße ", count: 8)
        let encoded = MailMessage.encodeUnstructured(MailMessage.headerSafeValue(subject), room: 78 - "Subject: ".count)
        for word in encoded {
            #expect(word.count <= 75)
            #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="))
        }
    }

    @Test func scrubberHidesSecrets() {
        let scrubber = SecretScrubber()
        scrubber.register("s3cr3t-token")
        scrubber.register("abc")  // too short to be registered
        #expect(scrubber.scrub("error at https://h/x?token=s3cr3t-token: abc") == "error at https://h/x?token=***: abc")
    }

    /// A password with spaces goes whole: its words alone are ordinary text ("check the password").
    @Test func scrubberHidesAPasswordWithSpacesWhole() {
        let scrubber = SecretScrubber()
        scrubber.register("correct horse battery-staple")
        #expect(scrubber.scrub("login as correct horse battery-staple failed") == "login as *** failed")
        #expect(scrubber.scrub("the battery-staple horse is correct") == "the battery-staple horse is correct")
    }

    /// A channel's view scrubs only its own values; the unscoped scrubber hides all.
    @Test func scrubberScopesSecretsToTheirChannel() {
        let scrubber = SecretScrubber()
        scrubber.scoped(to: "mail").register("server")
        scrubber.scoped(to: "hook").register("hook-token-1")
        let error = "hook: Couldn't connect to server (hook-token-1)"
        #expect(scrubber.scoped(to: "hook").scrub(error) == "hook: Couldn't connect to server (***)")
        #expect(scrubber.scrub(error, channel: "hook") == "hook: Couldn't connect to server (***)")
        #expect(scrubber.scrub(error) == "hook: Couldn't connect to *** (***)")
    }

    /// `Authorization: Basic …` from URL credentials: the base64, the pair and the password all go.
    @Test func scrubberHidesBasicCredentials() {
        let scrubber = SecretScrubber()
        scrubber.registerBasicCredentials(user: "bob", password: "pa ss-word")
        let base64 = Data("bob:pa ss-word".utf8).base64EncodedString()
        #expect(scrubber.scrub("Authorization: Basic \(base64) for bob:pa ss-word") == "Authorization: Basic *** for ***")
        let header = SecretScrubber()
        header.register("Basic " + base64)
        #expect(header.scrub("got \(base64), pa ss-word") == "got ***, ***")
    }

    @Test func displayURLKeepsSchemeAndHost() {
        #expect(SecretScrubber.displayURL("https://hooks.slack.com/services/T0/B0/XXXX") == "https://hooks.slack.com")
        #expect(SecretScrubber.displayURL("http://user:pw@127.0.0.1:8080/x?token=1") == "http://127.0.0.1:8080")
    }

    @Test func genericPayload() throws {
        let message = Message(kind: .ask, id: "c/ask/1", title: "T \"q\"", body: "B", contact: .init(id: "c", name: "O'Brien"),
                              locale: "de", recipient: .phone("+4917012345"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(GenericPayload.json(message).utf8)) as? [String: Any])
        #expect(object["event"] as? String == "birthday.ask")
        #expect(object["title"] as? String == "T \"q\"")
        #expect((object["contact"] as? [String: Any])?["name"] as? String == "O'Brien")
        #expect(object["to"] as? String == "+4917012345")
        #expect(object["locale"] as? String == "de")
    }
}
