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

/// Maps a channel `type` to the adapter that implements it. Adding a type is one
/// file plus one line in `builders`.
public struct ChannelRegistry: Sendable {
    public typealias Builder = @Sendable (ChannelConfig, ChannelContext) throws -> any NotificationChannel

    public var builders: [String: Builder]

    public init(builders: [String: Builder] = ChannelRegistry.standardBuilders) {
        self.builders = builders
    }

    public static let standardBuilders: [String: Builder] = [
        "console": { config, context in ConsoleChannel(name: config.name, output: context.consoleOutput) },
        "dbus": { config, context in
            guard case .dbus(let options) = config.kind else { throw ChannelSetupError.kindMismatch(config.name) }
            return DBusChannel(name: config.name, options: options, timeout: config.timeout, environment: context.environment,
                               actions: context.notificationActions)
        },
        "smtp": { config, context in
            guard case .smtp(let options) = config.kind else { throw ChannelSetupError.kindMismatch(config.name) }
            return try SMTPChannel(name: config.name, options: options, timeout: config.timeout, context: context)
        },
        "webhook": { config, context in
            guard case .webhook(let options) = config.kind else { throw ChannelSetupError.kindMismatch(config.name) }
            return try WebhookChannel(name: config.name, options: options, timeout: config.timeout, context: context)
        },
        "exec": { config, context in
            guard case .exec(let options) = config.kind else { throw ChannelSetupError.kindMismatch(config.name) }
            return ExecChannel(name: config.name, options: options, timeout: config.timeout,
                               configDirectory: context.configDirectory, scrubber: context.scrubber)
        },
    ]

    /// Builds the adapter for a channel table.
    public func make(_ config: ChannelConfig, context: ChannelContext) throws -> any NotificationChannel {
        guard let builder = builders[config.typeName] else {
            throw ChannelSetupError(message: "\(config.name): no adapter for channel type \"\(config.typeName)\"")
        }
        // The channel registers its secrets under its own name and scrubs only those from its errors.
        var scoped = context
        scoped.scrubber = context.scrubber.scoped(to: config.name)
        return try builder(config, scoped)
    }
}

/// A channel that cannot be built from its table (a secret that cannot be read,
/// an environment variable that is not set). One line, never the secret itself.
public struct ChannelSetupError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    static func kindMismatch(_ name: String) -> ChannelSetupError {
        ChannelSetupError(message: "\(name): channel options do not match its type")
    }

    public var description: String { message }
}
