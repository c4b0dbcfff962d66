import BirthdayBuzz
@testable import BuzzCardDAV
import Foundation
import Testing

/// What the client does when a server misbehaves: redirects it must not
/// follow, hosts it must not send the password to, XML it cannot read, 5xx.
@Suite(.enabled(if: RadicaleGate.allows, RadicaleGate.comment), .timeLimit(.minutes(1)))
struct ServerRulesTests {
    static func client(_ server: ScriptedServer, path: String = "/") throws -> CardDAVClient {
        try CardDAVClient(configuration: CardDAVConfiguration(name: "phone", url: server.url + path, username: "alice", timeout: 10),
                          password: "s3cret-pass")
    }

    static func multistatus(_ inner: String) -> String {
        "<?xml version=\"1.0\"?><d:multistatus xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:carddav\">\(inner)</d:multistatus>"
    }

    static func error(_ run: () async throws -> Void) async -> CardDAVError? {
        do {
            try await run()
            return nil
        } catch {
            return error as? CardDAVError
        }
    }

    @Test func discoveryFollowsAtMostFiveRedirectsAndNeverToAnotherDomain() async throws {
        var script: [String: [String: any Sendable]] = [:]
        for hop in 0..<7 { script["/loop\(hop)/"] = ["status": 301, "headers": ["Location": "/loop\(hop + 1)/"]] }
        script["/away/"] = ["status": 302, "headers": ["Location": "https://evil.example.org/dav/"]]
        let server = try await ScriptedServer(script)
        defer { server.stop() }
        let loop = await Self.error { _ = try await Self.client(server, path: "/loop0/").discover() }
        #expect(loop?.description == "phone: more than 5 redirects from \(server.url)/loop0/")
        let away = await Self.error { _ = try await Self.client(server, path: "/away/").discover() }
        #expect(away?.description == "phone: \(server.url)/away/ redirects to another domain (https://evil.example.org); not followed")
        #expect(away?.kind == .permanent)
    }

    @Test func aPrincipalOnAnotherDomainGetsNoPassword() async throws {
        let server = try await ScriptedServer([
            "/dav/": ["status": 207, "body": Self.multistatus(
                "<d:response><d:href>/dav/</d:href><d:propstat><d:prop><d:current-user-principal><d:href>http://elsewhere.example.net/alice/</d:href></d:current-user-principal></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")],
        ])
        defer { server.stop() }
        let error = await Self.error { _ = try await Self.client(server, path: "/dav/").discover() }
        #expect(error?.description == "phone: \(server.url)/dav/ points to http://elsewhere.example.net, outside 127.0.0.1's domain; not followed")
    }

    /// The first sync asks sync-collection for the cards' data too; a server
    /// that names a card without it has that card fetched by multiget, and
    /// one that refuses the request has its book listed instead.
    @Test func aFirstSyncTakesTheCardsFromSyncCollectionAndFetchesWhatItLeftOut() async throws {
        func card(_ uid: String) -> String { "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(uid)\r\nEND:VCARD\r\n" }
        func data(_ href: String, _ uid: String) -> String {
            "<d:response><d:href>\(href)</d:href><d:propstat><d:prop><d:getetag>\"\(uid)\"</d:getetag><c:address-data>\(card(uid))</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
        }
        let server = try await ScriptedServer([
            "/book/#sync-collection": ["status": 207, "body": Self.multistatus(
                data("/book/a.vcf", "a")
                + "<d:response><d:href>/book/b.vcf</d:href><d:propstat><d:prop><d:getetag>\"b\"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
                + "<d:propstat><d:prop><c:address-data/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>"
                + "<d:sync-token>t1</d:sync-token>")],
            "/book/#addressbook-multiget": ["status": 207, "body": Self.multistatus(data("/book/b.vcf", "b"))],
            "/refusing/#sync-collection": ["status": 403, "body": "no"],
            "/refusing/": ["status": 207, "body": Self.multistatus(
                "<d:response><d:href>/refusing/</d:href><d:propstat><d:prop><d:sync-token>t9</d:sync-token></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")],
        ])
        defer { server.stop() }
        let client = try Self.client(server)
        let book = AddressBook(url: server.url + "/book/", href: "/book/", displayName: nil, supportsSyncCollection: true)
        let first = try await client.sync(book: book, since: nil)
        #expect(first.method == .full(resynced: false))
        #expect(first.changed.map(\.href).sorted() == ["/book/a.vcf", "/book/b.vcf"])
        #expect(first.changed.allSatisfy { $0.text.contains("END:VCARD") })
        #expect(first.listing == ["/book/a.vcf", "/book/b.vcf"])
        #expect(first.state == SyncState(syncToken: "t1", etags: ["/book/a.vcf": "\"a\"", "/book/b.vcf": "\"b\""]))
        #expect(first.requests == 2)

        let refusing = AddressBook(url: server.url + "/refusing/", href: "/refusing/", displayName: nil, supportsSyncCollection: true)
        let listed = try await client.sync(book: refusing, since: nil)
        #expect(listed.changed.isEmpty && listed.listing == [] && listed.state.syncToken == "t9")
        #expect(listed.requests == 2)  // the refused REPORT, then the PROPFIND listing
    }

    @Test func syncingFollowsNoRedirectAndBadXMLOr5xxNeverTrap() async throws {
        let server = try await ScriptedServer([
            "/moved/": ["status": 301, "headers": ["Location": "/new/"]],
            "/garbage/": ["status": 207, "body": "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>/x"],
            "/busy/": ["status": 503, "body": "down for maintenance"],
        ])
        defer { server.stop() }
        let client = try Self.client(server)
        func book(_ path: String) -> AddressBook {
            AddressBook(url: server.url + path, href: path, displayName: nil, supportsSyncCollection: true)
        }
        let moved = await Self.error { _ = try await client.sync(book: book("/moved/"), since: nil) }
        #expect(moved?.kind == .permanent && moved?.description.contains("answered 301 to PROPFIND") == true)
        let garbage = await Self.error { _ = try await client.sync(book: book("/garbage/"), since: nil) }
        #expect(garbage?.kind == .permanent && garbage?.description.contains("XML we cannot read") == true)
        let busy = await Self.error { _ = try await client.sync(book: book("/busy/"), since: SyncState(syncToken: "t1")) }
        #expect(busy?.isTemporary == true)
        #expect(busy?.description == "phone: \(server.url) answered 503 to REPORT /busy/ (tried again at the next sync)")
    }
}
