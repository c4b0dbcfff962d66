import Foundation

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

    /// Set while code runs under this executor (see `CurlSession.run`).
    @TaskLocal public static var isActive = false

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

    /// Runs `body` on this executor's thread, with blocking transfers allowed inline.
    public func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) {
            try await BlockingExecutor.$isActive.withValue(true) { try await body() }
        }
    }
}
