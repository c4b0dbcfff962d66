import BirthdayBuzz
import BuzzSystem
import CBuzzLinux
internal import CDBus
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the notification server said about a notification (docs/design/asks-and-wishes.md).
///
/// `sender` is the unique bus name (`:1.42`) of the connection that sent the
/// signal, as the bus daemon stamped it: any process on the session bus can
/// send these signals to the listener's connection by its name, so only one
/// whose sender is the server that answered our `Notify` may be acted on.
public enum NotificationSignal: Sendable, Equatable {
    /// The user picked the action `key` on notification `id` (`ActionInvoked`).
    case actionInvoked(id: UInt32, key: String, sender: String?)
    /// Notification `id` is gone (`NotificationClosed`; reason 1 expired, 2 dismissed, 3 closed by a call).
    case closed(id: UInt32, reason: UInt32, sender: String?)
    /// The listener is connected and its match rules are in place.
    case listening
    /// The listener ended: `problem` says why (the bus could not be reached, or
    /// hung up); nil when `stop()` ended it.
    case stopped(problem: String?)
}

/// Hears `ActionInvoked` and `NotificationClosed` from the notification server
/// for `buzz run`, on a session-bus connection of its own, and sends the
/// `Notify` of every notification that carries actions over that same
/// connection (`notify`): dunst and GNOME Shell send these signals only to
/// the connection that asked for the notification, not to the whole bus
/// (python-dbusmock broadcasts them, which hid this). The match rules
/// (`sender='org.freedesktop.Notifications'`) add the servers that broadcast.
/// A signal sent to the connection by name arrives whatever its sender, so
/// every signal is handed on with its sender, for the caller to check against
/// the server that showed the notification (`notify`'s reply says who that was).
///
/// The connection is opened on the caller's thread (`start`, bounded by the
/// timeout) and then read by one thread of its own, blocked in poll(2) on the
/// bus socket, a stop pipe and a wake pipe: no timer, no wake-up while nothing
/// happens (docs/design/decisions.md, the libdispatch monitor). A `notify` call blocks on a
/// caller's thread (libdbus is thread-safe) and then wakes the reading thread,
/// so a signal that arrived with the reply is handled at once.
///
/// `start()` is idempotent and cheap while a listener runs; after the bus hung
/// up, the next `start()` connects again. `handle` runs on the listener's
/// thread, one signal at a time, in the order the server sent them.
public final class NotificationListener: Sendable {
    private struct State {
        var running = false
        /// The running reader thread (its stop pipe ends it).
        var thread: PollThread?
        /// The write end of the running thread's wake pipe (after a `notify`).
        var wakeWrite: Int32 = -1
        /// Counts the threads started, so a thread that ends tells its own state from a newer one's.
        var generation = 0
    }

    /// The open connection, while the reading thread runs; calls hold this lock,
    /// and the thread takes it to close the connection.
    private struct Live: @unchecked Sendable {
        let lib: LibDBus
        let connection: OpaquePointer
    }

    private let environment: [String: String]
    private let timeout: Int32
    private let handle: @Sendable (NotificationSignal) -> Void
    /// The state, in a box the thread can hold (a `Mutex` cannot be captured).
    private final class Shared: Sendable {
        let state = Mutex(State())
        let live = Mutex<Live?>(nil)
    }

    private let shared = Shared()

    /// The `Notifications` interface's match rules.
    static let rules = ["ActionInvoked", "NotificationClosed"].map { member in
        "type='signal',sender='org.freedesktop.Notifications',path='/org/freedesktop/Notifications',"
            + "interface='org.freedesktop.Notifications',member='\(member)'"
    }

    /// - Parameters:
    ///   - environment: where the session bus address is read, as the dbus channel reads it.
    ///   - timeout: milliseconds to wait for the bus while connecting.
    ///   - handle: called on the listener's thread for every signal and state change.
    public init(environment: [String: String], timeout: Int32 = 5_000,
                handle: @escaping @Sendable (NotificationSignal) -> Void) {
        self.environment = environment
        self.timeout = timeout
        self.handle = handle
    }

    deinit {
        stop()
    }

    /// Whether a listener thread is running (connecting or listening).
    public var isRunning: Bool { shared.state.withLock { $0.running } }

    /// Starts listening unless a listener already runs: connects on this thread
    /// (bounded by the timeout), then reads on a thread of its own. `.listening`
    /// or `.stopped` says how it went.
    public func start() {
        _ = connectIfNeeded()
    }

    /// Stops the listener thread (it closes its connection on the way out).
    /// Returns once the thread has ended (unless called from it: from `handle`, it only asks).
    public func stop() {
        let thread = shared.state.withLock { state -> PollThread? in
            guard state.running, let thread = state.thread.take() else { return nil }
            if state.wakeWrite >= 0 { close(state.wakeWrite) }
            state.wakeWrite = -1
            state.running = false
            return thread
        }
        thread?.stop()  // outside the lock: the thread takes it on its way out
    }

    /// Sends `Notify` over the listening connection, so that the server's
    /// signals about that notification come back to it; connects first when
    /// needed. Blocks the calling thread up to `timeout` ms. The reply's sender
    /// is the server's unique name: the only sender whose signals about this
    /// notification count.
    func notify(_ call: DBusMethodCall, timeout: Int32) throws(DBusFailure) -> DBusReply {
        if let failure = connectIfNeeded() { throw failure }
        let result = shared.live.withLock { live -> Result<DBusReply, DBusFailure> in
            guard let live else { return .failure(.unreachable(address: "the session bus", detail: "the connection just closed")) }
            return Result { () throws(DBusFailure) -> DBusReply in try live.lib.exchange(call, over: live.connection, timeout: timeout) }
        }
        shared.state.withLock { state in
            if state.wakeWrite >= 0 { var byte: UInt8 = 1; _ = write(state.wakeWrite, &byte, 1) }
        }
        return try result.get()
    }

    /// Connects and starts the reading thread unless it runs; the failure when
    /// the bus cannot be reached (`.stopped(problem:)` was handed on too).
    private func connectIfNeeded() -> DBusFailure? {
        if shared.state.withLock({ $0.running }) { return nil }
        let opened: Live
        switch Self.connect(environment: environment, timeout: timeout) {
        case .failure(let failure):
            handle(.stopped(problem: DBusChannel.deliveryError(for: failure, timeout: Double(timeout) / 1000).message))
            return failure
        case .success(let live):
            opened = live
        }
        var wakeEnds: [Int32] = [-1, -1]
        let handle = handle, box = shared
        let started = shared.state.withLock { state -> Bool in
            guard !state.running, CBuzzLinux_pipe2(&wakeEnds, O_CLOEXEC | O_NONBLOCK) == 0 else { return false }
            let wakeRead = wakeEnds[0]
            state.generation += 1
            let generation = state.generation
            // Before the thread starts: its end clears it, and must find it set.
            shared.live.withLock { $0 = opened }
            let reader = Reader(live: opened, shared: box, wakeRead: wakeRead, handle: handle)
            do {
                state.thread = try PollThread(name: "buzz.dbus.listen", watching: reader.descriptors,
                                              onStart: { reader.start() }, handle: { reader.handle($0) },
                                              onEnd: { end in
                    let problem = reader.end(end)
                    box.live.withLock { live in
                        live = nil
                        opened.lib.dbus_connection_close(opened.connection)
                        opened.lib.dbus_connection_unref(opened.connection)
                    }
                    close(wakeRead)
                    // Unless stop() already took the thread and cleared the state.
                    let ended = box.state.withLock { state -> PollThread? in
                        guard state.generation == generation, state.running else { return nil }
                        if state.wakeWrite >= 0 { close(state.wakeWrite) }
                        state.wakeWrite = -1
                        state.running = false
                        return state.thread.take()
                    }
                    ended?.stop()  // on this thread: closes its stop pipe and lets it end detached
                    handle(.stopped(problem: problem))
                })
            } catch {
                shared.live.withLock { $0 = nil }
                close(wakeEnds[0])
                close(wakeEnds[1])
                return false
            }
            state.running = true
            state.wakeWrite = wakeEnds[1]
            return true
        }
        guard started else {
            // Another caller started one meanwhile (or no pipe or thread could be made): this connection is not needed.
            opened.lib.dbus_connection_close(opened.connection)
            opened.lib.dbus_connection_unref(opened.connection)
            return shared.state.withLock { $0.running } ? nil : .unreachable(address: "the session bus", detail: "no pipe for the listener")
        }
        return nil
    }

    // MARK: - The listener's thread

    /// Opens a private connection to the session bus, says Hello and adds the
    /// match rules; the failure as a one-line message.
    private static func connect(environment: [String: String], timeout: Int32) -> Result<Live, DBusFailure> {
        let lib: LibDBus
        do throws(DBusFailure) {
            lib = try LibDBus.get()
        } catch {
            return .failure(error)
        }
        let uid = UInt32(getuid())
        guard let address = DBusConnection.sessionBusAddress(environment: environment, uid: uid) else {
            return .failure(.noSessionBus(checked: DBusConnection.socketCandidates(environment: environment, uid: uid,
                                                                                   runUserDirectory: "/run/user")))
        }
        var error = DBusError()
        lib.dbus_error_init(&error)
        defer { lib.dbus_error_free(&error) }
        guard let connection = lib.dbus_connection_open_private(address, &error) else {
            return .failure(.unreachable(address: address, detail: lib.text(of: &error)))
        }
        lib.dbus_connection_set_exit_on_disconnect(connection, 0)
        do throws(DBusFailure) {
            _ = try lib.register(connection, timeout: timeout)
            for rule in rules {
                _ = try lib.send(DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "AddMatch",
                                                arguments: [.string(rule)]), over: connection, timeout: timeout)
            }
        } catch {
            lib.dbus_connection_close(connection)
            lib.dbus_connection_unref(connection)
            return .failure(error)
        }
        return .success(Live(lib: lib, connection: connection))
    }

    /// What the reader thread does with the connection: it reads signals until
    /// the bus hangs up or the stop pipe closes; the wake pipe says a `notify`
    /// may have queued some.
    ///
    /// The connection is read and its queue emptied only under `shared.live`'s
    /// lock, which `notify` holds while it waits: libdbus puts the reply to a
    /// blocking call in the same incoming queue, and a `pop_message` here
    /// between its arrival and the caller's look could take it, leaving the
    /// call to time out.
    private final class Reader: Sendable {
        private let live: Live
        private let shared: Shared
        private let wakeRead: Int32
        private let socket: Int32
        private let handleSignal: @Sendable (NotificationSignal) -> Void
        /// Why the loop ended, when the handler ended it.
        private let problem = Mutex<String?>(nil)

        init(live: Live, shared: Shared, wakeRead: Int32, handle: @escaping @Sendable (NotificationSignal) -> Void) {
            self.live = live
            self.shared = shared
            self.wakeRead = wakeRead
            handleSignal = handle
            var fd: Int32 = -1
            socket = live.lib.dbus_connection_get_unix_fd(live.connection, &fd) != 0 ? fd : -1
        }

        /// The bus socket and the wake pipe.
        var descriptors: [Int32] { [socket, wakeRead] }

        /// Before the first wait: says it listens, and hands on what came with the replies to the match rules.
        func start() -> PollLoop.Next {
            guard socket >= 0 else {
                problem.withLock { $0 = "the D-Bus connection has no socket to wait on" }
                return .finish
            }
            handleSignal(.listening)
            dispatchQueued()
            return .keepWatching
        }

        func handle(_ ready: [pollfd]) -> PollLoop.Next {
            if ready[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drained, drained.count) > 0 {}
            }
            if ready[0].revents != 0 {
                // Reads what is there without blocking; false once the bus is gone.
                let lib = live.lib, connection = live.connection
                let connected = shared.live.withLock { _ in
                    lib.dbus_connection_read_write(connection, 0) != 0 && lib.dbus_connection_get_is_connected(connection) != 0
                }
                if !connected {
                    problem.withLock { $0 = "the session bus hung up" }
                    return .finish
                }
            }
            // Signals that arrived with a `notify`'s reply or with the last read.
            dispatchQueued()
            return .keepWatching
        }

        /// What went wrong, as one line; nil after `stop()`.
        func end(_ end: PollLoop.End) -> String? {
            switch end {
            case .stopped: return nil
            case .finished: return problem.withLock { $0 }
            case .failed(let error): return "poll failed: \(error.reason)"
            }
        }

        /// Pops the queued messages under the lock, then hands their signals on outside it.
        private func dispatchQueued() {
            let lib = live.lib, connection = live.connection
            let signals = shared.live.withLock { _ in
                var signals: [NotificationSignal] = []
                while let message = lib.dbus_connection_pop_message(connection) {
                    if let signal = lib.notificationSignal(message) { signals.append(signal) }
                    lib.dbus_message_unref(message)
                }
                return signals
            }
            for signal in signals { handleSignal(signal) }
        }
    }
}

extension LibDBus {
    /// The signal a message carries, when it is one of the two the listener asked for.
    fileprivate func notificationSignal(_ message: OpaquePointer) -> NotificationSignal? {
        let interface = "org.freedesktop.Notifications"
        if dbus_message_is_signal(message, interface, "ActionInvoked") != 0 {
            let arguments = values(of: message)
            guard arguments.count >= 2, case .uint32(let id) = arguments[0], case .string(let key) = arguments[1] else {
                return nil
            }
            return .actionInvoked(id: id, key: key, sender: sender(of: message))
        }
        if dbus_message_is_signal(message, interface, "NotificationClosed") != 0 {
            let arguments = values(of: message)
            guard case .uint32(let id)? = arguments.first else { return nil }
            let reason: UInt32
            if case .uint32(let given)? = arguments.dropFirst().first { reason = given } else { reason = 0 }
            return .closed(id: id, reason: reason, sender: sender(of: message))
        }
        return nil
    }
}
