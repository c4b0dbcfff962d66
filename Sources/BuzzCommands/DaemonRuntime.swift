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
enum DaemonExecutor {
    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// Two threads that sleep on a condition variable between jobs.
    static let shared = BlockingExecutor(name: "birthdaybuzz.run", threads: 2)

    /// From now on, every global-executor job of the process runs on `shared`.
    static func install() {
        let hook: Hook = { job, _ in DaemonExecutor.shared.enqueue(job) }
        CBuzzLinux_setGlobalEnqueueHook(unsafeBitCast(hook, to: UnsafeMutableRawPointer.self))
    }
}

/// SIGTERM, SIGINT and SIGHUP for `buzz run`, without libdispatch: a handler
/// that writes the signal's number into a pipe, and a thread blocked reading it
/// that calls `handle`. (A Dispatch signal source would wake a libdispatch
/// worker, and with it the one-second monitor `DaemonExecutor` avoids.)
enum DaemonSignals {
    /// The pipe's write end, for the handler (async-signal-safe: it only writes).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Installs the handlers once; `handle` runs on the reader thread, one signal at a time.
    static func start(_ handle: @escaping @Sendable (Int32) -> Void) throws {
        var ends: [Int32] = [-1, -1]
        guard CBuzzLinux_pipe2(&ends, O_CLOEXEC) == 0 else {
            throw CLIError.runtime("cannot make the signal pipe (\(SystemError("pipe2")))")
        }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)  // a full pipe drops, never blocks a handler
        writeEnd = ends[1]
        let readEnd = ends[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 { handle(Int32(byte)) } else if count < 0, errno == EINTR { continue } else { return }
            }
        }
        thread.name = "birthdaybuzz.signals"
        thread.start()
        for signal in [SIGTERM, SIGINT, SIGHUP] {
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
}
