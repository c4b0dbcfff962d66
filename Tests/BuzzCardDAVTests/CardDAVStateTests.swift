import BuzzCardDAV
import Testing
@testable import BuzzSources

/// The carddav source's stored state: what it writes it reads back, odd characters included.
@Suite struct CardDAVStateTests {
    @Test func roundTrips() throws {
        var state = CardDAVState()
        let book = AddressBook(url: "http://h/alice/a b/", href: "/alice/a b/", displayName: "A\tB", supportsSyncCollection: true)
        let other = AddressBook(url: "http://h/alice/w/", href: "/alice/w/", displayName: nil, supportsSyncCollection: false)
        state.books = [book, other]
        state.sync[book.url] = SyncState(syncToken: "http://radicale.org/ns/sync/1", ctag: nil,
                                         etags: ["/alice/a b/1.vcf": "\"e1\"", "/alice/a b/2.vcf": "", "/alice/a b/x\\y.vcf": "\"e\\3\""])
        state.ids[book.url] = ["/alice/a b/1.vcf": "uid\twith\ntab", "/alice/a b/x\\y.vcf": "x\\y"]
        state.sync[other.url] = SyncState(syncToken: nil, ctag: "c1", etags: [:])
        state.ids[other.url] = [:]
        let text = try #require(state.encoded)
        let back = try #require(CardDAVState.decode(text))
        #expect(back.books == state.books)
        #expect(back.sync == state.sync)
        #expect(back.ids == state.ids)
        #expect(back.href(of: "x\\y")?.href == "/alice/a b/x\\y.vcf")
        #expect(CardDAVState.decode("{\"v\":1}") == nil)
        #expect(CardDAVState.decode(CardDAVState.header + "\n{\"b\":[],\"t\":{}}\nstray\tline\t\n") == nil)
    }
}
