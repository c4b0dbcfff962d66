/// Why a `DaemonClock` wait returned.
public enum ClockWake: Sendable, Equatable {
    /// The instant was reached.
    case due
    /// The clock jumped (set, an NTP step, a resume from suspend): plan again.
    case clockChanged
    /// `wake()` was called (a signal, a click, a watched source, shutdown).
    case woken
}

/// Time as `buzz run` sees it: what time it is, and a sleep until an instant
/// that a wake-up or a jump of the clock cuts short. The daemon reads the time
/// only from here, so the time is an input: the wall clock for `run`
/// (`WallClockTimer`), shifted for `run --now` (`OffsetClock`), and a clock the
/// test moves (BuzzTestKit's `VirtualClock`) in tests.
///
/// Instants are whole seconds since 1970 on this clock. One waiter at a time
/// (the daemon's loop); `wake()` may be called from any thread.
public protocol DaemonClock: Sendable {
    /// The time now, in whole seconds since 1970.
    func now() -> Int64

    /// Waits until `instant` (a past one returns `.due` at once), a jump of the
    /// clock, or `wake()`. With a nil `instant`, only `wake()` or cancellation
    /// end the wait. Throws `CancellationError` when the task is cancelled.
    func wait(until instant: Int64?) async throws -> ClockWake

    /// Ends the current wait with `.woken`, or the next one if nobody waits now.
    func wake()
}

/// Another clock moved by a fixed number of seconds: `run --now T` starts its
/// clock at T, and from there it advances with the base clock (docs/design/command-line.md).
///
/// A jump of the base clock still wakes the waiter (`.clockChanged`); the
/// offset stays as it was, so the shifted clock jumps by as much.
public struct OffsetClock<Base: DaemonClock>: DaemonClock {
    public let base: Base
    /// Seconds added to the base clock's time.
    public let offset: Int64

    /// A clock that reads `start` now and then advances with `base`.
    public init(base: Base, startingAt start: Int64) {
        self.base = base
        offset = start - base.now()
    }

    public func now() -> Int64 {
        base.now() + offset
    }

    public func wait(until instant: Int64?) async throws -> ClockWake {
        try await base.wait(until: instant.map { $0 - offset })
    }

    public func wake() {
        base.wake()
    }
}
