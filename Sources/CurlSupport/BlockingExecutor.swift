import Foundation
import Synchronization

/// A task executor with threads of its own (one by default), where blocking C calls are allowed.
///
/// The dispatcher's delivery loop runs on it (`withTaskExecutorPreference`), and
/// `CurlSession` then performs transfers right there instead of hopping to its
/// queue and back: two context switches saved per delivery, and the
/// cooperative pool (two threads on this machine) is never blocked.
///
/// Its thread lives as long as the process: make one per process (`tick` does).
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
public final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// `runOnCallingThread`'s task has ended: its thread stops draining.
    private var finished = false

    /// Set while code runs under this executor (see `CurlSession.run`).
    @TaskLocal public static var isActive = false

    /// An executor without threads: `runOnCallingThread` drains it.
    private init() {}

    public init(name: String = "birthdaybuzz.deliver", threads: Int = 1) {
        for index in 0..<max(threads, 1) {
            let thread = Thread { [self] in self.loop() }
            thread.name = threads > 1 ? "\(name).\(index)" : name
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job))
    }

    /// Queues a job handed over unowned (`buzz run` routes the runtime's global jobs here).
    public func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Runs `body` to its end on the calling thread, which becomes the executor's
    /// only thread until then (blocking transfers allowed inline), and returns its result.
    ///
    /// For a one-shot process (`buzz send`, SendFastPath.swift): no thread of
    /// Swift's pool or libdispatch is started, where an `async` command would
    /// start three (the pool's first two and libdispatch's timer thread) and a
    /// transfer on a `CurlSession`'s queue a fourth. `body` must not need the
    /// main actor when called on the main thread (nothing would run it).
    public static func runOnCallingThread<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let executor = BlockingExecutor()
        let result = Mutex<T?>(nil)
        Task(executorPreference: executor) {
            let value = await BlockingExecutor.$isActive.withValue(true) { await body() }
            result.withLock { $0 = value }
            executor.finish()
        }
        executor.drain()
        guard let value = result.withLock({ $0 }) else { preconditionFailure("the task ended without a result") }
        return value
    }

    /// Runs the queued jobs on the calling thread until `finish()`.
    private func drain() {
        condition.lock()
        while true {
            while jobs.isEmpty, !finished { condition.wait() }
            if jobs.isEmpty { break }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
        condition.unlock()
    }

    private func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on this executor's thread, with blocking transfers allowed inline.
    public func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) {
            try await BlockingExecutor.$isActive.withValue(true) { try await body() }
        }
    }
}
