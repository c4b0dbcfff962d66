import BuzzTestKit
import Foundation
import Testing

/// `buzz send` reads its plain command lines without argument-parser
/// (SendFastPath.swift); these check that every form means what the ordinary
/// parser makes of it, and that everything else still reaches that parser.
@Suite(.timeLimit(.minutes(1))) struct SendArgumentsTests {
    /// The console channel prints "🎂 TITLE" then the body.
    private func printed(_ result: BuzzResult) -> [Substring] {
        result.stdout.split(separator: "\n")
    }

    @Test func optionFormsAndPlacesMeanTheSame() async throws {
        let sandbox = try Sandbox()
        let forms: [[String]] = [
            ["send", "--title", "T", "--channel", "console", "hi"],
            ["send", "--title=T", "--channel=console", "hi"],
            ["send", "hi", "--channel", "console", "--title", "T"],
            ["--now", "2027-03-01", "send", "--title", "T", "hi", "--data-dir", sandbox.root + "/other"],
            ["send", "--title", "T", "--", "hi"],
        ]
        for form in forms {
            let result = try await sandbox.run(form)
            #expect(result.status == 0, "\(form): \(result)")
            #expect(printed(result) == ["🎂 T", "hi"], "\(form): \(result)")
        }
    }

    @Test func repeatedChannelsSendEachTime() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["send", "--channel", "console", "--channel=console", "twice"])
        #expect(result.status == 0, "\(result)")
        #expect(printed(result) == ["🎂 BirthdayBuzz", "twice", "🎂 BirthdayBuzz", "twice"], "\(result)")
    }

    @Test func aBodyThatLooksLikeAnOptionNeedsTheSeparator() async throws {
        let sandbox = try Sandbox()
        let separated = try await sandbox.run(["send", "--", "-5 degrees"])
        #expect(separated.status == 0, "\(separated)")
        #expect(printed(separated) == ["🎂 BirthdayBuzz", "-5 degrees"])
        let bare = try await sandbox.run(["send", "-5 degrees"])
        #expect(bare.status == 2, "\(bare)")
        #expect(bare.stdout.isEmpty)
    }

    @Test func whatTheFastPathDoesNotReadGoesToTheOrdinaryParser() async throws {
        let sandbox = try Sandbox()
        // Argument-parser's own answers: the last --title wins; usage errors are status 2.
        let repeated = try await sandbox.run(["send", "--title", "A", "--title", "B", "x"])
        #expect(repeated.status == 0 && printed(repeated) == ["🎂 B", "x"], "\(repeated)")
        for wrong in [["send"], ["send", "a", "b"], ["send", "--bogus", "x"], ["--now", "soon", "send", "x"],
                      ["send", "-x", "y"], ["send", "--title"]] {
            let result = try await sandbox.run(wrong)
            #expect(result.status == 2, "\(wrong): \(result)")
            #expect(result.stdout.isEmpty, "\(wrong): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains("--help')"), "\(wrong): \(result)")
        }
        let help = try await sandbox.run(["send", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: buzz send"), "\(help)")
    }
}
