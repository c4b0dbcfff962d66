import BirthdayBuzz
import BuzzChannels
import BuzzStore
import Foundation

/// Builds channel adapters from the configuration, for `send`, `channels` and `doctor`.
struct ChannelWiring {
    let context: Context
    let scrubber = SecretScrubber()
    let registry = Context.channelTypes
    /// The console channel prints to stderr when stdout carries JSON.
    var consoleToStandardError = false
    /// `buzz run` only: desktop reminders on the day carry actions, whose ids go here (docs/design/asks-and-wishes.md).
    var notificationActions: (any NotificationActionRecorder)?

    var channelContext: ChannelContext {
        let directory = context.configFileExists ? BuzzDatabase.parentFolder(of: context.configPath) : nil
        var channelContext = ChannelContext(environment: context.environment, configDirectory: directory, scrubber: scrubber)
        let invocation = Invocation.current
        if consoleToStandardError {
            channelContext.consoleOutput = { text in invocation.writeError(text) }
        } else {
            channelContext.consoleOutput = { text in invocation.writeNow(text) }
        }
        channelContext.notificationActions = notificationActions
        return channelContext
    }

    /// The channel table for a name (configured or built-in); a request error when unknown.
    func config(named name: String) throws -> ChannelConfig {
        guard let config = context.config.resolvedChannel(named: name) else {
            let known = context.config.allChannels.map(\.name).joined(separator: ", ")
            throw CLIError.request("no channel named \"\(name)\" (known: \(known))")
        }
        return config
    }

    /// Builds one adapter; a setup problem becomes a delivery-style failure line.
    func build(_ config: ChannelConfig) -> Result<any NotificationChannel, DeliveryError> {
        do {
            return .success(try registry.make(config, context: channelContext))
        } catch let error as ChannelSetupError {
            return .failure(.permanent(scrubber.scrub(error.message, channel: config.name)))
        } catch {
            return .failure(.permanent(scrubber.scrub("\(config.name): \(error)", channel: config.name)))
        }
    }

    /// A one-line, secret-free description of where a channel delivers.
    /// Where a channel delivers, on one line (config values escaped: `OneLine`).
    func target(of config: ChannelConfig) -> String {
        OneLine.escaped(rawTarget(of: config))
    }

    private func rawTarget(of config: ChannelConfig) -> String {
        registry.target(of: config, environment: context.environment)
    }
}
