import BirthdayBuzz
import CurlSupport
import Foundation
import Synchronization

/// A CardDAV client over libcurl (RFC 6352, RFC 6578, RFC 6764; docs/design/sources.md):
/// finds the address books, reads what changed since the last sync, fetches
/// cards and writes a changed birthday back.
///
/// ```swift
/// let client = try CardDAVClient(configuration: config, password: secret, scrubber: scrubber)
/// let books = try await client.discover()
/// let changes = try await client.sync(book: books[0], since: storedState)
/// // store changes.changed, drop changes.removed, keep changes.state
/// ```
///
/// Every error is a `CardDAVError`: one line, the password scrubbed, the
/// source named. Credentials travel only over TLS or to a loopback address,
/// and only to the configured URL's origin or to an https host the server
/// named in a PROPFIND answer under the same domain; a redirect carries them
/// only to the same scheme, host and port (as curl does).
public final class CardDAVClient: Sendable {
    public let configuration: CardDAVConfiguration
    private let authorization: String?
    private let scrubber: SecretScrubber
    private let session: CurlSession
    private let security: TransferSecurity
    /// The configured URL, parsed.
    private let base: Location
    /// Origins (scheme, host, port) the credentials may go to.
    private let trustedOrigins: Mutex<Set<String>>
    private let requestCount = Atomic<Int>(0)

    /// Cards per addressbook-multiget request.
    public static let multigetBatch = 200
    /// Redirects followed during discovery; syncing follows none.
    public static let maxRedirects = 5

    /// Checks the configuration; throws `CardDAVError` (kind `.configuration`)
    /// for a URL that is not http(s), carries credentials, or would send the
    /// password in clear text to a host that is not loopback.
    public init(configuration: CardDAVConfiguration, password: String?, scrubber: SecretScrubber = SecretScrubber()) throws {
        self.configuration = configuration
        self.scrubber = scrubber
        let name = configuration.name
        let sendsPassword = password != nil && configuration.username != nil
        if let problem = Self.urlProblem(configuration.url, sendsPassword: sendsPassword) {
            throw CardDAVError(.configuration, "\(name): url \(problem)")
        }
        guard let base = Location(configuration.url) else {
            throw CardDAVError(.configuration, "\(name): url is not a usable http:// or https:// URL")
        }
        self.base = base
        if let password, let user = configuration.username {
            scrubber.registerBasicCredentials(user: user, password: password)
            scrubber.register(password)
            authorization = "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
        } else {
            authorization = nil
        }
        security = TransferSecurity(insecure: configuration.insecure, caFile: configuration.caFile)
        session = CurlSession(label: "carddav." + name)
        trustedOrigins = Mutex([base.originKey])
    }

    /// What is wrong with `url` as a carddav source's `url` (a phrase that
    /// follows "url"), or nil. The config loader asks it, so a url that can
    /// never work stops the command (exit 2) before anything is sent; the
    /// client asks it again when it is made.
    public static func urlProblem(_ url: String, sendsPassword: Bool) -> String? {
        guard let base = Location(url) else {
            return "\(SecretScrubber.displayURL(url)) is not a usable http:// or https:// URL"
        }
        if base.hasUserInfo {
            return "must not hold a username or password; use username and password_env, password_file or password_command"
        }
        if sendsPassword, base.scheme != "https", !base.isLoopback {
            return "\(base.origin) is plain http to a host that is not loopback: the password would travel in clear text; use https"
        }
        return nil
    }

    /// HTTP requests made so far (tests and the benchmark count them).
    public var requestsMade: Int { requestCount.load(ordering: .relaxed) }

    /// Closes the kept-alive connection.
    public func close() async { await session.close() }

    // MARK: - Discovery

    /// The address books the configuration names (all when `books` is empty):
    /// from the URL itself when it is a book, a principal or a home set, else
    /// through `/.well-known/carddav` → `current-user-principal` →
    /// `addressbook-home-set` → PROPFIND depth 1.
    public func discover() async throws -> [AddressBook] {
        // Not getctag or sync-token: Radicale hashes the whole book for either
        // (0.75 s for 10,000 cards); supported-report-set tells sync-collection apart for free.
        let properties = ["<D:resourcetype/>", "<D:displayname/>", "<D:supported-report-set/>",
                          "<D:current-user-principal/>", "<C:addressbook-home-set/>"]
        var home: Location?
        var principal: Location?
        let atRoot = base.path.isEmpty || base.path == "/"
        if atRoot {
            // RFC 6764: the well-known URL leads to the principal (Radicale answers 301 to /).
            let wellKnown = base.with(path: "/.well-known/carddav")
            if let (answer, at) = try await propfindAllowingMissing(wellKnown, depth: 0, properties: properties),
               let first = answer.responses.first {
                principal = try first.hrefs(in: "current-user-principal").first.map { try resolve($0, against: at) }
                home = try first.hrefs(in: "addressbook-home-set", DAVNamespace.cardDAV).first.map { try resolve($0, against: at) }
            }
        }
        if home == nil, principal == nil {
            let (answer, at) = try await propfind(base, depth: 0, properties: properties, followRedirects: true)
            guard let first = answer.responses.first else {
                throw CardDAVError(.permanent, "\(configuration.name): \(at.display) answered PROPFIND with no properties")
            }
            if first.hasResourceType("addressbook", DAVNamespace.cardDAV) {
                return try filter([book(first, at: at)])
            }
            home = try first.hrefs(in: "addressbook-home-set", DAVNamespace.cardDAV).first.map { try resolve($0, against: at) }
            principal = try first.hrefs(in: "current-user-principal").first.map { try resolve($0, against: at) }
        }
        if home == nil, let principal {
            let (answer, at) = try await propfind(principal, depth: 0, properties: ["<C:addressbook-home-set/>"],
                                                  followRedirects: true)
            home = try answer.responses.first?.hrefs(in: "addressbook-home-set", DAVNamespace.cardDAV).first
                .map { try resolve($0, against: at) }
        }
        guard let home else {
            throw CardDAVError(.permanent, "\(configuration.name): \(base.display) names no address book home (addressbook-home-set); give the address book's own URL as url")
        }
        let (answer, at) = try await propfind(home, depth: 1, properties: Array(properties.prefix(3)), followRedirects: true)
        let books = try answer.responses
            .filter { $0.hasResourceType("addressbook", DAVNamespace.cardDAV) }
            .map { try book($0, at: at) }
        return try filter(books)
    }

    private func book(_ response: DAVResponse, at location: Location) throws -> AddressBook {
        let url = try resolve(response.href, against: location)
        let reports = response.property("supported-report-set")?.children("supported-report")
            .compactMap { $0.child("report")?.children.first?.name } ?? []
        return AddressBook(url: url.string, href: url.path, displayName: response.text("displayname"),
                           supportsSyncCollection: reports.contains("sync-collection") || response.text("sync-token") != nil)
    }

    /// The books `books =` names (by display name, href or last path segment), in that order.
    private func filter(_ books: [AddressBook]) throws -> [AddressBook] {
        let wanted = configuration.books
        guard !wanted.isEmpty else { return books }
        return try wanted.map { name in
            let found = books.first { book in
                book.displayName == name || book.href == name || book.url == name
                    || book.href.split(separator: "/").last.map(String.init) == name.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            }
            guard let found else {
                // Sorted: the server lists them in its own order (Radicale: its folder's, which differs by file system).
                let names = books.map { $0.displayName ?? $0.href }.sorted().joined(separator: ", ")
                throw CardDAVError(.configuration, "\(configuration.name): no address book \"\(name)\" on the server (it has: \(names.isEmpty ? "none" : names))")
            }
            return found
        }
    }

    // MARK: - Sync

    /// What changed in `book` since `state` (nil: the first sync, everything).
    ///
    /// With a stored sync-token: one `sync-collection` REPORT, then the
    /// changed cards by `addressbook-multiget`; a token the server refuses
    /// (403/409 `valid-sync-token`) means one full listing. A server without
    /// sync-collection: ctag unchanged means nothing to do; else the ETags are
    /// listed and only changed cards fetched. A full listing (`listing` set)
    /// is complete: whatever of this book is not in it is gone.
    ///
    /// `progress` is told (cards fetched, cards to fetch) after each multiget
    /// batch, for a progress bar on a long first sync.
    public func sync(book: AddressBook, since state: SyncState?,
                     progress: (@Sendable (_ fetched: Int, _ total: Int) -> Void)? = nil) async throws -> ChangeSet {
        let previous = state.map { state in PreviousSync(syncToken: state.syncToken, ctag: state.ctag) { state.etags } }
        var changes = try await sync(book: book, previous: previous, progress: progress)
        if changes.method == .unchanged, let state { changes.state = state }
        return changes
    }

    /// `sync(book:since:)` for a caller that keeps many ETags: they are asked
    /// for (`previous.etags`) only when the server's answer names a card, so
    /// an unchanged book (`.unchanged`) costs its caller no decoding. With
    /// `.unchanged` the returned state holds the token and ctag but no ETags:
    /// keep the state you had.
    public func sync(book: AddressBook, previous: PreviousSync?,
                     progress: (@Sendable (_ fetched: Int, _ total: Int) -> Void)? = nil) async throws -> ChangeSet {
        let before = requestsMade
        let location = try resolve(book.url, against: base)
        var changes: ChangeSet
        if book.supportsSyncCollection, let previous, let token = previous.syncToken {
            if let incremental = try await syncCollection(location, token: token, previous: previous, progress: progress) {
                changes = incremental
            } else {
                changes = try await fullSync(location, state: previous.state, resynced: true, tokens: true, progress: progress)
            }
        } else if !book.supportsSyncCollection, let previous, let ctag = previous.ctag,
                  try await currentCTag(location) == ctag {
            changes = ChangeSet(method: .unchanged, changed: [], removed: [], listing: nil,
                                state: SyncState(syncToken: previous.syncToken, ctag: ctag), requests: 0)
        } else if previous == nil, book.supportsSyncCollection,
                  let initial = try await initialSync(location, progress: progress) {
            changes = initial
        } else {
            changes = try await fullSync(location, state: previous?.state ?? SyncState(), resynced: false,
                                         tokens: book.supportsSyncCollection, progress: progress)
        }
        changes.requests = requestsMade - before
        return changes
    }

    /// sync-collection from `token` ("" for the initial one), page by page (a
    /// server may answer in parts: 507 on the collection itself, then again from
    /// the new token): the members (not collections) by their resolved path,
    /// the last token, and what was skipped. nil when the server refuses the token.
    private func syncCollection(_ location: Location, from token: String, withData: Bool) async throws
        -> (members: [(href: String, item: DAVResponse)], token: String, skipped: [String])? {
        var members: [(href: String, item: DAVResponse)] = []
        var skipped: [String] = []
        var seen = Set<String>()
        var token = token
        for _ in 0..<100 {
            let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:sync-collection xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\"><D:sync-token>"
                + xmlEscaped(token) + "</D:sync-token><D:sync-level>1</D:sync-level><D:prop><D:getetag/>"
                + (withData ? "<C:address-data/>" : "") + "</D:prop></D:sync-collection>"
            // RFC 6578: Depth 0 (the default, said outright for servers that assume another).
            let response = try await send("REPORT", location, headers: [("Content-Type", "application/xml; charset=utf-8"), ("Depth", "0")],
                                          body: Array(body.utf8), expecting: [207], refusedToken: !token.isEmpty)
            guard let response else { return nil }
            let answer = try multistatus(response, from: location, method: "REPORT")
            let listing = MemberListing(answer.responses, requested: location, book: location,
                                        label: "\(configuration.name): \(location.display)")
            skipped += listing.skipped
            // A later page names a card again when it changed again: the later answer wins.
            for member in listing.members {
                if seen.insert(member.href).inserted {
                    members.append(member)
                } else if let index = members.firstIndex(where: { $0.href == member.href }) {
                    members[index] = member
                }
            }
            let truncated = listing.collection.contains { $0.status == 507 }
            guard let next = answer.syncToken else {
                throw CardDAVError(.permanent, "\(configuration.name): \(location.display) answered sync-collection without a sync-token")
            }
            token = next
            if !truncated { break }
        }
        return (members, token, skipped)
    }

    /// The first sync of a book with sync-collection: one initial REPORT (an
    /// empty token, RFC 6578 §3.4) asking for each card's data too, so the
    /// server lists and serves every card in one answer — Radicale answers it
    /// in about the time its listing alone takes, where a listing followed by
    /// multigets costs twice that. Cards the answer names without their data
    /// (a server that does not serve address-data there) are fetched by
    /// multiget. nil when the server refuses the request (any 4xx other than
    /// a refused login) or answers more than a reply may hold: the caller
    /// lists the book instead.
    private func initialSync(_ location: Location, progress: (@Sendable (Int, Int) -> Void)?) async throws -> ChangeSet? {
        let answer: (members: [(href: String, item: DAVResponse)], token: String, skipped: [String])?
        do {
            answer = try await syncCollection(location, from: "", withData: true)
        } catch let error as CardDAVError where error.kind == .permanent || error.kind == .notFound || error.kind == .tooLarge {
            // Refused, or more than one reply may hold (cards with photos): list the book and multiget in batches.
            return nil
        }
        guard let (members, token, skipped) = answer else { return nil }
        var cards: [RemoteCard] = []
        var withoutData: [String] = []
        var listing = Set<String>()
        for (href, item) in members where item.status != 404 {
            listing.insert(href)
            if let data = item.property("address-data", DAVNamespace.cardDAV), !data.text.isEmpty {
                cards.append(RemoteCard(href: href, etag: item.text("getetag"), text: data.text))
            } else {
                withoutData.append(href)
            }
        }
        let fetched = try await multiget(location, hrefs: withoutData.sorted(), progress: progress)
        cards += fetched.cards
        for href in fetched.missing { listing.remove(href) }
        var state = SyncState(syncToken: token)
        for card in cards { state.etags[card.href] = card.etag ?? "" }
        // A card over the bound: listed (its contact kept), asked for again at the next full listing.
        for href in fetched.oversized { state.etags[href] = "" }
        progress?(cards.count, cards.count)
        return ChangeSet(method: .full(resynced: false), changed: cards, removed: [], listing: listing, state: state, requests: 0,
                         skipped: skipped + fetched.skipped)
    }

    /// sync-collection from `token`; nil when the server refuses the token.
    private func syncCollection(_ location: Location, token start: String, previous: PreviousSync,
                                progress: (@Sendable (Int, Int) -> Void)?) async throws -> ChangeSet? {
        guard let (members, token, skipped) = try await syncCollection(location, from: start, withData: false) else { return nil }
        var reported: [(href: String, etag: String?)] = []
        var removed: [String] = []
        for (href, item) in members {
            if item.status == 404 { removed.append(href) } else { reported.append((href, item.text("getetag"))) }
        }
        if reported.isEmpty, removed.isEmpty, token == start {
            return ChangeSet(method: .unchanged, changed: [], removed: [], listing: nil,
                             state: SyncState(syncToken: token, ctag: previous.ctag), requests: 0, skipped: skipped)
        }
        var state = previous.state
        // Changed, unless its ETag is the one we hold (our own write-back); none said: fetch it.
        let changedSet = Set(reported.filter { $0.etag == nil || state.etags[$0.href] != $0.etag }.map(\.href))
        removed = removed.filter { !changedSet.contains($0) }
        let fetched = try await multiget(location, hrefs: Array(changedSet).sorted(), progress: progress)
        for href in removed + fetched.missing { state.etags[href] = nil }
        for card in fetched.cards { state.etags[card.href] = card.etag ?? "" }
        state.syncToken = token
        return ChangeSet(method: .incremental, changed: fetched.cards, removed: Array(Set(removed + fetched.missing)).sorted(),
                         listing: nil, state: state, requests: 0, skipped: skipped + fetched.skipped)
    }

    /// Lists every card's ETag (PROPFIND depth 1, which also yields the new
    /// sync-token and ctag), then fetches those whose ETag is not in `state`.
    /// With `tokens` the listing asks for the sync-token, else for the ctag
    /// (not both: each costs Radicale a hash of the whole book).
    private func fullSync(_ location: Location, state: SyncState, resynced: Bool, tokens: Bool,
                          progress: (@Sendable (Int, Int) -> Void)?) async throws -> ChangeSet {
        let (answer, at) = try await propfind(location, depth: 1,
                                              properties: ["<D:resourcetype/>", "<D:getetag/>", tokens ? "<D:sync-token/>" : "<CS:getctag/>"],
                                              followRedirects: false)
        let members = MemberListing(answer.responses, requested: at, book: location, label: "\(configuration.name): \(location.display)")
        var listing: [String: String] = [:]
        var next = SyncState()
        for item in members.collection {
            next.syncToken = next.syncToken ?? item.text("sync-token")
            next.ctag = next.ctag ?? item.text("getctag", DAVNamespace.calendarServer)
        }
        for (href, item) in members.members where item.status == nil || item.status == 200 {
            listing[href] = item.text("getetag") ?? ""
        }
        let wanted = listing.filter { href, etag in etag.isEmpty || state.etags[href] != etag }.keys.sorted()
        let fetched = try await multiget(location, hrefs: wanted, progress: progress)
        for href in fetched.missing { listing[href] = nil }
        next.etags = listing
        for card in fetched.cards { next.etags[card.href] = card.etag ?? listing[card.href] ?? "" }
        for href in fetched.oversized { next.etags[href] = "" }
        let removed = state.etags.keys.filter { listing[$0] == nil }.sorted()
        return ChangeSet(method: .full(resynced: resynced), changed: fetched.cards, removed: removed, listing: Set(listing.keys),
                         state: next, requests: 0, skipped: members.skipped + fetched.skipped)
    }

    private func currentCTag(_ location: Location) async throws -> String? {
        let (answer, _) = try await propfind(location, depth: 0, properties: ["<CS:getctag/>"], followRedirects: false)
        return answer.responses.first?.text("getctag", DAVNamespace.calendarServer)
    }

    /// Fetches cards by href, `multigetBatch` at a time. Returns the cards and
    /// the hrefs the server no longer has.
    public func fetch(book: AddressBook, hrefs: [String]) async throws -> (cards: [RemoteCard], missing: [String]) {
        let fetched = try await multiget(try resolve(book.url, against: base), hrefs: hrefs)
        return (fetched.cards, fetched.missing)
    }

    /// What a multiget brought: the cards, the hrefs the server no longer has,
    /// the hrefs of cards too large for one reply, and what was skipped.
    struct Fetched {
        var cards: [RemoteCard] = []
        var missing: [String] = []
        var oversized: [String] = []
        var skipped: [String] = []
    }

    /// Fetches `hrefs` by addressbook-multiget, `multigetBatch` at a time. A
    /// batch whose answer is over the reply bound is asked for again in two
    /// halves, down to one card; a single card over the bound is skipped and
    /// reported (its contact stays as it was).
    private func multiget(_ location: Location, hrefs: [String], progress: (@Sendable (Int, Int) -> Void)? = nil) async throws
        -> Fetched {
        var fetched = Fetched()
        fetched.cards.reserveCapacity(hrefs.count)
        var queue = stride(from: 0, to: hrefs.count, by: CardDAVClient.multigetBatch).map {
            Array(hrefs[$0..<min($0 + CardDAVClient.multigetBatch, hrefs.count)])
        }
        var taken = Set<String>()
        @Sendable func request(_ batch: [String]) async throws -> HTTPResponse? {
            var body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><C:addressbook-multiget xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\"><D:prop><D:getetag/><C:address-data/></D:prop>"
            for href in batch { body += "<D:href>" + xmlEscaped(href) + "</D:href>" }
            body += "</C:addressbook-multiget>"
            // RFC 6352 8.7: the server ignores Depth, which should be 0.
            return try await send("REPORT", location, headers: [("Content-Type", "application/xml; charset=utf-8"), ("Depth", "0")],
                                  body: Array(body.utf8), expecting: [207])
        }
        // The next batch is asked for while this one is parsed: the server
        // prepares its answer while we read ours (one request in flight).
        var position = 0
        var next: Task<HTTPResponse?, any Error>? = queue.first.map { batch in Task { try await request(batch) } }
        defer { next?.cancel() }
        while position < queue.count, let pending = next {
            let batch = queue[position]
            position += 1
            let reply: HTTPResponse?
            do {
                reply = try await pending.value
            } catch let error as CardDAVError where error.kind == .tooLarge {
                if batch.count > 1 {
                    let half = batch.count / 2
                    queue.insert(contentsOf: [Array(batch[..<half]), Array(batch[half...])], at: position)
                } else {
                    fetched.oversized.append(batch[0])
                    fetched.skipped.append("\(configuration.name): the card \(MemberListing.shown(batch[0])) is larger than \(CardDAVClient.sizeText(configuration.replyLimit)); skipped (its contact is kept as it was)")
                }
                next = position < queue.count ? Task { [batch = queue[position]] in try await request(batch) } : nil
                continue
            }
            next = position < queue.count ? Task { [batch = queue[position]] in try await request(batch) } : nil
            guard let response = reply else { continue }
            let answer = try multistatus(response, from: location, method: "REPORT")
            let listing = MemberListing(answer.responses, requested: location, book: location,
                                        label: "\(configuration.name): \(location.display)")
            fetched.skipped += listing.skipped
            var answered = Set<String>()
            for (href, item) in listing.members {
                answered.insert(href.removingPercentEncoding ?? href)
                // A card another batch's answer already brought is not taken twice.
                guard taken.insert(href).inserted else { continue }
                if let data = item.property("address-data", DAVNamespace.cardDAV), item.status == nil || item.status == 200 {
                    fetched.cards.append(RemoteCard(href: href, etag: item.text("getetag"), text: data.text))
                } else {
                    fetched.missing.append(href)
                }
            }
            let asked = Set(batch.map { $0.removingPercentEncoding ?? $0 })
            if !asked.isSubset(of: answered) {
                let absent = asked.subtracting(answered)
                throw CardDAVError(.permanent, "\(configuration.name): \(location.display) left \(absent.count) of \(batch.count) cards out of its addressbook-multiget answer (first: \(absent.sorted()[0]))")
            }
            progress?(fetched.cards.count + fetched.missing.count + fetched.oversized.count, hrefs.count)
        }
        return fetched
    }

    // MARK: - Single cards and write-back

    /// One card, its text exactly as the server holds it, and its ETag.
    public func get(href: String) async throws -> RemoteCard {
        let location = try resolve(href, against: base)
        guard let response = try await send("GET", location, headers: [("Accept", "text/vcard")], body: [], expecting: [200]) else {
            throw CardDAVError(.permanent, "\(configuration.name): no answer for GET \(location.display)")
        }
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw CardDAVError(.permanent, "\(configuration.name): the card \(location.display) is not UTF-8 text")
        }
        return RemoteCard(href: normalizedHref(href), etag: response.header("ETag"), text: text)
    }

    /// PUTs `text` in place of the card at `href` if its ETag is still `etag`
    /// (If-Match); returns the new ETag when the server says it. A card changed
    /// on the server since throws kind `.preconditionFailed`.
    @discardableResult
    public func put(href: String, text: String, etag: String?) async throws -> String? {
        let location = try resolve(href, against: base)
        var headers = [("Content-Type", "text/vcard; charset=utf-8")]
        if let etag, !etag.isEmpty { headers.append(("If-Match", etag)) }
        guard let response = try await send("PUT", location, headers: headers, body: Array(text.utf8), expecting: [200, 201, 204]) else {
            return nil
        }
        return response.header("ETag")
    }

    /// Writes a birthday to the card at `href` (`property` as for
    /// `replacingBirthday(in:with:)`; nil removes it), changing nothing else
    /// of the server's text. Starts from `known` when the caller holds the
    /// server's exact text and ETag, else GETs them; on 412 (changed on the
    /// server in between) fetches the card again and applies the change once more.
    /// Returns the card as written (its ETag nil when the server did not say it).
    /// Throws `BirthdayLineError`, with nothing PUT, when the change cannot be made exactly.
    @discardableResult
    public func writeBirthday(href: String, property: String?, known: RemoteCard? = nil) async throws -> RemoteCard {
        var card: RemoteCard
        if let known {
            card = known
        } else {
            card = try await get(href: href)
        }
        for attempt in 0..<2 {
            let text = try replacingBirthday(in: card.text, with: property)
            if text == card.text { return card }
            do {
                let etag = try await put(href: href, text: text, etag: card.etag)
                return RemoteCard(href: card.href, etag: etag, text: text)
            } catch let error as CardDAVError where error.kind == .preconditionFailed && attempt == 0 {
                card = try await get(href: href)
            }
        }
        throw CardDAVError(.preconditionFailed, "\(configuration.name): the card \(href) changed on the server again while its birthday was written; try again")
    }

    // MARK: - Requests

    /// PROPFIND with `properties` (prefixed D:, C:, CS:); returns the reply and where it came from.
    private func propfind(_ location: Location, depth: Int, properties: [String], followRedirects: Bool)
        async throws -> (Multistatus, Location) {
        guard let result = try await propfindAllowingMissing(location, depth: depth, properties: properties,
                                                             followRedirects: followRedirects, missingIsError: true) else {
            throw CardDAVError(.permanent, "\(configuration.name): \(location.display) gave no PROPFIND answer")
        }
        return result
    }

    /// PROPFIND that returns nil for 404/405 (a server without the well-known URL) unless `missingIsError`.
    private func propfindAllowingMissing(_ location: Location, depth: Int, properties: [String],
                                         followRedirects: Bool = true, missingIsError: Bool = false)
        async throws -> (Multistatus, Location)? {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:propfind xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:carddav\" xmlns:CS=\"http://calendarserver.org/ns/\"><D:prop>"
            + properties.joined() + "</D:prop></D:propfind>"
        var current = location
        for _ in 0...CardDAVClient.maxRedirects {
            let response = try await perform("PROPFIND", current,
                                             headers: [("Content-Type", "application/xml; charset=utf-8"), ("Depth", String(depth))],
                                             body: Array(body.utf8))
            if [301, 302, 303, 307, 308].contains(response.status) {
                guard followRedirects else {
                    throw CardDAVError(.permanent, "\(configuration.name): \(current.display) answered \(response.status) to PROPFIND (redirects are followed only during discovery; give the address book's URL)")
                }
                current = try redirectTarget(response, from: current)
                continue
            }
            if !missingIsError, [404, 405, 403, 501].contains(response.status) { return nil }
            try check(response, "PROPFIND", current, expecting: [207])
            return (try multistatus(response, from: current, method: "PROPFIND"), current)
        }
        throw CardDAVError(.permanent, "\(configuration.name): more than \(CardDAVClient.maxRedirects) redirects from \(location.display)")
    }

    /// Where a redirect leads, if it may be followed: never from https to
    /// http, never to another domain. The credentials go along only to the
    /// same scheme, host and port (curl's rule): DAViCal's absolute 301 to
    /// another port of the same host gets none.
    private func redirectTarget(_ response: HTTPResponse, from current: Location) throws -> Location {
        guard let header = response.header("Location"), let target = current.resolving(header) else {
            throw CardDAVError(.permanent, "\(configuration.name): \(current.display) answered \(response.status) without a usable Location")
        }
        guard !(current.scheme == "https" && target.scheme == "http") else {
            throw CardDAVError(.permanent, "\(configuration.name): \(current.display) redirects from https to plain http (\(target.origin)); not followed")
        }
        guard target.host == current.host || sameDomain(target.host, base.host) else {
            throw CardDAVError(.permanent, "\(configuration.name): \(current.display) redirects to another domain (\(target.origin)); not followed")
        }
        return target
    }

    /// Sends a request that must answer one of `expecting` (no redirects).
    /// With `refusedToken` (a sync-collection from a stored token), a refusal
    /// in any form returns nil: RFC 6578's 403/409 `valid-sync-token`, and
    /// also the plain 400, 403, 409 or 412 some servers send instead, so a
    /// token the server no longer takes gets one full re-sync, not a failure
    /// at every later sync.
    private func send(_ method: String, _ location: Location, headers: [(String, String)], body: [UInt8],
                      expecting: Set<Int>, refusedToken: Bool = false) async throws -> HTTPResponse? {
        let response = try await perform(method, location, headers: headers, body: body)
        if refusedToken, [400, 403, 409, 412].contains(response.status) {
            return nil
        }
        try check(response, method, location, expecting: expecting)
        return response
    }

    private func perform(_ method: String, _ location: Location, headers: [(String, String)], body: [UInt8]) async throws
        -> HTTPResponse {
        var fields = headers.map { (name: $0.0, value: $0.1) }
        if let authorization, mayCarryCredentials(location) {
            fields.append((name: "Authorization", value: authorization))
        }
        let request = HTTPRequest(url: location.string, method: method, headers: fields, body: body,
                                  timeout: configuration.timeout, security: security, responseLimit: configuration.replyLimit)
        requestCount.add(1, ordering: .relaxed)
        do {
            let response = try await session.http(request)
            if response.isTruncated {
                throw CardDAVError(.tooLarge, "\(configuration.name): \(method) \(location.display) answered more than \(CardDAVClient.sizeText(configuration.replyLimit)); the reply was cut there")
            }
            return response
        } catch let error as CurlError {
            let detail = scrubber.scrub(error.message)
            if error.isCertificateProblem {
                throw CardDAVError(.permanent, "\(configuration.name): the TLS certificate of \(location.origin) is not trusted: \(detail) (set ca_file, or insecure = true)")
            }
            if error.isConnectionFailure || error.isTimeout {
                throw CardDAVError(.temporary, "\(configuration.name): cannot reach \(location.origin): \(detail) (tried again at the next sync)")
            }
            throw CardDAVError(.permanent, "\(configuration.name): \(method) \(location.display): \(detail)")
        }
    }

    /// Whether the Authorization header may go to `location`: TLS or a loopback
    /// address, and an origin the credentials are trusted with.
    private func mayCarryCredentials(_ location: Location) -> Bool {
        (location.scheme == "https" || location.isLoopback) && trustedOrigins.withLock { $0.contains(location.originKey) }
    }

    static func sizeText(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }

    /// The funnel every status goes through.
    private func check(_ response: HTTPResponse, _ method: String, _ location: Location, expecting: Set<Int>) throws {
        let status = response.status
        if expecting.contains(status) { return }
        let name = configuration.name
        switch status {
        case 401:
            if authorization != nil, !mayCarryCredentials(location) {
                throw CardDAVError(.loginRefused, "\(name): \(location.origin) asks for a login, but the password goes only to \(base.origin) (a redirect or a server's answer led to \(location.display)); give that URL as url if you trust it")
            }
            let who = configuration.username.map { "the login for \($0)" } ?? "access without a username"
            throw CardDAVError(.loginRefused, "\(name): \(location.origin) refused \(who) (401): check username and password")
        case 412:
            throw CardDAVError(.preconditionFailed, "\(name): \(location.display) changed on the server (412)")
        case 404, 410:
            throw CardDAVError(.notFound, "\(name): \(location.display) is not on the server (\(status))")
        case 408, 429, 500...599:
            throw CardDAVError(.temporary, "\(name): \(location.origin) answered \(status) to \(method) \(location.path) (tried again at the next sync)")
        default:
            let snippet = scrubber.scrub(String(decoding: response.body.prefix(160), as: UTF8.self))
                .split(whereSeparator: \.isNewline).joined(separator: " ")
            throw CardDAVError(.permanent, "\(name): \(location.origin) answered \(status) to \(method) \(location.path)" + (snippet.isEmpty ? "" : ": \(snippet)"))
        }
    }

    private func multistatus(_ response: HTTPResponse, from location: Location, method: String) throws -> Multistatus {
        do {
            return try Multistatus(DAVXML.parse(response.body))
        } catch {
            throw CardDAVError(.permanent, "\(configuration.name): \(location.display) answered \(method) with XML we cannot read: \(scrubber.scrub(error.reason))")
        }
    }

    /// An href or URL from the server (or stored from an earlier answer),
    /// resolved against where it came from as RFC 3986 says, as a location we
    /// may talk to. Another host is accepted under the same domain, refused
    /// otherwise; such a named host is trusted with the credentials only over https.
    private func resolve(_ href: String, against location: Location) throws -> Location {
        guard let target = location.resolving(href) else {
            throw CardDAVError(.permanent, "\(configuration.name): \(location.display) named an href we cannot read: \(MemberListing.shown(href))")
        }
        if target.host != location.host {
            guard sameDomain(target.host, base.host), !(location.scheme == "https" && target.scheme == "http") else {
                throw CardDAVError(.permanent, "\(configuration.name): \(location.display) points to \(target.origin), outside \(base.host)'s domain; not followed")
            }
            if target.scheme == "https" { trustedOrigins.withLock { _ = $0.insert(target.originKey) } }
        }
        return target
    }

    /// The canonical path of an href from the server, resolved against the
    /// configured URL (what the stored state and `RemoteCard.href` hold).
    private func normalizedHref(_ href: String) -> String {
        base.resolving(href)?.path ?? href
    }
}

/// Whether two hosts share a registrable domain (`p42-contacts.icloud.com`
/// and `contacts.icloud.com`). Without the public suffix list: the last two
/// labels, or three under a two-letter country code whose second level is
/// short (`co.uk`, `com.au`). IP addresses only match themselves.
func sameDomain(_ a: String, _ b: String) -> Bool {
    if a == b { return true }
    func domain(_ host: String) -> String? {
        if host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) { return nil }
        let labels = host.split(separator: ".")
        guard labels.count >= 2 else { return nil }
        let tld = labels[labels.count - 1]
        let second = labels[labels.count - 2]
        let take = tld.count == 2 && second.count <= 3 && labels.count >= 3 ? 3 : 2
        return labels.suffix(take).joined(separator: ".")
    }
    guard let left = domain(a), let right = domain(b) else { return false }
    return left == right
}
