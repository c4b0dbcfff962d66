import BuzzTestKit
import Foundation
import Testing

/// A broken config stops every command with status 2 and one line naming
/// the file, the line and the key path (docs/design/command-line.md), before anything is written.
@Suite struct ConfigCLITests {
    struct Case: CustomTestStringConvertible, Sendable {
        var label: String
        var toml: String
        /// Text stderr must contain (after the config path).
        var mentions: [String]
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "unterminated string", toml: "# comment\n[reminders]\ntime = \"09:00\n", mentions: ["config.toml:3:"]),
        Case(label: "unclosed array", toml: "[general]\n\n[reminders]\noffsets = [0, 1\nfeb29 = \"mar1\"\n",
             mentions: ["config.toml:"]),
        Case(label: "unknown channel type", toml: "[channels.x]\ntype = \"pigeon\"\n",
             mentions: ["config.toml:2:", "channels.x.type", "pigeon"]),
        Case(label: "unknown key", toml: "[general]\ntimezone = \"UTC\"\n\n[reminders]\nofsets = [0]\n",
             mentions: ["config.toml:5:", "reminders.ofsets"]),
        Case(label: "unknown table", toml: "[reminder]\ntime = \"09:00\"\n", mentions: ["reminder"]),
        Case(label: "unknown key in a channel", toml: "[channels.pager]\ntype = \"console\"\ncolour = \"red\"\n",
             mentions: ["channels.pager.colour"]),
        Case(label: "time 25:00", toml: "[general]\ntimezone = \"UTC\"\n\n[reminders]\ntime = \"25:00\"\n",
             mentions: ["config.toml:5:", "reminders.time", "25:00"]),
        Case(label: "time 9am", toml: "[reminders]\ntime = \"9am\"\n", mentions: ["reminders.time"]),
        Case(label: "bad zone", toml: "[general]\ntimezone = \"Mars/Olympus_Mons\"\n",
             mentions: ["config.toml:2:", "general.timezone", "Mars/Olympus_Mons"]),
        Case(label: "bad feb29 policy", toml: "[reminders]\nfeb29 = \"feb30\"\n", mentions: ["reminders.feb29"]),
        Case(label: "max_pending 0", toml: "[reminders]\nmax_pending = 0\n", mentions: ["reminders.max_pending"]),
        Case(label: "offsets of the wrong type", toml: "[reminders]\noffsets = \"0\"\n", mentions: ["reminders.offsets"]),
        Case(label: "a duration without a unit", toml: "[channels.hook]\ntype = \"console\"\ntimeout = 10\n",
             mentions: ["config.toml:3:", "channels.hook.timeout", "10 has no unit", "\"10s\""]),
        Case(label: "no channels", toml: "[reminders]\nchannels = []\n", mentions: ["config.toml:2:", "reminders.channels", "is empty"]),
        Case(label: "no offsets", toml: "[reminders]\noffsets = []\n", mentions: ["config.toml:2:", "reminders.offsets", "is empty"]),
        Case(label: "a group routed nowhere", toml: "[groups.family]\nchannels = []\n", mentions: ["groups.family.channels", "is empty"]),
        Case(label: "sms asks through the console", toml: "[ask]\nsms = \"console\"\n",
             mentions: ["ask.sms", "console", "webhook"]),
        Case(label: "email asks through the desktop", toml: "[ask]\nemail = \"desktop\"\n",
             mentions: ["ask.email", "dbus", "smtp"]),
        Case(label: "clear-text smtp to another host",
             toml: "[channels.mail]\ntype = \"smtp\"\nhost = \"mail.example.org\"\nsecurity = \"none\"\nfrom = \"a@b.example\"\nto = \"a@b.example\"\n",
             mentions: ["config.toml:4:", "channels.mail.security", "loopback", "mail.example.org"]),
        Case(label: "route to a missing channel", toml: "[reminders]\nchannels = [\"pager\"]\n",
             mentions: ["reminders.channels", "pager"]),
        // toml++ (inside TOMLKit) asserted on these and the process died with SIGABRT (issue 10).
        Case(label: "table header [é]", toml: "[general]\ntimezone = \"UTC\"\n\n[é]\n", mentions: ["config.toml:4:2:", "quote"]),
        Case(label: "table header [[über]]", toml: "[[über]]\n", mentions: ["config.toml:1:3:"]),
        Case(label: "table header cut off by a comment", toml: "[ # x\n", mentions: ["config.toml:1:3:"]),
        Case(label: "a NUL character", toml: "[general]\n\u{0}timezone = \"UTC\"\n", mentions: ["config.toml:2:1:", "NUL"]),
    ]

    @Test(arguments: cases)
    func badConfigExitsTwoAndSaysWhere(_ testCase: Case) async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig(testCase.toml)
        for command in [["list"], ["upcoming", "--json"], ["include", "nobody"]] {
            let result = try await sandbox.run(command)
            #expect(result.status == 2, "\(command): \(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.stderrLines.count == 1, "one line: \(result)")
            #expect(result.stderr.contains(sandbox.configPath), "\(result)")
            for mention in testCase.mentions {
                #expect(result.stderr.contains(mention), "expected \(mention): \(result)")
            }
            #expect(!result.stderr.contains("Fatal error"), "\(result)")
        }
        // Nothing was done: the data dir was not even created.
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir))
    }

    /// Foundation would say "The file isn't in the correct format" for all three.
    @Test func aConfigThatCannotBeReadSaysWhy() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\n")
        // "dé" in Latin-1 on line 3.
        try Data(Array("[general]\ntimezone = \"UTC\"\nlocale = \"d".utf8) + [0xE9] + Array("\"\n".utf8))
            .write(to: URL(fileURLWithPath: sandbox.configPath))
        let latin1 = try await sandbox.run(["list"])
        #expect(latin1.status == 2, "\(latin1)")
        #expect(latin1.stderr == "buzz: \(sandbox.configPath):3: the config file is not UTF-8 text (save it as UTF-8)\n", "\(latin1)")

        try FileManager.default.removeItem(atPath: sandbox.configPath)
        try FileManager.default.createDirectory(atPath: sandbox.configPath, withIntermediateDirectories: false)
        let folder = try await sandbox.run(["list"])
        #expect(folder.status == 2, "\(folder)")
        #expect(folder.stderr == "buzz: \(sandbox.configPath): cannot read the config file (is a folder, not a file)\n", "\(folder)")

        // /dev/null reads as an empty config: every default.
        let empty = try await sandbox.run(["--config", "/dev/null", "list"])
        #expect(empty.status == 0, "\(empty)")
    }

    @Test func explicitConfigThatDoesNotExistExitsTwo() async throws {
        let sandbox = try Sandbox()
        let missing = sandbox.root + "/nowhere/config.toml"
        let result = try await sandbox.run(["--config", missing, "list"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(missing), "\(result)")
    }

    @Test func explicitConfigIsUsedInsteadOfTheDefault() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[reminders]\ntime = \"25:00\"\n")  // broken default: must not be read
        let other = try sandbox.write("elsewhere.toml", "[reminders]\nfeb29 = \"mar1\"\n")
        let file = try sandbox.write("l.vcf", VCard.card(uid: "l", name: "Lou Leap", bday: "--0229"))
        let imported = try await sandbox.run(["--config", other, "import", file])
        #expect(imported.status == 0, "\(imported)")
        let rows = try await sandbox.jsonRows(["list", "--json", "--now", "2027-02-01", "--config", other])
        #expect(rows.first?["next"] == .string("2027-03-01"))
    }

    @Test func validConfigWithEveryReminderKeyLoads() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [general]
            timezone = "Asia/Tokyo"

            [contacts]
            include_by_default = true

            [reminders]
            offsets = [0, 2]
            time = "07:30"
            feb29 = "feb28"
            max_pending = 5
            catch_up = "6h"
            channels = ["console"]

            [channels.shout]
            type = "console"
            """)
        let file = try sandbox.write("t.vcf", VCard.card(uid: "t", name: "Taro Tanaka", bday: "1970-05-05"))
        #expect(try await sandbox.run(["import", file]).status == 0)
        let rows = try await sandbox.jsonRows(["upcoming", "--json", "--now", "2027-05-01T00:00+09:00"])
        #expect(rows.map { $0["id"] } == [.string("t/2/2027-05-05"), .string("t/0/2027-05-05")])
        #expect(rows.map { $0["fire_at"] } == [.string("2027-05-03T07:30:00+09:00"), .string("2027-05-05T07:30:00+09:00")])
    }

    /// Issue 10 point 13: every error stays one line, also when it quotes a
    /// config value with CR/LF in it (here an smtp `to`): `send`, `channels`,
    /// `doctor` and `channels test` show the break escaped, as TOML writes it.
    @Test func aValueWithALineBreakStaysOnOneLine() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.mail]
            type = "smtp"
            host = "127.0.0.1"
            security = "none"
            from = "me@example.org"
            to = "you@example.org\\r\\nBcc: x@example.org"
            [reminders]
            channels = ["mail"]

            """)
        let send = try await sandbox.run(["send", "hi"])
        #expect(send.status == 1, "\(send)")
        #expect(send.stderrLines.count == 1, "\(send)")
        #expect(send.stderr.contains(#"to "you@example.org\r\nBcc: x@example.org" is not an email address"#), "\(send)")
        let test = try await sandbox.run(["channels", "test", "mail"])
        #expect(test.stderrLines.count == 1, "\(test)")
        let channels = try await sandbox.run(["channels"])
        #expect(channels.status == 0, "\(channels)")
        #expect(channels.stdout.split(separator: "\n").count == 4, "three channels and the footer: \(channels)")
        #expect(channels.stdout.contains(#"you@example.org\r\nBcc"#), "\(channels)")
        let doctor = try await sandbox.run(["doctor"])
        #expect(doctor.stdout.split(separator: "\n").allSatisfy { line in
            ["ok ", "warn", "FAIL", "skip", "1 problem"].contains { line.hasPrefix($0) }
        }, "\(doctor)")
    }

}
