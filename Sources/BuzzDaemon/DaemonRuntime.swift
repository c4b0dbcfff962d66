import BuzzSystem
import CBuzzLinux
import CurlSupport
import Foundation
import Synchronization

/// Where `buzz run` runs its Swift concurrency jobs: threads of its own instead
/// of libdispatch's worker pool.
///
/// The first libdispatch worker thread arms a one-second monitor timer for the
/// life of the process (`_dispatch_workq_init_once` in swift-corelibs-libdispatch),
/// so a daemon that had run a single async job woke 60 times a minute with
/// nothing to do. Routed here (the runtime's `swift_task_enqueueGlobal_hook`),
/// jobs run on two threads that sleep on a condition variable between them: an
/// idle daemon is not woken at all. Delayed jobs (`Task.sleep`) still go to
/// libdispatch; the daemon does not sleep that way.
///
public enum DaemonExecutor {
    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// Two threads that sleep on a condition variable between jobs.
    static let shared = BlockingExecutor(name: "birthdaybuzz.run", threads: 2)

    /// From now on, every global-executor job of the process runs on `shared`.
    /// Call it before the process's first async job (`Buzz.main` does, for `run`).
    public static func install() {
        let hook: Hook = { job, _ in DaemonExecutor.shared.enqueue(job) }
        CBuzzLinux_setGlobalEnqueueHook(unsafeBitCast(hook, to: UnsafeMutableRawPointer.self))
    }
}

/// SIGHUP for `buzz run` (swift-service-lifecycle has no reload signal): a
/// handler that writes the signal's number into a pipe, and a `PollThread`
/// blocked on its read end that calls `handle`. SIGTERM and SIGINT are the
/// service group's `gracefulShutdownSignals` (`DaemonServices`).
public enum DaemonSignals {
    /// The pipe's write end, for the handler (async-signal-safe: it only writes).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    /// The thread that reads the pipe; it lives as long as the process.
    nonisolated(unsafe) private static var reader: PollThread?

    /// Installs the handlers of `signals` (once per process); `handle` runs on
    /// the reader thread, one signal at a time, with the signal's number.
    public static func start(trapping signals: [Int32], _ handle: @escaping @Sendable (Int32) -> Void) throws(DaemonError) {
        var ends: [Int32] = [-1, -1]
        guard CBuzzLinux_pipe2(&ends, O_CLOEXEC) == 0 else {
            throw DaemonError("cannot make the signal pipe (\(SystemError("pipe2")))")
        }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)  // a full pipe drops, never blocks a handler
        let readEnd = ends[0]
        do {
            reader = try PollThread(name: "buzz.signals", watching: [readEnd]) { _ in
                var byte: UInt8 = 0
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    handle(Int32(byte))
                } else if count == 0 || errno != EINTR {
                    return .finish
                }
                return .keepWatching
            }
        } catch {
            close(ends[0])
            close(ends[1])
            throw DaemonError("cannot watch the signal pipe (\(error))")
        }
        writeEnd = ends[1]
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                let saved = errno
                _ = write(DaemonSignals.writeEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    /// A process inherits its signal mask: started by a parent that blocks
    /// SIGTERM or SIGHUP (some test runners and supervisors do), the handlers
    /// would never run. Unblocking them on this thread is enough: the kernel
    /// hands a process signal to any thread that does not block it.
    public static func unblock(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// Something the daemon's machinery could not set up (a timer, a pipe), as
/// one sentence for the log or the command's error line.
public struct DaemonError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
