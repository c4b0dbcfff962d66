import BirthdayBuzz
@testable import BuzzCardDAV
import Foundation
import Synchronization
import Testing

/// The CardDAV client against a real Radicale (docs/design/sources.md, docs/design/testing.md): no mock of the protocol.
@Suite(.enabled(if: RadicaleGate.allows, RadicaleGate.comment), .timeLimit(.minutes(2)))
struct RadicaleTests {
    /// A server with two books: Contacts (3 cards) and Work (1 card).
    static func seeded(tls: Bool = false) async throws -> RadicaleServer {
        let server = try await RadicaleServer.start(tls: tls)
        try await server.makeBook("contacts", displayName: "Contacts")
        try await server.makeBook("work", displayName: "Work")
        for (uid, name) in [("ann", "Ann Lee"), ("bob", "Bob Ray"), ("cy", "Cy Diaz")] {
            try await server.putCard("contacts", "\(uid).vcf", card(uid, name))
        }
        try await server.putCard("work", "boss.vcf", card("boss", "The Boss"))
        try await server.clearRequests()
        return server
    }

    static func client(_ server: RadicaleServer, url: String? = nil, password: String? = nil, books: [String] = [],
                       caFile: String? = nil, insecure: Bool = false,
                       scrubber: SecretScrubber = SecretScrubber()) throws -> CardDAVClient {
        try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: url ?? server.url + "/", username: server.user,
                                                              books: books, insecure: insecure, caFile: caFile ?? server.caFile,
                                                              timeout: 20),
                          password: password ?? server.password, scrubber: scrubber)
    }

    static func book(_ client: CardDAVClient, _ name: String) async throws -> AddressBook {
        try #require(try await client.discover().first { $0.displayName == name })
    }

    @Test func discoversTheBooksFromTheServerRoot() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let books = try await Self.client(server).discover()
        #expect(books.compactMap(\.displayName).sorted() == ["Contacts", "Work"])
        #expect(books.allSatisfy { $0.supportsSyncCollection && $0.url.hasPrefix(server.url + "/alice/") })
        let asked = try await server.requests().map(\.summary)
        #expect(asked.first == "PROPFIND /.well-known/carddav 301")  // followed to /, then the principal's home
        #expect(asked.contains("PROPFIND /alice/ 207"))

        let work = try await Self.client(server, books: ["Work"]).discover()
        #expect(work.map(\.displayName) == ["Work"])
        let fromBook = try await Self.client(server, url: server.url + "/alice/work/").discover()
        #expect(fromBook.map(\.href) == ["/alice/work/"])
        await #expect {
            try await Self.client(server, books: ["Family"]).discover()
        } throws: { error in
            (error as? CardDAVError)?.kind == .configuration
                && "\(error)" == "phone: no address book \"Family\" on the server (it has: Contacts, Work)"
        }
    }

    @Test func firstSyncThenOnlyWhatChanged() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")

        let reported = Mutex<[Int]>([])
        try await server.clearRequests()
        let first = try await client.sync(book: book, since: nil) { fetched, total in
            reported.withLock { $0.append(fetched * 10 + total) }
        }
        #expect(reported.withLock { $0 } == [33])  // 3 of 3 at the end
        // One request: Radicale serves every card's data in its initial sync-collection answer.
        #expect(try await server.requests().map(\.summary) == ["REPORT sync-collection 207"])
        #expect(first.method == .full(resynced: false))
        #expect(first.changed.map(\.href).sorted() == ["/alice/contacts/ann.vcf", "/alice/contacts/bob.vcf", "/alice/contacts/cy.vcf"])
        #expect(first.changed.allSatisfy { $0.text.contains("BDAY:1990-05-17") && $0.etag != nil })
        #expect(first.listing?.count == 3)
        #expect(first.state.syncToken != nil && first.state.etags.count == 3)

        // Nothing changed: one sync-collection, nothing fetched, the state handed in kept.
        try await server.clearRequests()
        let idle = try await client.sync(book: book, since: first.state)
        #expect(idle.method == .unchanged && idle.changed.isEmpty && idle.removed.isEmpty)
        #expect(idle.state == first.state)
        #expect(try await server.requests().map(\.summary) == ["REPORT sync-collection 207"])

        // Add, change, delete on the server; the next sync fetches the two cards that changed, no more.
        try await server.putCard("contacts", "dee.vcf", card("dee", "Dee Wu"))
        try await server.putCard("contacts", "bob.vcf", card("bob", "Bob Ray", birthday: "1985-01-02"))
        try await server.deleteCard("contacts", "cy.vcf")
        try await server.clearRequests()
        let next = try await client.sync(book: book, since: idle.state)
        #expect(next.method == .incremental)
        #expect(next.changed.map(\.href).sorted() == ["/alice/contacts/bob.vcf", "/alice/contacts/dee.vcf"])
        #expect(next.changed.first { $0.href.hasSuffix("bob.vcf") }?.text.contains("BDAY:1985-01-02") == true)
        #expect(next.removed == ["/alice/contacts/cy.vcf"])
        #expect(next.listing == nil)
        #expect(Set(next.state.etags.keys) == ["/alice/contacts/ann.vcf", "/alice/contacts/bob.vcf", "/alice/contacts/dee.vcf"])
        #expect(try await server.requests().map(\.summary) == ["REPORT sync-collection 207", "REPORT addressbook-multiget 207"])
        #expect(next.requests == 2)
    }

    @Test func hrefsWithSpacesAndNonASCIIAreFetchedAndWrittenBack() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        try await server.putCard("contacts", "J%C3%B6rg%20M%C3%BCller%20%26%20Co.vcf", card("jm", "Jörg Müller"))
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")
        let first = try await client.sync(book: book, since: nil)
        let href = try #require(first.changed.first { $0.text.contains("Jörg") }?.href)
        #expect(href.hasPrefix("/alice/contacts/J"))
        try await client.writeBirthday(href: href, property: "BDAY:1970-01-02")
        let next = try await client.sync(book: book, since: first.state)
        #expect(next.changed.map(\.href) == [href])
        #expect(next.changed.first?.text.contains("BDAY:1970-01-02") == true)
    }

    @Test func anInvalidatedTokenMeansOneFullResyncThatFetchesOnlyWhatChanged() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")
        let first = try await client.sync(book: book, since: nil)
        // Radicale forgets the tokens it handed out with its cache.
        try FileManager.default.removeItem(at: server.storage.appendingPathComponent("alice/contacts/.Radicale.cache/sync-token"))
        try await server.putCard("contacts", "ann.vcf", card("ann", "Ann Lee-Park"))
        try await server.clearRequests()

        let resync = try await client.sync(book: book, since: first.state)
        #expect(resync.method == .full(resynced: true))
        #expect(resync.changed.map(\.href) == ["/alice/contacts/ann.vcf"])
        #expect(resync.removed.isEmpty && resync.listing?.count == 3)
        #expect(try await server.requests().map(\.summary)
            == ["REPORT sync-collection 403", "PROPFIND /alice/contacts/ 207", "REPORT addressbook-multiget 207"])
        // The new token works.
        let after = try await client.sync(book: book, since: resync.state)
        #expect(after.method == .unchanged && after.changed.isEmpty)
    }

    @Test func withoutSyncCollectionTheCTagAndETagsDecide() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let client = try Self.client(server)
        var book = try await Self.book(client, "Contacts")
        book.supportsSyncCollection = false  // as a server without RFC 6578 would say
        let first = try await client.sync(book: book, since: nil)
        #expect(first.state.ctag != nil && first.changed.count == 3)

        try await server.clearRequests()
        let unchanged = try await client.sync(book: book, since: first.state)
        #expect(unchanged.method == .unchanged && unchanged.changed.isEmpty)
        #expect(try await server.requests().map(\.summary) == ["PROPFIND /alice/contacts/ 207"])

        try await server.putCard("contacts", "ann.vcf", card("ann", "Ann Lee", birthday: "1991-05-17"))
        try await server.deleteCard("contacts", "bob.vcf")
        let changed = try await client.sync(book: book, since: unchanged.state)
        #expect(changed.method == .full(resynced: false))
        #expect(changed.changed.map(\.href) == ["/alice/contacts/ann.vcf"])
        #expect(changed.removed == ["/alice/contacts/bob.vcf"])
        #expect(changed.listing == ["/alice/contacts/ann.vcf", "/alice/contacts/cy.vcf"])
    }

    @Test func anEmptiedBookIsAllRemoved() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")
        let first = try await client.sync(book: book, since: nil)
        for file in ["ann.vcf", "bob.vcf", "cy.vcf"] { try await server.deleteCard("contacts", file) }

        let incremental = try await client.sync(book: book, since: first.state)
        #expect(incremental.removed.count == 3 && incremental.changed.isEmpty && incremental.state.etags.isEmpty)
        // A complete listing of an empty book says so (the caller prunes the book).
        let full = try await client.sync(book: book, since: SyncState(etags: first.state.etags))
        #expect(full.listing == [] && full.removed.count == 3)
    }

    @Test func aWrongPasswordIsPermanentAndNamesTheUser() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let scrubber = SecretScrubber()
        let client = try Self.client(server, password: "wrong-password-123", scrubber: scrubber)
        await #expect {
            try await client.discover()
        } throws: { error in
            guard let error = error as? CardDAVError else { return false }
            return error.kind == .loginRefused && !error.isTemporary
                && error.description == "phone: \(server.url) refused the login for alice (401): check username and password"
        }
        #expect(scrubber.scrub("x wrong-password-123 y") == "x *** y")
    }

    @Test func aServerThatIsDownIsTemporary() async throws {
        let server = try await Self.seeded()
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")
        let first = try await client.sync(book: book, since: nil)
        server.stop()
        await #expect {
            try await client.sync(book: book, since: first.state)
        } throws: { error in
            guard let error = error as? CardDAVError else { return false }
            return error.isTemporary && error.description.hasPrefix("phone: cannot reach \(server.url): ")
                && !error.description.contains("\n")
        }
    }

    @Test func overTLSWithTheCAFile() async throws {
        let server = try await Self.seeded(tls: true)
        defer { server.stop() }
        let client = try Self.client(server)
        let book = try await Self.book(client, "Contacts")
        #expect(try await client.sync(book: book, since: nil).changed.count == 3)

        // Without the CA the certificate is refused; insecure = true skips the check.
        let untrusting = try Self.client(server, caFile: "/dev/null")
        await #expect {
            try await untrusting.discover()
        } throws: { error in
            (error as? CardDAVError)?.kind == .permanent && "\(error)".contains("TLS certificate of \(server.url) is not trusted")
        }
        let insecure = try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url + "/",
                                                                             username: server.user, insecure: true),
                                         password: server.password)
        #expect(try await insecure.discover().count == 2)
    }

    @Test func writeBackChangesOnlyTheBirthdayLineOfA2MBPhotoCard() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJDRA", count: 350_000)
        try await server.putCard("contacts", "big.vcf",
                                 card("big", "Big Photo", extra: photo + "\r\nX-CUSTOM;X-P=1:kept as is\r\nNOTE:a note\r\n"))
        let client = try Self.client(server)
        let before = try await client.get(href: "/alice/contacts/big.vcf")
        #expect(before.text.utf8.count > 2_000_000)

        let written = try await client.writeBirthday(href: "/alice/contacts/big.vcf", property: "BDAY:1991-06-18")
        #expect(written.etag != nil && written.etag != before.etag)
        let after = try await client.get(href: "/alice/contacts/big.vcf")
        #expect(after.text == before.text.replacingOccurrences(of: "BDAY:1990-05-17", with: "BDAY:1991-06-18"))
        #expect(after.etag == written.etag)

        // clear-birthday removes the line and nothing else.
        try await client.writeBirthday(href: "/alice/contacts/big.vcf", property: nil)
        let cleared = try await client.get(href: "/alice/contacts/big.vcf")
        #expect(cleared.text == before.text.replacingOccurrences(of: "BDAY:1990-05-17\r\n", with: ""))
    }

    @Test func aCardChangedOnTheServerInBetweenIsFetchedAgainAndWrittenOnce() async throws {
        let server = try await Self.seeded()
        defer { server.stop() }
        let client = try Self.client(server)
        let stale = try await client.get(href: "/alice/contacts/ann.vcf")
        try await server.putCard("contacts", "ann.vcf", card("ann", "Ann Lee-Park", extra: "TEL:+49 30 1234\r\n"))
        try await server.clearRequests()

        let written = try await client.writeBirthday(href: "/alice/contacts/ann.vcf", property: "BDAY:1992-07-08", known: stale)
        let asked = try await server.requests().map(\.summary)
        #expect(asked.count == 3 && asked.prefix(2) == ["PUT /alice/contacts/ann.vcf 412", "GET /alice/contacts/ann.vcf 200"])
        #expect(asked.last?.hasPrefix("PUT /alice/contacts/ann.vcf 20") == true)
        let now = try await client.get(href: "/alice/contacts/ann.vcf")
        #expect(now.text.contains("FN:Ann Lee-Park") && now.text.contains("TEL:+49 30 1234") && now.text.contains("BDAY:1992-07-08"))
        #expect(!now.text.contains("1990-05-17"))
        #expect(written.text == now.text)
    }

}

/// What the client refuses before it sends anything.
@Suite struct CardDAVConfigurationTests {
    @Test func credentialsNeverTravelInClearTextToARemoteHost() {
        #expect {
            try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: "http://dav.example.com/", username: "alice"),
                              password: "secret-pw")
        } throws: { error in
            (error as? CardDAVError)?.kind == .configuration && !"\(error)".contains("secret-pw")
                && "\(error)".contains("plain http")
        }
        #expect(throws: CardDAVError.self) {
            try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: "https://alice:pw@dav.example.com/"), password: nil)
        }
    }
}
