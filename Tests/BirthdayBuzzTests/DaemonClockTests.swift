import BirthdayBuzz
import BuzzTestKit
import Testing

/// The daemon's clock in virtual time (BuzzTestKit's `VirtualClock`), and
/// `run --now`'s shift of it (`OffsetClock`): nothing here waits in real time.
@Suite struct DaemonClockTests {
    /// 2027-05-10T09:00:00Z.
    static let nine: Int64 = 1_809_939_600

    @Test func aWaitEndsWhenTheClockReachesItsInstant() async throws {
        let clock = VirtualClock(now: Self.nine - 60)
        async let wake = clock.wait(until: Self.nine)
        #expect(await clock.nextWait() == Self.nine)
        clock.advance(by: 59)
        #expect(clock.now() == Self.nine - 1)
        clock.advance(by: 1)
        #expect(try await wake == .due)
        // A past instant is due at once.
        #expect(try await clock.wait(until: Self.nine - 1) == .due)
        #expect(clock.waits == [Self.nine, Self.nine - 1])
    }

    @Test func wakeAndJumpEndAWaitEarly() async throws {
        let clock = VirtualClock(now: Self.nine)
        clock.wake()  // before a wait: that wait returns at once
        #expect(try await clock.wait(until: nil) == .woken)
        async let woken = clock.wait(until: nil)
        #expect(await clock.nextWait() == nil)
        clock.wake()
        #expect(try await woken == .woken)

        async let jumped = clock.wait(until: Self.nine + 3_600)
        _ = await clock.nextWait()
        clock.jump(to: Self.nine - 86_400)  // set back a day
        #expect(try await jumped == .clockChanged)
        #expect(clock.now() == Self.nine - 86_400)
    }

    @Test func cancellationEndsAWait() async throws {
        let clock = VirtualClock(now: Self.nine)
        let waiting = Task { try await clock.wait(until: nil) }
        _ = await clock.nextWait()
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func anInstantClockSkipsToWhatItIsWaitedFor() async throws {
        let clock = VirtualClock(now: Self.nine, advancesInstantly: true)
        #expect(try await clock.wait(until: Self.nine + 86_400) == .due)
        #expect(clock.now() == Self.nine + 86_400)
    }

    /// `run --now T`: the clock reads T at the start, advances with its base,
    /// and waits on the base for the base's own instant.
    @Test func anOffsetClockStartsWhereItIsToldAndAdvancesWithItsBase() async throws {
        let base = VirtualClock(now: 1_795_000_000)  // the "real" clock, 2026-11-18
        let clock = OffsetClock(base: base, startingAt: Self.nine - 3)
        #expect(clock.now() == Self.nine - 3)
        async let wake = clock.wait(until: Self.nine)
        #expect(await base.nextWait() == 1_795_000_003)
        base.advance(by: 3)
        #expect(try await wake == .due)
        #expect(clock.now() == Self.nine)
        // Wake-ups and jumps of the base pass through; the shift stays.
        async let woken = clock.wait(until: nil)
        _ = await base.nextWait()
        clock.wake()
        #expect(try await woken == .woken)
        base.jump(to: 1_795_000_003 + 3_600)
        #expect(clock.now() == Self.nine + 3_600)
    }
}
