import BirthdayBuzz
import BuzzCardDAV
import BuzzProcess
import BuzzStore
import CurlSupport
import Foundation
import Synchronization

/// `type = "carddav"`: the address books on a CardDAV server (docs/design/sources.md),
/// read through `BuzzCardDAV.CardDAVClient`.
///
/// The first read lists everything (`.complete`: contacts gone are pruned);
/// later reads ask each book for what changed since its sync token
/// (`.changes(removed:)`), so an unchanged server costs one REPORT per book.
/// `buzz sync` and `run`'s start discover the books again (a book gone from
/// the server, or from `books`, takes its contacts with it); `tick` and
/// `run`'s interval use the books found last time.
///
/// A server that cannot be reached, answers 5xx or refuses the login fails the
/// whole source: nothing of it is written, its contacts are kept, and the next
/// sync starts from the same tokens.
///
/// The state kept in the store (`CardDAVState`): the books, each book's sync
/// token and ETags, and which contact each href holds, so a removed href
/// removes its contact and `set-birthday` finds the card to write back.
public struct CardDAVSource: ContactSourceType, BirthdayWriteBack {
    public let id: String
    public let label: String
    public var typeName: String { Self.typeName }
    public let options: CardDAVSourceOptions
    let context: SourceContext

    public init(id: String, label: String, options: CardDAVSourceOptions, context: SourceContext) {
        self.id = id
        self.label = label
        self.options = options
        self.context = context
    }

    public static func make(_ config: SourceConfig, options: CardDAVSourceOptions, context: SourceContext) throws -> any ContactSourceType {
        CardDAVSource(id: config.name, label: config.name, options: options, context: context)
    }

    /// Discovers the books (the password read, the server asked): what doctor shows.
    public func check() throws -> String {
        let client = try makeClient()
        let books = try blocking { try await client.discover() }
        let names = books.map { $0.displayName ?? $0.href }
        return "\(SecretScrubber.displayURL(options.url)): \(books.count) address book\(books.count == 1 ? "" : "s")"
            + (names.isEmpty ? "" : " (" + names.joined(separator: ", ") + ")")
    }

    /// Whether `set-birthday` / `clear-birthday` change the card on the server.
    public var writesBack: Bool { options.writeBack }

    // MARK: - When

    // Times are the command's clock (`--now`, the daemon's clock), the one the
    // store's `synced_at` and a failure's retry (`SyncRetry`) are written in.

    public var syncInterval: Int? { options.interval }

    public func isDue(last: SourceState?, now: Int64) -> Bool {
        // Never synced, or synced "later than now" (the clock was set back): due.
        guard let synced = last?.syncedAt, synced <= now else { return true }
        return now >= synced + Int64(options.interval)
    }

    public func nextSync(after last: SourceState?) -> Int64? {
        (last?.syncedAt ?? 0) + Int64(options.interval)
    }

    // MARK: - Reading

    public func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
                     emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
        // The books and their tokens first; the ETags and ids (a line per card)
        // only when some book changed: an unchanged sync of 10,000 cards then
        // neither decodes nor rewrites them.
        let head = previousState.flatMap(CardDAVState.decodeHead)
        let stored = LazyCardDAVState(previousState)
        let client = try makeClient()
        let fromScratch = context.fromScratch
        func syncAll(from head: CardDAVState?) throws -> [(AddressBook, ChangeSet)] {
            let known = head?.books ?? []
            let rediscover = full || known.isEmpty || fromScratch
            return try blocking {
                let books = rediscover ? try await client.discover() : known
                var result: [(AddressBook, ChangeSet)] = []
                for book in books {
                    // From scratch: no token, no ctag, no ETags — a full listing that fetches every card
                    // (the contacts each href held are still known, so what is gone is pruned).
                    let previous = head?.sync[book.url].map { tokens in
                        fromScratch ? PreviousSync(syncToken: nil, ctag: nil) { [:] }
                            : PreviousSync(syncToken: tokens.syncToken, ctag: tokens.ctag) { stored.value?.sync[book.url]?.etags ?? [:] }
                    }
                    result.append((book, try await client.sync(book: book, previous: previous)))
                }
                return result
            }
        }
        var synced = try syncAll(from: head)
        if let previousState, let head, synced.map(\.0) == head.books,
           synced.allSatisfy({ $0.1.method == .unchanged }) {
            return SourceOutcome(coverage: .changes(removed: []), state: previousState, skipped: synced.flatMap(\.1.skipped))
        }
        let previous = stored.value
        // Tokens readable but the card lines not (a damaged state): start over, as with no state.
        if head != nil, previous == nil { synced = try syncAll(from: nil) }
        let first = previous == nil
        var state = CardDAVState()
        var gone = Set<String>()
        var emitted = Set<String>()
        var failure: (any Error)?
        for (book, changes) in synced {
            var ids = previous?.ids[book.url] ?? [:]
            for href in changes.removed {
                if let old = ids.removeValue(forKey: href) { gone.insert(old) }
            }
            if let listing = changes.listing {
                // A complete listing: whatever of this book is not in it is gone.
                for (href, old) in ids where !listing.contains(href) {
                    gone.insert(old)
                    ids[href] = nil
                }
            }
            for card in changes.changed {
                let shown = label + ": " + (card.href.removingPercentEncoding ?? card.href)
                var held: String?
                var broken = false
                var reader = VCardReader()
                reader.today = context.today
                var bytes = Array(card.text.utf8)
                func body(_ entry: ImportEntry) {
                    switch entry {
                    case .card(let parsed, _): held = parsed.id
                    case .skipped(let problem): if let uid = problem.uid { held = uid } else { broken = true }
                    }
                    guard failure == nil else { return }
                    do { try emit(shown, entry) } catch { failure = error }
                }
                bytes.withUnsafeMutableBytes { reader.feed(UnsafeRawBufferPointer($0), body) }
                reader.finish(body)
                if let failure { throw failure }
                bytesRead(bytes.count)
                // A card that names no contact (cut off, not a vCard) may still be the one it was: keep that.
                if held == nil, broken { continue }
                if let old = ids[card.href], old != held { gone.insert(old) }
                ids[card.href] = held
                if let held { emitted.insert(held) }
            }
            state.books.append(book)
            // `.unchanged` hands back no ETags: the stored ones stand.
            state.sync[book.url] = changes.method == .unchanged ? previous?.sync[book.url] ?? changes.state : changes.state
            state.ids[book.url] = ids
        }
        let skipped = synced.flatMap(\.1.skipped)
        if first {
            return SourceOutcome(coverage: .complete, state: state.encoded, skipped: skipped)
        }
        // Books no longer read (gone from the server, or from `books =`) take their contacts along.
        for (url, ids) in previous?.ids ?? [:] where state.ids[url] == nil { gone.formUnion(ids.values) }
        // An id still held by another href (a card moved between books) stays.
        var held = emitted
        for ids in state.ids.values { held.formUnion(ids.values) }
        return SourceOutcome(coverage: .changes(removed: gone.subtracting(held).sorted()), state: state.encoded, skipped: skipped)
    }

    // MARK: - Write-back

    /// Writes `birthday` (nil: no birthday) into the card of `contactID` on
    /// the server (docs/design/sources.md, write-back): the card is fetched as the server
    /// holds it, only its BDAY line is changed, and it is PUT with `If-Match`
    /// (a 412 fetches it again and applies the change once more). The card as
    /// written goes into the store, with its new ETag, so the next sync does
    /// not fetch it again, and the hand entry (or "no birthday") the command
    /// recorded is dropped: the card holds the birthday now, and a later edit
    /// on the phone wins as any card change does. Throws `SourceError` (one
    /// line) when the card is not known, the server did not take it, or its
    /// text cannot be changed in its BDAY line alone (refused before the PUT);
    /// the hand entry then stays.
    public func writeBirthday(_ birthday: Birthday?, contactID: String, store: BuzzDatabase, now: Int64,
                              includeByDefault: Bool) throws {
        guard let stored = try store.sourceState(id), let state = stored.state.flatMap(CardDAVState.decode),
              let (bookURL, href) = state.href(of: contactID) else {
            throw SourceError.runtime("the card of \(contactID) is not known from the server yet (buzz sync reads it)")
        }
        let client = try makeClient()
        let outcome: Result<RemoteCard, BirthdayLineError>
        do {
            outcome = try blocking {
                let card = try await client.get(href: href)
                if let hook = CardDAVSource.afterFetchForWrite.withLock({ hooks in hooks.first { bookURL.hasPrefix($0.key) }?.value }) {
                    try await hook()
                }
                let property = birthday.map { birthdayProperty(year: $0.year, month: $0.month, day: $0.day, forCard: card.text) }
                do {
                    return .success(try await client.writeBirthday(href: href, property: property, known: card))
                } catch let refused as BirthdayLineError {
                    return .failure(refused)
                }
            }
        } catch var error as SourceError {
            // A sync is tried again by itself; a write-back is not: the user runs the command again.
            error.message = error.message.replacingOccurrences(of: " (tried again at the next sync)", with: "")
                + "; run the command again to write it"
            throw error
        }
        // Refused before the PUT (the card's text cannot be changed in its BDAY
        // line alone): running the command again would not help.
        let written: RemoteCard
        switch outcome {
        case .success(let card): written = card
        case .failure(let refused):
            throw SourceError.runtime("\(href.removingPercentEncoding ?? href): \(refused.message), so nothing was sent")
        }
        _ = try store.syncSource(id, label: stored.label, now: stored.syncedAt ?? now, includeByDefault: includeByDefault) { session in
            var reader = VCardReader()
            reader.today = context.today
            var bytes = Array(written.text.utf8)
            var cards: [ContactCard] = []
            let body: (ImportEntry) -> Void = { entry in
                if case .card(let card, _) = entry { cards.append(card) }
            }
            bytes.withUnsafeMutableBytes { reader.feed(UnsafeRawBufferPointer($0), body) }
            reader.finish(body)
            for card in cards { try session.add(card: card) }
            var next = state
            // The ETag the server gave the written card: the next sync sees it unchanged.
            next.sync[bookURL]?.etags[href] = written.etag ?? ""
            return SourceOutcome(coverage: .changes(removed: []), fingerprint: stored.fingerprint, state: next.encoded)
        }
        // The card says it now: no hand entry (nor "no birthday") over it, so a
        // later change made on the phone shows here too.
        try store.setManualBirthday(nil, for: contactID, now: now)
    }

    /// Tests only: runs between the GET and the PUT of a write-back to a book whose URL
    /// starts with the key (to change the card on that server, and on no other test's).
    static let afterFetchForWrite = Mutex<[String: @Sendable () async throws -> Void]>([:])

    // MARK: - Plumbing

    private func makeClient() throws -> CardDAVClient {
        let password = try options.password.map(readPassword)
        let configuration = CardDAVConfiguration(name: id, url: options.url, username: options.username, books: options.books,
                                                 insecure: options.insecure, caFile: options.caFile.map(context.resolvePath),
                                                 timeout: Double(options.timeout))
        do {
            return try CardDAVClient(configuration: configuration, password: password, scrubber: context.scrubber)
        } catch {
            throw sourceError(error)
        }
    }

    /// The password by the rules the smtp channel reads its own by (`SecretReader`).
    private func readPassword(_ secret: ChannelConfig.SecretSource) throws -> String {
        do {
            return try SecretReader.read(secret, for: label, environment: context.environment,
                                         configDirectory: context.configDirectory, resolvePath: context.resolvePath)
        } catch {
            // The report line names the source already.
            let message = context.scrubber.scrub(error.message)
            throw SourceError.request(message.hasPrefix(label + ": ") ? String(message.dropFirst(label.count + 2)) : message)
        }
    }

    /// A client error as the source's: one line, without the source's name twice.
    private func sourceError(_ error: any Error) -> SourceError {
        guard let error = error as? CardDAVError else {
            if let error = error as? SourceError { return error }
            return SourceError.runtime(context.scrubber.scrub("\(error)"))
        }
        let message = error.message.hasPrefix(id + ": ") ? String(error.message.dropFirst(id.count + 2)) : error.message
        return SourceError(error.kind == .configuration ? .request : .runtime, message)
    }

    /// Runs `body` on the CardDAV thread and waits for it here (a source reads
    /// on a thread of its own). Not Dispatch: an idle `run` must not wake.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let waiter = Waiter<T>()
        let executor = CardDAVSource.executor(for: id)
        Task(executorPreference: executor) {
            do {
                waiter.put(.success(try await executor.run(body)))
            } catch {
                waiter.put(.failure(error))
            }
        }
        do {
            return try waiter.take().get()
        } catch {
            throw sourceError(error)
        }
    }

    /// One thread per source for its CardDAV transfers, made on first use: a
    /// server that never answers holds up only its own source, not the others
    /// (in `run`, and in `tick`'s budget).
    private static func executor(for source: String) -> BlockingExecutor {
        executors.withLock { executors in
            if let executor = executors[source] { return executor }
            let executor = BlockingExecutor(name: "birthdaybuzz.carddav")
            executors[source] = executor
            return executor
        }
    }

    private static let executors = Mutex<[String: BlockingExecutor]>([:])
}

/// One result handed from a task to a waiting thread.
private final class Waiter<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func put(_ value: Result<T, any Error>) {
        condition.lock()
        result = value
        condition.signal()
        condition.unlock()
    }

    func take() -> Result<T, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}

/// What a carddav source keeps between syncs (the store's opaque `state`).
///
/// Stored as text a sync reads and writes quickly even for 10,000 cards (a
/// JSON coder costs a tenth of a second each way there): a header line, a JSON
/// line with the books and their tokens, then per book a `#URL` line and one
/// `href TAB =etag TAB contact-id` line per card (an empty field: none; tab,
/// newline and backslash escaped).
struct CardDAVState: Sendable {
    var books: [AddressBook] = []
    /// Book URL → its sync token, ctag and ETags by href.
    var sync: [String: SyncState] = [:]
    /// Book URL → href → the contact id its card holds.
    var ids: [String: [String: String]] = [:]

    static let header = "buzz-carddav-state 1"

    private struct Head: Codable {
        var books: [AddressBook]
        var tokens: [String: [String?]]

        enum CodingKeys: String, CodingKey {
            case books = "b"
            case tokens = "t"
        }
    }

    /// The books and their tokens and ctags only (no ETags, no ids): the
    /// first two lines.
    static func decodeHead(_ text: String) -> CardDAVState? {
        let utf8 = text.utf8
        guard let end = utf8.firstIndex(of: 0x0A) else { return nil }
        let rest = utf8[utf8.index(after: end)...]
        return decode(head: utf8[..<end], rest.prefix { $0 != 0x0A })
    }

    private static func decode(head first: Substring.UTF8View.SubSequence, _ second: Substring.UTF8View.SubSequence) -> CardDAVState? {
        guard String(Substring(first)) == header, let head = try? JSONDecoder().decode(Head.self, from: Data(second)) else { return nil }
        var state = CardDAVState()
        state.books = head.books
        for (url, tokens) in head.tokens {
            state.sync[url] = SyncState(syncToken: tokens.first ?? nil, ctag: tokens.count > 1 ? tokens[1] : nil)
        }
        return state
    }

    static func decode(_ text: String) -> CardDAVState? {
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false)[...]
        guard lines.count >= 2, var state = decode(head: lines.removeFirst(), lines.removeFirst()) else { return nil }
        var book: String?
        var etags: [String: String] = [:]
        var ids: [String: String] = [:]
        func close() {
            guard let book else { return }
            state.sync[book, default: SyncState()].etags = etags
            state.ids[book] = ids
        }
        for line in lines where !line.isEmpty {
            if line.first == UInt8(ascii: "#") {
                close()
                book = unescaped(line.dropFirst())
                etags = [:]
                ids = [:]
                continue
            }
            let fields = line.split(separator: 0x09, maxSplits: 2, omittingEmptySubsequences: false)
            guard book != nil, fields.count == 3 else { return nil }
            let href = unescaped(fields[0])
            if fields[1].first == UInt8(ascii: "=") { etags[href] = unescaped(fields[1].dropFirst()) }
            if !fields[2].isEmpty { ids[href] = unescaped(fields[2]) }
        }
        close()
        return state
    }

    var encoded: String? {
        var tokens: [String: [String?]] = [:]
        for (url, sync) in sync { tokens[url] = [sync.syncToken, sync.ctag] }
        guard let head = try? JSONEncoder().encode(Head(books: books, tokens: tokens)) else { return nil }
        var out = CardDAVState.header + "\n" + String(decoding: head, as: UTF8.self) + "\n"
        let urls = Set(sync.keys).union(ids.keys).sorted()
        for url in urls {
            out += "#" + CardDAVState.escaped(url) + "\n"
            let etags = sync[url]?.etags ?? [:]
            let held = ids[url] ?? [:]
            for href in Set(etags.keys).union(held.keys).sorted() {
                out += CardDAVState.escaped(href) + "\t" + (etags[href].map { "=" + CardDAVState.escaped($0) } ?? "") + "\t"
                    + (held[href].map(CardDAVState.escaped) ?? "") + "\n"
            }
        }
        return out
    }

    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }

    private static func unescaped(_ bytes: Substring.UTF8View.SubSequence) -> String {
        guard bytes.contains(0x5C) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var escaping = false
        for byte in bytes {
            if escaping {
                switch byte {
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                default: out.append(byte)
                }
                escaping = false
            } else if byte == 0x5C {
                escaping = true
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The book and href of the card that holds `contactID` (the first book's, if several do).
    func href(of contactID: String) -> (book: String, href: String)? {
        for book in books {
            if let href = ids[book.url]?.first(where: { $0.value == contactID })?.key { return (book.url, href) }
        }
        return nil
    }
}

/// The stored state, decoded once on first use (from whichever thread asks first).
final class LazyCardDAVState: Sendable {
    private let text: String?
    private let decoded = Mutex<CardDAVState??>(nil)

    init(_ text: String?) { self.text = text }

    var value: CardDAVState? {
        decoded.withLock { decoded in
            if let done = decoded { return done }
            let state = text.flatMap(CardDAVState.decode)
            decoded = .some(state)
            return state
        }
    }
}

extension CardDAVSource: SourceType {
    public static let typeName = "carddav"

    public static func options(from table: TableReader) throws -> CardDAVSourceOptions {
        guard let url = try table.string("url"), !url.isEmpty else {
            throw table.problem("url", "missing: the server, e.g. \"https://cloud.example.com/remote.php/dav\"")
        }
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw table.problem("url", "must start with https:// (or http:// for a server on this machine)")
        }
        let password = try table.secretSource()
        let username = try table.string("username")
        if password != nil, username == nil {
            throw table.problem("username", "missing: a password needs the username it goes with")
        }
        if let problem = CardDAVClient.urlProblem(url, sendsPassword: password != nil) {
            throw table.problem("url", problem)
        }
        let interval = try table.duration("interval") ?? CardDAVSourceOptions.defaultInterval
        guard interval >= 60 else { throw table.problem("interval", "must be at least 1m") }
        let timeout = try table.duration("timeout") ?? 60
        guard timeout >= 1 else { throw table.problem("timeout", "must be at least 1s") }
        return CardDAVSourceOptions(url: url, username: username, password: password, books: try table.stringArray("books") ?? [],
                                    interval: interval, insecure: try table.bool("insecure") ?? false,
                                    caFile: try table.string("ca_file"), writeBack: try table.bool("write_back") ?? false,
                                    timeout: timeout)
    }
}

/// `type = "carddav"`: the address books on a CardDAV server (RFC 6352), kept
/// in step by `sync`, `tick` (once `interval` has passed) and `run` (every
/// `interval`). The password follows the channels' secret rules.
public struct CardDAVSourceOptions: Sendable, Equatable {
    /// The server, a principal, or one address book.
    public var url: String
    public var username: String?
    /// Where the password comes from (`password_env`, `password_file`, `password_command`).
    public var password: ChannelConfig.SecretSource?
    /// Display names or hrefs of the address books to read; empty: all of them.
    public var books: [String]
    /// Seconds between syncs by the clock (`run`, `tick`).
    public var interval: Int
    public var insecure: Bool
    public var caFile: String?
    /// `set-birthday` / `clear-birthday` change the card on the server.
    public var writeBack: Bool
    /// Seconds one request may take.
    public var timeout: Int

    public static let defaultInterval = 15 * 60

    public init(url: String, username: String? = nil, password: ChannelConfig.SecretSource? = nil, books: [String] = [],
                interval: Int = CardDAVSourceOptions.defaultInterval, insecure: Bool = false, caFile: String? = nil,
                writeBack: Bool = false, timeout: Int = 60) {
        self.url = url
        self.username = username
        self.password = password
        self.books = books
        self.interval = interval
        self.insecure = insecure
        self.caFile = caFile
        self.writeBack = writeBack
        self.timeout = timeout
    }
}
