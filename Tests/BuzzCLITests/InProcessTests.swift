import BuzzTestKit
import Foundation
import Testing

/// The suite runs most commands in its own process (`Sandbox.run`, through
/// `Buzz.run` with the sandbox's `Invocation`). These check that this is what
/// the executable does: the same command lines, run both ways on the same
/// data, give the same exit status, standard output and standard error.
@Suite struct InProcessTests {
    static let cards = """
        BEGIN:VCARD
        VERSION:3.0
        UID:ada-1
        FN:Ada Lovelace
        BDAY:1815-12-10
        END:VCARD
        BEGIN:VCARD
        VERSION:3.0
        UID:alan-1
        FN:Alan Turing
        BDAY:--06-23
        END:VCARD

        """

    /// Status 0, 1 and 2, both outputs, a usage error from argument-parser, the
    /// fast paths (send, status, upcoming) and the ordinary parser.
    static let commandLines: [[String]] = [
        ["list", "--now", "2027-01-15"],
        ["list", "--all", "--json", "--now", "2027-01-15"],
        ["upcoming", "--now", "2027-06-01"],
        ["upcoming", "--json", "--days", "30", "--now", "2027-06-01"],
        ["status", "--waybar", "--now", "2027-06-20"],
        ["show", "Ada", "--now", "2027-01-15"],
        ["send", "hello", "there"],
        ["send", "--channel", "hook", "x"],
        ["tick", "--dry-run", "--now", "2027-06-23T09:00"],
        ["upcoming", "--days", "-1"],
        ["set-date", "Nobody", "date", "2027-01-01"],
        ["frobnicate"],
        ["--version"],
        ["export", "ics", "--output", "nope/x.ics"],
    ]

    /// libcurl's "after 8 ms" in a connection failure, without the milliseconds.
    static func timeless(_ text: String) -> String {
        text.replacing(/after \d+ ms/, with: "after N ms")
    }

    @Test func eachCommandLineGivesWhatTheExecutableGives() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.hook]
            type = "webhook"
            url = "http://127.0.0.1:9/closed"
            """)
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("cards.vcf", Self.cards)
        let imported = try await sandbox.run(["import", file, "--now", "2027-01-01"], process: true)
        #expect(imported.status == 0, "\(imported)")
        var statuses = Set<Int32>()
        for arguments in Self.commandLines {
            let executable = try await sandbox.run(arguments, process: true)
            let here = try await sandbox.run(arguments)
            #expect(here.status == executable.status, "\(arguments)")
            #expect(here.stdout == executable.stdout, "\(arguments)")
            #expect(Self.timeless(here.stderr) == Self.timeless(executable.stderr), "\(arguments)")
            statuses.insert(executable.status)
        }
        #expect(statuses == [0, 1, 2], "the table covers every exit status")
    }

    /// Standard input is the invocation's: the executable reads its own stdin,
    /// the in-process run the text given, here to `triage`'s prompts (the
    /// contacts without a birthday are the undecided ones).
    @Test func standardInputIsTheRunsOwn() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("cards.vcf", VCard.card(uid: "u-1", name: "Una Undecided")
                                     + VCard.card(uid: "u-2", name: "Vic Undecided"))
        #expect(try await sandbox.run(["import", file, "--now", "2027-01-01"]).status == 0)
        // Skip the first, then stop: the second run sees the same two (a skip is only
        // recorded for the first, and both runs read the same answers).
        let answers = "n\nq\n"
        let executable = try await sandbox.run(["triage", "--now", "2027-01-01"], stdin: answers, process: true)
        let here = try await sandbox.run(["triage", "--now", "2027-01-01"], stdin: answers)
        #expect(executable.stdout.contains("[2/2] Vic Undecided"), "\(executable)")
        #expect(here.status == executable.status && here.stdout == executable.stdout && here.stderr == executable.stderr,
                "process: \(executable)\nhere: \(here)")
    }
}
