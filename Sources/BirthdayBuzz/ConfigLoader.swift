import Foundation
// Linked explicitly: with --static-swift-stdlib, TimeZone(identifier:) finds no zones without it.
import FoundationInternationalization
import TOMLKit

extension BuzzConfig {
    /// Parses and validates a TOML configuration.
    ///
    /// Syntax errors carry `file:line:col`; schema errors carry the key path and,
    /// where the key can be found in the text, its line. Unknown keys, wrong
    /// types, bad times, zones and durations are all errors. `types` are the
    /// channel and source types a table may name; each checks its own keys here,
    /// so a bad channel option is reported before anything is sent.
    public init(toml text: String, file: String, environment: [String: String],
                systemTimeZone: TimeZone, types: ConfigTypes) throws(ConfigError) {
        try self.init(toml: text, file: file, environment: environment, systemTimeZone: LazyTimeZone(systemTimeZone), types: types)
    }

    /// As above, the system's zone worked out only if the config leaves `general.timezone` out and it is read.
    public init(toml text: String, file: String, environment: [String: String],
                systemTimeZone: LazyTimeZone, types: ConfigTypes) throws(ConfigError) {
        let root: TOMLTable
        do {
            root = try Self.parseTOML(text, file: file)
        } catch let error as ConfigError {
            throw error
        } catch let error as TOMLParseError {
            // toml++ quotes what it saw, which may be a line break ("saw 'tr\n'").
            throw ConfigError(file: file, line: error.source.begin.line, column: error.source.begin.column,
                              message: Self.oneLine(error.description))
        } catch {
            throw ConfigError(file: file, message: "cannot parse: \(error)")
        }
        let origin = ConfigOrigin(file: file, locator: KeyLocator(text: text))
        do {
            try self.init(root: TableReader(ConfigTable(root, path: [], origin: origin)), types: types,
                          environment: environment, systemTimeZone: systemTimeZone)
        } catch let error as ConfigError {
            throw error
        } catch let problem as SchemaProblem {
            throw origin.error(path: problem.path, message: problem.message)
        } catch {
            throw ConfigError(file: file, message: "\(error)")
        }
    }

    /// Control characters and line separators escaped (`\n`, `\u{2028}`), so an error is one line.
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Self.needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// Parses with TOMLKit, after `TOMLGuard` has ruled out what its bundled toml++
    /// would abort on instead of reporting (see there).
    private static func parseTOML(_ text: String, file: String) throws -> TOMLTable {
        if let problem = TOMLGuard.firstProblem(in: text) {
            // An error earlier in the file is the one toml++ would have reported: the text
            // before the problem's top-level line ends at a line boundary, so parsing it
            // alone says the same about that part as parsing the whole file would.
            _ = try TOMLTable(string: String(decoding: Array(text.utf8)[..<problem.statementStart], as: UTF8.self))
            throw ConfigError(file: file, line: problem.line, column: problem.column, message: problem.message)
        }
        return try TOMLTable(string: text)
    }

    private init(root: TableReader, types: ConfigTypes, environment: [String: String], systemTimeZone: LazyTimeZone) throws {
        self.init(defaultsFor: environment, systemTimeZone: systemTimeZone)

        if let general = try root.table("general") {
            if let zone = try general.string("timezone") {
                guard let tz = TimeZone(identifier: zone) else {
                    throw general.problem("timezone", "\"\(zone)\" is not an IANA time zone (e.g. \"Europe/Berlin\")")
                }
                self.general.timeZone = tz
            }
            if let locale = try general.string("locale") {
                guard let tag = ValueFormats.bcp47(fromPOSIX: locale) else {
                    throw general.problem("locale", "\"\(locale)\" is not a language tag (e.g. \"de-AT\")")
                }
                self.general.locale = tag
            }
            try general.finish()
        }

        if let contacts = try root.table("contacts") {
            if let value = try contacts.bool("include_by_default") { self.contacts.includeByDefault = value }
            try contacts.finish()
        }

        if let reminders = try root.table("reminders") {
            if let offsets = try reminders.offsets("offsets") { self.reminders.offsets = offsets }
            if let time = try reminders.string("time") {
                guard let minutes = ValueFormats.timeOfDay(time) else {
                    throw reminders.problem("time", "\"\(time)\" is not a time of day (HH:MM, 24-hour)")
                }
                self.reminders.time = minutes
            }
            self.reminders.channels = try reminders.channelList("channels")
            if let feb29 = try reminders.choice("feb29", Feb29Policy.self) { self.reminders.feb29 = feb29 }
            if let max = try reminders.int("max_pending") {
                guard (1...100_000).contains(max) else {
                    throw reminders.problem("max_pending", "must be between 1 and 100000, not \(max)")
                }
                self.reminders.maxPending = max
            }
            if let catchUp = try reminders.duration("catch_up") { self.reminders.catchUp = catchUp }
            if let snooze = try reminders.duration("snooze") {
                guard snooze > 0 else { throw reminders.problem("snooze", "must be longer than 0s") }
                self.reminders.snooze = snooze
            }
            // `fallback = []` is "none" (a group can turn off an inherited one).
            if let fallback = try reminders.stringArray("fallback") { self.reminders.fallback = fallback }
            if let after = try Self.fallbackAfter(reminders) { self.reminders.fallbackAfter = after }
            if let notices = try reminders.stringArray("notices") {
                guard !notices.isEmpty else {
                    throw reminders.problem("notices", "is empty: problems would be announced nowhere; leave it out for the default")
                }
                self.reminders.notices = notices
            }
            try reminders.finish()
        }

        for kind in OccasionKind.all where kind != .birthday {
            guard let table = try root.table(kind.configTable) else { continue }
            var settings = OccasionSettings(kind)
            for key in kind.fileKeys {
                guard let path = try table.string(key) else { continue }
                guard !path.isEmpty else { throw table.problem(key, "is empty: name a file, or leave the key out") }
                settings.files[key] = path
            }
            // A kind read from a file is on once the file is named, unless `enabled = false`.
            if !kind.fileKeys.isEmpty { settings.enabled = !settings.files.isEmpty }
            if let enabled = try table.bool("enabled") {
                if enabled, !kind.fileKeys.isEmpty, settings.files.isEmpty {
                    throw table.problem("enabled", "needs \(kind.fileKeys.map { "`\($0)`" }.joined(separator: " or ")) to say where the dates are")
                }
                settings.enabled = enabled
            }
            if let offsets = try table.offsets("offsets") { settings.offsets = offsets }
            settings.channels = try table.channelList("channels")
            settings.fallback = try table.stringArray("fallback")
            settings.fallbackAfter = try Self.fallbackAfter(table)
            try table.finish()
            occasions[kind.name] = settings
        }

        if let groups = try root.table("groups") {
            for name in groups.keys.sorted() {
                guard let group = try groups.table(name) else { continue }
                var parsed = Group(name: name)
                parsed.offsets = try group.offsets("offsets")
                parsed.channels = try group.channelList("channels")
                parsed.fallback = try group.stringArray("fallback")
                parsed.fallbackAfter = try Self.fallbackAfter(group)
                try group.finish()
                self.groups.append(parsed)
            }
            try groups.finish()
        }

        if let delivery = try root.table("delivery") {
            if let attempts = try delivery.int("max_attempts") {
                guard (1...100).contains(attempts) else {
                    throw delivery.problem("max_attempts", "must be between 1 and 100, not \(attempts)")
                }
                self.delivery.maxAttempts = attempts
            }
            if let backoff = try delivery.duration("max_backoff") { self.delivery.maxBackoff = backoff }
            if let wait = try delivery.duration("lock_wait") { self.delivery.lockWait = wait }
            try delivery.finish()
        }

        if let sync = try root.table("sync") {
            if let budget = try sync.duration("tick_budget") {
                guard budget > 0 else { throw sync.problem("tick_budget", "must be longer than 0s (tick --no-sync skips the sync)") }
                self.sync.tickBudget = budget
            }
            try sync.finish()
        }

        if let health = try root.table("health") { self.health = try Self.health(from: health) }

        if let digests = try root.table("digests") {
            for name in digests.keys.sorted() {
                guard let table = try digests.table(name) else { continue }
                // The name is part of the digest's event id and typed after `buzz digest`.
                guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic
                        || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }) else {
                    throw digests.problem(name, "a digest's name is letters, digits, '_' or '-' (it is typed as buzz digest NAME)")
                }
                self.digests.append(try Self.digest(name: name, from: table))
            }
            try digests.finish()
        }

        if let export = try root.table("export") {
            if let ics = try export.string("ics") {
                guard !ics.isEmpty else { throw export.problem("ics", "is empty: name a file (e.g. \"~/.local/share/birthdaybuzz/birthdays.ics\")") }
                self.export.ics = ics
            }
            try export.finish()
        }

        if let ask = try root.table("ask") {
            if let order = try ask.stringArray("order") {
                var routes: [AskRoute] = []
                for entry in order {
                    guard let route = AskRoute(rawValue: entry) else {
                        throw ask.problem("order", "\"\(entry)\" is not a route (sms, email or share)")
                    }
                    if !routes.contains(route) { routes.append(route) }
                }
                self.ask.order = routes
            }
            self.ask.sms = try ask.string("sms")
            self.ask.email = try ask.string("email")
            if let mode = try ask.choice("email_mode", EmailMode.self) { self.ask.emailMode = mode }
            if let days = try ask.int("cooldown_days") {
                guard days >= 0 else { throw ask.problem("cooldown_days", "must not be negative") }
                self.ask.cooldownDays = days
            }
            self.ask.senderName = try ask.string("sender_name")
            try ask.finish()
        }

        if let channels = try root.table("channels") {
            for name in channels.keys.sorted() {
                guard let table = try channels.table(name) else { continue }
                self.channels.append(try ChannelConfig(name: name, table: table, types: types.channels))
            }
            try channels.finish()
        }

        if let sources = try root.table("sources") {
            for name in sources.keys.sorted() {
                guard let table = try sources.table(name) else { continue }
                self.sources.append(try SourceConfig(name: name, table: table, types: types.sources))
            }
            try sources.finish()
        }
        try root.finish()
        try checkReferences(types.channels)
        try checkChannelOptionReferences(types.channels)
    }

    /// Channels that a channel's own options name (a dbus channel's `escalate`) must exist too.
    private func checkChannelOptionReferences(_ types: [ConfigTypes.Entry]) throws {
        let known = Set(channels.map(\.name)).union(BuzzConfig.builtInChannelNames)
        for channel in channels {
            guard let type = types.first(where: { $0.name == channel.typeName }) else { continue }
            for (key, names) in type.references(channel.options).sorted(by: { $0.key < $1.key }) {
                for name in names where !known.contains(name) {
                    throw SchemaProblem(path: ["channels", channel.name, key],
                                        message: "no channel named \"\(name)\" (define [channels.\(name)])")
                }
            }
        }
    }

    /// `[health]`: `ping_url` or `ping_url_env`, `fail_url`, `ping_every`. The
    /// messages name the table but never show a URL (it is a secret).
    private static func health(from table: TableReader) throws -> Health {
        func checkedURL(_ key: String) throws -> String? {
            guard let url = try table.string(key) else { return nil }
            guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
                throw table.problem(key, "[health] \(key) must start with https:// or http://")
            }
            return url
        }
        let ping: Health.Ping
        switch (try checkedURL("ping_url"), try table.string("ping_url_env")) {
        case (let url?, nil): ping = .url(url)
        case (nil, let variable?):
            guard !variable.isEmpty else { throw table.problem("ping_url_env", "[health] ping_url_env is empty: name a variable") }
            ping = .environment(variable)
        case (nil, nil): throw table.problem("ping_url", "[health] needs ping_url or ping_url_env")
        case (_?, _?): throw table.problem("ping_url_env", "[health] give ping_url or ping_url_env, not both")
        }
        var health = Health(ping: ping, failURL: try checkedURL("fail_url"))
        if case .url(let url) = ping, health.failURL == nil, HealthPingURLs.failURL(pingURL: url, failURL: nil) == nil {
            throw table.problem("fail_url", "[health] ping_url has a query (an Uptime Kuma push URL?), so its failure URL cannot be guessed: give fail_url")
        }
        if let every = try table.duration("ping_every") {
            guard every > 0 else { throw table.problem("ping_every", "[health] ping_every must be longer than 0s") }
            health.pingEvery = every
        }
        try table.finish()
        return health
    }

    /// `fallback_after`: a duration longer than 0.
    private static func fallbackAfter(_ table: TableReader) throws -> Int? {
        guard let after = try table.duration("fallback_after") else { return nil }
        guard after > 0 else { throw table.problem("fallback_after", "must be longer than 0s") }
        return after
    }

    /// `[digests.NAME]`: `every` (required: there is no schedule a user would expect
    /// by default), `on`, `time`, `days`, `channels` (required), `empty`.
    private static func digest(name: String, from table: TableReader) throws -> Digest {
        guard let every = try table.choice("every", Digest.Every.self) else {
            throw table.problem("every", "missing: how often it is sent (\"day\", \"week\" or \"month\")")
        }
        var on: Int?
        switch every {
        case .day:
            if table.keys.contains("on") {
                throw table.problem("on", "a daily digest is sent every day; remove on, or use every = \"week\" or \"month\"")
            }
        case .week:
            if let day = try table.string("on") {
                guard let index = Digest.weekdays.firstIndex(of: day.lowercased()) else {
                    throw table.problem("on", "\"\(day)\" is not a weekday (monday … sunday)")
                }
                on = index + 1
            }
        case .month:
            if let day = try table.int("on") {
                // Only days every month has: a digest on the 31st would skip most months.
                guard (1...28).contains(day) else { throw table.problem("on", "must be a day between 1 and 28, not \(day)") }
                on = day
            }
        }
        var time: Int?
        if let text = try table.string("time") {
            guard let minutes = ValueFormats.timeOfDay(text) else {
                throw table.problem("time", "\"\(text)\" is not a time of day (HH:MM, 24-hour)")
            }
            time = minutes
        }
        let days = try table.int("days")
        if let days, !(1...366).contains(days) {
            throw table.problem("days", "must be between 1 and 366, not \(days)")
        }
        guard let channels = try table.stringArray("channels") else {
            throw table.problem("channels", "missing: name the channels it goes to, e.g. [\"mail\"]")
        }
        if channels.isEmpty {
            throw table.problem("channels", "is empty: the digest would go nowhere; name at least one channel, e.g. [\"mail\"]")
        }
        let empty = try table.bool("empty") ?? true
        try table.finish()
        var unique: [String] = []
        for channel in channels where !unique.contains(channel) { unique.append(channel) }
        return Digest(name: name, every: every, on: on, time: time, days: days, channels: unique, empty: empty)
    }

    /// Every channel a route names must exist (the embedded `console` and `desktop`
    /// always do) and be of a type that can carry what the route sends. The types
    /// say what they can carry (`ChannelCapabilities`); the loader names none of them.
    private func checkReferences(_ types: [ConfigTypes.Entry]) throws {
        let known = Set(channels.map(\.name)).union(BuzzConfig.builtInChannelNames)
        // A built-in channel whose type was not handed in (a program that loads
        // configs without channel types) has no entry: it carries nothing it could be checked for.
        func entry(for channel: ChannelConfig) -> ConfigTypes.Entry? {
            types.first { $0.name == channel.typeName }
        }
        func check(_ names: [String]?, _ path: [String], carriesReminders: Bool = true) throws {
            for name in names ?? [] {
                guard known.contains(name) else {
                    throw SchemaProblem(path: path, message: "no channel named \"\(name)\" (define [channels.\(name)])")
                }
                if carriesReminders, let channel = resolvedChannel(named: name), let type = entry(for: channel),
                   !type.capabilities.contains(.reminders) {
                    throw SchemaProblem(path: path,
                                        message: "channel \"\(name)\" is a \(channel.typeName) channel, which cannot carry reminders, digests or notices")
                }
            }
        }
        try check(reminders.channels, ["reminders", "channels"])
        try check(reminders.fallback, ["reminders", "fallback"])
        try check(reminders.notices, ["reminders", "notices"])
        for kind in OccasionKind.all where kind != .birthday {
            try check(occasion(kind).channels, [kind.configTable, "channels"])
            try check(occasion(kind).fallback, [kind.configTable, "fallback"])
        }
        for group in groups {
            try check(group.channels, ["groups", group.name, "channels"])
            try check(group.fallback, ["groups", group.name, "fallback"])
        }
        for digest in digests { try check(digest.channels, ["digests", digest.name, "channels"]) }
        try check(ask.sms.map { [$0] }, ["ask", "sms"], carriesReminders: false)
        try check(ask.email.map { [$0] }, ["ask", "email"], carriesReminders: false)
        if let email = ask.email, let channel = resolvedChannel(named: email),
           entry(for: channel)?.capabilities.contains(.asksByEmail) != true {
            throw SchemaProblem(path: ["ask", "email"],
                                message: "channel \"\(email)\" is a \(channel.typeName) channel; email asks need \(Self.typesThatCarry(.asksByEmail, among: types))")
        }
        // An SMS goes out through a gateway (a webhook) or a plugin; the console or
        // the desktop would only show the text here and record it as sent.
        if let sms = ask.sms, let channel = resolvedChannel(named: sms),
           entry(for: channel)?.capabilities.contains(.asksBySMS) != true {
            throw SchemaProblem(path: ["ask", "sms"],
                                message: "channel \"\(sms)\" is a \(channel.typeName) channel; SMS asks need \(Self.typesThatCarry(.asksBySMS, among: types))")
        }
        // Telegram and Pushover reach the user's own phone, never a contact's number: an ask or a wish there would go nowhere.
        if let sms = ask.sms, let channel = resolvedChannel(named: sms),
           let service = entry(for: channel)?.userOnlyService(channel.options) {
            throw SchemaProblem(path: ["ask", "sms"],
                                message: "channel \"\(sms)\" is a \(service) channel, which reaches you, not a contact's phone; asks and wishes need an SMS gateway webhook or exec")
        }
    }

    /// The types that can carry `capability`, as an error's hint names them, in
    /// the order they were handed in: "smtp or exec".
    static func typesThatCarry(_ capability: ChannelCapabilities, among types: [ConfigTypes.Entry]) -> String {
        let names = types.filter { $0.capabilities.contains(capability) }.map { $0.askRouteDescription ?? $0.name }
        guard let last = names.last else { return "a channel type that can send them, and none is known here" }
        return names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " or " + last
    }

    /// Channels that exist without a `[channels.NAME]` table: `console` and `desktop` (dbus).
    public static let builtInChannelNames: Set<String> = ["console", "desktop"]
}

extension ChannelConfig {
    /// Reads what every channel has (`type`, `timeout`) and lets the type check the rest.
    init(name: String, table: TableReader, types: [ConfigTypes.Entry]) throws {
        // The list only an error shows, made then: `joined` on a cold start costs a conformance scan (~0.2 ms).
        func known() -> String { types.map(\.name).joined(separator: ", ") }
        guard let type = try table.string("type") else {
            throw table.problem("type", "missing (one of: \(known()))")
        }
        if let timeout = try table.duration("timeout") {
            guard timeout > 0 else { throw table.problem("timeout", "must be more than 0s") }
            self.timeout = Double(timeout)
        }
        self.name = name
        typeName = type
        options = try ConfigTypes.checkedOptions(table, type: type, among: types, what: "channel", known: known())
    }
}

/// A schema problem at a key path; turned into a `ConfigError` with a position.
struct SchemaProblem: Error {
    var path: [String]
    var message: String
}

/// Reads one config table, remembering which keys were used so the rest can be
/// reported as unknown (`finish()`).
///
/// Channel and source types read their own keys with it:
///
/// ```swift
/// static func options(from table: TableReader) throws -> Options {
///     guard let url = try table.string("url") else { throw table.problem("url", "missing") }
///     return Options(url: url, insecure: try table.bool("insecure") ?? false)
/// }
/// ```
///
/// Every error is a `ConfigError` that names the key path and, for a table read
/// from a file, the key's `file:line:column`.
public final class TableReader {
    /// The table being read.
    public let table: ConfigTable
    private var used: Set<String> = []

    public init(_ table: ConfigTable) {
        self.table = table
    }

    /// Where the table sits: `["channels", "mail"]`.
    public var path: [String] { table.path }

    /// The table's keys.
    public var keys: [String] { Array(table.values.keys) }

    /// The table without the keys read so far: what is left for a type to read.
    var unread: ConfigTable { table.removing(used) }

    /// An error about `key` in this table: `file:line:col: path.key: message`.
    public func problem(_ key: String, _ message: String) -> ConfigError {
        let keyPath = path + [key]
        guard let origin = table.origin else {
            return ConfigError(file: "config", keyPath: BuzzConfig.oneLine(keyPath.joined(separator: ".")),
                               message: BuzzConfig.oneLine(message))
        }
        return origin.error(path: keyPath, message: message)
    }

    private func value(_ key: String) -> ConfigTable.Value? {
        used.insert(key)
        return table.values[key]
    }

    private func wrongType(_ key: String, _ expected: String, _ value: ConfigTable.Value) -> ConfigError {
        problem(key, "expected \(expected), found \(value.typeDescription)")
    }

    /// A sub-table (`[channels.hook.headers]`, `key = { … }`).
    public func table(_ key: String) throws -> TableReader? {
        guard let value = value(key) else { return nil }
        guard case .table(let table) = value else { throw wrongType(key, "a table", value) }
        return TableReader(table)
    }

    public func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw wrongType(key, "a string", value) }
        return string
    }

    public func int(_ key: String) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let int) = value else { throw wrongType(key, "an integer", value) }
        return int
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .boolean(let bool) = value else { throw wrongType(key, "true or false", value) }
        return bool
    }

    public func stringArray(_ key: String) throws -> [String]? {
        guard let value = value(key) else { return nil }
        guard case .array(let array) = value else { throw wrongType(key, "an array of strings", value) }
        return try array.map { element in
            guard case .string(let string) = element else { throw wrongType(key, "an array of strings", element) }
            return string
        }
    }

    /// Channel names for a route; an empty list would send reminders nowhere.
    func channelList(_ key: String) throws -> [String]? {
        let names = try stringArray(key)
        if names?.isEmpty == true {
            throw problem(key, "is empty: reminders would go nowhere; name at least one channel, e.g. [\"desktop\"]")
        }
        return names
    }

    /// Reminder offsets: days before, 0…365, no duplicates.
    func offsets(_ key: String) throws -> [Int]? {
        guard let value = value(key) else { return nil }
        guard case .array(let array) = value else { throw wrongType(key, "an array of whole days, e.g. [0, 1]", value) }
        if array.isEmpty {
            throw problem(key, "is empty: no reminder would ever fire; [0] reminds on the day itself")
        }
        var offsets: [Int] = []
        for element in array {
            guard case .integer(let day) = element else { throw wrongType(key, "an array of whole days, e.g. [0, 1]", element) }
            guard (0...365).contains(day) else { throw problem(key, "\(day) is not between 0 and 365 days") }
            if !offsets.contains(day) { offsets.append(day) }
        }
        return offsets.sorted()
    }

    /// A duration in seconds, written `"30s"`, `"12h"`, `"1h30m"`, `"2d"`.
    public func duration(_ key: String) throws -> Int? {
        // A bare number has no unit (seconds? hours?): say how to write it rather than guess.
        if case .integer(let number)? = table.values[key] {
            used.insert(key)
            throw problem(key, "\(number) has no unit; write a duration such as \"\(number)s\" or \"\(number)m\"")
        }
        guard let text = try string(key) else { return nil }
        guard let seconds = ValueFormats.duration(text) else {
            throw problem(key, "\"\(text)\" is not a duration (e.g. \"30s\", \"12h\", \"1h30m\", \"2d\")")
        }
        return seconds
    }

    /// One of an enumeration's raw values.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws -> T? where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let choice = T(rawValue: text) else {
            let options = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw problem(key, "\"\(text)\" is not one of \(options)")
        }
        return choice
    }

    /// Where a password comes from, by the secret rules channels and sources share
    /// (docs/design/channels.md): at most one of `password_env`, `password_file`, `password_command`
    /// (an argv array), and never an inline `password`.
    public func secretSource() throws -> ChannelConfig.SecretSource? {
        var sources: [ChannelConfig.SecretSource] = []
        if let env = try string("password_env") { sources.append(.environment(env)) }
        if let file = try string("password_file") { sources.append(.file(file)) }
        if let command = try stringArray("password_command") {
            guard !command.isEmpty else { throw problem("password_command", "must name a program") }
            sources.append(.command(command))
        }
        guard sources.count <= 1 else {
            throw problem("password_env", "give only one of password_env, password_file, password_command")
        }
        if (try? string("password")) != nil {
            throw problem("password", "inline passwords are not read; use password_env, password_file or password_command")
        }
        return sources.first
    }

    /// Throws for the first key that was never read.
    /// Reads a whole table with `read` (a plugin type's `options(from:)`): a
    /// key it leaves unread is an error, as in any other table.
    public static func readAll<T>(_ table: ConfigTable, _ body: (TableReader) throws -> T) throws -> T {
        let reader = TableReader(table)
        let value = try body(reader)
        try reader.finish()
        return value
    }

    public func finish() throws {
        for key in table.values.keys.sorted() where !used.contains(key) {
            throw problem(key, "unknown key")
        }
    }
}

/// Finds the line of a key path in TOML text (best effort: `[table]` headers,
/// dotted headers and `key =` lines), so schema errors can say `file:line:col`.
struct KeyLocator {
    let lines: [Substring]

    init(text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    func position(of path: [String]) -> (line: Int, column: Int)? {
        guard let key = path.last else { return nil }
        let tablePath = path.dropLast()
        var current: [String] = []
        var headerLine: (Int, Int)?
        for (index, raw) in lines.enumerated() {
            let line = raw.drop(while: { $0 == " " || $0 == "\t" })
            let column = raw.count - line.count + 1
            if line.hasPrefix("[") {
                let inner = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] \t\r"))
                current = inner.split(separator: ".").map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"' "))
                }
                if current == path || current == Array(tablePath) { headerLine = (index + 1, column) }
                continue
            }
            guard current == Array(tablePath) else { continue }
            let name = line.prefix(while: { $0 != "=" }).trimmingCharacters(in: CharacterSet(charactersIn: "\"' \t"))
            if name == key, line.contains("=") { return (index + 1, column) }
        }
        return headerLine
    }
}

/// Finds what TOMLKit's bundled toml++ cannot be trusted with before it sees it.
///
/// TOMLKit 0.6.0 builds toml++ with its assertions on (no `NDEBUG`, even in release
/// builds), and some of them are reachable from the input; the process then dies with
/// SIGABRT instead of getting a parse error:
/// - a table header whose first key does not start like a key — `[é]`, `[[über]]`, `[+]`,
///   `[ # x`, `[` at the end of a line — reaches `parse_key()`, which asserts that it does
///   (every other caller checks first). Bare keys are ASCII in TOML (`A-Za-z0-9_-`);
///   anything else must be quoted (`["é"]`);
/// - in an array, `}` or a Unicode line break (U+0085, U+2028, U+2029) where a value
///   should start (`a = [}]`, `a = [1, }]`) reaches `parse_value()`, which asserts it is
///   no value terminator (found by the fuzz target);
/// - a date with a `T` and no time (`1979-05-27T(7:00`), or a space and one digit
///   (`1979-05-27 0`), reaches asserts in `parse_time()` and `parse_value()` (found by it too).
///
/// Why a scan here rather than another fix: the dependency cannot be rebuilt with
/// `NDEBUG` from this package (and with it the same input would be undefined behaviour,
/// the assertion guards an assumption); a signal handler cannot turn an abort into an
/// error; and no other TOML parser is available. toml++ reaches a table header only at
/// the start of a top-level line, so this scan tracks exactly what decides that —
/// strings, comments, and brackets of multi-line arrays — and checks the character after
/// every header's opening bracket(s), and where each array value starts. It runs in one
/// pass over the bytes. The fuzz target
/// `FuzzConfig` (`scripts/fuzz.sh config`) feeds the loader arbitrary text to keep it so.
///
/// It also rejects a NUL character: TOMLKit hands the text to toml++ as a C string, which
/// would silently ignore everything after it.
enum TOMLGuard {
    struct Problem: Equatable {
        var line: Int
        var column: Int
        /// UTF-8 offset of the start of the top-level line (key, header) the problem is in:
        /// the text before it parses as far as toml++ would get in the whole text.
        var statementStart: Int
        var message: String
    }

    static func firstProblem(in text: String) -> Problem? {
        let utf8 = text.utf8
        return utf8.withContiguousStorageIfAvailable(scan) ?? Array(utf8).withUnsafeBufferPointer(scan)
    }

    private enum Bracket { case header, array, table }

    private static func isBareKey(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Problem? {
        // toml++ gets the text as a C string: it sees what comes before a NUL.
        let count = bytes.firstIndex(of: 0) ?? bytes.count
        var index = 0
        var open: [Bracket] = []     // the header being read, arrays and inline tables
        var lineIsBlank = true       // nothing but spaces and tabs so far on this top-level line
        var statementStart = 0       // where the current top-level line starts

        /// Line and column (in characters, as toml++ counts) of a byte offset.
        func problem(at offset: Int, _ message: String) -> Problem {
            var line = 1, lineStart = 0
            for position in 0..<offset where bytes[position] == 0x0A {
                line += 1
                lineStart = position + 1
            }
            var column = 1
            for position in lineStart..<offset where bytes[position] & 0xC0 != 0x80 { column += 1 }
            return Problem(line: line, column: column, statementStart: statementStart, message: message)
        }
        /// Skips a string starting at `index` (a quote), leaving `index` after it, or at the
        /// line break or end that cuts it off (toml++ reports that).
        func skipString() {
            let quote = bytes[index]
            let escapes = quote == UInt8(ascii: "\"")
            if index + 2 < count, bytes[index + 1] == quote, bytes[index + 2] == quote {
                index += 3
                while index < count {
                    let byte = bytes[index]
                    if byte == quote, index + 2 < count, bytes[index + 1] == quote, bytes[index + 2] == quote {
                        index += 3
                        // Up to two more quotes belong to the content before the closing three.
                        var extra = 0
                        while extra < 2, index < count, bytes[index] == quote { index += 1; extra += 1 }
                        return
                    }
                    if escapes, byte == UInt8(ascii: "\\"), index + 1 < count { index += 1 }
                    index += 1
                }
                return
            }
            index += 1
            while index < count {
                let byte = bytes[index]
                if byte == 0x0A { return }
                index += 1
                if byte == quote { return }
                if escapes, byte == UInt8(ascii: "\\"), index < count, bytes[index] != 0x0A { index += 1 }
            }
        }

        func isDigit(_ position: Int) -> Bool {
            position < count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position])
        }
        /// A value that starts like a date (`YYYY-MM-DD`) and goes on like a date-time but
        /// has no time: toml++ classifies it by the characters it holds, then asserts a
        /// digit after the `T` (`1979-05-27T(7:00`), or one after the space and a digit
        /// (`1979-05-27 0`). Neither is valid TOML.
        func dateProblem(at start: Int) -> Problem? {
            guard isDigit(start) else { return nil }
            var end = start
            while end < count {
                let byte = bytes[end]
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte >= 0x80
                    || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ",")
                    || byte == UInt8(ascii: "#") { break }
                end += 1
            }
            let message = "expected a time (HH:MM:SS) after the date"
            if end - start >= 11, (0..<4).allSatisfy({ isDigit(start + $0) }), bytes[start + 4] == UInt8(ascii: "-"),
               isDigit(start + 5), isDigit(start + 6), bytes[start + 7] == UInt8(ascii: "-"),
               isDigit(start + 8), isDigit(start + 9), bytes[start + 10] | 0x20 == UInt8(ascii: "t"),
               !isDigit(start + 11) {
                return problem(at: start + 11, message)
            }
            // toml++ looks for a space and a time after any ten characters (not counting `_`)
            // with `-` as the fifth and eighth that start with a digit, whatever the others
            // are: checked as loosely here. A value followed by a space and a digit is never
            // valid TOML, so this rejects nothing valid.
            let significant = (start..<end).lazy.map { bytes[$0] }.filter { $0 != UInt8(ascii: "_") }
            if significant.count == 10, Array(significant)[4] == UInt8(ascii: "-"), Array(significant)[7] == UInt8(ascii: "-"),
               end < count, bytes[end] == 0x20, isDigit(end + 1), end + 2 < count, !isDigit(end + 2) {
                return problem(at: end + 2, message)
            }
            return nil
        }

        /// In an array, after `[` or `,`: toml++ skips blanks, line breaks and comments, then
        /// asserts that what comes is no value terminator, having ruled out only `,` and `]`.
        func valueProblem(from start: Int) -> Problem? {
            var next = start
            while next < count {
                switch bytes[next] {
                case 0x20, 0x09, 0x0A: next += 1
                case 0x0D where next + 1 < count && bytes[next + 1] == 0x0A: next += 2
                case UInt8(ascii: "#"): while next < count, bytes[next] != 0x0A { next += 1 }
                case UInt8(ascii: "}"): return problem(at: next, "expected a value or ']', saw '}'")
                case 0xC2 where next + 1 < count && bytes[next + 1] == 0x85,
                     0xE2 where next + 2 < count && bytes[next + 1] == 0x80 && (0xA8...0xA9).contains(bytes[next + 2]):
                    return problem(at: next, "expected a value or ']', saw a Unicode line break")
                default: return dateProblem(at: next)
                }
            }
            return nil
        }

        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        while index < count {
            let byte = bytes[index]
            switch byte {
            case 0x0A:
                index += 1
                if open.first == .header { open.removeAll() }  // a header ends with its line (or is an error)
                if open.isEmpty {
                    lineIsBlank = true
                    statementStart = index
                }
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                index += 1
            case UInt8(ascii: "#"):
                while index < count, bytes[index] != 0x0A { index += 1 }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                lineIsBlank = false
                skipString()
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if byte == UInt8(ascii: "["), open.isEmpty, lineIsBlank {
                    // A table header: what follows `[` or `[[` (after spaces) must start a key.
                    var next = index + 1
                    while next < count, bytes[next] == 0x20 || bytes[next] == 0x09 { next += 1 }
                    if next < count, bytes[next] == UInt8(ascii: "[") {
                        next += 1
                        while next < count, bytes[next] == 0x20 || bytes[next] == 0x09 { next += 1 }
                    }
                    if next < count {
                        let first = bytes[next]
                        if !(isBareKey(first) || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'")
                             || first == UInt8(ascii: "]")) {
                            return problem(at: next, "a table name starts with a letter, digit, '_', '-' or a quote "
                                           + "(bare TOML keys are ASCII; quote any other: [\"é\"])")
                        }
                    }
                    open.append(.header)
                    lineIsBlank = false
                    index += 1
                    continue
                }
                lineIsBlank = false
                index += 1
                if byte == UInt8(ascii: "{") || open.last == .header {
                    open.append(byte == UInt8(ascii: "{") ? .table : .header)
                } else {
                    open.append(.array)
                    if let problem = valueProblem(from: index) { return problem }
                }
            case UInt8(ascii: "="):
                lineIsBlank = false
                index += 1
                var next = index
                while next < count, bytes[next] == 0x20 || bytes[next] == 0x09 { next += 1 }
                if let problem = dateProblem(at: next) { return problem }
            case UInt8(ascii: ","):
                lineIsBlank = false
                index += 1
                if open.last == .array, let problem = valueProblem(from: index) { return problem }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if !open.isEmpty { open.removeLast() }
                lineIsBlank = false
                index += 1
            default:
                lineIsBlank = false
                index += 1
            }
        }
        if count < bytes.count {
            return problem(at: count, "a NUL character: this is not a text file")
        }
        return nil
    }
}
