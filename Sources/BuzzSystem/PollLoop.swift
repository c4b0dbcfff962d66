#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBuzzLinux
import Synchronization

/// The one poll(2) loop: wait for descriptors, hand what is ready to a
/// handler, go round.
///
/// Everything that waits on the system without Swift concurrency or Dispatch
/// (the daemon's timer, its source watcher, its signal pipe, the notification
/// listener, and `ProgramRunner` watching a child's pipes) waits here, so an
/// idle process sleeps in poll(2) and wakes only when a descriptor has news or
/// a timeout the caller asked for runs out. Nothing here sets a timeout of its own.
///
/// `run` loops on the calling thread; `PollThread` gives a loop a thread of
/// its own and a pipe that stops it.
public enum PollLoop {
    /// What the handler wants after a round.
    public enum Next: Sendable, Equatable {
        case keepWatching
        case finish
    }

    /// Why a loop ended.
    public enum End: Sendable, Equatable {
        /// The stop descriptor became readable or hung up (`PollThread.stop()`).
        case stopped
        /// The handler said `.finish`.
        case finished
        /// poll(2) itself failed (EINTR is not a failure: the loop goes round).
        case failed(SystemError)
    }

    /// Loops on the calling thread. Each round, `watch` says which descriptors
    /// to wait on (a negative fd is skipped, as poll(2) skips it) and for how many
    /// milliseconds (-1: until one is ready); `handle` gets them back with their
    /// `revents` (all zero when the time ran out). With a `stop` descriptor the
    /// loop also ends, before the handler runs, once that one is readable or hangs up.
    ///
    /// ```swift
    /// let end = PollLoop.run(watch: { ([pollfd(fd: fd, events: Int16(POLLIN), revents: 0)], -1) }) { ready in
    ///     ready[0].revents & Int16(POLLIN) != 0 ? consume(fd) : .keepWatching
    /// }
    /// ```
    public static func run<Failure: Error>(
        stop: Int32 = -1,
        watch: () -> (descriptors: [pollfd], timeout: Int32),
        handle: (_ ready: [pollfd]) throws(Failure) -> Next
    ) throws(Failure) -> End {
        while true {
            var (descriptors, timeout) = watch()
            if stop >= 0 { descriptors.append(pollfd(fd: stop, events: Int16(POLLIN), revents: 0)) }
            if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 {
                if errno == EINTR { continue }
                return .failed(SystemError("poll"))
            }
            if stop >= 0, descriptors.removeLast().revents != 0 { return .stopped }
            if try handle(descriptors) == .finish { return .finished }
        }
    }
}

/// A thread of its own blocked in `PollLoop.run` on a fixed set of
/// descriptors, with a stop pipe (pipe2, close-on-exec) that ends it.
///
/// `stop()` closes the pipe's write end, which wakes the poll; the thread then
/// runs `onEnd`, closes the read end and ends, and `stop()` returns once it
/// has (joined). A loop whose handler finished by itself is joined by `stop()`
/// or `deinit` all the same. The descriptors watched stay the caller's to close,
/// after `stop()`.
///
/// ```swift
/// let watcher = try PollThread(name: "buzz.watch", watching: [fd]) { ready in
///     drain(fd)
///     return .keepWatching
/// }
/// …
/// watcher.stop()   // the thread has ended when this returns
/// close(fd)
/// ```
public final class PollThread: Sendable {
    private struct State {
        var stopWrite: Int32
        var thread: pthread_t?
        var stopped = false
    }

    private let state: Mutex<State>
    /// The stop pipe's (device, inode): tests look for it among the open descriptors after `stop()`.
    package let stopPipeIdentity: (device: UInt64, inode: UInt64)

    /// Starts the thread.
    ///
    /// - Parameters:
    ///   - name: the thread's name (the kernel keeps 15 bytes of it).
    ///   - descriptors: what to wait on for reading.
    ///   - timeout: milliseconds to wait in the next round, asked before each one; -1 (the default): no timeout.
    ///   - onStart: runs on the thread before its first wait; `.finish` ends the loop there.
    ///   - handle: runs on the thread with the descriptors (in the order given) and their `revents`.
    ///   - onEnd: runs on the thread once the loop has ended, with why.
    public init(name: String, watching descriptors: [Int32],
                timeout: @escaping @Sendable () -> Int32 = { -1 },
                onStart: @escaping @Sendable () -> PollLoop.Next = { .keepWatching },
                handle: @escaping @Sendable (_ ready: [pollfd]) -> PollLoop.Next,
                onEnd: @escaping @Sendable (PollLoop.End) -> Void = { _ in }) throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        guard CBuzzLinux_pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError("pipe2") }
        let stopRead = ends[0]
        var info = stat()
        fstat(stopRead, &info)
        stopPipeIdentity = (UInt64(info.st_dev), UInt64(info.st_ino))
        state = Mutex(State(stopWrite: ends[1]))
        let threadName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        let body = ThreadBody {
            _ = CBuzzLinux_pthread_setname(threadName)
            let end = onStart() == .finish ? .finished : PollLoop.run(stop: stopRead, watch: {
                (descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }, timeout())
            }, handle: handle)
            onEnd(end)
            close(stopRead)
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(body).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            close(ends[0])
            close(ends[1])
            throw SystemError("pthread_create", errno: created)
        }
        state.withLock { $0.thread = thread }
    }

    deinit {
        stop()
    }

    /// Ends the loop and waits for its thread to end (idempotent; from the
    /// loop's own thread, for instance in its handler, it only asks the thread to end).
    public func stop() {
        let (stopWrite, thread) = state.withLock { state -> (Int32, pthread_t?) in
            guard !state.stopped else { return (-1, nil) }
            state.stopped = true
            defer { state.thread = nil }
            return (state.stopWrite, state.thread)
        }
        if stopWrite >= 0 { close(stopWrite) }
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}

/// What the thread runs, handed to pthread_create through a raw pointer.
private final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
        self.run = run
    }
}
