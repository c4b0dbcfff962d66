import BirthdayBuzz
import Foundation
import Testing

/// The checks every channel type must pass, written once (like
/// swift-configuration's provider compatibility tests): a test target lists
/// its channel types in one table of `ChannelConformance.Case`s, each with a
/// way to start a live far end (`ChannelConformanceFixture`), and runs each
/// check over the table. A new channel type is one more row.
///
/// The checks:
/// - `run(_:recipient:received:)`: every sample message arrives once, its title intact;
/// - `checkRefusals(_:types:)`: a bad option table is refused when the config
///   loads, with one line that names the option;
/// - `checkOutcomes(_:)`: each way the far end can fail is classed as the
///   type says (temporary, with the server's retry-after where it gives one,
///   or permanent);
/// - `checkSecretsNeverShow(_:)`: no error text holds a secret of the
///   channel's options, even when the far end says it back;
/// - `checkIdempotencyKeyReused(_:)`: a retry of the same ledger event carries
///   the same idempotency key (`Idempotency-Key`, `Message-ID`, the payload's
///   `id`) as the attempt before it, and another event carries another.
///
/// Failures are recorded with `#expect`, each naming the case.
public enum ChannelConformance {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// What a delivery must end in.
    public enum Expected: Sendable, Equatable, CustomStringConvertible {
        case delivered
        /// A temporary failure; `retryAfter` is the wait the server asked for (nil: none).
        case temporary(retryAfter: Double?)
        case permanent

        public static let temporary = Expected.temporary(retryAfter: nil)

        public var description: String {
            switch self {
            case .delivered: "delivered"
            case .temporary(let after): "temporary" + (after.map { " (retry after \($0) s)" } ?? "")
            case .permanent: "permanent"
            }
        }
    }

    /// One behaviour of the far end (an HTTP status, an SMTP reply, an exit
    /// status, a bus without a notification server) and what a delivery that
    /// meets it must end in.
    public struct FarEnd: Sendable, Hashable, CustomStringConvertible {
        /// Names the behaviour; the fixture arranges it by this name.
        public var label: String
        public var expected: Expected
        /// Whether the far end says the channel's secrets back (in its reply,
        /// on the plugin's standard error): the error text must still not show them.
        public var echoesSecrets: Bool

        public init(_ label: String, _ expected: Expected, echoesSecrets: Bool = false) {
            self.label = label
            self.expected = expected
            self.echoesSecrets = echoesSecrets
        }

        /// The far end takes the message.
        public static let accepts = FarEnd("accepts", .delivered)

        public var description: String { "\(label) → \(expected)" }

        public static func == (lhs: FarEnd, rhs: FarEnd) -> Bool { lhs.label == rhs.label }
        public func hash(into hasher: inout Hasher) { hasher.combine(label) }
    }

    /// An option table the type must refuse when the config loads.
    public struct Refusal: Sendable, CustomStringConvertible {
        /// The table's lines after `type = "…"`, in TOML.
        public var options: String
        /// The option the error must name (`channels.NAME.<key>`).
        public var key: String

        public init(_ options: String, names key: String) {
            self.options = options
            self.key = key
        }

        public var description: String { options.split(separator: "\n").joined(separator: "; ") }
    }

    /// One channel type (or one form of it that takes its own path, such as a
    /// webhook preset or an Apprise URL), as a row of the conformance table.
    public struct Case: Sendable, CustomTestStringConvertible {
        /// The row's name in test output: `webhook (telegram preset)`.
        public var name: String
        /// The `type = "…"` value.
        public var typeName: String
        /// Option tables the type refuses when the config loads.
        public var refusals: [Refusal]
        /// Starts a live far end and a channel built for it; nil for a type
        /// without one that can fail (`console`).
        public var start: (@Sendable () async throws -> any ChannelConformanceFixture)?
        /// Whether its options hold a secret (a token, a password): the secret check runs on it.
        public var holdsSecrets: Bool
        /// Whether it sends an idempotency key (an HTTP header, a Message-ID, the
        /// payload's `id`): the retry check runs on it. A desktop notification has none.
        public var sendsIdempotencyKey: Bool

        public init(_ name: String, type typeName: String, refusals: [Refusal], holdsSecrets: Bool = true,
                    sendsIdempotencyKey: Bool = true,
                    start: (@Sendable () async throws -> any ChannelConformanceFixture)?) {
            self.name = name
            self.typeName = typeName
            self.refusals = refusals
            self.holdsSecrets = holdsSecrets
            self.sendsIdempotencyKey = sendsIdempotencyKey
            self.start = start
        }

        public var testDescription: String { name }
    }

    // MARK: - Samples

    /// Sample messages covering the shapes a channel must carry intact: a
    /// reminder with a non-ASCII, quote-laden name, an ask addressed to a
    /// contact, a plain message with an empty body.
    public static func sampleMessages(recipient: Message.Recipient? = nil) -> [Message] {
        [
            Message(kind: .reminder, id: "urn:uuid:conformance/1/2027-03-15", title: "Geburtstag von Jürgen \"Jo\" O'Brien",
                    body: "Morgen wird Jürgen 40 — gratulieren!", contact: .init(id: "urn:uuid:conformance", name: "Jürgen O'Brien"),
                    occurrence: LocalDate(year: 2027, month: 3, day: 15), daysUntil: 1, locale: "de"),
            Message(kind: .ask, id: "urn:uuid:conformance/ask/1", title: "Quick question", body: "When is your birthday?",
                    contact: .init(id: "urn:uuid:conformance", name: "Sam"), locale: "en", recipient: recipient),
            Message(kind: .message, id: "send/conformance", title: "Plain", body: "", locale: "en"),
        ]
    }

    /// A reminder as the dispatcher builds it from a ledger row: its `id` is the
    /// row's event id, the key every attempt of that row is sent with.
    public static func reminder(eventID: String = "urn:uuid:ada/0/2027-03-15") -> Message {
        Message(kind: .reminder, id: eventID, title: "Ada Lovelace turns 37 today", body: "Say hello.",
                contact: .init(id: "urn:uuid:ada", name: "Ada Lovelace"), occurrence: LocalDate(year: 2027, month: 3, day: 15),
                daysUntil: 0, locale: "en")
    }

    // MARK: - Checks

    /// Delivers every sample and checks, through `received`, that each arrived
    /// once with its title intact. `received` returns the titles seen so far.
    public static func run(_ channel: any NotificationChannel, recipient: Message.Recipient? = nil,
                           received: () async throws -> [String]) async throws {
        let messages = sampleMessages(recipient: recipient)
        for message in messages { try await channel.deliver(message) }
        let titles = try await received()
        for message in messages where titles.filter({ $0 == message.title }).count != 1 {
            throw Failure(description: "\(channel.name): \"\(message.title)\" arrived \(titles.filter { $0 == message.title }.count) times; received \(titles)")
        }
        await channel.shutdown()
    }

    /// The name the checks give the channel table (`[channels.conformance]`).
    public static let channelName = "conformance"

    /// Loads each refusal's table as `buzz` loads a config (the type's own
    /// option checks, through `types`) and expects a `ConfigError` on one
    /// line that names `channels.conformance.<key>`.
    public static func checkRefusals(_ row: Case, types: ConfigTypes,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!row.refusals.isEmpty, "\(row.name): no bad option table to refuse", sourceLocation: sourceLocation)
        for refusal in row.refusals {
            let toml = "[channels.\(channelName)]\ntype = \"\(row.typeName)\"\n\(refusal.options)\n"
            do {
                _ = try BuzzConfig(toml: toml, file: "config.toml", environment: [:],
                                   systemTimeZone: TimeZone(identifier: "UTC")!, types: types)
                Issue.record("\(row.name): \(refusal) was accepted", sourceLocation: sourceLocation)
            } catch {
                let text = error.description
                #expect(!text.contains("\n") && !text.contains("\r"), "\(row.name): \(refusal): not one line: \(text)",
                        sourceLocation: sourceLocation)
                #expect(text.contains("channels.\(channelName).\(refusal.key): "),
                        "\(row.name): \(refusal): does not name \(refusal.key): \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Meets each of the fixture's far ends once and checks the outcome: the
    /// class (temporary or permanent), the server's retry-after where one is
    /// expected, and an error text of one line.
    public static func checkOutcomes(_ row: Case, _ fixture: any ChannelConformanceFixture,
                                     sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let farEnds = fixture.farEnds
        #expect(farEnds.contains { $0.expected == .delivered }, "\(row.name): no far end that takes a message",
                sourceLocation: sourceLocation)
        #expect(farEnds.contains { $0.expected != .delivered }, "\(row.name): no far end that fails",
                sourceLocation: sourceLocation)
        for farEnd in farEnds {
            let outcome = try await attempt(fixture, reminder(), meeting: farEnd)
            #expect(outcome.expected == farEnd.expected,
                    "\(row.name): \(farEnd.label): expected \(farEnd.expected), got \(outcome.expected): \(outcome.text)",
                    sourceLocation: sourceLocation)
            #expect(!outcome.text.contains("\n") && !outcome.text.contains("\r"),
                    "\(row.name): \(farEnd.label): the error is not one line: \(outcome.text)", sourceLocation: sourceLocation)
        }
    }

    /// Meets every failing far end and checks that no error text holds one of
    /// the fixture's secrets (nor its percent-encoded or Basic-auth forms,
    /// which the fixture lists too). Channels themselves log nothing: their
    /// error text is what the dispatcher logs and keeps in the ledger.
    public static func checkSecretsNeverShow(_ row: Case, _ fixture: any ChannelConformanceFixture,
                                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let secrets = fixture.secrets
        #expect(!secrets.isEmpty, "\(row.name): the fixture configures no secret", sourceLocation: sourceLocation)
        for farEnd in fixture.farEnds where farEnd.expected != .delivered {
            let outcome = try await attempt(fixture, reminder(), meeting: farEnd)
            #expect(!outcome.text.isEmpty, "\(row.name): \(farEnd.label): no error", sourceLocation: sourceLocation)
            for secret in secrets where outcome.text.contains(secret) {
                Issue.record("\(row.name): \(farEnd.label): the error shows the secret \"\(secret)\": \(outcome.text)",
                             sourceLocation: sourceLocation)
            }
        }
    }

    /// One event fails with the fixture's `retryable` far end, then is sent
    /// again and taken, then another event is sent: the first two attempts must
    /// carry the key the fixture derives from the event id, the third another.
    public static func checkIdempotencyKeyReused(_ row: Case, _ fixture: any ChannelConformanceFixture,
                                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        guard let retryable = fixture.retryable else {
            Issue.record("\(row.name): no retryable far end", sourceLocation: sourceLocation)
            return
        }
        let first = reminder(eventID: "urn:uuid:ada/0/2027-03-15")
        let other = reminder(eventID: "urn:uuid:ada/7/2027-03-15")
        let failed = try await attempt(fixture, first, meeting: retryable)
        #expect(failed.expected == retryable.expected && retryable.expected != .delivered && retryable.expected != .permanent,
                "\(row.name): \(retryable.label) should fail for now: \(failed.expected) \(failed.text)", sourceLocation: sourceLocation)
        for message in [first, other] {
            let taken = try await attempt(fixture, message, meeting: .accepts)
            #expect(taken.expected == .delivered, "\(row.name): not delivered: \(taken.text)", sourceLocation: sourceLocation)
        }
        let keys = try await fixture.idempotencyKeys()
        let expected = [fixture.idempotencyKey(forEventID: first.id), fixture.idempotencyKey(forEventID: first.id),
                        fixture.idempotencyKey(forEventID: other.id)]
        #expect(keys == expected, "\(row.name): the keys of the three attempts", sourceLocation: sourceLocation)
        #expect(expected[0] != expected[2], "\(row.name): two events share a key", sourceLocation: sourceLocation)
    }

    /// What one delivery ended in, and its error text ("" when delivered).
    public static func attempt(_ fixture: any ChannelConformanceFixture, _ message: Message,
                               meeting farEnd: FarEnd) async throws -> (expected: Expected, text: String) {
        do {
            try await fixture.deliver(message, meeting: farEnd)
            return (.delivered, "")
        } catch let error as DeliveryError {
            switch error.outcome {
            case .temporary(let after): return (.temporary(retryAfter: after), error.message)
            case .permanent: return (.permanent, error.message)
            }
        }
    }
}

/// A channel of one type with a live far end the test suite started (an HTTP
/// or SMTP sink, a plugin script, a private session bus), for
/// `ChannelConformance`'s checks. Built from its options table as `buzz`
/// builds it.
public protocol ChannelConformanceFixture {
    /// The far ends this type classes, each with its expected outcome; one accepts.
    var farEnds: [ChannelConformance.FarEnd] { get }
    /// A far end that fails for now and sees the attempt (for the key check);
    /// nil for a type without an idempotency key.
    var retryable: ChannelConformance.FarEnd? { get }
    /// Every secret the channel's options hold, in each form it could be shown
    /// (as written, percent-encoded, `Basic` credentials).
    var secrets: [String] { get }
    /// Delivers `message` so that it meets `farEnd` (the fixture arranges the
    /// far end, and picks the channel: one built for a refused port or a silent
    /// server where the far end is elsewhere); throws the channel's `DeliveryError`.
    func deliver(_ message: Message, meeting farEnd: ChannelConformance.FarEnd) async throws
    /// The idempotency key of every attempt the far end saw, in order.
    func idempotencyKeys() async throws -> [String]
    /// The key the far end must see for an event.
    func idempotencyKey(forEventID id: String) -> String
    /// Stops what the fixture started.
    func stop() async
}

extension ChannelConformanceFixture {
    public var retryable: ChannelConformance.FarEnd? { nil }
    public func idempotencyKeys() async throws -> [String] { [] }
    public func idempotencyKey(forEventID id: String) -> String { id }
}
