import TOMLKit

/// One TOML table as the loader read it, independent of the TOML library: its
/// values, its key path and the file it came from.
///
/// The core hands a channel or source type its `[channels.NAME]` or
/// `[sources.NAME]` table in this form (without the keys every type has), and
/// the type reads its own keys with a `TableReader`, so its errors still say
/// `file:line:column` and the key path, and a key it never reads is still an
/// unknown key.
public struct ConfigTable: Sendable {
    /// A TOML value.
    public indirect enum Value: Sendable {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        case array([Value])
        case table(ConfigTable)
        /// A date, time or date-time: no key reads one, so only its kind is kept.
        case other(String)

        /// What an error says was found instead (`found an integer`).
        var typeDescription: String {
            switch self {
            case .string: "string"
            case .integer: "integer"
            case .float: "floating-point number"
            case .boolean: "bool"
            case .array: "array"
            case .table: "table"
            case .other(let kind): kind
            }
        }
    }

    /// Where the table sits: `["channels", "mail"]`.
    public let path: [String]
    /// The table's keys and values.
    public let values: [String: Value]
    /// The text it was read from, to place errors; nil for a table made in code.
    let origin: ConfigOrigin?

    init(path: [String], values: [String: Value], origin: ConfigOrigin?) {
        self.path = path
        self.values = values
        self.origin = origin
    }

    /// A table made in code (built-in channels, tests): errors in it carry no file position.
    public init(path: [String] = [], values: [String: Value] = [:]) {
        self.init(path: path, values: values, origin: nil)
    }

    /// The same table without `keys` (the ones the core has read itself).
    func removing(_ keys: Set<String>) -> ConfigTable {
        ConfigTable(path: path, values: values.filter { !keys.contains($0.key) }, origin: origin)
    }

    /// Converts a parsed TOMLKit table, recursively.
    init(_ table: TOMLTable, path: [String], origin: ConfigOrigin?) {
        var values: [String: Value] = [:]
        for key in table.keys {
            if let value = table[key] { values[key] = Self.value(value, path: path + [key], origin: origin) }
        }
        self.init(path: path, values: values, origin: origin)
    }

    private static func value(_ value: any TOMLValueConvertible, path: [String], origin: ConfigOrigin?) -> Value {
        switch value.type {
        case .string: return .string(value.string ?? "")
        case .int: return .integer(value.int ?? 0)
        case .double: return .float(value.double ?? 0)
        case .bool: return .boolean(value.bool ?? false)
        case .array:
            return .array(value.array?.map { Self.value($0, path: path, origin: origin) } ?? [])
        case .table:
            guard let table = value.table else { return .other("table") }
            return .table(ConfigTable(table, path: path, origin: origin))
        case .date, .time, .dateTime: return .other(value.type.description)
        }
    }
}

/// The file a table was read from and its text, so an error at a key path can
/// say `file:line:column`.
struct ConfigOrigin: Sendable {
    let file: String
    let locator: KeyLocator

    /// A `ConfigError` at `path`, placed where the key is written (one line: keys and values may hold line breaks).
    func error(path: [String], message: String) -> ConfigError {
        let place = locator.position(of: path)
        return ConfigError(file: file, line: place?.line, column: place?.column,
                           keyPath: BuzzConfig.oneLine(path.joined(separator: ".")),
                           message: BuzzConfig.oneLine(message))
    }
}

/// The channel and source types a configuration may name (`type = "…"`), each
/// with the check of its own keys. The core knows none of them: BuzzChannels'
/// `ChannelRegistry` and BuzzSources' `SourceRegistry` supply them, and the CLI
/// hands both to `BuzzConfig(toml:…)`, so a bad channel option is a config error
/// with its `file:line` before anything is sent.
public struct ConfigTypes: Sendable {
    /// One `type = "…"` value and the check of the keys that type reads.
    public struct Entry: Sendable {
        public var name: String
        /// Reads (and so checks) every key of the type; the loader reports the keys it did not read.
        public var check: @Sendable (TableReader) throws -> Void
        /// Other channels a checked table names, by key (a dbus channel's `escalate`); each must exist.
        public var references: @Sendable (ConfigTable) -> [String: [String]]
        /// What a channel of this type can carry; the loader checks routes against it
        /// (`[ask] sms` needs `.asksBySMS`). Unused for source types.
        public var capabilities: ChannelCapabilities
        /// How an error about an ask route names this type among those that can carry
        /// it ("SMS asks need a webhook (an SMS gateway) or exec"); nil: its name.
        public var askRouteDescription: String?
        /// For a checked table whose channel reaches only the user's own devices,
        /// never a contact's address (a webhook with the Telegram preset): the
        /// service's name, for the error that refuses it as an ask route. Else nil.
        public var userOnlyService: @Sendable (ConfigTable) -> String?

        public init(name: String, check: @escaping @Sendable (TableReader) throws -> Void,
                    references: @escaping @Sendable (ConfigTable) -> [String: [String]] = { _ in [:] },
                    capabilities: ChannelCapabilities = [], askRouteDescription: String? = nil,
                    userOnlyService: @escaping @Sendable (ConfigTable) -> String? = { _ in nil }) {
            self.name = name
            self.check = check
            self.references = references
            self.capabilities = capabilities
            self.askRouteDescription = askRouteDescription
            self.userOnlyService = userOnlyService
        }
    }

    /// In the order errors list them (`one of: dbus, smtp, …`).
    public var channels: [Entry]
    public var sources: [Entry]

    public init(channels: [Entry], sources: [Entry]) {
        self.channels = channels
        self.sources = sources
    }
}

/// What a channel type can carry, declared by the type itself (BuzzChannels'
/// `ChannelType.capabilities`): the loader asks the types it is handed instead of
/// knowing type names, so a type a program registers can carry asks too.
public struct ChannelCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Messages to the user: reminders, digests and notices (routes in
    /// `[reminders]`, the occasion tables, `[groups.NAME]`, `[digests.NAME]`).
    public static let reminders = ChannelCapabilities(rawValue: 1 << 0)
    /// An ask (or a wish) sent to a contact's email address: `[ask] email`.
    public static let asksByEmail = ChannelCapabilities(rawValue: 1 << 1)
    /// An ask (or a wish) sent to a contact's phone number: `[ask] sms`.
    public static let asksBySMS = ChannelCapabilities(rawValue: 1 << 2)
}

extension ConfigTypes {
    /// What is left of a `[channels.NAME]` or `[sources.NAME]` table after the core
    /// read its own keys, checked by the type named `type`: every key read (an
    /// unread one is an unknown key). `what` and `known` word the unknown-type error.
    static func checkedOptions(_ table: TableReader, type: String, among types: [Entry], what: String,
                               known: @autoclosure () -> String) throws -> ConfigTable {
        guard let entry = types.first(where: { $0.name == type }) else {
            throw table.problem("type", "unknown \(what) type \"\(type)\" (one of: \(known()))")
        }
        let options = table.unread
        let reader = TableReader(options)
        try entry.check(reader)
        try reader.finish()
        return options
    }
}
