import BirthdayBuzz
import BuzzSystem
import CBuzzLinux
import Foundation
import Synchronization

/// An alarm at an absolute wall-clock instant that costs nothing while it waits.
///
/// A `timerfd` on `CLOCK_REALTIME`, armed with `TFD_TIMER_ABSTIME |
/// TFD_TIMER_CANCEL_ON_SET`: the kernel fires it at the instant even across a
/// suspend, and wakes it early when the wall clock jumps (settimeofday, an NTP
/// step, resume from suspend), so `run` never oversleeps a birthday. The fd is
/// watched by a thread of the timer's own (`PollThread`), blocked in poll(2):
/// no thread of Swift's cooperative pool is held, and nothing wakes between events.
///
/// ```swift
/// let timer = try WallClockTimer()
/// switch try await timer.wait(until: fireAt) {   // seconds since 1970
/// case .due: deliver()
/// case .clockChanged, .woken: replan()
/// }
/// ```
///
/// One waiter at a time (the daemon's loop); `wake()` may be called from anywhere.
/// It is `run`'s `DaemonClock`; `run --now` shifts it with an `OffsetClock`.
public final class WallClockTimer: DaemonClock {
    /// Why `wait(until:)` returned.
    public typealias Wake = ClockWake

    private struct State {
        var waiter: CheckedContinuation<Wake, any Error>?
        /// What came while nobody waited (a `wake()`, or an expiry that beat
        /// the waiter to the lock): the next wait returns it at once.
        var pending: Wake?
        /// `stop()` closed the timerfd.
        var closed = false
    }

    /// What the fd's event handler shares with the timer (kept apart so that
    /// the handler does not keep the timer alive).
    private final class Shared: Sendable {
        let state = Mutex(State())
        let expiries = Atomic<Int>(0)
    }

    private let descriptor: Int32
    private let shared = Shared()
    /// The thread blocked in poll(2) on the timerfd.
    private let watcher: PollThread

    public init() throws(DaemonError) {
        let fd = CBuzzLinux_timerfd_create(CLOCK_REALTIME, CBuzzLinux_TFD_CLOEXEC | CBuzzLinux_TFD_NONBLOCK)
        guard fd >= 0 else {
            throw DaemonError("cannot create the wake-up timer (\(SystemError("timerfd_create")))")
        }
        descriptor = fd
        let shared = shared
        // A thread of its own blocked in poll(2) on the timerfd (`PollThread`):
        // nothing runs until it has news (no Dispatch source, whose worker would
        // arm libdispatch's one-second monitor; see DaemonExecutor).
        do {
            watcher = try PollThread(name: "buzz.timer", watching: [fd]) { ready in
                guard ready[0].revents & Int16(POLLIN) != 0 else { return .keepWatching }
                var expirations: UInt64 = 0
                let count = read(fd, &expirations, MemoryLayout<UInt64>.size)
                let wake: Wake
                if count == MemoryLayout<UInt64>.size {
                    wake = .due
                    shared.expiries.add(1, ordering: .relaxed)
                } else if count < 0, errno == ECANCELED {
                    wake = .clockChanged
                } else {
                    return .keepWatching  // EAGAIN: re-armed since it became readable
                }
                let waiter = shared.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
                    if let waiter = state.waiter.take() { return waiter }
                    if state.pending != .woken { state.pending = wake }
                    return nil
                }
                waiter?.resume(returning: wake)
                return .keepWatching
            }
        } catch {
            close(fd)
            throw DaemonError("cannot watch the wake-up timer (\(error))")
        }
    }

    deinit {
        stop()
    }

    /// Ends the thread that watches the timer and closes the timer (idempotent).
    /// A wait still running ends with `CancellationError`, and so does any later one.
    public func stop() {
        watcher.stop()
        let descriptor = descriptor
        let waiter = shared.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
            if !state.closed { close(descriptor) }
            state.closed = true
            return state.waiter.take()
        }
        waiter?.resume(throwing: CancellationError())
    }

    /// How many times the kernel's expiry of the timer woke a wait (for tests:
    /// a `.due` that came from the timerfd, not from some other wake-up).
    package var expiryCount: Int { shared.expiries.load(ordering: .relaxed) }

    /// Whether a wait is suspended now (for tests: "the wait has started", without a sleep).
    package var isWaiting: Bool { shared.state.withLock { $0.waiter != nil } }

    /// Waits until `instant` (seconds since 1970; a past instant returns at
    /// once), a wall-clock jump, or `wake()`. With a nil `instant`, only
    /// `wake()` or cancellation end the wait. Throws `CancellationError` when
    /// the task is cancelled.
    public func wait(until instant: Int64?) async throws -> Wake {
        while true {
            try Task.checkCancellation()
            shared.state.withLock { state in
                if state.pending != .woken { state.pending = nil }  // news about an earlier arming
            }
            try arm(at: instant)
            let wake = try await suspend()
            // An expiry read just before re-arming can still reach this wait:
            // whether the instant has come is the clock's to say.
            if wake == .due, instant.map({ WallClockTimer.now() < $0 }) ?? true { continue }
            return wake
        }
    }

    /// Ends the current wait with `.woken`, or the next one if nobody waits now.
    public func wake() {
        let waiter = shared.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
            if let waiter = state.waiter.take() { return waiter }
            state.pending = .woken
            return nil
        }
        waiter?.resume(returning: .woken)
    }

    /// The wall clock, in whole seconds since 1970.
    public func now() -> Int64 {
        Self.now()
    }

    /// The wall clock, in whole seconds since 1970.
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    private func suspend() async throws -> Wake {
        let shared = shared
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Wake, any Error>) in
                let immediate = shared.state.withLock { state -> Result<Wake, any Error>? in
                    if Task.isCancelled || state.closed { return .failure(CancellationError()) }
                    if let pending = state.pending.take() { return .success(pending) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            shared.state.withLock { $0.waiter.take() }?.resume(throwing: CancellationError())
        }
    }

    /// Arms the timer at `instant`, or disarms it (nil). Re-arming also clears
    /// an expiry nobody read.
    private func arm(at instant: Int64?) throws {
        var setting = itimerspec()  // zero interval: one shot; zero value: disarmed
        var flags: Int32 = 0
        if let instant {
            setting.it_value.tv_sec = max(Int(instant), 1)  // 0 would mean "disarm"
            flags = CBuzzLinux_TFD_TIMER_ABSTIME | CBuzzLinux_TFD_TIMER_CANCEL_ON_SET
        }
        let descriptor = descriptor
        // Under the lock, so that `stop()` cannot close the fd (and another open reuse its number) meanwhile.
        let failure = shared.state.withLock { state -> (any Error)? in
            if state.closed { return CancellationError() }
            guard CBuzzLinux_timerfd_settime(descriptor, flags, &setting, nil) == 0 else {
                return DaemonError("cannot arm the wake-up timer (\(SystemError("timerfd_settime")))")
            }
            return nil
        }
        if let failure { throw failure }
    }
}
