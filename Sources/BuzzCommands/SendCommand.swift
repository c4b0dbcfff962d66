import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import Foundation

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message now through channels (no ledger, no retry).",
        discussion: """
            Goes to the --channel names given, else reminders.channels, else the console \
            (and desktop notifications when a session bus is there). Exits 1 when any channel failed.
            """)

    @ParentCommand var root: Buzz

    @Option(name: .customLong("channel"), help: ArgumentHelp("A channel to send through (repeatable).", valueName: "name"))
    var channels: [String] = []

    @Option(help: "Title (subject, summary).")
    var title = SendRequest.defaultTitle

    @Argument(help: "The message text.")
    var body: String

    func run() async throws {
        try await SendRequest(global: root.global.settings, channels: channels, title: title, body: body).run()
    }
}
