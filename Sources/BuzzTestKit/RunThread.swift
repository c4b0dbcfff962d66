import Foundation

/// A thread of its own for one in-process `buzz` command (`Sandbox.run`).
///
/// The commands block their thread where the executable may (a lock wait, a
/// source's reader, a CardDAV transfer handed to its own thread). In the
/// executable one command has the cooperative pool to itself; in the test
/// process dozens run at once, and a pool as wide as the cores would be blocked
/// whole. So each run prefers this executor: its nonisolated code runs, and
/// blocks, here. Jobs still arriving after `finish()` (a task the command left
/// behind) go to the global executor.
///
/// `@unchecked Sendable`: `jobs` and `finished` are only touched with `condition` locked.
final class RunThread: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    init(name: String = "buzz-run") {
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if finished {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the queued jobs have run.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Runs `body` with this thread preferred, then ends the thread.
    static func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        let executor = RunThread()
        defer { executor.finish() }
        return await withTaskExecutorPreference(executor) { await body() }
    }
}

/// Runs `body`, which blocks its thread (a source's `read`, a write-back), on a
/// thread of its own and waits for it without holding one of the cooperative
/// pool's: that pool is as wide as the cores, and the work such a call waits
/// for may need a thread of it (a CardDAV read's next batch is its own task).
public func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await RunThread.run { Result { try body() } }.get()
}
