import BirthdayBuzz
import BuzzDaemon
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzCommands

/// `buzz run` wakes for a scheduled wish (`buzz wish --at`) at its fire time, in
/// virtual time, and sends it once through the real HTTP SMS gateway.
@Suite(.timeLimit(.minutes(1)))
struct ScheduledWishDaemonTests {
    static func at(_ text: String) -> Int64 { Int64(ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970) }

    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func theDaemonWakesAtTheWishsTimeAndSendsItOnce() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try AskCommandTests.world(smsURL: base)
        try await ScheduledWishTests.cards(sandbox)
        #expect(try await sandbox.run(["wish", "Aiko", "--at", "09:00", "--now", "2027-03-10T12:00Z"]).status == 0)

        let wishTime = Self.at("2027-03-15T00:00:00Z")
        let clock = VirtualClock(now: Self.at("2027-03-14T12:00:00Z"))
        let daemon = try DaemonLoopTests.daemon(sandbox, clock: clock)
        let running = Task { try await daemon.run() }

        // Asleep until the wish (09:00 in Tokyo), before the day-of reminder at 09:00Z.
        #expect(await clock.nextWait() == wishTime)
        #expect(try await sink.requests().isEmpty)
        clock.advance(to: wishTime)
        let next = await clock.nextWait()
        #expect(next == Self.at("2027-03-15T09:00:00Z"), "\(String(describing: next))")
        #expect(try await DaemonLoopTests.keys(sink) == ["aiko/wish/2027-03-15"])

        daemon.requests.requestStop()
        clock.wake()
        try await running.value
        daemon.pidFile.release()
        #expect(try await DaemonLoopTests.keys(sink) == ["aiko/wish/2027-03-15"])
    }
}
