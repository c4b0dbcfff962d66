import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct ConfigTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func load(_ text: String, env: [String: String] = [:]) throws(ConfigError) -> BuzzConfig {
        try BuzzConfig(toml: text, file: "config.toml", environment: env, systemTimeZone: utc)
    }

    static func error(_ text: String) -> ConfigError? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func exampleConfigMatchesTheRepositoryFileAndLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("config.example.toml"), encoding: .utf8)
        #expect(file == ExampleConfig.text, "Sources/BirthdayBuzz/ExampleConfig.swift is out of date")
        let config = try Self.load(ExampleConfig.text)
        #expect(config.reminders.offsets == [0, 1])
        #expect(config.reminders.time == 9 * 60)
        #expect(config.reminders.maxPending == 64)
        #expect(config.reminders.catchUp == 12 * 3_600)
        #expect(config.delivery.maxAttempts == 8)
        #expect(config.delivery.maxBackoff == 6 * 3_600)
        #expect(config.delivery.lockWait == 30)
        #expect(config.ask.order == [.sms, .email, .share])
        #expect(config.ask.cooldownDays == 30)
    }

    /// Every commented-out example table in config.example.toml is valid when uncommented.
    @Test func exampleChannelsLoadWhenUncommented() throws {
        // Uncomment "# key = …" and "# [table]" lines, not prose.
        let example = try Regex(#"^# ?(\[|[A-Za-z0-9_-]+ = )"#)
        let uncommented = ExampleConfig.text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.prefixMatch(of: example) != nil ? String(line.dropFirst(2)) : String(line)
        }.joined(separator: "\n")
        let config = try Self.load(uncommented, env: [:])
        #expect(config.channels.map(\.name).sorted() == ["chat", "console", "custom", "desktop", "mail", "matrix", "phone", "sms-gateway"])
        if case .webhook(let matrix)? = config.channel(named: "matrix")?.kind {
            #expect(matrix.preset == .matrix && matrix.msgtype == "m.notice")
        } else {
            Issue.record("matrix")
        }
        #expect(config.general.timeZone.identifier == "Europe/Berlin")
        #expect(config.groups.map(\.name) == ["family"])
        #expect(config.groups.first?.offsets == [0, 1, 7])
        guard case .smtp(let smtp)? = config.channel(named: "mail")?.kind else { Issue.record("mail"); return }
        #expect(smtp.port == 587)
        #expect(smtp.security == .starttls)
        guard case .webhook(let hook)? = config.channel(named: "chat")?.kind else { Issue.record("chat"); return }
        #expect(hook.target == .environment("BUZZ_CHAT_URL"))
        #expect(hook.headers.first?.value == .environment("BUZZ_CHAT_TOKEN"))
        let cloud = config.sources.first { $0.name == "cloud" }?.options as? CardDAVSourceOptions
        #expect(cloud == CardDAVSourceOptions(url: "https://cloud.example.com/remote.php/dav", username: "sam",
                                              password: .command(["pass", "show", "nextcloud/buzz"])))
    }

    /// `type = "carddav"`: keys per DESIGN §3a, defaults, and errors with file:line.
    @Test func carddavSourceKeys() throws {
        let head = "[sources.dav]\ntype = \"carddav\"\nurl = \"https://dav.example.org/\"\nusername = \"sam\"\n"
        let full = try Self.load(head + """
            password_file = "pw"
            books = ["Contacts", "/sam/work/"]
            interval = "1h"
            insecure = true
            ca_file = "ca.pem"
            write_back = true
            """)
        #expect(full.sources.first?.options as? CardDAVSourceOptions
                == CardDAVSourceOptions(url: "https://dav.example.org/", username: "sam", password: .file("pw"),
                                        books: ["Contacts", "/sam/work/"], interval: 3600, insecure: true, caFile: "ca.pem",
                                        writeBack: true))
        let plain = try Self.load(head + "password_env = \"DAV\"\n").sources.first?.options as? CardDAVSourceOptions
        #expect(plain?.interval == 900 && plain?.writeBack == false && plain?.books == [])
        #expect(Self.error(head + "bogus = 1\n")?.description == "config.toml:5:1: sources.dav.bogus: unknown key")
        #expect(Self.error(head + "password = \"x\"\n")?.description.contains("inline passwords are not read") == true)
        #expect(Self.error(head + "password_env = \"A\"\npassword_file = \"b\"\n")?.description.contains("give only one of") == true)
        #expect(Self.error("[sources.dav]\ntype = \"carddav\"\nurl = \"ftp://x/\"\n")?.description.contains("must start with https://") == true)
        #expect(Self.error(head + "interval = \"5s\"\n")?.description.contains("at least 1m") == true)
    }

    @Test func emptyFileIsTheEmbeddedDefaults() throws {
        let config = try Self.load("", env: ["LANG": "de_AT.UTF-8"])
        #expect(config.general.locale == "de-AT")
        #expect(config.reminders.channels == nil)
        #expect(config.reminders.feb29 == .feb28)
    }

    @Test func syntaxErrorsCarryLineAndColumn() throws {
        let error = try #require(Self.error("[reminders]\noffsets = [0, 1\ntime = \"09:00\"\n"))
        #expect(error.line == 2 || error.line == 3)
        #expect(error.description.hasPrefix("config.toml:\(error.line ?? 0):"))
    }

    @Test(arguments: [
        ("[channels.x]\ntype = \"pigeon\"\n", "channels.x.type", 2),
        ("[reminders]\ntime = \"25:00\"\n", "reminders.time", 2),
        ("[reminders]\ntime = 9\n", "reminders.time", 2),
        ("[general]\ntimezone = \"Mars/Olympus\"\n", "general.timezone", 2),
        ("[reminders]\ncatch_up = \"soon\"\n", "reminders.catch_up", 2),
        ("[reminders]\nfeb29 = \"mar2\"\n", "reminders.feb29", 2),
        ("[reminders]\nofsets = [1]\n", "reminders.ofsets", 2),
        ("colour = \"blue\"\n", "colour", 1),
        ("[reminders]\nchannels = [\"nowhere\"]\n", "reminders.channels", 2),
        ("[reminders]\noffsets = [0, 400]\n", "reminders.offsets", 2),
        ("[channels.m]\ntype = \"smtp\"\nhost = \"h\"\nfrom = \"a@b\"\npassword = \"hunter2\"\n", "channels.m.password", 5),
        ("[channels.w]\ntype = \"webhook\"\n", "channels.w.url", 1),
        ("[channels.e]\ntype = \"exec\"\ncommand = []\n", "channels.e.command", 3),
        ("[groups.family]\noffsets = [0]\ncolour = 1\n", "groups.family.colour", 3),
        ("[delivery]\nmax_attempts = 0\n", "delivery.max_attempts", 2),
        ("[ask]\norder = [\"pigeon\"]\n", "ask.order", 2),
    ])
    func schemaErrorsNameTheKey(_ text: String, _ keyPath: String, _ line: Int) throws {
        let error = try #require(Self.error(text))
        #expect(error.keyPath == keyPath)
        #expect(error.line == line, "\(error)")
        #expect(error.description.contains(keyPath))
        #expect(!error.description.contains("hunter2"))
    }

    @Test func groupsAndChannelsResolve() throws {
        let config = try Self.load("""
            [reminders]
            channels = ["console"]
            offsets = [1, 0, 1]
            [groups.Family]
            offsets = [0, 7]
            channels = ["hook"]
            [groups.work]
            channels = ["console"]
            [channels.hook]
            type = "webhook"
            url = "https://example.org/x"
            timeout = "3s"
            [channels.hook.headers]
            X-Token = { env = "TOKEN" }
            """)
        #expect(config.reminders.offsets == [0, 1])
        #expect(config.group(forCategories: ["family"])?.name == "Family")
        #expect(config.group(forCategories: ["Work", "FAMILY"])?.name == "Family")  // first by name
        #expect(config.group(forCategories: ["other"]) == nil)
        #expect(config.channel(named: "hook")?.timeout == 3)
    }

    @Test(arguments: [("12h", 43_200), ("90m", 5_400), ("1h30m", 5_400), ("45s", 45), ("2d", 172_800), ("0s", 0)])
    func durations(_ text: String, _ seconds: Int) {
        #expect(ValueFormats.duration(text) == seconds)
        #expect(ValueFormats.duration(ValueFormats.durationText(seconds)) == seconds)
    }

    @Test(arguments: ["", "12", "h", "1x", "-1h", "1.5h", "1h 30m"])
    func badDurations(_ text: String) {
        #expect(ValueFormats.duration(text) == nil)
    }

    @Test func localeFromEnvironment() {
        #expect(ValueFormats.localeFromEnvironment(["LANG": "de_AT.UTF-8"]) == "de-AT")
        #expect(ValueFormats.localeFromEnvironment(["LANG": "fr_FR.UTF-8", "LC_MESSAGES": "es_ES"]) == "es-ES")
        #expect(ValueFormats.localeFromEnvironment(["LANG": "de_DE", "LC_ALL": "C"]) == "en")
        #expect(ValueFormats.localeFromEnvironment([:]) == "en")
        #expect(ValueFormats.localeFromEnvironment(["LANG": "sr_RS@latin"]) == "sr-RS")
    }
}
