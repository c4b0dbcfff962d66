import BirthdayBuzz
import Synchronization

/// A `DaemonClock` in virtual time: it stands still until the test moves it
/// (`advance(to:)`, `jump(to:)`), or, made with `advancesInstantly`, it skips
/// ahead to whatever instant its waiter sleeps until. Nothing waits in real time.
///
/// ```swift
/// let clock = VirtualClock(now: 1_809_939_540)   // 2027-05-10T08:59:00Z
/// async let wake = clock.wait(until: 1_809_939_600)
/// #expect(await clock.nextWait() == 1_809_939_600)   // the waiter sleeps
/// clock.advance(by: 60)
/// #expect(try await wake == .due)
/// ```
public final class VirtualClock: DaemonClock {
    private struct Waiter {
        var instant: Int64?
        var continuation: CheckedContinuation<ClockWake, any Error>
    }

    private struct State {
        var now: Int64
        var waiter: Waiter?
        /// A `wake()` or a jump while nobody waited: the next wait returns it at once.
        var pending: ClockWake?
        /// Tests waiting in `nextWait()` for the waiter to sleep.
        var watchers: [CheckedContinuation<Int64?, Never>] = []
        /// Every instant a waiter slept until, in order (nil: no deadline).
        var waits: [Int64?] = []
    }

    private let state: Mutex<State>
    private let advancesInstantly: Bool

    /// - Parameters:
    ///   - now: where the clock starts, seconds since 1970.
    ///   - advancesInstantly: a wait for an instant moves the clock there and returns `.due` at once.
    public init(now: Int64, advancesInstantly: Bool = false) {
        state = Mutex(State(now: now))
        self.advancesInstantly = advancesInstantly
    }

    public func now() -> Int64 {
        state.withLock { $0.now }
    }

    /// Every instant a waiter slept until so far, in order (nil: no deadline).
    public var waits: [Int64?] { state.withLock { $0.waits } }

    public func wait(until instant: Int64?) async throws -> ClockWake {
        try Task.checkCancellation()
        let box = WaiterBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ClockWake, any Error>) in
                let (result, watchers) = state.withLock { state -> (Result<ClockWake, any Error>?, [CheckedContinuation<Int64?, Never>]) in
                    if box.cancelled.withLock({ $0 }) { return (.failure(CancellationError()), []) }
                    if let pending = state.pending.take() { return (.success(pending), []) }
                    state.waits.append(instant)
                    if let instant, instant <= state.now { return (.success(.due), []) }
                    if let instant, advancesInstantly {
                        state.now = instant
                        return (.success(.due), [])
                    }
                    state.waiter = Waiter(instant: instant, continuation: continuation)
                    defer { state.watchers.removeAll() }
                    return (nil, state.watchers)
                }
                if let result { continuation.resume(with: result) }
                for watcher in watchers { watcher.resume(returning: instant) }
            }
        } onCancel: {
            box.cancelled.withLock { $0 = true }
            state.withLock { $0.waiter.take() }?.continuation.resume(throwing: CancellationError())
        }
    }

    public func wake() {
        let waiter = state.withLock { state -> Waiter? in
            if let waiter = state.waiter.take() { return waiter }
            state.pending = .woken
            return nil
        }
        waiter?.continuation.resume(returning: .woken)
    }

    /// Moves the clock forward to `instant` (never back); a waiter whose instant has come returns `.due`.
    public func advance(to instant: Int64) {
        let waiter = state.withLock { state -> Waiter? in
            state.now = max(state.now, instant)
            guard let waiter = state.waiter, let due = waiter.instant, due <= state.now else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: .due)
    }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: Int64) {
        advance(to: now() + seconds)
    }

    /// Sets the clock to `instant`, back or forward, as settimeofday or a resume
    /// from suspend would: the waiter returns `.clockChanged`.
    public func jump(to instant: Int64) {
        let waiter = state.withLock { state -> Waiter? in
            state.now = instant
            if let waiter = state.waiter.take() { return waiter }
            if state.pending != .woken { state.pending = .clockChanged }
            return nil
        }
        waiter?.continuation.resume(returning: .clockChanged)
    }

    /// Returns once a waiter sleeps on the clock (at once if one does): the
    /// instant it sleeps until, nil when it waits without a deadline.
    public func nextWait() async -> Int64? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
            let sleeping = state.withLock { state -> Int64?? in
                if let waiter = state.waiter { return .some(waiter.instant) }
                state.watchers.append(continuation)
                return .none
            }
            if let sleeping { continuation.resume(returning: sleeping) }
        }
    }

    /// Whether the wait it belongs to was cancelled before it slept.
    private final class WaiterBox: Sendable {
        let cancelled = Mutex(false)
    }
}
