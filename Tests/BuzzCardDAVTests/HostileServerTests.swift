import BirthdayBuzz
import BuzzTestKit
@testable import BuzzCardDAV
import CurlSupport
import Foundation
import Testing

/// What a server that misbehaves — by accident or on purpose — can no
/// longer do to us: trap the process with a relative href, fill memory or
/// hold a request with an endless reply, get the password where it must not
/// go, or slip members of another book (or one card twice) into a sync.
@Suite(.enabled(if: RadicaleGate.allows, RadicaleGate.comment), .timeLimit(.minutes(1)))
struct HostileServerTests {
    static func multistatus(_ inner: String) -> String { ServerRulesTests.multistatus(inner) }

    static func response(_ href: String, _ props: String, status: String = "200 OK") -> String {
        "<d:response><d:href>\(href)</d:href><d:propstat><d:prop>\(props)</d:prop><d:status>HTTP/1.1 \(status)</d:status></d:propstat></d:response>"
    }

    static func member(_ href: String, etag: String, card: String? = nil) -> String {
        response(href, "<d:getetag>\"\(etag)\"</d:getetag>" + (card.map { "<c:address-data>\($0)</c:address-data>" } ?? ""))
    }

    static func config(_ url: String, extra: String = "") -> String {
        "[general]\ntimezone = \"UTC\"\nlocale = \"en\"\n[reminders]\nchannels = [\"console\"]\n"
            + "[sources.phone]\ntype = \"carddav\"\nurl = \"\(url)\"\n" + extra
    }

    static func error(_ run: () async throws -> Void) async -> CardDAVError? { await ServerRulesTests.error(run) }

    /// A url without a path, then nothing but relative hrefs — principal,
    /// `addressbook-home-set` (`book/`), the book, its cards — through
    /// `buzz sync` and a write-back of `set-birthday`. Before: SIGILL
    /// ("String index is out of bounds") in the href resolution.
    @Test func relativeHrefsAndAURLWithoutAPath() async throws {
        let book = "/principals/alice/book/contacts/"
        let ann = card("ann", "Ann Lee")
        let server = try await ScriptedServer([
            "/": ["status": 207, "body": Self.multistatus(Self.response("/", "<d:current-user-principal><d:href>principals/alice/</d:href></d:current-user-principal>"))],
            "/principals/alice/": ["status": 207, "body": Self.multistatus(Self.response("./", "<c:addressbook-home-set><d:href>book/</d:href></c:addressbook-home-set>"))],
            "/principals/alice/book/": ["status": 207, "body": Self.multistatus(
                Self.response("", "<d:resourcetype><d:collection/></d:resourcetype>")
                + Self.response("contacts/", "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Contacts</d:displayname>"
                                + "<d:supported-report-set><d:supported-report><d:report><d:sync-collection/></d:report></d:supported-report></d:supported-report-set>"))],
            "\(book)#sync-collection": ["status": 207, "body": Self.multistatus(
                Self.member("ann.vcf", etag: "1", card: ann) + "<d:sync-token>t1</d:sync-token>")],
            "\(book)ann.vcf": ["status": 200, "headers": ["ETag": "\"1\""], "body": ann],
        ])
        defer { server.stop() }
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(server.url, extra: "write_back = true\n"))
        let sync = try await sandbox.run(["sync", "--now", "2027-01-15"])
        let seen = try await server.requests().map { "\($0.method) \($0.path)" }
        #expect(sync.status == 0, "\(sync) \(seen)")
        #expect(sync.stdout == "phone: 1 added, 0 updated, 0 unchanged, 0 removed, 0 skipped\n", "\(sync)")

        // The card's href was relative too: the write-back GETs and PUTs it where it is.
        try await server.replace([
            "\(book)ann.vcf": ["status": 200, "headers": ["ETag": "\"1\""], "body": ann],
        ])
        let set = try await sandbox.run(["set-birthday", "ann", "1991-02-03", "--now", "2027-01-15"])
        #expect(set.status == 0, "\(set)")
        let asked = try await server.requests().filter { $0.path == "\(book)ann.vcf" }.map(\.method)
        #expect(asked.first == "GET" && asked.contains("PUT"), "\(asked)")
    }

    /// An endless reply is cut at the bound, at once — not read until the
    /// timeout (57 GB in 20 s on loopback before).
    @Test func anEndlessReplyIsCutAtTheBound() async throws {
        let server = try await ScriptedServer(["/book/": ["endless": true]])
        defer { server.stop() }
        var configuration = CardDAVConfiguration(name: "phone", url: server.url + "/book/", timeout: 50)
        configuration.replyLimit = 1 << 20
        let client = try CardDAVClient(configuration: configuration, password: nil)
        let book = AddressBook(url: server.url + "/book/", href: "/book/", displayName: nil, supportsSyncCollection: false)
        let started = ContinuousClock.now
        let error = await Self.error { _ = try await client.sync(book: book, since: nil) }
        #expect(error?.kind == .tooLarge, "\(String(describing: error))")
        #expect(error?.description == "phone: PROPFIND \(server.url)/book/ answered more than 1 MiB; the reply was cut there")
        // Not at the 50 s timeout (the suite's own limit is a minute).
        #expect(ContinuousClock.now - started < .seconds(25))
    }

    /// A multiget over the bound is asked again in halves, down to one card;
    /// the one card over it is skipped and reported, and the rest arrive.
    @Test func aMultigetOverTheBoundIsHalvedAndALargeCardSkipped() async throws {
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJD", count: 30_000) + "\r\n"
        let cards = ["a": card("a", "A"), "b": card("b", "B"), "c": card("c", "C", extra: photo), "d": card("d", "D")]
        let listing = cards.keys.sorted().map { Self.member("/book/\($0).vcf", etag: $0) }.joined()
        let server = try await ScriptedServer([
            "/book/": ["status": 207, "body": Self.multistatus(Self.response("/book/", "<d:resourcetype><d:collection/></d:resourcetype>") + listing)],
            "/book/#addressbook-multiget": ["cards": Dictionary(uniqueKeysWithValues: cards.map { ("/book/\($0.key).vcf", $0.value) })],
        ])
        defer { server.stop() }
        var configuration = CardDAVConfiguration(name: "phone", url: server.url + "/book/", timeout: 10)
        configuration.replyLimit = 64 << 10
        let client = try CardDAVClient(configuration: configuration, password: nil)
        let book = AddressBook(url: server.url + "/book/", href: "/book/", displayName: nil, supportsSyncCollection: false)
        let changes = try await client.sync(book: book, since: nil)
        #expect(changes.changed.map(\.href).sorted() == ["/book/a.vcf", "/book/b.vcf", "/book/d.vcf"])
        #expect(changes.skipped == ["phone: the card /book/c.vcf is larger than 64 KiB; skipped (its contact is kept as it was)"])
        #expect(changes.listing?.contains("/book/c.vcf") == true)  // listed: its contact is not pruned
        #expect(changes.state.etags["/book/c.vcf"] == "")  // asked for again at the next full listing
        let multigets = try await server.requests().filter { $0.method == "REPORT" }.map { $0.hrefs.count }
        #expect(multigets == [4, 2, 2, 1, 1], "\(multigets)")
    }

    /// "Loopback" is an address: plain http to `127.attacker.example` with a
    /// password is refused like any remote host.
    @Test func aNameStartingWith127IsNotLoopback() {
        for url in ["http://127.attacker.example/dav/", "http://127.0.0.1.nip.io/", "http://localhost.evil.example/"] {
            #expect(throws: CardDAVError.self, "\(url)") {
                try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: url, username: "alice"), password: "pw")
            }
        }
        for url in ["http://127.0.0.1:5232/", "http://[::1]:5232/", "http://localhost:5232/"] {
            #expect(throws: Never.self, "\(url)") {
                try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: url, username: "alice"), password: "pw")
            }
        }
    }

    /// A url that can never work is a config error (exit 2, where it is), not a
    /// sync that fails every time: not a URL, or plain http with a password to
    /// a host that is not this machine.
    @Test func aURLThatCannotWorkIsAConfigError() async throws {
        let sandbox = try Sandbox()
        for (url, extra, expected) in [
            ("https://contacts icloud.com", "", "sources.phone.url: https://contacts icloud.com is not a usable http:// or https:// URL"),
            ("http://127.evil.example/dav/", "username = \"sam\"\npassword_env = \"PW\"\n",
             "sources.phone.url: http://127.evil.example is plain http to a host that is not loopback"),
        ] {
            try sandbox.writeConfig(Self.config(url, extra: extra))
            let sync = try await sandbox.run(["sync"], environment: ["PW": "x"])
            #expect(sync.status == 2, "\(sync)")
            #expect(sync.stderrLines.count == 1 && sync.stderr.contains(expected) && sync.stderr.contains("config.toml:"), "\(sync)")
        }
    }

    /// A discovery redirect to another port of the same host (DAViCal's
    /// absolute 301) is followed without the password, as curl would: the
    /// credentials go only to the same scheme, host and port.
    @Test func aRedirectToAnotherPortGetsNoPassword() async throws {
        let other = try await ScriptedServer([
            "/dav/": ["status": 401, "body": "login"],
        ])
        defer { other.stop() }
        let server = try await ScriptedServer([
            "/.well-known/carddav": ["status": 301, "headers": ["Location": other.url + "/dav/"]],
            "/same/": ["status": 301, "headers": ["Location": "/dav/"]],
            "/dav/": ["status": 207, "body": Self.multistatus(Self.response("/dav/", "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>"))],
        ])
        defer { server.stop() }
        let client = try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url, username: "alice", timeout: 10),
                                       password: "s3cret-pass")
        let error = await Self.error { _ = try await client.discover() }
        #expect(error?.kind == .loginRefused)
        #expect(error?.description == "phone: \(other.url) asks for a login, but the password goes only to \(server.url) (a redirect or a server's answer led to \(other.url)/dav/); give that URL as url if you trust it")
        #expect(try await other.requests().map(\.auth) == [false])
        // A redirect on the same origin keeps the credentials.
        let same = try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url + "/same/", username: "alice", timeout: 10),
                                     password: "s3cret-pass")
        #expect(try await same.discover().map(\.href) == ["/dav/"])
        #expect(try await server.requests().filter { $0.path == "/dav/" }.map(\.auth) == [true])
    }

    /// A sync answer's members are checked: one outside the book and a
    /// second listing of an href are reported and skipped.
    @Test func membersOutsideTheBookOrListedTwiceAreSkipped() async throws {
        let server = try await ScriptedServer([
            "/book/#sync-collection": ["status": 207, "body": Self.multistatus(
                Self.member("/book/a.vcf", etag: "1", card: card("a", "Ann"))
                + Self.member("/other/x.vcf", etag: "2", card: card("x", "Xavier"))
                + Self.member("https://elsewhere.example/book/y.vcf", etag: "3", card: card("y", "Yan"))
                + Self.member("a.vcf", etag: "4", card: card("a2", "Ann Again"))
                + "<d:sync-token>t1</d:sync-token>")],
        ])
        defer { server.stop() }
        let client = try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url + "/book/", timeout: 10), password: nil)
        let book = AddressBook(url: server.url + "/book/", href: "/book/", displayName: nil, supportsSyncCollection: true)
        let changes = try await client.sync(book: book, since: nil)
        #expect(changes.changed.map(\.href) == ["/book/a.vcf"])
        #expect(changes.changed.first?.text.contains("Ann Again") == false)  // the first of the two
        #expect(changes.listing == ["/book/a.vcf"])
        #expect(changes.skipped == [
            "phone: \(server.url)/book/ named \(server.url)/other/x.vcf, which is outside the address book; skipped",
            "phone: \(server.url)/book/ named https://elsewhere.example/book/y.vcf, which is outside the address book; skipped",
            "phone: \(server.url)/book/ named /book/a.vcf more than once; only the first is read",
        ])
    }

    /// The same href listed twice with two UIDs: the first is read, the
    /// second reported and skipped, so when the card goes the contact goes
    /// (before, the first UID's contact was never pruned).
    @Test func anHrefListedTwiceLeavesNoContactBehind() async throws {
        let book = "/book/"
        let bookItself: [String: any Sendable] = ["status": 207, "body": Self.multistatus(
            Self.response(book, "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>"
                          + "<d:supported-report-set><d:supported-report><d:report><d:sync-collection/></d:report></d:supported-report></d:supported-report-set>"))]
        let server = try await ScriptedServer([
            "\(book)#sync-collection": ["status": 207, "body": Self.multistatus(
                Self.response(book, "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>")
                + Self.member("a.vcf", etag: "1", card: card("u1", "Una One"))
                + Self.member("/book/a.vcf", etag: "1", card: card("u2", "Uwe Two"))
                + Self.member("/elsewhere/x.vcf", etag: "1", card: card("x", "Xavier"))
                + "<d:sync-token>t1</d:sync-token>")],
            book: bookItself,
        ])
        defer { server.stop() }
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(server.url + book))
        let first = try await sandbox.run(["sync", "--now", "2027-01-15"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout == "phone: 1 added, 0 updated, 0 unchanged, 0 removed, 2 skipped\n", "\(first)")
        #expect(first.stderr.contains("named /book/a.vcf more than once; only the first is read"), "\(first)")
        #expect(first.stderr.contains("named \(server.url)/elsewhere/x.vcf, which is outside the address book; skipped"), "\(first)")
        #expect(Set(try await sandbox.listAll(now: "2027-01-15").keys) == ["u1"])

        // The card is deleted on the server: its one contact goes with it.
        try await server.replace([
            "\(book)#sync-collection": ["status": 207, "body": Self.multistatus(
                "<d:response><d:href>/book/a.vcf</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response><d:sync-token>t2</d:sync-token>")],
            book: bookItself,
        ])
        let second = try await sandbox.run(["sync", "--now", "2027-01-15"])
        #expect(second.stdout == "phone: 0 added, 0 updated, 0 unchanged, 1 removed, 0 skipped\n", "\(second)")
        #expect(try await sandbox.listAll(now: "2027-01-15").isEmpty)
    }

    /// A token refusal in any form — not only RFC 6578's `valid-sync-token`
    /// error — gets one full re-sync instead of failing every later sync.
    @Test(arguments: [400, 403, 409, 412])
    func anyTokenRefusalMeansOneFullResync(status: Int) async throws {
        let server = try await ScriptedServer([
            "/book/#sync-collection": ["status": status, "body": "no such token"],
            "/book/": ["status": 207, "body": Self.multistatus(
                Self.response("/book/", "<d:sync-token>t2</d:sync-token>") + Self.member("/book/a.vcf", etag: "1"))],
            "/book/#addressbook-multiget": ["cards": ["/book/a.vcf": card("a", "Ann")]],
        ])
        defer { server.stop() }
        let client = try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url + "/book/", timeout: 10), password: nil)
        let book = AddressBook(url: server.url + "/book/", href: "/book/", displayName: nil, supportsSyncCollection: true)
        let changes = try await client.sync(book: book, since: SyncState(syncToken: "t1", etags: ["/book/a.vcf": "\"0\""]))
        #expect(changes.method == .full(resynced: true))
        #expect(changes.changed.map(\.href) == ["/book/a.vcf"])
        #expect(changes.state.syncToken == "t2")
    }
}
