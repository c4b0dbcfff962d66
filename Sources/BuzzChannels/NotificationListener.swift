import BirthdayBuzz
import BuzzSystem
internal import CDBus
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the notification server said about a notification (DESIGN §6a).
public enum NotificationSignal: Sendable, Equatable {
    /// The user picked the action `key` on notification `id` (`ActionInvoked`).
    case actionInvoked(id: UInt32, key: String)
    /// Notification `id` is gone (`NotificationClosed`; reason 1 expired, 2 dismissed, 3 closed by a call).
    case closed(id: UInt32, reason: UInt32)
    /// The listener is connected and its match rules are in place.
    case listening
    /// The listener ended: `problem` says why (the bus could not be reached, or
    /// hung up); nil when `stop()` ended it.
    case stopped(problem: String?)
}

/// Hears `ActionInvoked` and `NotificationClosed` from the notification server
/// for `buzz run`, on a session-bus connection of its own.
///
/// The signals are broadcast; match rules with `sender='org.freedesktop.Notifications'`
/// deliver them to this connection whichever connection sent the `Notify`,
/// so the dbus channel's connection (used by its own thread for calls) and this
/// one never share a libdbus handle. The connection lives on one thread of its
/// own, blocked in poll(2) on the bus socket and a stop pipe: no timer, no
/// wake-up while nothing happens (DESIGN §9, the libdispatch monitor).
///
/// `start()` is idempotent and cheap while a listener runs; after the bus hung
/// up, the next `start()` connects again. `handle` runs on the listener's
/// thread, one signal at a time, in the order the server sent them.
public final class NotificationListener: Sendable {
    private struct State {
        var running = false
        /// The write end of the running thread's stop pipe.
        var stopWrite: Int32 = -1
        /// Counts the threads started, so a thread that ends tells its own state from a newer one's.
        var generation = 0
    }

    private let environment: [String: String]
    private let timeout: Int32
    private let handle: @Sendable (NotificationSignal) -> Void
    /// The state, in a box the thread can hold (a `Mutex` cannot be captured).
    private final class Shared: Sendable {
        let state = Mutex(State())
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

    /// Starts listening unless a listener already runs. Connecting happens on
    /// the listener's thread; `.listening` or `.stopped` says how it went.
    public func start() {
        var ends: [Int32] = [-1, -1]
        let generation = shared.state.withLock { state -> Int? in
            guard !state.running, pipe(&ends) == 0 else { return nil }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            state.running = true
            state.stopWrite = ends[1]
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let stopRead = ends[0]
        let environment = environment, timeout = timeout, handle = handle, shared = shared
        let thread = Thread {
            let problem = Self.listen(environment: environment, timeout: timeout, stopRead: stopRead, handle: handle)
            close(stopRead)
            shared.state.withLock { state in
                // Unless stop() already closed the write end and cleared the state.
                if state.generation == generation, state.running {
                    close(state.stopWrite)
                    state.stopWrite = -1
                    state.running = false
                }
            }
            handle(.stopped(problem: problem))
        }
        thread.name = "birthdaybuzz.dbus.listen"
        thread.start()
    }

    /// Stops the listener thread (it closes its connection on the way out).
    public func stop() {
        shared.state.withLock { state in
            guard state.running, state.stopWrite >= 0 else { return }
            close(state.stopWrite)  // the thread's poll sees the pipe hang up
            state.stopWrite = -1
            state.running = false
        }
    }

    // MARK: - The listener's thread

    /// Connects, adds the match rules, then reads signals until the bus hangs up
    /// or the stop pipe closes. Returns what went wrong, as one line; nil after `stop()`.
    private static func listen(environment: [String: String], timeout: Int32, stopRead: Int32,
                               handle: @Sendable (NotificationSignal) -> Void) -> String? {
        let lib: LibDBus
        do throws(DBusFailure) {
            lib = try LibDBus.get()
        } catch {
            return DBusChannel.deliveryError(for: error, timeout: Double(timeout) / 1000).message
        }
        let uid = UInt32(getuid())
        guard let address = DBusConnection.sessionBusAddress(environment: environment, uid: uid) else {
            return DBusChannel.deliveryError(for: .noSessionBus(checked: DBusConnection.socketCandidates(
                environment: environment, uid: uid, runUserDirectory: "/run/user")), timeout: 0).message
        }
        var error = DBusError()
        lib.dbus_error_init(&error)
        defer { lib.dbus_error_free(&error) }
        guard let connection = lib.dbus_connection_open_private(address, &error) else {
            return "no D-Bus session bus at \(address) (\(lib.text(of: &error)))"
        }
        lib.dbus_connection_set_exit_on_disconnect(connection, 0)
        defer {
            lib.dbus_connection_close(connection)
            lib.dbus_connection_unref(connection)
        }
        do throws(DBusFailure) {
            _ = try lib.register(connection, timeout: timeout)
            for rule in rules {
                _ = try lib.send(DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "AddMatch",
                                                arguments: [.string(rule)]), over: connection, timeout: timeout)
            }
        } catch {
            return DBusChannel.deliveryError(for: error, timeout: Double(timeout) / 1000).message
        }
        var fd: Int32 = -1
        guard lib.dbus_connection_get_unix_fd(connection, &fd) != 0, fd >= 0 else {
            return "the D-Bus connection has no socket to wait on"
        }
        handle(.listening)
        var watched = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
        while true {
            // Signals that arrived with the replies above, or with the last read.
            while let message = lib.dbus_connection_pop_message(connection) {
                if let signal = lib.notificationSignal(message) { handle(signal) }
                lib.dbus_message_unref(message)
            }
            watched[0].revents = 0
            watched[1].revents = 0
            if poll(&watched, 2, -1) < 0 {
                if errno == EINTR { continue }
                return "poll failed: \(SystemError("poll").reason)"
            }
            if watched[1].revents != 0 { return nil }
            // Reads what is there without blocking; false once the bus is gone.
            if lib.dbus_connection_read_write(connection, 0) == 0
                || lib.dbus_connection_get_is_connected(connection) == 0 {
                return "the session bus hung up"
            }
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
            return .actionInvoked(id: id, key: key)
        }
        if dbus_message_is_signal(message, interface, "NotificationClosed") != 0 {
            let arguments = values(of: message)
            guard case .uint32(let id)? = arguments.first else { return nil }
            if case .uint32(let reason)? = arguments.dropFirst().first { return .closed(id: id, reason: reason) }
            return .closed(id: id, reason: 0)
        }
        return nil
    }
}
