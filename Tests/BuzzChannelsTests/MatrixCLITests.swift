import BuzzTestKit
import Foundation
import Testing

/// `doctor` for the matrix preset asks the homeserver (the HTTP sink playing
/// one): whether it takes the token, and whether the account has joined the room.
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct MatrixCLITests {
    @Test func doctorChecksTheTokenAndTheRoom() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        func channel(_ name: String, room: String) -> String {
            """
            [channels.\(name)]
            type = "webhook"
            preset = "matrix"
            url = "\(base.absoluteString)/_matrix/client/v3/rooms/\(room)/send/m.room.message"
            timeout = "5s"
            [channels.\(name).headers]
            Authorization = { env = "MATRIX_TOKEN" }

            """
        }
        try sandbox.writeConfig(channel("a-badtoken", room: "!room:example.org")
                                + channel("b-notjoined", room: "!room:example.org")
                                + channel("c-good", room: "%21room%3Aexample.org"))
        chmod(sandbox.configPath, 0o600)
        chmod(sandbox.configHome + "/birthdaybuzz", 0o700)
        let json = ["Content-Type": "application/json"]
        try await sink.script([
            ["status": 401, "headers": json, "body": #"{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token passed."}"#],
            ["status": 200, "headers": json, "body": #"{"user_id":"@buzz:example.org"}"#],
            ["status": 200, "headers": json, "body": #"{"joined_rooms":["!other:example.org"]}"#],
            ["status": 200, "headers": json, "body": #"{"user_id":"@buzz:example.org"}"#],
            ["status": 200, "headers": json, "body": #"{"joined_rooms":["!other:example.org","!room:example.org"]}"#],
        ])
        let result = try await sandbox.run(["doctor"], environment: ["MATRIX_TOKEN": "Bearer syt_matrix_token_1"])
        #expect(result.status == 1, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let bad = try #require(lines.first { $0.contains("channel a-badtoken") }, "\(result)")
        #expect(bad.hasPrefix("FAIL") && bad.contains("does not accept the access token") && bad.contains("M_UNKNOWN_TOKEN"), "\(bad)")
        let notJoined = try #require(lines.first { $0.contains("channel b-notjoined") }, "\(result)")
        #expect(notJoined.hasPrefix("FAIL") && notJoined.contains("@buzz:example.org has not joined room !room:example.org"),
                "\(notJoined)")
        let good = try #require(lines.first { $0.contains("channel c-good") }, "\(result)")
        #expect(good.hasPrefix("ok "), "\(good)")
        #expect(!result.stdout.contains("syt_matrix_token_1"))

        let requests = try await sink.requests()
        #expect(requests.map(\.method) == ["GET", "GET", "GET", "GET", "GET"])
        #expect(requests.map(\.path) == ["/_matrix/client/v3/account/whoami", "/_matrix/client/v3/account/whoami",
                                         "/_matrix/client/v3/joined_rooms", "/_matrix/client/v3/account/whoami",
                                         "/_matrix/client/v3/joined_rooms"])
        #expect(requests.allSatisfy { $0.headers["Authorization"] == "Bearer syt_matrix_token_1" })
    }

    /// `msgtype` is m.notice or m.text, and only for the matrix preset.
    @Test func msgtypeIsChecked() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("""
            [channels.room]
            type = "webhook"
            preset = "matrix"
            url = "https://matrix.example.org/_matrix/client/v3/rooms/!r:example.org/send/m.room.message"
            msgtype = "m.emote"
            """)
        let result = try await sandbox.run(["channels"])
        #expect(result.status == 2 && result.stderr.contains("msgtype") && result.stderr.contains("m.notice or m.text"), "\(result)")
    }
}
