import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import Foundation

struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Show the channels, or send a test message through one.",
        subcommands: [ListChannels.self, TestChannel.self],
        defaultSubcommand: ListChannels.self)

    @ParentCommand var root: Buzz

    struct ListChannels: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Show every channel and where it delivers.")

        @ParentCommand var channels: ChannelsCommand

        func run() throws {
            let context = try Context(channels.root.global)
            let wiring = ChannelWiring(context: context)
            let route = Set(context.defaultChannels)
            for config in context.config.allChannels {
                let builtIn = context.config.channel(named: config.name) == nil ? " (built-in)" : ""
                let marker = route.contains(config.name) ? "*" : " "
                print("\(marker) \(padRight(config.name, 14)) \(padRight(config.typeName, 8)) \(wiring.target(of: config))\(builtIn)")
            }
            print("* = reminders go here by default")
        }
    }

    struct TestChannel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "test", abstract: "Send a test message through a channel.")

        @ParentCommand var channels: ChannelsCommand

        @Argument(help: "The channel name.")
        var name: String

        func run() async throws {
            let context = try Context(channels.root.global)
            let wiring = ChannelWiring(context: context)
            let config = try wiring.config(named: name)
            let message = Message(kind: .message, id: "test/" + UUID().uuidString.lowercased(),
                                  title: "BirthdayBuzz test", body: "If you can read this, the channel \"\(name)\" works.",
                                  locale: context.config.general.locale)
            switch wiring.build(config) {
            case .failure(let error):
                printError(error.message)
                throw ExitCode(1)
            case .success(let channel):
                // Shut down before the process ends (a `defer { Task { … } }` here never ran: the command returned first).
                let outcome: Result<Void, DeliveryError>
                do {
                    try await channel.deliver(message)
                    outcome = .success(())
                } catch let error as DeliveryError {
                    outcome = .failure(error)
                }
                await channel.shutdown()
                switch outcome {
                case .success:
                    print("\(name): test message delivered (\(wiring.target(of: config)))")
                case .failure(let error):
                    printError(wiring.scrubber.scrub(error.message, channel: name) + (error.isTemporary ? " (temporary)" : ""))
                    throw ExitCode(1)
                }
            }
        }
    }
}
