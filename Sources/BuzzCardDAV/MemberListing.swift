/// The members an address book's multistatus answer names, each href
/// resolved against the URL the request went to (RFC 3986) and checked: a
/// response for a place outside the book, or for an href the answer already
/// named, is reported and skipped rather than taken on trust.
///
/// A server that lists `/other-book/x.vcf` as a member must not make us hold
/// (or later prune) a contact of another book, and one that names the same
/// card twice with two UIDs must not leave a contact no later sync removes.
struct MemberListing {
    /// Members by canonical path, in the answer's order, the first of each href.
    var members: [(href: String, item: DAVResponse)] = []
    /// Responses that name the book itself (its sync-token, ctag, a 507).
    var collection: [DAVResponse] = []
    /// One line per response skipped, for the sync's report.
    var skipped: [String] = []

    /// - Parameters:
    ///   - requested: where the request went (relative hrefs resolve against it).
    ///   - book: the address book whose members are wanted.
    ///   - label: how messages name the book (`phone: https://…/book/`).
    init(_ responses: [DAVResponse], requested: Location, book: Location, label: String) {
        var seen = Set<String>()
        for item in responses {
            guard let target = requested.resolving(item.href) else {
                skipped.append("\(label) named an href that is not a URL (\(MemberListing.shown(item.href))); skipped")
                continue
            }
            if book.isSameCollection(target) {
                collection.append(item)
                continue
            }
            guard book.contains(target) else {
                skipped.append("\(label) named \(MemberListing.shown(target.display)), which is outside the address book; skipped")
                continue
            }
            // Sub-collections are not cards.
            if item.status != 404, item.property("resourcetype")?.child("collection") != nil { continue }
            guard seen.insert(target.path).inserted else {
                skipped.append("\(label) named \(MemberListing.shown(target.path)) more than once; only the first is read")
                continue
            }
            members.append((target.path, item))
        }
    }

    /// An href for a message: one line, cut to a readable length.
    static func shown(_ href: String) -> String {
        let line = href.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
}

/// Entry points for `Fuzz/` (the libFuzzer targets): what a server's reply
/// goes through, without a server.
@_spi(Fuzzing)
public enum CardDAVReplyFuzzing {
    /// A fixed base the fuzzed hrefs resolve against, as a book on a server.
    static let base = Location("https://dav.example.com/addressbooks/alice/contacts/")

    /// Resolves `href` against the fixed base and checks what must hold for
    /// any input; then parses `body` as a multistatus answer of that book and
    /// lists its members. Traps (so the fuzzer reports it) when an invariant
    /// breaks: a resolved location that does not parse back to itself, a path
    /// with dot segments left, or a member outside the book.
    public static func run(href: String, body: [UInt8]) {
        guard let base else { preconditionFailure("the fuzzing base URL does not parse") }
        if let resolved = base.resolving(href) {
            precondition(resolved.scheme == "http" || resolved.scheme == "https", "resolved to a scheme that is not http(s)")
            precondition(resolved.path.isEmpty || resolved.path.hasPrefix("/"), "a relative path survived: \(resolved.path)")
            let segments = resolved.path.split(separator: "/", omittingEmptySubsequences: false)
            precondition(!segments.contains(".") && !segments.contains(".."), "dot segments left in \(resolved.path)")
            // `string` leaves out user info (never sent): compare without it.
            var bare = resolved
            bare.hasUserInfo = false
            let again = Location(resolved.string)
            precondition(again == bare, "\(resolved.string) does not parse back to itself: \(String(describing: again))")
            precondition(base.resolving(resolved.string) == bare, "resolving an absolute URL changed it")
            _ = Location.canonical(href)
        }
        guard let root = try? DAVXML.parse(body), let answer = try? Multistatus(root) else { return }
        let listing = MemberListing(answer.responses, requested: base, book: base, label: "fuzz")
        var paths = Set<String>()
        for member in listing.members {
            precondition(member.href.hasPrefix(base.collectionPath) && member.href != base.collectionPath,
                         "member \(member.href) outside the book")
            precondition(paths.insert(member.href).inserted, "member \(member.href) listed twice")
        }
        _ = answer.syncToken
    }
}
