@testable import BuzzCardDAV
import CurlSupport
import Testing

/// hrefs resolve as RFC 3986 §5.2 says, whatever a server writes, and a
/// configured URL without a path (`https://contacts.icloud.com`) is a
/// location like any other: no href can trap the process.
@Suite struct LocationTests {
    /// RFC 3986 §5.4.1 and §5.4.2, against its base `http://a/b/c/d;p?q`
    /// (an empty path is written `/` by `string`; `g:h` and `http:g` are not
    /// http URLs with a host, so nil).
    @Test(arguments: [
        ("g:h", nil), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q"), ("g#s", "http://a/b/c/g"), ("g?y#s", "http://a/b/c/g?y"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g"), ("g#s/../x", "http://a/b/c/g"), ("http:g", nil),
    ] as [(String, String?)])
    func resolvesAsRFC3986Says(reference: String, expected: String?) throws {
        let base = try #require(Location("http://a/b/c/d;p?q"))
        #expect(base.resolving(reference)?.string == expected)
    }

    /// The crash of issue 18: a url without a path, and a relative
    /// addressbook-home-set (`book/`) or card href resolved against it.
    @Test func aURLWithoutAPathTakesRelativeHrefs() throws {
        let base = try #require(Location("https://contacts.icloud.com"))
        #expect(base.path == "/")
        #expect(base.string == "https://contacts.icloud.com/")
        #expect(base.resolving("book/")?.string == "https://contacts.icloud.com/book/")
        #expect(base.resolving("card.vcf")?.string == "https://contacts.icloud.com/card.vcf")
        #expect(base.resolving("../../x")?.string == "https://contacts.icloud.com/x")
        #expect(base.resolving("")?.string == "https://contacts.icloud.com/")
        #expect(base.resolving("?a=b")?.string == "https://contacts.icloud.com/?a=b")
        let book = try #require(base.resolving("/123/carddavhome/card/"))
        #expect(book.resolving("x.vcf")?.path == "/123/carddavhome/card/x.vcf")
    }

    /// Escapes and odd characters: one spelling (unreserved escapes decoded,
    /// hex upper-cased), so `%2e%2e` cannot hide a `..`, and nothing a server
    /// writes splits the URL.
    @Test func hrefsHaveOneSpelling() throws {
        let book = try #require(Location("https://dav.example.com/dav/alice/book/"))
        #expect(book.resolving("/x/y z.vcf")?.string == "https://dav.example.com/x/y%20z.vcf")
        #expect(book.resolving("%2e%2e/other/x.vcf")?.path == "/dav/alice/other/x.vcf")
        #expect(book.resolving("/dav/alice/book/%7eann%2fx.vcf")?.path == "/dav/alice/book/~ann%2Fx.vcf")
        #expect(book.resolving("Zoë 100%.vcf")?.path == "/dav/alice/book/Zo%C3%AB%20100%25.vcf")
        #expect(book.resolving("a\"b<c>.vcf")?.path == "/dav/alice/book/a%22b%3Cc%3E.vcf")
        #expect(Location("https://Dav.Example.com:8443/remote.php/dav/")?.host == "dav.example.com")
        #expect(Location("http://[::1]:5232/")?.origin == "http://[::1]:5232")
        for bad in ["ftp://x/", "https://", "https:///path", "https://host:99999/", "https://host:8a/", "https://ho st/",
                    "https://[zz]/", "https://[::1/", "mailto:a@b", "", "a b:c"] {
            #expect(Location(bad) == nil, "\(bad)")
        }
        #expect(Location("https://user:pw@host/")?.hasUserInfo == true)
    }

    /// Members of a book are below its path, on its origin; the book itself
    /// (with or without its slash) is not a member.
    @Test func whatIsInsideABook() throws {
        let book = try #require(Location("https://dav.example.com/dav/book/"))
        #expect(book.contains(try #require(book.resolving("a.vcf"))))
        #expect(!book.contains(try #require(book.resolving("../other/a.vcf"))))
        #expect(!book.contains(try #require(book.resolving("/dav/book-2/a.vcf"))))
        #expect(!book.contains(try #require(book.resolving("https://dav.example.com:8443/dav/book/a.vcf"))))
        #expect(!book.contains(try #require(book.resolving("http://dav.example.com/dav/book/a.vcf"))))
        #expect(!book.contains(book))
        #expect(book.isSameCollection(try #require(book.resolving("/dav/book"))))
        #expect(book.contains(try #require(book.resolving("https://dav.example.com:443/dav/book/a.vcf"))))
    }

    /// Loopback is an address: `127.attacker.example` is not this machine.
    @Test func loopbackIsAnAddress() {
        for host in ["localhost", "127.0.0.1", "127.8.9.10", "::1", "[::1]", "LOCALHOST", "0:0:0:0:0:0:0:1"] {
            #expect(isLoopbackHost(host), "\(host)")
        }
        for host in ["127.attacker.example", "127.0.0.1.nip.io", "localhost.example.com", "128.0.0.1", "::2", "::ffff:8.8.8.8",
                     "1.127.0.0", "127", "example.com", ""] {
            #expect(!isLoopbackHost(host), "\(host)")
        }
    }
}
