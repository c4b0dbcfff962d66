import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzSources
import BuzzStore
import Foundation

/// What every command needs: the loaded configuration, the clock, the store.
struct Context {
    let environment: [String: String]
    let configPath: String
    let configFileExists: Bool
    let config: BuzzConfig
    /// Wall-clock time in the config's zone (made when asked: `send` never asks).
    var clock: WallClock { WallClock(timeZone: config.general.timeZone) }
    /// The command's "now" (pinned by `--now`, else the system clock), seconds since 1970;
    /// `run` moves it to the moment of a click on a notification.
    var now: Int64
    let dataDirectory: String

    /// The channel types this program knows (docs/design/channels.md): the config may name these, and `ChannelWiring` builds them.
    static let channelTypes = ChannelRegistry()
    /// The source types it knows (docs/design/sources.md).
    static let sourceTypes = SourceRegistry()
    /// What the config loader checks `[channels.NAME]` and `[sources.NAME]` tables against.
    static var configTypes: ConfigTypes {
        ConfigTypes(channels: channelTypes.configTypes, sources: sourceTypes.configTypes)
    }

    /// The config file: `--config`, else `$BUZZ_CONFIG`, else the XDG default; and
    /// whether it was named explicitly (then it must exist).
    static func configPath(_ options: GlobalSettings, environment: [String: String]) -> (path: String, explicit: Bool) {
        if let named = options.config ?? environment["BUZZ_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            // Absolute from here on: the config's folder anchors template overrides,
            // relative plugin paths and the permission checks, and `cfg.toml` has
            // no folder part of its own.
            guard !named.hasPrefix("/") else { return (named, true) }
            return (Invocation.current.absolute(named), true)
        }
        return (defaultConfigPath(environment: environment), false)
    }

    /// `$XDG_CONFIG_HOME/birthdaybuzz/config.toml`, else under `~/.config`.
    static func defaultConfigPath(environment: [String: String]) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        return configHome + "/birthdaybuzz/config.toml"
    }

    init(_ options: GlobalOptions) throws {
        try self.init(options.settings)
    }

    /// - Parameter environment: the process's, or a test's own (the daemon's loop run in-process).
    init(_ options: GlobalSettings, environment: [String: String] = Invocation.current.environment) throws {
        self.environment = environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let resolved = Context.configPath(options, environment: environment)
        configPath = resolved.path
        let explicitConfig = resolved.explicit ? resolved.path : nil
        let invocation = Invocation.current
        // Worked out only if read: `send` never reads it (ICU's zone lookups, ~6 % of a cold send).
        let systemZone = LazyTimeZone { invocation.systemTimeZone }
        if FileManager.default.fileExists(atPath: configPath) {
            configFileExists = true
            let text: String
            do {
                text = try TextFile.read(configPath)
            } catch {
                if let line = error.line { throw CLIError.request("\(configPath):\(line): the config file \(error.reason)") }
                throw CLIError.request("\(configPath): cannot read the config file (\(error.reason))")
            }
            do {
                config = try BuzzConfig(toml: text, file: configPath, environment: environment, systemTimeZone: systemZone,
                                        types: Context.configTypes)
            } catch {
                throw CLIError.request(error.description)
            }
            var info = stat()
            if stat(configPath, &info) == 0, info.st_mode & 0o044 != 0,
               Context.channelTypes.holdsInlineSecrets(config) || config.health?.ping.isInline == true {
                printWarning("warning: \(configPath) is readable by other users and holds a secret inline (a URL query, user:password@ or a header value); chmod 600 it, or move the secret to url_env / { env = \"NAME\" }")
            }
        } else if explicitConfig != nil {
            throw CLIError.request("\(configPath): no such config file (run `buzz init --config \(configPath)` to write one)")
        } else {
            configFileExists = false
            config = BuzzConfig(defaultsFor: environment, systemTimeZone: systemZone)
        }
        if let text = options.now, let pinned = PinnedNow(text) {
            now = pinned.instant(in: WallClock(timeZone: config.general.timeZone))
        } else {
            now = Int64(Date().timeIntervalSince1970.rounded(.down))
        }
        if options.dataDir?.isEmpty == true {
            throw CLIError.request("--data-dir is empty: name a folder (default: $XDG_DATA_HOME/birthdaybuzz)")
        }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        dataDirectory = Invocation.current.absolute(options.dataDir ?? environment["BUZZ_DATA_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? dataHome + "/birthdaybuzz")
    }

    /// Where user template overrides live: `templates/` next to the config file,
    /// then `$XDG_CONFIG_HOME/birthdaybuzz/templates` (docs/design/asks-and-wishes.md) when the config
    /// is elsewhere (`--config`); the first folder wins for a template both hold.
    var templateDirectories: [String] {
        let besideConfig = BuzzDatabase.parentFolder(of: configPath) + "/templates"
        let standard = BuzzDatabase.parentFolder(of: Context.defaultConfigPath(environment: environment)) + "/templates"
        return besideConfig == standard ? [besideConfig] : [besideConfig, standard]
    }

    /// Reads the files the enabled kinds' tables name (`[namedays] file`) and
    /// prepares them; `~/` is the home folder, a relative path is beside the config.
    static func readOccasionFiles(_ config: BuzzConfig, configPath: String, home: String) throws -> [String: any Sendable] {
        var prepared: [String: any Sendable] = [:]
        for kind in OccasionKind.all where kind != .birthday && config.reminds(kind) {
            guard let prepare = kind.prepare else { continue }
            for key in kind.fileKeys {
                guard let written = config.occasion(kind).files[key] else { continue }
                var path = written
                if path == "~" || path.hasPrefix("~/") { path = home + path.dropFirst() }
                if !path.hasPrefix("/") { path = BuzzDatabase.parentFolder(of: configPath) + "/" + path }
                let text: String
                do {
                    text = try TextFile.read(path)
                } catch {
                    let at = error.line.map { ":\($0)" } ?? ""
                    throw CLIError.request("\(path)\(at): cannot read the [\(kind.configTable)] \(key) (\(error.reason))")
                }
                do {
                    prepared[kind.name] = try prepare(text)
                } catch {
                    let at = error.line > 0 ? ":\(error.line)" : ""
                    throw CLIError.request("\(path)\(at): \(error.message) ([\(kind.configTable)] \(key))")
                }
            }
        }
        return prepared
    }

    /// What each occasion kind made of the files its config table names (the
    /// name-day calendar), by kind name. Read by the commands that plan, not at
    /// start-up (a `buzz send` never reads it); `tick` and `run` read it before
    /// they deliver, so a bad file stops them before anything is sent.
    func occasionFiles() throws -> [String: any Sendable] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return try Context.readOccasionFiles(config, configPath: configPath, home: home)
    }

    /// The planner of this config, with the kinds' files read.
    func planner() throws -> Planner {
        var planner = Planner(config: config, defaultChannels: defaultChannels)
        planner.prepared = try occasionFiles()
        return planner
    }

    /// The local date of `now`.
    var today: LocalDate { clock.localDate(at: now) }

    func openStore() throws -> BuzzDatabase {
        do {
            return try BuzzDatabase(directory: dataDirectory)
        } catch {
            throw CLIError.runtime("\(error)")
        }
    }

    /// The default reminder route: `reminders.channels`, else the embedded
    /// default — console, plus desktop notifications when a notification server
    /// runs on the session bus or the bus can start one. Asked each time (a
    /// daemon started before login gains `desktop` at its next reload); each
    /// command asks once.
    var defaultChannels: [String] {
        if let channels = config.reminders.channels { return channels }
        let desktop = DBusChannel.notificationServerAvailable(environment: environment)
        return desktop ? ["console", "desktop"] : ["console"]
    }

    /// One contact for a CONTACT argument: an id, or a case-insensitive part of a name.
    func resolve(_ query: String, in store: BuzzDatabase) throws -> Contact {
        let found: [Contact]
        do {
            found = try store.findContacts(query)
        } catch {
            throw CLIError.runtime("\(error)")
        }
        switch found.count {
        case 0:
            throw CLIError.request("no contact matches \"\(query)\" (try `buzz list --all`)")
        case 1:
            return found[0]
        default:
            let shown = found.prefix(8).map { "\($0.name) (\($0.id))" }.joined(separator: ", ")
            let more = found.count > 8 ? ", and \(found.count - 8) more" : ""
            throw CLIError.request("\"\(query)\" matches \(found.count) contacts: \(shown)\(more); give more of the name or an id")
        }
    }
}
