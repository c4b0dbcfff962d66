public import BirthdayBuzz
#if canImport(Glibc)
import Glibc
#endif

/// A desktop notification on the session bus: `org.freedesktop.Notifications.Notify` (docs/design/channels.md).
///
/// The channel keeps one bus connection for its lifetime, opened on the first
/// delivery and closed by `shutdown()`. It finds the bus the way cron jobs and
/// systemd timers need: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`,
/// else `/run/user/<uid>/bus`. No bus, or no notification server on it (before
/// login), is a temporary failure.
///
/// Urgency: a message that asks for `low` or `critical` gets it; a `normal`
/// message gets the channel's `urgency`.
///
/// ```swift
/// let channel = DBusChannel(name: "desktop", options: options, timeout: 10,
///                           environment: ProcessInfo.processInfo.environment)
/// try await channel.deliver(message)
/// ```
public struct DBusChannel: NotificationChannel {
    /// The `[channels.NAME]` name.
    public let name: String
    /// Urgency and expiry from the channel's table.
    public let options: Options
    /// Seconds to wait for the bus and the notification server, per call.
    public let timeout: Double
    let connection: DBusConnection
    /// Who keeps the notification ids of reminders that carry actions (the daemon); nil: no actions.
    let actions: (any NotificationActionRecorder)?

    /// - Parameter environment: where the session bus address is looked up (the process environment, normally).
    public init(name: String, options: Options, timeout: Double, environment: [String: String]) {
        self.init(name: name, options: options, timeout: timeout,
                  connection: DBusConnection(environment: environment))
    }

    /// - Parameter actions: set by `buzz run` only: a day-of reminder then offers
    ///   "Send wishes" and "Remind me later" on a server with the `actions`
    ///   capability, and `actions` hears which notification id it got.
    public init(name: String, options: Options, timeout: Double, environment: [String: String],
                actions: (any NotificationActionRecorder)?) {
        self.init(name: name, options: options, timeout: timeout,
                  connection: DBusConnection(environment: environment), actions: actions)
    }

    init(name: String, options: Options, timeout: Double, connection: DBusConnection,
         actions: (any NotificationActionRecorder)? = nil) {
        self.name = name
        self.options = options
        self.timeout = timeout
        self.connection = connection
        self.actions = actions
    }

    /// Shows `message` as a desktop notification; throws a temporary `DeliveryError` without a bus or server.
    public func deliver(_ message: Message) async throws(DeliveryError) {
        _ = try await deliverReturningID(message)
    }

    /// Delivers `message` and returns the id the notification server gave it.
    public func deliverReturningID(_ message: Message) async throws(DeliveryError) -> UInt32 {
        let capabilities = try await serverCapabilities()
        let offered = actions != nil && capabilities.contains("actions") && Self.offersActions(message)
        // A reminder of a channel with `escalate`, shown by `buzz run` (the only one that listens): its
        // acknowledgement (a click, or a close by the user) is watched for, and without one it escalates.
        let watched = actions != nil && !options.escalate.isEmpty && Self.escalates(message)
        let call = Self.notify(message, urgency: options.urgency,
                               expireTimeout: Self.expireTimeout(options.expireTimeout,
                                                                 withActions: offered || !options.escalate.isEmpty),
                               escapingMarkup: capabilities.contains("body-markup"),
                               actions: offered ? Self.reminderActions : [])
        // With actions, or watched, over the listener's connection: servers send their signals back to the
        // connection that asked.
        let reply: DBusReply
        if offered || watched, let actions {
            let listener = actions.listener, timeout = timeoutMilliseconds
            reply = try await perform { () throws(DBusFailure) in
                try await connection.onQueue { () throws(DBusFailure) in try listener.notify(call, timeout: timeout) }
            }
        } else {
            reply = DBusReply(values: try await perform(call), sender: nil)
        }
        guard case .uint32(let id)? = reply.values.first else {
            throw .temporary("\(name): the notification server answered Notify without a notification id")
        }
        // The bus daemon stamps every message it routes with its sender, so a
        // reply always names the server; without one, no click could be checked.
        if offered || watched, let actions, let server = reply.sender {
            actions.shown(notification: id, server: server, message: message, channel: name, watched: watched)
        }
        return id
    }

    /// `Notify`'s expire_timeout: the channel's when its table sets one; else 0
    /// (resident) for a notification with actions, whose buttons must outlast a
    /// server's default expiry (dunst's 10 s: its history shows the notification
    /// again without them), and for every notification of a channel with
    /// `escalate` (it stays until the user acts on it or closes it); -1 (the
    /// server's choice) for the others.
    static func expireTimeout(_ configured: Int?, withActions: Bool) -> Int {
        configured ?? (withActions ? 0 : -1)
    }

    /// The action key of "Send wishes" (namespaced: the server's signals reach every listener on the bus).
    public static let wishAction = "birthdaybuzz-wish"
    /// The action key of "Remind me later".
    public static let snoozeAction = "birthdaybuzz-snooze"
    /// `Notify`'s actions argument: key, label, key, label.
    static let reminderActions = [wishAction, "Send wishes", snoozeAction, "Remind me later"]

    /// Actions go on the day-of birthday reminder (a snoozed one included): the day to wish.
    static func offersActions(_ message: Message) -> Bool {
        message.kind == .reminder && message.daysUntil == 0 && message.contact != nil
    }

    /// What a channel with `escalate` watches and escalates when unseen: a reminder
    /// of any occasion (the ledger resends those; a notice, digest or wish notice
    /// is shown resident but not escalated).
    static func escalates(_ message: Message) -> Bool {
        message.kind.isReminder && message.contact != nil
    }

    /// Checks that a session bus is there and a notification server answers on it.
    public func validate() async throws(DeliveryError) {
        _ = try await perform(Self.server(member: "GetServerInformation"))
    }

    /// Closes the bus connection.
    public func shutdown() async {
        await connection.close()
    }

    // MARK: - The calls

    /// The `Notify` call for `message` (the specification's argument order:
    /// app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout).
    static func notify(_ message: Message, urgency channelUrgency: ChannelConfig.Urgency, expireTimeout: Int,
                       escapingMarkup: Bool, actions: [String] = []) -> DBusMethodCall {
        let hints: [(key: String, value: DBusValue)] = [
            ("urgency", .byte(urgencyByte(urgency(of: message, channel: channelUrgency)))),
            ("category", .string(category(of: message.kind))),
            ("desktop-entry", .string("birthdaybuzz")),
        ]
        var call = server(member: "Notify")
        call.arguments = [
            .string("BirthdayBuzz"),
            .uint32(0),
            .string("x-office-calendar"),
            .string(message.title),
            .string(escapingMarkup ? escapeMarkup(message.body) : message.body),
            .strings(actions),
            .variants(hints),
            .int32(Int32(clamping: max(-1, expireTimeout))),
        ]
        return call
    }

    static func server(member: String) -> DBusMethodCall {
        DBusMethodCall(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                       interface: "org.freedesktop.Notifications", member: member)
    }

    /// The message's own urgency when it asks for one, else the channel's.
    static func urgency(of message: Message, channel: ChannelConfig.Urgency) -> ChannelConfig.Urgency {
        message.urgency == .normal ? channel : message.urgency
    }

    /// The specification's urgency levels: 0 low, 1 normal, 2 critical.
    static func urgencyByte(_ urgency: ChannelConfig.Urgency) -> UInt8 {
        switch urgency {
        case .low: return 0
        case .normal: return 1
        case .critical: return 2
        }
    }

    /// Reminders of every occasion kind share one category (a user's rule for
    /// them in dunst or mako need not list the kinds).
    static func category(of kind: Message.Kind) -> String {
        switch kind {
        case .ask: return "x-birthdaybuzz.ask"
        case .wish: return "x-birthdaybuzz.wish"
        case .notice: return "x-birthdaybuzz.notice"
        case .digest: return "x-birthdaybuzz.digest"
        default: return "x-birthdaybuzz.reminder"
        }
    }

    /// A server with the `body-markup` capability reads the body as a small XML
    /// subset, so a plain-text "Anna & Ben <3" must arrive as entities. Quotes need
    /// no escaping outside attributes: O'Brien stays O'Brien.
    static func escapeMarkup(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// What the server can do (`body-markup`, `actions`, …); asked once per connection.
    private func serverCapabilities() async throws(DeliveryError) -> [String] {
        let reply = try await perform(Self.server(member: "GetCapabilities"), oncePerConnection: true)
        guard case .strings(let capabilities)? = reply.first else { return [] }
        return capabilities
    }

    private func perform(_ call: DBusMethodCall, oncePerConnection: Bool = false) async throws(DeliveryError) -> [DBusValue] {
        let connection = connection, timeout = timeoutMilliseconds
        return try await perform { () throws(DBusFailure) in
            try await connection.call(call, timeout: timeout, oncePerConnection: oncePerConnection)
        }
    }

    private func perform<T>(_ body: () async throws(DBusFailure) -> T) async throws(DeliveryError) -> T {
        do {
            return try await body()
        } catch {
            // "desktop: no D-Bus session bus …": the channel's name first, as every channel's failures.
            var failure = Self.deliveryError(for: error, timeout: timeout)
            failure.message = name + ": " + failure.message
            throw failure
        }
    }

    private var timeoutMilliseconds: Int32 {
        // libdbus's own default (25 s) for a channel without a usable timeout.
        guard timeout.isFinite, timeout > 0 else { return 25_000 }
        return Int32(clamping: Int64((timeout * 1000).rounded(.up)))
    }

    /// What a user reads when a call fails: one line, always temporary except for
    /// text libdbus cannot carry (retrying the same text cannot help).
    static func deliveryError(for failure: DBusFailure, timeout: Double) -> DeliveryError {
        switch failure {
        case .noSessionBus(let checked):
            return .unavailable("no D-Bus session bus (is a desktop session running? DBUS_SESSION_BUS_ADDRESS is unset "
                + "and there is no socket at \(checked.joined(separator: " or ")))")
        case .unreachable(let address, let detail):
            return .unavailable("no D-Bus session bus at \(address) (is a desktop session running? \(detail))")
        case .error(let name, let message):
            switch name {
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                return .unavailable("no notification server on the session bus (nothing owns org.freedesktop.Notifications)")
            case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
                 "org.freedesktop.DBus.Error.TimedOut":
                return .unavailable("the notification server did not answer within \(formatted(seconds: timeout)) s")
            case "org.freedesktop.DBus.Error.Disconnected":
                return .unavailable("lost the D-Bus session bus (\(message))")
            default:
                return .temporary("D-Bus error \(name): \(message)")
            }
        case .invalidArgument(let detail):
            return .permanent("the notification text cannot be sent over D-Bus (\(detail))")
        case .outOfMemory:
            return .temporary("out of memory while building the D-Bus message")
        case .libraryMissing(let detail):
            return .permanent(detail)
        }
    }

    private static func formatted(seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String(seconds)
    }
}

/// Keeps what a notification with actions was about, so that a click on it
/// (maybe heard by a later daemon) finds its event (docs/design/asks-and-wishes.md). `buzz run` only.
public protocol NotificationActionRecorder: Sendable {
    /// The connection that hears the clicks: a notification with actions is sent over it.
    var listener: NotificationListener { get }
    /// The server showed `message` as notification `id`, with the reminder's actions, for channel `channel`;
    /// `server` is the unique bus name that answered `Notify`, the only sender whose signals about it count.
    func shown(notification id: UInt32, server: String, message: Message, channel: String)
    /// The same, for a notification with actions or one `watched` for escalation (its channel sets
    /// `escalate`): unless the user acts on it or closes it, it is sent on after `escalate_after`.
    /// Default: the call above, for a notification with actions only.
    func shown(notification id: UInt32, server: String, message: Message, channel: String, watched: Bool)
}

extension NotificationActionRecorder {
    public func shown(notification id: UInt32, server: String, message: Message, channel: String, watched: Bool) {
        shown(notification: id, server: server, message: message, channel: channel)
    }
}

extension DBusChannel {
    static let notificationsName = "org.freedesktop.Notifications"

    /// Whether desktop notifications can be shown now: a session bus is there
    /// and a notification server owns `org.freedesktop.Notifications` on it, or
    /// the bus can start one (a D-Bus activatable server such as dunst or
    /// notification-daemon). The embedded default route includes `desktop` only
    /// then: a headless user bus would make every `tick` fail and retry all day.
    ///
    /// Blocks up to `timeout` milliseconds per call; no bus socket means no
    /// libdbus load and an immediate `false`.
    public static func notificationServerAvailable(environment: [String: String], timeout: Int32 = 1_000) -> Bool {
        guard DBusConnection.sessionBusAddress(environment: environment, uid: UInt32(getuid())) != nil else { return false }
        let connection = DBusConnection(environment: environment)
        func bus(_ member: String, _ arguments: [DBusValue] = []) throws(DBusFailure) -> [DBusValue] {
            try connection.callBlocking(DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                       interface: "org.freedesktop.DBus", member: member,
                                                       arguments: arguments), timeout: timeout)
        }
        do throws(DBusFailure) {
            if case .bool(true)? = try bus("NameHasOwner", [.string(notificationsName)]).first { return true }
            if case .strings(let names)? = try bus("ListActivatableNames").first { return names.contains(notificationsName) }
            return false
        } catch {
            return false
        }
    }
}

/// `type = "dbus"`: `urgency` (`low` | `normal` | `critical`), `expire_timeout`
/// (milliseconds; -1 the server's default, 0 never; unset: 0 for a reminder with
/// actions or a channel with `escalate`, -1 for the rest), `escalate` (channel
/// names) and `escalate_after` (a duration, default 3h): a reminder the user
/// neither acted on nor dismissed by then is sent through the `escalate` channels
/// (`buzz run` only).
extension DBusChannel: ChannelType {
    /// Urgency, expiry and escalation from the channel's table.
    public struct Options: Sendable {
        public var urgency: ChannelConfig.Urgency = .normal
        /// nil when the channel's table does not set it (`expireTimeout(_:withActions:)` decides).
        public var expireTimeout: Int?
        /// Where an unseen reminder goes on to; empty: nowhere (no escalation).
        public var escalate: [String] = []
        /// Seconds after it was shown that an unseen reminder escalates.
        public var escalateAfter: Int = DBusChannel.defaultEscalateAfter

        public init(urgency: ChannelConfig.Urgency = .normal, expireTimeout: Int? = nil, escalate: [String] = [],
                    escalateAfter: Int = DBusChannel.defaultEscalateAfter) {
            self.urgency = urgency
            self.expireTimeout = expireTimeout
            self.escalate = escalate
            self.escalateAfter = escalateAfter
        }
    }

    public static let typeName = "dbus"

    /// A notification on this desktop reaches the user, never a contact.
    public static let capabilities: ChannelCapabilities = .reminders

    /// `escalate_after`'s default: 3 hours.
    public static let defaultEscalateAfter = 3 * 3_600
    /// The longest `escalate_after`: `buzz run` keeps a shown notification a little over a week.
    public static let longestEscalateAfter = 7 * 86_400

    public static func options(from table: TableReader) throws -> Options {
        var options = Options()
        if let urgency = try table.choice("urgency", ChannelConfig.Urgency.self) { options.urgency = urgency }
        if let expire = try table.int("expire_timeout") {
            guard expire >= -1 else { throw table.problem("expire_timeout", "must be -1 (server default), 0 (never) or milliseconds") }
            options.expireTimeout = expire
        }
        if let names = try table.stringArray("escalate") {
            guard !names.isEmpty else {
                throw table.problem("escalate", "is empty: name the channels an unseen reminder goes on to, e.g. [\"phone\"], or remove the key")
            }
            if let name = table.path.last, names.contains(name) {
                throw table.problem("escalate", "names the channel itself (\"\(name)\"): an unseen notification must go on to another channel")
            }
            for name in names where !options.escalate.contains(name) { options.escalate.append(name) }
        }
        if let after = try table.duration("escalate_after") {
            guard options.escalate.isEmpty == false else {
                throw table.problem("escalate_after", "is set but escalate is not: name the channels to escalate to, e.g. escalate = [\"phone\"]")
            }
            guard after > 0, after <= longestEscalateAfter else {
                throw table.problem("escalate_after", "must be longer than 0s and at most 7d")
            }
            options.escalateAfter = after
        }
        // A notification that expires by itself cannot tell "seen" from "gone": it must stay until the user acts.
        if !options.escalate.isEmpty, let expire = options.expireTimeout, expire != 0 {
            throw table.problem("expire_timeout", "must be 0 (resident) or unset when escalate is set: a notification "
                                + "that expires would escalate although the user never had the chance to dismiss it")
        }
        return options
    }

    /// `escalate` names other channels: the loader checks that each exists.
    public static func channelReferences(_ options: Options) -> [String: [String]] {
        options.escalate.isEmpty ? [:] : ["escalate": options.escalate]
    }

    public static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
        DBusChannel(name: config.name, options: options, timeout: config.timeout, environment: context.environment,
                    actions: context.notificationActions)
    }

    public static func target(of options: Options, environment: [String: String]) -> String {
        let escalation = options.escalate.isEmpty ? ""
            : "; unseen after \(ValueFormats.durationText(options.escalateAfter)): \(options.escalate.joined(separator: ", "))"
        return "desktop notifications (session bus, urgency \(options.urgency.rawValue)\(escalation))"
    }
}
