import BuzzTestKit
import Foundation
import Testing

/// Gift ideas reach the reminders before the day, through a real webhook (docs/design/occasions.md).
@Suite(.timeLimit(.minutes(3)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct GiftIdeasTickTests {
    static func bodies(_ sink: HTTPSink) async throws -> [String] {
        try await sink.requests().compactMap { request in
            (request.bodyJSON() as? [String: Any])?["body"] as? String
        }
    }

    /// Acceptance: a gift idea is in the day-before reminder the HTTP sink receives,
    /// and not after `gift --done`.
    @Test func giftIdeasAreInTheRemindersBeforeTheDayUntilDone() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await TickCommandTests.world(sink: base, extra: "offsets = [0, 1, 2]")
        #expect(try await sandbox.run(["gift", "person 0", "a book on Go"]).status == 0)
        #expect(try await sandbox.run(["gift", "u0", "tickets"]).status == 0)
        #expect(try await sandbox.run(["note", "u0", "likes tea"]).status == 0)

        #expect(try await LibraryTick.run(sandbox, now: "2027-03-13T09:00Z").status == 0)
        #expect(try await sandbox.run(["gift", "u0", "--done", "1"]).status == 0)
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-14T09:00Z").status == 0)
        #expect(try await LibraryTick.run(sandbox, now: "2027-03-15T09:00Z").status == 0)
        let keys = try await TickCommandTests.keys(sink)
        #expect(keys == ["u0/2/2027-03-15", "u0/1/2027-03-15", "u0/0/2027-03-15"])
        let bodies = try await Self.bodies(sink)
        #expect(bodies.count == 3)
        #expect(bodies.first?.contains("Gift ideas: a book on Go, tickets") == true, "\(bodies)")
        // The day before: the idea marked done is gone, the open one stays.
        #expect(bodies.dropFirst().first?.contains("Gift ideas: tickets") == true, "\(bodies)")
        #expect(bodies.dropFirst().first?.contains("a book on Go") == false, "\(bodies)")
        // On the day itself the shipped template lists none.
        #expect(bodies.last?.contains("Gift ideas") == false, "\(bodies)")
    }

    /// An anniversary reaches the sink as its own event with its years.
    @Test func anniversaryReachesTheSink() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try await TickCommandTests.world(sink: base)
        #expect(try await sandbox.run(["set-anniversary", "u0", "2015-06-20", "--now", "2027-01-03"]).status == 0)
        #expect(try await LibraryTick.run(sandbox, now: "2027-06-20T09:00Z").status == 0)
        let requests = try await sink.requests()
        let body = try #require(requests.last?.bodyJSON() as? [String: Any])
        #expect(body["event"] as? String == "anniversary.reminder")
        #expect(body["id"] as? String == "u0/anniversary/0/2027-06-20")
        #expect((body["body"] as? String)?.contains("12 years") == true, "\(body)")
        #expect(try await TickCommandTests.keys(sink).last == "u0/anniversary/0/2027-06-20")
    }
}
