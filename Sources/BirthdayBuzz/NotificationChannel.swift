/// A rendered message, ready for any channel (docs/design/channels.md).
public struct Message: Sendable, Hashable {
    /// What the message is about; the generic webhook body's `event`.
    /// What a message is: a reminder of some occasion kind (`birthday.reminder`,
    /// `anniversary.reminder`, …: `OccasionKind.messageKind`), an ask, a wish, a
    /// notice, a digest, or a plain message (`buzz send`).
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public static let reminder = Kind(rawValue: OccasionKind.birthday.messageKind)
        /// A reminder of a contact's anniversary.
        public static let anniversary = Kind(rawValue: OccasionKind.anniversary.messageKind)
        public static let ask = Kind(rawValue: "birthday.ask")
        /// A birthday greeting to the contact.
        public static let wish = Kind(rawValue: "birthday.wish")
        /// To the user: reminders that no channel delivered, and what to do.
        public static let notice = Kind(rawValue: "notice")
        /// To the user: a summary of the coming occasions (`[digests.NAME]`).
        public static let digest = Kind(rawValue: "digest")
        public static let message = Kind(rawValue: "message")

        /// The reminders of an occasion kind.
        public static func reminder(of kind: OccasionKind) -> Kind { Kind(rawValue: kind.messageKind) }

        /// The occasion kind a reminder is about; nil for asks, wishes and the rest.
        public var occasionKind: OccasionKind? { OccasionKind.withMessageKind(rawValue) }

        /// A reminder of any occasion kind.
        public var isReminder: Bool { occasionKind != nil }

        public var description: String { rawValue }
    }

    /// The contact a message is about.
    public struct ContactRef: Sendable, Hashable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Where a message addressed to a contact goes (an ask), instead of the channel's own `to`.
    public enum Recipient: Sendable, Hashable {
        case email(String)
        case phone(String)

        public var address: String {
            switch self {
            case .email(let address), .phone(let address): return address
            }
        }
    }

    public var kind: Kind
    /// The event id (`<contact>/<offset>/<date>`, `<contact>/ask/<n>`) or a random id for `send`.
    /// Channels derive Message-ID, Idempotency-Key and Matrix txnId from it.
    public var id: String
    public var title: String
    public var body: String
    public var contact: ContactRef?
    public var occurrence: LocalDate?
    public var daysUntil: Int?
    /// BCP 47 tag of the language the text is in.
    public var locale: String
    public var urgency: ChannelConfig.Urgency
    public var recipient: Recipient?

    public init(kind: Kind = .message, id: String, title: String, body: String, contact: ContactRef? = nil,
                occurrence: LocalDate? = nil, daysUntil: Int? = nil, locale: String = "en",
                urgency: ChannelConfig.Urgency = .normal, recipient: Recipient? = nil) {
        self.kind = kind
        self.id = id
        self.title = title
        self.body = body
        self.contact = contact
        self.occurrence = occurrence
        self.daysUntil = daysUntil
        self.locale = locale
        self.urgency = urgency
        self.recipient = recipient
    }
}

/// Why a delivery failed, and whether trying again can help.
public struct DeliveryError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Outcome: Sendable, Hashable {
        /// Worth retrying, not before `retryAfter` seconds when the server said so.
        case temporary(retryAfter: Double?)
        /// Retrying cannot help (bad credentials, a 4xx, a refused recipient).
        case permanent
    }

    public var outcome: Outcome
    /// One line a user understands; never holds a secret.
    public var message: String
    /// The channel itself takes nothing now, whatever the message: the server
    /// said to wait (`Retry-After`), or it cannot be reached. The dispatcher then
    /// holds the pass's other messages for it until the same retry time instead
    /// of sending each into the same wall (a rate-limited server, N timeouts).
    public var channelUnavailable = false

    public init(_ outcome: Outcome, _ message: String) {
        self.outcome = outcome
        self.message = message
    }

    public static func temporary(_ message: String, retryAfter: Double? = nil) -> DeliveryError {
        var error = DeliveryError(.temporary(retryAfter: retryAfter), message)
        error.channelUnavailable = retryAfter != nil
        return error
    }

    /// A temporary failure of the channel as a whole (no connection, no bus, a timeout).
    public static func unavailable(_ message: String) -> DeliveryError {
        var error = DeliveryError(.temporary(retryAfter: nil), message)
        error.channelUnavailable = true
        return error
    }

    public static func permanent(_ message: String) -> DeliveryError {
        DeliveryError(.permanent, message)
    }

    public var isTemporary: Bool {
        if case .temporary = outcome { return true }
        return false
    }

    public var retryAfter: Double? {
        if case .temporary(let after) = outcome { return after }
        return nil
    }

    public var description: String { message }
}

/// A place messages can be delivered: the plugin protocol every channel type implements.
///
/// One essential requirement, `deliver(_:)`; `validate()` and `shutdown()` have
/// defaults. Adapters throw `DeliveryError` so callers know whether to retry.
/// Channels are built per process and reused for a batch (keep-alive
/// connections live inside the adapter).
public protocol NotificationChannel: Sendable {
    /// The `[channels.NAME]` name.
    var name: String { get }

    /// Delivers one message; throws `DeliveryError`.
    func deliver(_ message: Message) async throws

    /// Checks the endpoint answers (for `doctor`); throws `DeliveryError` saying what is wrong in plain words.
    func validate() async throws

    /// Releases connections; called once when the process is done with the channel.
    func shutdown() async
}

extension NotificationChannel {
    public func validate() async throws {}
    public func shutdown() async {}
}
