@testable import BuzzCommands
import Testing

/// The plain command lines `send` and `status` read without argument-parser
/// (SendFastPath.swift): what they accept, and that everything else is left to
/// the parser (nil), in process.
@Suite struct PlainCommandLineTests {
    @Test func statusTakesItsFlagsAndTheGlobalsAnywhere() throws {
        for form in [["status"], ["status", "--waybar"], ["--config", "c.toml", "status", "--json"],
                     ["status", "--json", "--data-dir=d", "--now", "2027-03-01"]] {
            #expect(StatusCommand.fastPath(form) != nil, "\(form)")
        }
        let line = try #require(PlainCommandLine(["--config", "c.toml", "status", "--json", "--data-dir=d"], command: "status",
                                                 flagOptions: ["--json", "--waybar"]))
        #expect(line.global.config == "c.toml")
        #expect(line.global.dataDir == "d")
        #expect(line.flags == ["--json"])
    }

    @Test func anythingElseIsTheParsersTurn() {
        for form in [["status", "--json", "--waybar"], ["status", "--help"], ["status", "-h"], ["status", "extra"],
                     ["status", "--json", "--json"], ["status", "--json=1"], ["status", "--now", "yesterday"],
                     ["--config", "a", "--config", "b", "status"], ["list"], [], ["status", "--channel", "x"]] {
            #expect(StatusCommand.fastPath(form) == nil, "\(form)")
        }
    }

    @Test func sendKeepsItsRules() throws {
        let request = try #require(SendRequest(arguments: ["send", "--channel", "a", "--channel=b", "--title", "T", "--", "-5"]))
        #expect(request.channels == ["a", "b"])
        #expect(request.title == "T")
        #expect(request.body == "-5")
        #expect(SendRequest(arguments: ["send", "--title", "T", "--title", "U", "hi"]) == nil)
        #expect(SendRequest(arguments: ["send", "one", "two"]) == nil)
        #expect(SendRequest(arguments: ["send"]) == nil)
        #expect(SendRequest(arguments: ["send", "--json", "hi"]) == nil)
        #expect(SendRequest(arguments: ["--channel", "a", "send", "hi"]) == nil)
    }

    @Test func upcomingTakesDaysLimitAndJSON() {
        for form in [["upcoming"], ["upcoming", "--json"], ["upcoming", "--days", "7", "--limit=3"], ["--now", "2027-03-01", "upcoming", "--days=0"]] {
            #expect(UpcomingCommand.fastPath(form) != nil, "\(form)")
        }
        for form in [["upcoming", "--days", "-1"], ["upcoming", "--limit", "0"], ["upcoming", "--days", "x"], ["upcoming", "--days", "1", "--days", "2"],
                     ["upcoming", "--help"], ["upcoming", "soon"], ["upcoming", "--json", "--json"], ["upcoming", "--limit"]] {
            #expect(UpcomingCommand.fastPath(form) == nil, "\(form)")
        }
    }
}
