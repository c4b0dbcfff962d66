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
