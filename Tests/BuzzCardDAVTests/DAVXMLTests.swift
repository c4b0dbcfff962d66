@testable import BuzzCardDAV
import Testing

/// The WebDAV replies are read with a real XML parser, and bad XML never traps.
@Suite struct DAVXMLTests {
    @Test func readsAMultistatusWithPrefixesOfItsOwn() throws {
        let xml = """
        <?xml version="1.0"?>
        <x:multistatus xmlns:x="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav">
          <x:response><x:href> /a/b.vcf </x:href>
            <x:propstat><x:prop><x:getetag>"e1"</x:getetag><card:address-data>BEGIN:VCARD&#13;
        FN:A &amp; B&#13;
        END:VCARD&#13;
        </card:address-data></x:prop><x:status>HTTP/1.1 200 OK</x:status></x:propstat>
            <x:propstat><x:prop><x:displayname/></x:prop><x:status>HTTP/1.1 404 Not Found</x:status></x:propstat>
          </x:response>
          <x:response><x:href>/a/gone.vcf</x:href><x:status>HTTP/1.1 404 Not Found</x:status></x:response>
          <x:sync-token>tok-2</x:sync-token>
        </x:multistatus>
        """
        let answer = try Multistatus(DAVXML.parse(Array(xml.utf8)))
        #expect(answer.syncToken == "tok-2")
        #expect(answer.responses.count == 2)
        #expect(answer.responses[0].href == "/a/b.vcf")
        #expect(answer.responses[0].text("getetag") == "\"e1\"")
        #expect(answer.responses[0].property("address-data", DAVNamespace.cardDAV)?.text == "BEGIN:VCARD\r\nFN:A & B\r\nEND:VCARD\r\n")
        #expect(answer.responses[0].missing == ["displayname"])
        #expect(answer.responses[1].status == 404)
    }

    @Test(arguments: [
        "", "<", "not xml at all", "<multistatus xmlns=\"DAV:\"><response>", "<a></b>",
        String(repeating: "<a>", count: 5_000) + String(repeating: "</a>", count: 5_000),
        "<error xmlns=\"DAV:\"><valid-sync-token/></error>",
    ])
    func malformedRepliesThrowInsteadOfTrapping(xml: String) {
        #expect(throws: MalformedXML.self) { try Multistatus(DAVXML.parse(Array(xml.utf8))) }
    }

    @Test func externalEntitiesAreNotRead() throws {
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><multistatus xmlns=\"DAV:\"><sync-token>&e;</sync-token></multistatus>"
        let root = try? DAVXML.parse(Array(xml.utf8))
        #expect(root?.child("sync-token")?.text.contains("root:") != true)
    }

    @Test func internalEntitiesAreNotExpanded() {
        // "Billion laughs": ten levels of ten, a 10^9-fold text if expanded.
        var doctype = "<!DOCTYPE multistatus [<!ENTITY l0 \"ha\">"
        for level in 1...9 { doctype += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        let xml = "<?xml version=\"1.0\"?>" + doctype + "]><multistatus xmlns=\"DAV:\"><sync-token>&l9;</sync-token></multistatus>"
        let root = try? DAVXML.parse(Array(xml.utf8))
        #expect((root?.child("sync-token")?.text.utf8.count ?? 0) < 100)
    }

    @Test func theReasonIsTheParsersOnOneLine() {
        do {
            _ = try DAVXML.parse(Array("<a>\n<b></c></a>".utf8))
            Issue.record("parsed")
        } catch {
            #expect(error.reason.contains("mismatch") && !error.reason.contains("\n"), "\(error.reason)")
        }
    }

    @Test func domainsForCredentials() {
        #expect(sameDomain("p42-contacts.icloud.com", "contacts.icloud.com"))
        #expect(sameDomain("dav.example.co.uk", "www.example.co.uk"))
        #expect(!sameDomain("example.co.uk", "other.co.uk"))
        #expect(!sameDomain("evil.com", "icloud.com"))
        #expect(!sameDomain("127.0.0.2", "127.0.0.1"))
    }

    @Test func hrefsResolveAgainstWhereTheyCameFrom() throws {
        let base = try #require(Location("https://Dav.Example.com:8443/remote.php/dav/"))
        #expect(base.host == "dav.example.com")
        #expect(base.resolving("/x/y z.vcf")?.string == "https://dav.example.com:8443/x/y%20z.vcf")
        #expect(base.resolving("addressbooks/")?.string == "https://dav.example.com:8443/remote.php/dav/addressbooks/")
        #expect(base.resolving("https://p1.example.com/a/")?.host == "p1.example.com")
        #expect(Location("ftp://x/") == nil)
    }
}
