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
    var title = "BirthdayBuzz"

    @Argument(help: "The message text.")
    var body: String

    func run() async throws {
        // No database, no contacts: a cold `send` only reads the config.
        let context = try Context(root.global)
        let wiring = ChannelWiring(context: context)
        let names = channels.isEmpty ? context.defaultChannels : channels
        let configs = try names.map(wiring.config(named:))
        let message = Message(kind: .message, id: "send/" + UUID().uuidString.lowercased(), title: title, body: body,
                              locale: context.config.general.locale)
        var failures: [String] = []
        for config in configs {
            switch wiring.build(config) {
            case .failure(let error):
                failures.append(error.message)
            case .success(let channel):
                do {
                    try await channel.deliver(message)
                } catch let error as DeliveryError {
                    failures.append(wiring.scrubber.scrub(error.message) + (error.isTemporary ? " (temporary)" : ""))
                } catch {
                    failures.append(wiring.scrubber.scrub("\(config.name): \(error)"))
                }
                await channel.shutdown()
            }
        }
        for failure in failures { printError(failure) }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
