import BirthdayBuzz
import Foundation

/// What every channel may need from the process that builds it.
public struct ChannelContext: Sendable {
    /// The environment secrets and URLs are read from (`password_env`, `url_env`, `{ env = … }`).
    public var environment: [String: String]
    /// Folder of the config file: relative paths resolve against it, and exec refuses it when unsafe.
    public var configDirectory: String?
    /// Every resolved secret is registered here so that no output shows it.
    public var scrubber: SecretScrubber
    /// Where the console channel writes (standard output by default).
    public var consoleOutput: @Sendable (String) -> Void
    /// Set by `buzz run`: dbus channels offer actions on day-of reminders and report their ids here.
    public var notificationActions: (any NotificationActionRecorder)?

    public init(environment: [String: String], configDirectory: String?, scrubber: SecretScrubber,
                consoleOutput: @escaping @Sendable (String) -> Void = { text in
                    FileHandle.standardOutput.write(Data(text.utf8))
                }, notificationActions: (any NotificationActionRecorder)? = nil) {
        self.environment = environment
        self.configDirectory = configDirectory
        self.scrubber = scrubber
        self.consoleOutput = consoleOutput
        self.notificationActions = notificationActions
    }

    /// A path from the config, with `~/` expanded and relative paths read from the config folder.
    public func resolvePath(_ path: String) -> String {
        if path.hasPrefix("~/"), let home = environment["HOME"] { return home + path.dropFirst(1) }
        if path.hasPrefix("/") { return path }
        return (configDirectory.map { $0 + "/" } ?? "") + path
    }
}

/// One channel type: the `type = "…"` it answers to, the options it reads from
/// its `[channels.NAME]` table, and how it builds a channel from them.
///
/// A type is one file: its adapter (a `NotificationChannel`) conforms, as
/// `SMTPChannel` does, and one line in `ChannelRegistry.standardTypes` (or a
/// `register` call, as a test does) makes it known. The core reads `type` and
/// `timeout`; everything else in the table is the type's to read, and it is
/// read when the config is loaded, so a bad option is a config error
/// (`config.toml:12:1: channels.x.key: …`) before anything is sent.
///
/// ```swift
/// struct PagerChannel: NotificationChannel, ChannelType {
///     struct Options: Sendable { var number: String }
///     static let typeName = "pager"
///     static func options(from table: TableReader) throws -> Options {
///         guard let number = try table.string("number") else { throw table.problem("number", "missing") }
///         return Options(number: number)
///     }
///     static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
///         PagerChannel(name: config.name, number: options.number)
///     }
///     let name: String, number: String
///     func deliver(_ message: Message) async throws { … }
/// }
/// ```
public protocol ChannelType: Sendable {
    /// The type's own keys, parsed and checked.
    associatedtype Options: Sendable

    /// The `type = "…"` value.
    static var typeName: String { get }

    /// Reads the type's keys (`type` and `timeout` are the core's); a key it does
    /// not read is reported as unknown. Errors come from `table.problem(_:_:)`.
    static func options(from table: TableReader) throws -> Options

    /// The channel for a table whose options have been read.
    static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel

    /// Where a channel of this type delivers, for `channels list` and `doctor`:
    /// one line without secrets. Default: the type name.
    static func target(of options: Options, environment: [String: String]) -> String

    /// Whether the options hold a secret written in the file itself (docs/design/channels.md:
    /// warn when others can read the file). Default: false.
    static func holdsInlineSecret(_ options: Options) -> Bool

    /// Other channels the options name, by key (a dbus channel's `escalate`): the
    /// loader checks that each exists, as it does for routes. Default: none.
    static func channelReferences(_ options: Options) -> [String: [String]]

    /// What a channel of this type can carry: the config loader accepts it in a
    /// route only for what it declares (`[ask] sms` needs `.asksBySMS`, a
    /// reminder route `.reminders`). Default: `.reminders`.
    static var capabilities: ChannelCapabilities { get }

    /// How a config error about an ask route names this type among those that
    /// can carry the ask. Default: the type name.
    static var askRouteDescription: String { get }

    /// For options whose channel reaches only the user's own devices, never a
    /// contact's address although the type could (a webhook to Telegram): the
    /// service's name, and the loader refuses it as an ask route. Default: nil.
    static func userOnlyService(_ options: Options) -> String?
}

extension ChannelType {
    public static func target(of options: Options, environment: [String: String]) -> String { typeName }

    public static func holdsInlineSecret(_ options: Options) -> Bool { false }

    public static func channelReferences(_ options: Options) -> [String: [String]] { [:] }

    public static var capabilities: ChannelCapabilities { .reminders }

    public static var askRouteDescription: String { typeName }

    public static func userOnlyService(_ options: Options) -> String? { nil }

    /// Reads a channel table's options (all of them: an unread key is an error).
    public static func options(of config: ChannelConfig) throws -> Options {
        try TableReader.readAll(config.options, options(from:))
    }
}

/// Maps a channel `type` to the type that implements it. Adding a type is one
/// file plus one line in `standardTypes`; a program (or a test) can also
/// `register` its own. Passed in, never global: `BuzzConfig(toml:…types:)` gets
/// its `configTypes`, the CLI builds channels with `make`.
public struct ChannelRegistry: Sendable {
    /// A registered type, its generic parts closed over.
    struct Entry: Sendable {
        var name: String
        var check: @Sendable (TableReader) throws -> Void
        var make: @Sendable (ChannelConfig, ChannelContext) throws -> any NotificationChannel
        var target: @Sendable (ChannelConfig, [String: String]) -> String
        var holdsInlineSecret: @Sendable (ChannelConfig) -> Bool
        var references: @Sendable (ConfigTable) -> [String: [String]]
        var capabilities: ChannelCapabilities
        var askRouteDescription: String
        var userOnlyService: @Sendable (ConfigTable) -> String?
    }

    private var entries: [Entry] = []

    /// The types BirthdayBuzz ships, in the order errors list them.
    public static let standardTypes: [any ChannelType.Type] = [
        DBusChannel.self, SMTPChannel.self, WebhookChannel.self, ExecChannel.self, ConsoleChannel.self,
    ]

    public init(types: [any ChannelType.Type] = ChannelRegistry.standardTypes) {
        for type in types { register(type) }
    }

    /// Adds a type, or replaces the one with the same `typeName`.
    public mutating func register<T: ChannelType>(_ type: T.Type) {
        let entry = Entry(
            name: T.typeName,
            check: { table in _ = try T.options(from: table) },
            make: { config, context in try T.make(config, options: try T.options(of: config), context: context) },
            target: { config, environment in
                (try? T.options(of: config)).map { T.target(of: $0, environment: environment) } ?? T.typeName
            },
            holdsInlineSecret: { config in (try? T.options(of: config)).map(T.holdsInlineSecret) ?? false },
            references: { table in (try? TableReader.readAll(table, T.options(from:))).map(T.channelReferences) ?? [:] },
            capabilities: T.capabilities,
            askRouteDescription: T.askRouteDescription,
            userOnlyService: { table in (try? TableReader.readAll(table, T.options(from:))).flatMap(T.userOnlyService) })
        if let index = entries.firstIndex(where: { $0.name == T.typeName }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }

    /// The `type = "…"` names this registry knows, in order.
    public var typeNames: [String] { entries.map(\.name) }

    /// What `BuzzConfig(toml:…types:)` needs to check `[channels.NAME]` tables.
    public var configTypes: [ConfigTypes.Entry] {
        entries.map {
            ConfigTypes.Entry(name: $0.name, check: $0.check, references: $0.references, capabilities: $0.capabilities,
                              askRouteDescription: $0.askRouteDescription, userOnlyService: $0.userOnlyService)
        }
    }

    private func entry(for config: ChannelConfig) -> Entry? {
        entries.first { $0.name == config.typeName }
    }

    /// Builds the adapter for a channel table.
    public func make(_ config: ChannelConfig, context: ChannelContext) throws -> any NotificationChannel {
        guard let entry = entry(for: config) else {
            throw ChannelSetupError(message: "\(config.name): no adapter for channel type \"\(config.typeName)\"")
        }
        // The channel registers its secrets under its own name and scrubs only those from its errors.
        var scoped = context
        scoped.scrubber = context.scrubber.scoped(to: config.name)
        do {
            return try entry.make(config, scoped)
        } catch let error as ConfigError {
            // Options are checked when the config loads; this is a table made in code.
            throw ChannelSetupError(message: "\(config.name): \(error.message)")
        }
    }

    /// Where a channel delivers, on one line, without secrets (`channels list`, `doctor`).
    public func target(of config: ChannelConfig, environment: [String: String]) -> String {
        entry(for: config)?.target(config, environment) ?? config.typeName
    }

    /// Whether the config file itself holds a secret in a channel's options: a
    /// webhook URL with a query or credentials, or a literal header value.
    public func holdsInlineSecrets(_ config: BuzzConfig) -> Bool {
        config.channels.contains { channel in entry(for: channel)?.holdsInlineSecret(channel) ?? false }
    }
}

/// A channel that cannot be built from its table (a secret that cannot be read,
/// an environment variable that is not set). One line, never the secret itself.
public struct ChannelSetupError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
