import BirthdayBuzz
import Foundation

/// What a `[sources.NAME]` table of `type = "carddav"` says, with the
/// password already read (docs/design/sources.md).
public struct CardDAVConfiguration: Sendable {
    /// The source's name, for messages (`[sources.NAME]`).
    public var name: String
    /// The server, a principal, or one address book.
    public var url: String
    public var username: String?
    /// Display names or hrefs of the address books to read; empty: all.
    public var books: [String]
    /// Skip TLS certificate and host verification.
    public var insecure: Bool
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?
    /// Seconds one request may take (a multiget of 200 cards with photos included).
    public var timeout: Double
    /// The most of one reply read (64 MiB): the transfer is cut there, not
    /// at the timeout, so an endless or huge answer costs neither memory nor
    /// time. A multiget over it is asked again with half the cards.
    public var replyLimit = 64 << 20

    public init(name: String, url: String, username: String? = nil, books: [String] = [], insecure: Bool = false,
                caFile: String? = nil, timeout: Double = 60) {
        self.name = name
        self.url = url
        self.username = username
        self.books = books
        self.insecure = insecure
        self.caFile = caFile
        self.timeout = timeout
    }
}

/// One address book on the server.
public struct AddressBook: Sendable, Codable, Equatable {
    /// The collection's absolute URL (`https://host/dav/alice/contacts/`).
    public var url: String
    /// Its href as the server wrote it (`/dav/alice/contacts/`).
    public var href: String
    public var displayName: String?
    /// Whether the server offers RFC 6578 sync-collection (its supported-report-set, or a sync-token).
    public var supportsSyncCollection: Bool

    public init(url: String, href: String, displayName: String?, supportsSyncCollection: Bool) {
        self.url = url
        self.href = href
        self.displayName = displayName
        self.supportsSyncCollection = supportsSyncCollection
    }
}

/// One card as the server served it.
public struct RemoteCard: Sendable, Equatable {
    /// The card's href (a path on the server, as the server wrote it).
    public var href: String
    public var etag: String?
    /// The vCard text. From a multiget the XML parser has turned CRLF into LF;
    /// from `get(href:)` it is the server's bytes exactly.
    public var text: String

    public init(href: String, etag: String?, text: String) {
        self.href = href
        self.etag = etag
        self.text = text
    }
}

/// What a caller keeps between syncs of one address book (the store's job):
/// the sync token, the ctag and every card's ETag by href.
public struct SyncState: Sendable, Codable, Equatable {
    public var syncToken: String?
    public var ctag: String?
    /// href → ETag of every card read so far.
    public var etags: [String: String]

    public init(syncToken: String? = nil, ctag: String? = nil, etags: [String: String] = [:]) {
        self.syncToken = syncToken
        self.ctag = ctag
        self.etags = etags
    }
}

/// A book's state as handed to `CardDAVClient.sync(book:previous:)`: its
/// token and ctag, and its ETags behind a closure, read only when the
/// server's answer names a card.
public struct PreviousSync: Sendable {
    public var syncToken: String?
    public var ctag: String?
    public var etags: @Sendable () -> [String: String]

    public init(syncToken: String?, ctag: String?, etags: @escaping @Sendable () -> [String: String]) {
        self.syncToken = syncToken
        self.ctag = ctag
        self.etags = etags
    }

    /// The whole state (reads the ETags).
    var state: SyncState { SyncState(syncToken: syncToken, ctag: ctag, etags: etags()) }
}

/// What changed in one address book since the state handed to `sync`.
public struct ChangeSet: Sendable {
    /// How the change set was found.
    public enum Method: Sendable, Equatable {
        /// Nothing changed: the ctag is the same (a server without
        /// sync-collection), or sync-collection named no card and kept its token.
        case unchanged
        /// sync-collection from the stored token.
        case incremental
        /// Every href listed (first sync, a server without sync-collection, or
        /// after the server refused the token: `resynced` says which).
        case full(resynced: Bool)
    }

    public var method: Method
    /// New and changed cards, with their text.
    public var changed: [RemoteCard]
    /// hrefs gone from the server since the state handed in.
    public var removed: [String]
    /// After a complete listing: every href on the server (prune everything
    /// else of this book). nil after an incremental sync.
    public var listing: Set<String>?
    /// What to keep for the next sync.
    public var state: SyncState
    /// HTTP requests this sync made.
    public var requests: Int
    /// What the answer named but could not be taken (a member outside the
    /// book, an href listed twice, a card over the reply bound), one line
    /// each. Skipping these does not make the read incomplete.
    public var skipped: [String] = []
}

/// A CardDAV failure, on one line, secrets removed, prefixed with the source's name.
public struct CardDAVError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Server down, refused connection, timeout, 5xx: try at the next interval, keep the contacts.
        case temporary
        /// 401: the server refused the username and password.
        case loginRefused
        /// The configuration cannot work (plain HTTP to a remote host, no such book…).
        case configuration
        /// The server answered something we cannot use (4xx, malformed XML, a forbidden redirect).
        case permanent
        /// 412 on a PUT: the card changed on the server since it was read.
        case preconditionFailed
        /// 404 on a GET or PUT: the card is gone.
        case notFound
        /// The reply was longer than the bound (`CardDAVConfiguration.replyLimit`): the transfer was cut there.
        case tooLarge
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = OneLine.escaped(message)
    }

    /// Trying again later can help.
    public var isTemporary: Bool { kind == .temporary }

    public var description: String { message }
}
