import BirthdayBuzz

/// Prints messages to standard output: the embedded default channel.
public struct ConsoleChannel: NotificationChannel {
    public let name: String
    private let output: @Sendable (String) -> Void

    public init(name: String = "console", output: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.output = output
    }

    public func deliver(_ message: Message) async throws {
        var text = "🎂 " + message.title
        if let recipient = message.recipient { text += " (to \(recipient.address))" }
        text += "\n"
        if !message.body.isEmpty { text += message.body + "\n" }
        output(text)
    }
}

/// `type = "console"`: no keys of its own.
extension ConsoleChannel: ChannelType {
    public struct Options: Sendable {}

    public static let typeName = "console"

    /// It only prints here: it reaches the user, never a contact.
    public static let capabilities: ChannelCapabilities = .reminders

    public static func options(from table: TableReader) throws -> Options { Options() }

    public static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
        ConsoleChannel(name: config.name, output: context.consoleOutput)
    }

    public static func target(of options: Options, environment: [String: String]) -> String { "standard output" }
}
