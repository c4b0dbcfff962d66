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

/// What a route may carry is the type's own word (`ChannelType.capabilities`): the
/// loader names no type, so a type registered here carries an ask because it says so.
extension ChannelTypeTests {
    /// `type = "sms-relay"`: hands asks to a contact's phone, and nothing to the user.
    struct SMSRelayChannel: NotificationChannel, ChannelType {
        struct Options: Sendable {}
        static let typeName = "sms-relay"
        static let capabilities: ChannelCapabilities = .asksBySMS
        static func options(from table: TableReader) throws -> Options { Options() }
        static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
            SMSRelayChannel(name: config.name)
        }

        let name: String
        func deliver(_ message: Message) async throws {}
    }

    static func relayRegistry() -> ChannelRegistry {
        var registry = registry()
        registry.register(SMSRelayChannel.self)
        return registry
    }

    static func loadError(_ toml: String, registry: ChannelRegistry) -> String? {
        do {
            _ = try load(toml, registry: registry)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func anAskRouteTakesATypeThatDeclaresTheAsk() throws {
        let registry = Self.relayRegistry()
        let relay = "[channels.relay]\ntype = \"sms-relay\"\n\n"
        let config = try Self.load(relay + "[ask]\nsms = \"relay\"\n", registry: registry)
        #expect(config.ask.sms == "relay")

        // Declared for SMS only: not for email asks, nor for reminders (the hint lists the types that can).
        #expect(Self.loadError(relay + "[ask]\nemail = \"relay\"\n", registry: registry)
                == "config.toml:5:1: ask.email: channel \"relay\" is a sms-relay channel; email asks need smtp or exec")
        #expect(Self.loadError(relay + "[reminders]\nchannels = [\"relay\"]\n", registry: registry)
                == "config.toml:5:1: reminders.channels: channel \"relay\" is a sms-relay channel, which cannot carry reminders, digests or notices")

        // A type that declares nothing more than the default (reminders) is refused for an ask.
        let pager = "[channels.beeper]\ntype = \"pager\"\nnumber = \"555-0100\"\n\n"
        #expect(Self.loadError(pager + "[ask]\nsms = \"beeper\"\n", registry: registry)
                == "config.toml:6:1: ask.sms: channel \"beeper\" is a pager channel; SMS asks need a webhook (an SMS gateway), exec or sms-relay")
        _ = try Self.load(pager + "[reminders]\nchannels = [\"beeper\"]\n", registry: registry)
    }

    /// The shipped types say what the loader used to know by name, in the same words.
    @Test func theShippedTypesKeepTheirAskRoutesAndMessages() throws {
        let registry = ChannelRegistry()
        #expect(Self.loadError("[ask]\nsms = \"console\"\n", registry: registry)
                == "config.toml:2:1: ask.sms: channel \"console\" is a console channel; SMS asks need a webhook (an SMS gateway) or exec")
        #expect(Self.loadError("[ask]\nemail = \"desktop\"\n", registry: registry)
                == "config.toml:2:1: ask.email: channel \"desktop\" is a dbus channel; email asks need smtp or exec")
        #expect(Self.loadError("[channels.tg]\ntype = \"webhook\"\nurl = \"tgram://123:abc/42\"\n\n[ask]\nsms = \"tg\"\n",
                               registry: registry)
                == "config.toml:6:1: ask.sms: channel \"tg\" is a Telegram channel, which reaches you, not a contact's phone; asks and wishes need an SMS gateway webhook or exec")
        _ = try Self.load("""
            [channels.mail]
            type = "smtp"
            host = "127.0.0.1"
            from = "a@b.example"
            to = "a@b.example"

            [channels.gateway]
            type = "webhook"
            url = "https://sms.example/send"

            [channels.plugin]
            type = "exec"
            command = ["/bin/true"]

            [ask]
            email = "plugin"
            sms = "gateway"
            """, registry: registry)
        _ = try Self.load("[channels.mail]\ntype = \"smtp\"\nhost = \"127.0.0.1\"\nfrom = \"a@b.example\"\nto = \"a@b.example\"\n\n[ask]\nemail = \"mail\"\nsms = \"mail2\"\n\n[channels.mail2]\ntype = \"exec\"\ncommand = [\"/bin/true\"]\n",
                          registry: registry)
    }
}
