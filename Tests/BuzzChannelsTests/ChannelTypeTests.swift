import BirthdayBuzz
import BuzzChannels
import Foundation
import Synchronization
import Testing

/// A channel type is one file: this one lives in the test target only, and the
/// registry, the config loader and delivery take it without any change under Sources/.
@Suite struct ChannelTypeTests {
    /// `type = "pager"`: `number` (required) and `loud` (default false).
    struct PagerChannel: NotificationChannel, ChannelType {
        struct Options: Sendable {
            var number: String
            var loud = false
        }

        static let typeName = "pager"

        static func options(from table: TableReader) throws -> Options {
            guard let number = try table.string("number"), !number.isEmpty else {
                throw table.problem("number", "missing: the pager's number")
            }
            return Options(number: number, loud: try table.bool("loud") ?? false)
        }

        static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
            PagerChannel(name: config.name, options: options)
        }

        static func target(of options: Options, environment: [String: String]) -> String { "pages \(options.number)" }

        /// What every pager channel was handed, in order.
        static let pages = Mutex<[String]>([])

        let name: String
        let options: Options

        func deliver(_ message: Message) async throws {
            let page = "\(options.number): \(options.loud ? message.title.uppercased() : message.title)"
            Self.pages.withLock { $0.append(page) }
        }
    }

    static func registry() -> ChannelRegistry {
        var registry = ChannelRegistry()
        registry.register(PagerChannel.self)
        return registry
    }

    static func load(_ toml: String, registry: ChannelRegistry) throws(ConfigError) -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "config.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!,
                       types: ConfigTypes(channels: registry.configTypes, sources: []))
    }

    @Test func aTypeRegisteredOutsideSourcesIsConfiguredAndDelivers() async throws {
        let registry = Self.registry()
        let config = try Self.load("""
            [reminders]
            channels = ["beeper"]

            [channels.beeper]
            type = "pager"
            number = "555-0100"
            loud = true
            timeout = "3s"
            """, registry: registry)
        let table = try #require(config.channel(named: "beeper"))
        #expect(table.typeName == "pager" && table.timeout == 3)
        #expect(registry.target(of: table, environment: [:]) == "pages 555-0100")

        let channel = try registry.make(table, context: ChannelContext(environment: [:], configDirectory: nil,
                                                                       scrubber: SecretScrubber()))
        #expect(channel.name == "beeper")
        try await channel.deliver(Message(kind: .reminder, id: "c1/0/2027-03-15", title: "Ada turns 37 today", body: ""))
        #expect(PagerChannel.pages.withLock { $0 } .contains("555-0100: ADA TURNS 37 TODAY"))
    }

    /// Its options are checked when the config loads, with file:line, as a shipped type's are.
    @Test func itsOptionsAreCheckedWhenTheConfigLoads() throws {
        let registry = Self.registry()
        #expect(throws: ConfigError.self) { try Self.load("[channels.b]\ntype = \"pager\"\n", registry: registry) }
        do {
            _ = try Self.load("[channels.b]\ntype = \"pager\"\nnumber = \"1\"\ncolour = \"red\"\n", registry: registry)
            Issue.record("an unknown key loaded")
        } catch {
            #expect(error.description == "config.toml:4:1: channels.b.colour: unknown key")
        }
        do {
            _ = try Self.load("[channels.b]\ntype = \"pager\"\nnumber = 5\n", registry: registry)
            Issue.record("a number loaded")
        } catch {
            #expect(error.description == "config.toml:3:1: channels.b.number: expected a string, found integer")
        }
        // Without the registration, the type is unknown, and the list says which are.
        do {
            _ = try Self.load("[channels.b]\ntype = \"pager\"\n", registry: ChannelRegistry())
            Issue.record("an unregistered type loaded")
        } catch {
            #expect(error.description == "config.toml:2:1: channels.b.type: unknown channel type \"pager\" (one of: dbus, smtp, webhook, exec, console)")
        }
    }
}
