import Foundation

/// A thread of its own that runs closures one at a time, in order: for C calls
/// that block (libdbus's `send_with_reply_and_block`) and must never run on
/// Swift's cooperative pool.
///
/// Not a `DispatchQueue`: work on one wakes a libdispatch worker, and the first
/// worker arms libdispatch's one-second monitor timer for the life of the
/// process, so `buzz run` would wake every second after its first desktop
/// notification. This thread sleeps on a condition variable between jobs and
/// ends when the object goes away.
///
/// `@unchecked Sendable`: the box's `jobs` and `stopped` are only touched with its `condition` locked.
final class SerialThread: @unchecked Sendable {
    private let box = Box()

    init(name: String) {
        // The thread holds the box, not `self`, so `deinit` can stop it.
        let box = self.box
        let thread = Thread { box.run() }
        thread.name = name
        thread.start()
    }

    deinit {
        box.stop()
    }

    /// Runs `body` on the thread, later.
    func async(_ body: @escaping @Sendable () -> Void) {
        box.append(body)
    }

    /// Runs `body` on the thread and waits for it (never call it from the thread itself).
    func sync<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = NSCondition()
        nonisolated(unsafe) var result: T?
        async {
            let value = body()
            done.lock()
            result = value
            done.signal()
            done.unlock()
        }
        done.lock()
        while result == nil { done.wait() }
        let value = result!
        done.unlock()
        return value
    }

    /// The thread's side: the queue of closures.
    private final class Box: @unchecked Sendable {
        let condition = NSCondition()
        var jobs: [@Sendable () -> Void] = []
        var stopped = false

        func append(_ job: @escaping @Sendable () -> Void) {
            condition.lock()
            jobs.append(job)
            condition.signal()
            condition.unlock()
        }

        func stop() {
            condition.lock()
            stopped = true
            condition.signal()
            condition.unlock()
        }

        func run() {
            while true {
                condition.lock()
                while jobs.isEmpty && !stopped { condition.wait() }
                if jobs.isEmpty {  // stopped, and nothing left to run
                    condition.unlock()
                    return
                }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
    }
}
