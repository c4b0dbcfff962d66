import BuzzChannels
import BuzzSources
import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct ConfigTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func load(_ text: String, env: [String: String] = [:]) throws(ConfigError) -> BuzzConfig {
        try BuzzConfig(toml: text, file: "config.toml", environment: env, systemTimeZone: utc, types: .shipped)
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
        #expect(file == ExampleConfig.text, "the embedded example is out of date: the EmbedTemplates plugin did not run")
        let config = try Self.load(ExampleConfig.text)
        #expect(config.reminders.offsets == [0, 1])
        #expect(config.reminders.time == 9 * 60)
        #expect(config.reminders.maxPending == 64)
        #expect(config.reminders.catchUp == 12 * 3_600)
        #expect(config.reminders.snooze == 3_600)
        #expect(config.delivery.maxAttempts == 8)
        #expect(config.delivery.maxBackoff == 6 * 3_600)
        #expect(config.delivery.lockWait == 30)
        #expect(config.sync.tickBudget == 20)
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
        #expect(config.channels.map(\.name).sorted() == ["apprise", "chat", "console", "custom", "desktop", "mail", "matrix", "phone",
                                                         "pushover", "sms-gateway", "telegram"])
        let matrix = try WebhookChannel.options(of: try #require(config.channel(named: "matrix")))
        #expect(matrix.preset == .matrix && matrix.msgtype == "m.notice")
        #expect(config.general.timeZone.identifier == "Europe/Berlin")
        #expect(config.groups.map(\.name) == ["family"])
        #expect(config.groups.first?.offsets == [0, 1, 7])
        #expect(config.reminders.fallback == ["phone"] && config.reminders.fallbackAfter == 7_200)
        #expect(config.reminders.notices == ["desktop", "mail"] && config.groups.first?.fallback == ["phone"])
        let smtp = try SMTPChannel.options(of: try #require(config.channel(named: "mail")))
        #expect(smtp.port == 587)
        #expect(smtp.security == .starttls)
        let hook = try WebhookChannel.options(of: try #require(config.channel(named: "chat")))
        #expect(hook.target == .environment("BUZZ_CHAT_URL"))
        #expect(hook.headers.first?.value == .environment("BUZZ_CHAT_TOKEN"))
        let cloud = try CardDAVSource.options(of: try #require(config.sources.first { $0.name == "cloud" }))
        #expect(cloud == CardDAVSourceOptions(url: "https://cloud.example.com/remote.php/dav", username: "sam",
                                              password: .command(["pass", "show", "nextcloud/buzz"])))
    }

    /// `type = "carddav"`: keys per docs/design/sources.md, defaults, and errors with file:line.
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
        #expect(try CardDAVSource.options(of: try #require(full.sources.first))
                == CardDAVSourceOptions(url: "https://dav.example.org/", username: "sam", password: .file("pw"),
                                        books: ["Contacts", "/sam/work/"], interval: 3600, insecure: true, caFile: "ca.pem",
                                        writeBack: true))
        let plain = try CardDAVSource.options(of: try #require(Self.load(head + "password_env = \"DAV\"\n").sources.first))
        #expect(plain.interval == 900 && plain.writeBack == false && plain.books == [])
        #expect(Self.error(head + "bogus = 1\n")?.description == "config.toml:5:1: sources.dav.bogus: unknown key")
        #expect(Self.error(head + "password = \"x\"\n")?.description.contains("inline passwords are not read") == true)
        #expect(Self.error(head + "password_env = \"A\"\npassword_file = \"b\"\n")?.description.contains("give only one of") == true)
        #expect(Self.error("[sources.dav]\ntype = \"carddav\"\nurl = \"ftp://x/\"\n")?.description.contains("must start with https://") == true)
        #expect(Self.error(head + "interval = \"5s\"\n")?.description.contains("at least 1m") == true)
    }

    /// `[sync] tick_budget`: a duration like the others, more than nothing; other keys are unknown.
    @Test func syncTickBudget() throws {
        #expect(try Self.load("").sync.tickBudget == 20)
        #expect(try Self.load("[sync]\ntick_budget = \"1m30s\"\n").sync.tickBudget == 90)
        #expect(Self.error("[sync]\ntick_budget = \"0s\"\n")?.description.contains("sync.tick_budget: must be longer than 0s") == true)
        #expect(Self.error("[sync]\ntick_budget = 5\n")?.description.contains("has no unit") == true)
        #expect(Self.error("[sync]\ninterval = \"1m\"\n")?.description == "config.toml:2:1: sync.interval: unknown key")
    }

    @Test func emptyFileIsTheEmbeddedDefaults() throws {
        let config = try Self.load("", env: ["LANG": "de_AT.UTF-8"])
        #expect(config.general.locale == "de-AT")
        #expect(config.reminders.channels == nil)
        #expect(config.reminders.feb29 == .feb28)
    }

    /// Each of these reached an assertion in toml++ (`parse_key`) and aborted the process
    /// (issue 10): a table header whose first key does not start like a key.
    @Test(arguments: [
        ("[é]\n", 1, 2), ("[über]\n", 1, 2), ("[[é]]\n", 1, 3), ("a = 1\n\n  [ \t[ ñ ]]\n", 3, 8),
        ("[+]\n", 1, 2), ("[ # comment\n", 1, 3), ("[\n", 1, 2), ("[\r\n", 1, 2), ("[=]", 1, 2),
        ("[.a]\n", 1, 2), ("[\u{A0}a]\n", 1, 2), ("x = \"\"\"\n[a]\n\"\"\"\n[{]\n", 4, 2),
        ("[\u{0}]", 1, 2),
        // In an array, where a value starts (found by `scripts/fuzz.sh config`: parse_value's assertion).
        ("a = [}]\n", 1, 6), ("a = [1, }]\n", 1, 9), ("a = [\n  # c\n  }]\n", 3, 3), ("a = [[1], [\u{2028}]]\n", 1, 12),
        ("a = [ [\n\u{85}]]", 2, 1), ("a = { b = [1,}}\n", 1, 14),
        // A date-time with no time (found by it: parse_time's and parse_value's assertions).
        ("a = 1979-05-27T(7:32:00Z\n", 1, 16), ("a = [1979-05-27t]\n", 1, 17), ("a = 1979-05-27 0\n", 1, 17),
        ("a = [1979-05-27 0]\n", 1, 18), ("a = { b = 19_79-05-27 1,}\n", 1, 24), ("a=1979-05-27 0 ", 1, 15),
        ("a =1=78-05-2p 7\t0\n", 1, 16),
    ])
    func tableHeadersTOMLPlusPlusWouldAbortOnAreErrors(_ text: String, _ line: Int, _ column: Int) throws {
        let error = try #require(Self.error(text))
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.description.hasPrefix("config.toml:\(line):\(column): "), "\(error)")
    }

    /// The guard knows strings, comments and multi-line arrays: none of these is a header.
    @Test(arguments: [
        "a = [\n  [1, 2],\n  [ \"x\" ],\n]\n",
        "a = [\n[\n+1]\n]\n",
        "a = [ # [é]\n  { b = 1 },\n]\n",
        "a = \"\"\"\n[é]\n\\\"\"\"\n[+]\n\"\"\"\n",
        "a = '''\n[é]\n''''\n",
        "# [é]\n\"[é]\" = 1\n['é']\nb = 2\n[\"é\".x]\n",
        "\u{FEFF}[a]\n",
        "a = [\n  1, # }\n  2,\n]\nb = [ { c = [] }, {} ]\n",
        "1979-05-27T = 1\n[1979-05-27t]\nb = 1979-05-27 07:32:00\nc = [1979-05-27T07:32:00Z, 1979-05-27]\n",
    ])
    func validTextIsNotMistakenForAHeader(_ text: String) throws {
        #expect(TOMLGuard.firstProblem(in: text) == nil)
        // Parsed (the unknown keys are schema errors, after parsing).
        let error = Self.error(text)
        #expect(error == nil || error?.keyPath != nil, "\(String(describing: error))")
    }

    /// Found by `scripts/fuzz.sh config`: a NUL inside a multi-line string, before one of
    /// its line breaks, crashed the guard itself (a range with its bounds reversed).
    @Test func fuzzCrashNULInAMultiLineString() throws {
        let bytes: [UInt8] = [
            0x5B, 0x67, 0x65, 0x6E, 0x65, 0x72, 0x6F, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x20, 0x3D, 0x20, 0x5B, 0x6E, 0x65, 0x72, 0x61, 0x6C, 0x5D, 0x0A,
            0x74, 0x69, 0x6D, 0x65, 0x7A, 0x6F, 0x6E, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x45, 0x75, 0x72, 0x6F, 0x70, 0x65, 0x2F, 0x42, 0x65, 0x72, 0x6C, 0x69,
            0x6E, 0x22, 0x0A, 0x6C, 0x6F, 0x63, 0x61, 0x6C, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x64, 0x65, 0x5F, 0x41, 0x54, 0x2E, 0x55, 0x54, 0x46, 0x2D, 0x38,
            0x22, 0x0A, 0x0A, 0x5B, 0x72, 0x65, 0x6D, 0x69, 0x6E, 0x64, 0x65, 0x72, 0x73, 0x5D, 0x0A, 0x6F, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x20, 0x3D,
            0x20, 0x5B, 0x30, 0x2C, 0x20, 0x31, 0x2C, 0x20, 0x37, 0x5D, 0x0A, 0x74, 0x69, 0x6D, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x30, 0x39, 0x3A, 0x30, 0x30,
            0x22, 0x0A, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x20, 0x3D, 0x20, 0x5B, 0x22, 0x68, 0x6F, 0x78, 0x22, 0x0A, 0x68, 0x65, 0x61, 0x64,
            0x65, 0x72, 0x73, 0x20, 0x3D, 0x20, 0x7B, 0x20, 0x22, 0x58, 0x2D, 0x41, 0x70, 0x69, 0x2D, 0x4B, 0x65, 0x79, 0x22, 0x20, 0x3D, 0x20, 0x22, 0x6B,
            0x22, 0x20, 0x7D, 0x0A, 0x0A, 0x5B, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x2E, 0x6D, 0x61, 0x69, 0x6C, 0x5D, 0x0A, 0x74, 0x79, 0x70,
            0x65, 0x20, 0x3D, 0x20, 0x22, 0x73, 0x6D, 0x74, 0x70, 0x22, 0x0A, 0x68, 0x6F, 0x73, 0x74, 0x20, 0x3D, 0x20, 0x22, 0x31, 0x32, 0x37, 0x2E, 0x30,
            0x2E, 0x30, 0x2E, 0x31, 0x22, 0x0A, 0x73, 0x65, 0x63, 0x75, 0x72, 0x69, 0x74, 0x79, 0x20, 0x3D, 0x20, 0x22, 0x6E, 0x6F, 0x6E, 0x65, 0x22, 0x0A,
            0x66, 0x72, 0x6F, 0x6D, 0x20, 0x3D, 0x20, 0x22, 0x61, 0x40, 0x62, 0x2E, 0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x22, 0x0A, 0x74, 0x6F, 0x20,
            0x3D, 0x20, 0x5B, 0x22, 0x63, 0x40, 0x64, 0x2E, 0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x22, 0x5D, 0x0A, 0x0A, 0x5B, 0x5B, 0x78, 0x2E, 0x79,
            0x5D, 0x5D, 0x0A, 0x22, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x64, 0x20, 0xC3, 0xA9, 0x22, 0x20, 0x3D, 0x20, 0x22, 0x22, 0x22, 0x0A, 0x6D, 0x75, 0x30,
            0x2C, 0x20, 0x31, 0x2C, 0x20, 0x37, 0x5D, 0x0A, 0x74, 0x69, 0x6D, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x30, 0x3D, 0x3A, 0x30, 0x30, 0x22, 0x0A, 0x63,
            0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x20, 0x3D, 0x20, 0x5B, 0x22, 0x68, 0x6F, 0x78, 0x22, 0x6E, 0x68, 0x65, 0x61, 0x64, 0x65, 0x72, 0x73,
            0x20, 0x3D, 0x20, 0x7B, 0x20, 0x22, 0x46, 0x58, 0x2D, 0x41, 0x70, 0x69, 0x2D, 0x4B, 0x65, 0x79, 0x22, 0x20, 0x3D, 0x20, 0x22, 0x6B, 0x22, 0x20,
            0x7D, 0x0A, 0x0A, 0x5B, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x36, 0x79, 0x70, 0x65, 0x20,
            0x3D, 0x20, 0x22, 0x01, 0x00, 0x73, 0x6D, 0x74, 0x70, 0x22, 0x0A, 0x68, 0x6F, 0x73, 0x74, 0x20, 0x3D, 0x20, 0x22, 0x31, 0x32, 0x37, 0x2E, 0x30,
            0x2E, 0x30, 0x2E, 0x22, 0x31, 0x73, 0x0A, 0x65, 0x63, 0x75, 0x72, 0x69, 0x74, 0x79, 0x20, 0x3D, 0x20, 0x22, 0x6E, 0x6F, 0x6E, 0x65, 0x22, 0x0A,
            0x66, 0x72, 0x6F, 0x6D, 0x20, 0x3D, 0x20, 0x22, 0x61, 0x40, 0x62, 0x2E, 0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x22, 0x0A, 0x74, 0x6F, 0x20,
            0x6C, 0x74, 0x69, 0x0A, 0x22, 0x22, 0x22, 0x0A,
        ]
        let error = try #require(Self.error(String(decoding: bytes, as: UTF8.self)))
        // Its first line is already broken: toml++'s own error for it.
        #expect(error.description == "config.toml:1:15: Error while parsing table header: expected ']', saw '='",
                "\(error.description)")
        let small = try #require(Self.error("a = \"\"\"x\u{0}\n\"\"\"\n"))
        #expect(small.line == 1 && small.column == 9, "\(small)")
    }

    /// Found by `scripts/fuzz.sh config`: `headers = [}"c@d.example"]` aborted in toml++'s
    /// `parse_value()` (`!is_value_terminator(*cp)`).
    @Test func fuzzCrashBraceWhereAnArrayValueStarts() throws {
        let bytes: [UInt8] = [
            0x5B, 0x65, 0x67, 0x6E, 0x65, 0x72, 0x61, 0x6C, 0x5D, 0x0A, 0x74, 0x69, 0x6D, 0x65, 0x7A, 0x6F, 0x6E, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x45, 0x75,
            0x72, 0x6F, 0x70, 0x65, 0x2F, 0x42, 0x65, 0x72, 0x6C, 0x69, 0x6E, 0x22, 0x0A, 0x6C, 0x6F, 0x63, 0x61, 0x6C, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x64,
            0x65, 0x5F, 0x41, 0x54, 0x2E, 0x55, 0x54, 0x46, 0x2D, 0x38, 0x22, 0x0A, 0x0A, 0x5B, 0x72, 0x65, 0x6D, 0x69, 0x6E, 0x64, 0x65, 0x72, 0x73, 0x5D,
            0x0A, 0x6F, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x20, 0x3D, 0x20, 0x5B, 0x30, 0x2C, 0x20, 0x31, 0x2C, 0x20, 0x37, 0x5D, 0x0A, 0x74, 0x69, 0x6D,
            0x65, 0x20, 0x3D, 0x20, 0x22, 0x30, 0x39, 0x3A, 0x30, 0x30, 0x22, 0x0A, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x20, 0x3D, 0x20, 0x5B,
            0x22, 0x68, 0x6F, 0x6F, 0x6B, 0x22, 0x2C, 0x20, 0x22, 0x6D, 0x61, 0x69, 0x6C, 0x22, 0x5D, 0x0A, 0x0A, 0x5B, 0x67, 0x72, 0x6F, 0x75, 0x70, 0x73,
            0x2E, 0x66, 0x61, 0x6D, 0x69, 0x6C, 0x79, 0x5D, 0x0A, 0x6F, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x20, 0x3D, 0x20, 0x5B, 0x30, 0x5D, 0x0A, 0x0A,
            0x5B, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x6C, 0x73, 0x2E, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B,
            0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B,
            0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B,
            0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x6B, 0x68, 0x6F, 0x6F, 0x6B, 0x5D, 0x0A, 0x74, 0x79,
            0x70, 0x65, 0x20, 0x3D, 0x20, 0x22, 0x77, 0x65, 0x74, 0x70, 0x73, 0x3A, 0x2F, 0x2F, 0x6E, 0x74, 0x66, 0x79, 0x2E, 0x73, 0x68, 0x2F, 0x78, 0x22,
            0x0A, 0x68, 0x65, 0x61, 0x64, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x47,
            0x47, 0x47, 0x47, 0x47, 0x47, 0x47, 0x3D, 0x20, 0x5B, 0x7D, 0x22, 0x63, 0x40, 0x64, 0x2E, 0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x22, 0x5D,
            0x0A, 0x0A, 0x5B, 0x5B, 0x78, 0x2E, 0x79, 0x5D, 0x5D, 0x0A, 0x22, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x64, 0x20, 0xC3, 0xA9, 0x22, 0x20, 0x3D, 0x20,
            0x22, 0x22, 0x22, 0x0A, 0x6D, 0x75, 0x6C, 0x74, 0x69, 0x0A, 0x22, 0x22, 0x22, 0x0A,
        ]
        let error = try #require(Self.error(String(decoding: bytes, as: UTF8.self)))
        #expect(error.description == "config.toml:15:33: expected a value or ']', saw '}'", "\(error.description)")
    }

    /// Found by `scripts/fuzz.sh config`: `type = 1979-05-27T(7:32:00Z` aborted in toml++'s
    /// `parse_time()` (`is_decimal_digit(*cp)`).
    @Test func fuzzCrashDateTimeWithoutATime() throws {
        let bytes: [UInt8] = [
            0x0A, 0x70, 0x72, 0x65, 0x73, 0x65, 0x74, 0x20, 0x3D, 0x22, 0x20, 0x6E, 0x23, 0x66, 0x79, 0x22, 0x0A, 0x0A, 0x0A, 0x5B, 0x63, 0x68, 0x61, 0x6E,
            0x6E, 0x65, 0x6C, 0x73, 0x2E, 0x6D, 0x61, 0x69, 0x6C, 0x5D, 0x0A, 0x74, 0x79, 0x70, 0x65, 0x20, 0x3D, 0x31, 0x39, 0x37, 0x39, 0x2D, 0x30, 0x35,
            0x2D, 0x32, 0x37, 0x54, 0x28, 0x37, 0x3A, 0x33, 0x32, 0x3A, 0x30, 0x30, 0x5A, 0x0A, 0x73, 0x65, 0x63, 0x75, 0x72, 0x69, 0x74, 0x79, 0x20, 0x3D,
            0x20, 0x6C, 0x6F, 0x63, 0x61, 0x6C, 0x65, 0x65, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x22, 0x5D, 0x0A, 0x0A, 0x5B, 0x11, 0x5B, 0x78, 0x2E, 0x79,
            0x5D, 0x5D, 0x0A, 0x22, 0x71, 0x75, 0x6F, 0x74, 0x65, 0x64, 0x20, 0xC3, 0xA9, 0x22, 0x20, 0x3D, 0x20, 0x22, 0x22, 0x22, 0x0A, 0x6D, 0x75, 0x6D,
            0x74, 0x69, 0x0A, 0x22, 0x22, 0x22, 0x0A,
        ]
        let error = try #require(Self.error(String(decoding: bytes, as: UTF8.self)))
        #expect(error.description == "config.toml:6:18: expected a time (HH:MM:SS) after the date", "\(error.description)")
    }

    /// Found by `scripts/fuzz.sh config`: `=1=78-05-2p 7<tab>` aborted in toml++'s
    /// `parse_value()` (ten characters with `-` fifth and eighth, a space and a digit).
    @Test func fuzzCrashDateLikeValueSpaceDigit() throws {
        let bytes: [UInt8] = [
            0x0A, 0x70, 0x72, 0x65, 0x37, 0x38, 0x2D, 0x30, 0x35, 0x2D, 0x65, 0x20, 0x3D, 0x31, 0x3D, 0x37, 0x38, 0x2D, 0x30, 0x35, 0x2D, 0x32, 0x70, 0x20,
            0x37, 0x09, 0x30, 0x22, 0x0A, 0x64, 0x65, 0x6C, 0x69, 0x3D, 0x30, 0x3D, 0x37, 0x38, 0x2D, 0x30, 0x35, 0x2D, 0x32, 0x37, 0x09, 0x30, 0x20, 0x70,
            0x22, 0x0A, 0x64, 0x22, 0x0A, 0x64, 0x65, 0x6C, 0x69, 0x3D, 0x31, 0x3D, 0x37, 0x38, 0x2D, 0x30, 0x35, 0x2D, 0x32, 0x37, 0x09, 0x30, 0x20, 0x70,
            0x22, 0x0A, 0x64, 0x65, 0x6C, 0x69, 0x76, 0x65, 0x70,
        ]
        let error = try #require(Self.error(String(decoding: bytes, as: UTF8.self)))
        #expect(error.description == "config.toml:2:25: expected a time (HH:MM:SS) after the date", "\(error.description)")
    }

    /// Found by `scripts/fuzz.sh config`: toml++ quotes what it saw, line break included
    /// ("expected 'true', saw 'tr⏎'"), and a key or value can hold one: errors stay one line.
    @Test(arguments: [
        ("a = tr\n", "saw 'tr\\n'"),
        ("[general]\ntimezone = \"Mars\\nBase\"\n", "\"Mars\\nBase\""),
        ("[general]\n\"time\\u2028zone\" = 1\n", "general.time\\u{2028}zone"),
    ])
    func errorsStayOneLine(_ text: String, _ shown: String) throws {
        let error = try #require(Self.error(text))
        let line = error.description
        #expect(!line.contains { $0.isNewline }, "\(line)")
        #expect(error.description.contains(shown), "\(error.description)")
    }

    /// A syntax error before a bad header is the one reported, as toml++ would.
    @Test func anEarlierSyntaxErrorWins() throws {
        let error = try #require(Self.error("a = \n\n[é]\n"))
        #expect(error.line == 1, "\(error)")
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
        ("[reminders]\noffsets = [0]\nsnooze = \"later\"\n", "reminders.snooze", 3),
        ("[reminders]\nsnooze = \"0s\"\n", "reminders.snooze", 2),
        ("[reminders]\nsnooze = 10\n", "reminders.snooze", 2),
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

    @Test func snoozeIsADurationDefaultingToAnHour() throws {
        #expect(try Self.load("").reminders.snooze == 3_600)
        #expect(try Self.load("[reminders]\nsnooze = \"2s\"\n").reminders.snooze == 2)
        #expect(try Self.load("[reminders]\nsnooze = \"1h30m\"\n").reminders.snooze == 5_400)
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

    /// `fallback`, `fallback_after` and `notices`: names that exist, durations over 0, errors with file:line.
    @Test func fallbackAndNoticeKeys() throws {
        let config = try Self.load("""
            [reminders]
            fallback = ["console"]
            fallback_after = "30m"
            [anniversaries]
            fallback = ["desktop"]
            [groups.family]
            fallback_after = "1h"
            """)
        #expect(config.reminders.fallback == ["console"] && config.reminders.fallbackAfter == 1_800)
        #expect(config.anniversaries.fallback == ["desktop"] && config.anniversaries.fallbackAfter == nil)
        #expect(config.groups.first?.fallbackAfter == 3_600 && config.groups.first?.fallback == nil)
        #expect(config.reminders.notices == nil)
        let none = try Self.load("[reminders]\nfallback = [\"console\"]\n[groups.quiet]\nfallback = []\n")
        #expect(none.groups.first?.fallback == [])
        for (text, message) in [
            ("[reminders]\nfallback = [\"phone\"]\n", "config.toml:2:1: reminders.fallback: no channel named \"phone\""),
            ("[reminders]\nfallback_after = \"0s\"\n", "config.toml:2:1: reminders.fallback_after: must be longer than 0s"),
            ("[reminders]\nnotices = []\n", "config.toml:2:1: reminders.notices: is empty: problems would be announced nowhere"),
            ("[groups.x]\nfallback = [\"nope\"]\n", "groups.x.fallback: no channel named \"nope\""),
        ] {
            #expect {
                _ = try Self.load(text)
            } throws: { error in
                "\(error)".contains(message)
            }
        }
    }
}
