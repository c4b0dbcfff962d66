import Foundation
import Synchronization

/// BirthdayBuzz's configuration: one TOML file (docs/design/command-line.md, docs/design/channels.md, `config.example.toml`).
///
/// Every field has the documented default (docs/configuration.md), so an absent file is a valid
/// configuration (the embedded defaults).
public struct BuzzConfig: Sendable {
    public struct General: Sendable {
        /// `general.timezone`, else the system's zone (worked out when first read
        /// if the loader was handed it as a `LazyTimeZone`).
        public var timeZone: TimeZone {
            get { zone.value }
            set { zone = LazyTimeZone(newValue) }
        }
        private var zone: LazyTimeZone
        /// BCP 47 tag of the user's language (`de-AT`).
        public var locale: String

        init(zone: LazyTimeZone, locale: String) {
            self.zone = zone
            self.locale = locale
        }
    }

    public struct Contacts: Sendable {
        public var includeByDefault = true
    }

    public struct Reminders: Sendable {
        public var offsets: [Int] = [0, 1]
        /// Minutes after local midnight.
        public var time = 9 * 60
        /// nil: the embedded default route (console, plus desktop when a session bus is there).
        public var channels: [String]?
        public var feb29: Feb29Policy = .feb28
        public var maxPending = 64
        /// Seconds.
        public var catchUp = 12 * 3_600
        /// Seconds until a reminder snoozed from its notification ("Remind me later") comes back.
        public var snooze = 3_600
        /// Channels tried, one after another, for a reminder its route did not deliver in time.
        public var fallback: [String] = []
        /// Seconds after the first attempt on the route (or on the previous fallback) before the next fallback.
        public var fallbackAfter = 2 * 3_600
        /// Where notices of undelivered reminders go, tried in order until one takes it;
        /// nil: the fallback channels, then the reminders' own route channels, then `desktop`.
        public var notices: [String]?
    }

    /// The table of an occasion kind other than birthdays (`[anniversaries]`,
    /// `[memorials]`, `[dates]`, …; birthdays use `[reminders]`).
    public struct OccasionSettings: Sendable {
        public var enabled: Bool
        public var offsets: [Int]
        /// nil: the contact's group's channels, else the reminders' route.
        public var channels: [String]?
        /// nil: the group's, else `[reminders]`'s.
        public var fallback: [String]?
        public var fallbackAfter: Int?
        /// The paths its `fileKeys` name (`[namedays] file`), by key, as written.
        public var files: [String: String] = [:]

        /// The kind's defaults.
        public init(_ kind: OccasionKind) {
            enabled = kind.enabledByDefault && kind.fileKeys.isEmpty
            offsets = kind.defaultOffsets
        }
    }

    /// `[groups.NAME]`: contacts whose CATEGORIES include NAME (case-insensitive).
    public struct Group: Sendable {
        public var name: String
        public var offsets: [Int]?
        public var channels: [String]?
        /// nil: `[reminders]`'s.
        public var fallback: [String]?
        public var fallbackAfter: Int?
    }

    public struct Delivery: Sendable {
        public var maxAttempts = 8
        public var maxBackoff = 6 * 3_600
        public var lockWait = 30
    }

    /// `[sync]`: how the configured sources are synced around deliveries.
    public struct Sync: Sendable {
        /// Seconds `tick` waits for its sync before it delivers anyway (`tick_budget`).
        public var tickBudget = 20
    }

    public enum AskRoute: String, Sendable, CaseIterable { case sms, email, share }
    public enum EmailMode: String, Sendable, CaseIterable { case send, compose }

    public struct Ask: Sendable {
        public var order: [AskRoute] = [.sms, .email, .share]
        public var sms: String?
        public var email: String?
        public var emailMode: EmailMode = .send
        public var cooldownDays = 30
        public var senderName: String?
    }

    /// `[export]`: files `run` rewrites after changes (docs/design/asks-and-wishes.md).
    public struct Export: Sendable {
        /// `ics = "PATH"`: the iCalendar file of birthdays, as given (`~/` allowed).
        public var ics: String?
    }

    /// `[health]`: a monitor pinged after each pass (healthchecks.io, Uptime Kuma).
    public struct Health: Sendable {
        /// `ping_url`, or `ping_url_env` (read when pinging). Either is a secret.
        public var ping: Ping
        /// `fail_url`; nil: `ping_url` + `/fail` (`HealthPingURLs.failURL`).
        public var failURL: String?
        /// Seconds between the pings of an idle daemon (`ping_every`, default 1h).
        public var pingEvery = 3_600

        public enum Ping: Sendable, Equatable {
            case url(String)
            case environment(String)

            /// An inline `ping_url`: its token is a secret kept in the file.
            public var isInline: Bool {
                if case .url = self { return true }
                return false
            }
        }

        public init(ping: Ping, failURL: String? = nil, pingEvery: Int = 3_600) {
            self.ping = ping
            self.failURL = failURL
            self.pingEvery = pingEvery
        }
    }

    /// `[digests.NAME]`: a summary of what is coming, sent on a schedule (see `Digest`).
    public struct Digest: Sendable, Equatable {
        public enum Every: String, Sendable, CaseIterable { case day, week, month }

        public var name: String
        public var every: Every
        /// For `week`: the ISO weekday, 1 (Monday) … 7 (Sunday); for `month`: the day, 1…28; unused for `day`.
        public var on: Int
        /// Minutes after local midnight; nil: `reminders.time`.
        public var time: Int?
        /// How many days it looks ahead, from the day it fires (1…366).
        public var days: Int
        public var channels: [String]
        /// Sent even when nothing is ahead (a digest that stops arriving is itself a warning).
        public var empty: Bool

        public init(name: String, every: Every, on: Int? = nil, time: Int? = nil, days: Int? = nil,
                    channels: [String], empty: Bool = true) {
            self.name = name
            self.every = every
            self.on = on ?? 1
            self.time = time
            self.days = days ?? Self.defaultDays(every)
            self.channels = channels
            self.empty = empty
        }

        /// 7 for a daily digest, 14 for a weekly one, 31 for a monthly one.
        public static func defaultDays(_ every: Every) -> Int {
            switch every {
            case .day: 7
            case .week: 14
            case .month: 31
            }
        }

        /// Weekday names for `on`, Monday first (ISO 8601 numbering).
        public static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    }

    public var general: General
    public var contacts = Contacts()
    public var reminders = Reminders()
    /// Every kind's table but birthdays', by kind name, with the kind's defaults
    /// where the file has no table.
    public var occasions: [String: OccasionSettings] = Dictionary(uniqueKeysWithValues:
        OccasionKind.all.filter { $0 != .birthday }.map { ($0.name, OccasionSettings($0)) })

    /// `[anniversaries]`.
    public var anniversaries: OccasionSettings {
        get { occasion(.anniversary) }
        set { occasions[OccasionKind.anniversary.name] = newValue }
    }

    /// The table of `kind` (not for birthdays, which use `[reminders]`).
    public func occasion(_ kind: OccasionKind) -> OccasionSettings {
        occasions[kind.name] ?? OccasionSettings(kind)
    }

    /// Whether `kind` is reminded of.
    public func reminds(_ kind: OccasionKind) -> Bool {
        kind == .birthday || occasion(kind).enabled
    }
    /// Sorted by name: the first group a contact matches is the one that applies.
    public var groups: [Group] = []
    public var delivery = Delivery()
    public var sync = Sync()
    public var ask = Ask()
    public var export = Export()
    /// `[digests.NAME]`, sorted by name.
    public var digests: [Digest] = []
    /// `[health]`: nil when no ping is configured.
    public var health: Health?
    /// Sorted by name.
    public var channels: [ChannelConfig] = []
    /// `[sources.NAME]`, sorted by name (docs/design/sources.md).
    public var sources: [SourceConfig] = []

    /// The embedded defaults, for a machine whose zone and language come from `environment`.
    public init(defaultsFor environment: [String: String], systemTimeZone: TimeZone) {
        self.init(defaultsFor: environment, systemTimeZone: LazyTimeZone(systemTimeZone))
    }

    /// The embedded defaults, the system's zone worked out only if read.
    public init(defaultsFor environment: [String: String], systemTimeZone: LazyTimeZone) {
        general = General(zone: systemTimeZone, locale: ValueFormats.localeFromEnvironment(environment))
    }

    /// The channel named `name`, if configured.
    public func channel(named name: String) -> ChannelConfig? {
        channels.first { $0.name == name }
    }

    /// The channel named `name`, including the built-in `console` and `desktop`
    /// (a dbus channel with defaults) when no table redefines them.
    public func resolvedChannel(named name: String) -> ChannelConfig? {
        if let configured = channel(named: name) { return configured }
        switch name {
        case "console": return ChannelConfig(name: "console", typeName: "console")
        case "desktop": return ChannelConfig(name: "desktop", typeName: "dbus")
        default: return nil
        }
    }

    /// Every channel `channels list` shows: the configured ones and the built-ins not redefined.
    public var allChannels: [ChannelConfig] {
        var all = channels
        for name in BuzzConfig.builtInChannelNames.sorted() where channel(named: name) == nil {
            if let builtIn = resolvedChannel(named: name) { all.append(builtIn) }
        }
        return all.sorted { $0.name < $1.name }
    }

    /// The group that applies to a contact with these categories: the first by name.
    public func group(forCategories categories: [String]) -> Group? {
        guard !groups.isEmpty, !categories.isEmpty else { return nil }
        let lowered = Set(categories.map { $0.lowercased() })
        return groups.first { lowered.contains($0.name.lowercased()) }
    }
}

/// A `[channels.NAME]` table (docs/design/channels.md): what every channel has — its name, its
/// `type` and its `timeout` — and the rest of the table for the type's adapter
/// to read (BuzzChannels: one file per type, and `ChannelRegistry`).
public struct ChannelConfig: Sendable {
    public init(name: String, typeName: String, timeout: Double = 10, options: ConfigTable? = nil) {
        self.name = name
        self.typeName = typeName
        self.timeout = timeout
        self.options = options ?? ConfigTable(path: ["channels", name])
    }

    public var name: String
    /// The `type = "…"` value: which adapter delivers.
    public var typeName: String
    /// Seconds; every channel has one (default 10).
    public var timeout: Double = 10
    /// The table's other keys, already checked by the type when the config was loaded.
    public var options: ConfigTable

    /// How urgent a message is (docs/design/channels.md); the dbus channel shows it, others may ignore it.
    public enum Urgency: String, Sendable, CaseIterable { case low, normal, critical }

    /// Where a secret comes from; the value itself is never stored in the config model.
    public enum SecretSource: Sendable, Equatable {
        case environment(String)
        case file(String)
        case command([String])
    }
}

/// A configuration problem: what, and where (file, line and column when known, key path).
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    public var keyPath: String?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, keyPath: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return place + ": " + (keyPath.map { $0 + ": " } ?? "") + message
    }
}

/// A time zone given, or worked out on first use and then kept.
///
/// `buzz send` never reads the system's zone, and working it out
/// (`TimeZone.current`: the environment, then ICU's canonical-ID lookups) was
/// ~6 % of a cold send's CPU before libcurl (perf, 2026-11-28).
public final class LazyTimeZone: Sendable {
    private let zone: Mutex<TimeZone?>
    private let make: @Sendable () -> TimeZone

    /// A zone worked out by `make` when first read (the system's, in `Context`).
    public init(_ make: @escaping @Sendable () -> TimeZone) {
        zone = Mutex(nil)
        self.make = make
    }

    /// A zone known now.
    public init(_ known: TimeZone) {
        zone = Mutex(known)
        make = { known }
    }

    public var value: TimeZone {
        zone.withLock { zone in
            if let zone { return zone }
            let made = make()
            zone = made
            return made
        }
    }
}
