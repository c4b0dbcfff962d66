internal import CDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few D-Bus values the notification calls send and read back.
enum DBusValue: Sendable {
    case string(String)
    case uint32(UInt32)
    case int32(Int32)
    case byte(UInt8)
    case bool(Bool)
    /// `as`
    case strings([String])
    /// `a{sv}`, in this order.
    case variants([(key: String, value: DBusValue)])
}

/// A method call's answer: its values, and who sent it.
struct DBusReply: Sendable {
    var values: [DBusValue]
    /// The unique bus name (`:1.42`) of the peer that answered.
    var sender: String?
}

/// One method call: where it goes and what it carries.
struct DBusMethodCall: Sendable {
    var destination: String
    var path: String
    var interface: String
    var member: String
    var arguments: [DBusValue] = []
}

/// Why a D-Bus call did not come back with an answer.
enum DBusFailure: Error, Sendable, Equatable {
    /// No session bus address: none in the environment and no socket at the `checked` paths.
    case noSessionBus(checked: [String])
    /// The bus at `address` could not be reached or refused us.
    case unreachable(address: String, detail: String)
    /// The bus or the peer answered with a D-Bus error.
    case error(name: String, message: String)
    /// libdbus itself could not be loaded (LibDBus.swift).
    case libraryMissing(String)
    /// A value libdbus refuses to send (not UTF-8).
    case invalidArgument(String)
    /// libdbus could not allocate a message.
    case outOfMemory
}

/// The one session-bus connection a dbus channel keeps (docs/design/channels.md, docs/design/reminders.md).
///
/// Opened on first use, checked before each reuse and opened again after the
/// bus went away (a logout, a restarted session), closed by `close()` or in
/// `deinit`. Every libdbus call for it runs on `queue`, one at a time, so the
/// blocking `dbus_connection_send_with_reply_and_block` never occupies a
/// thread of Swift's cooperative pool.
///
/// `@unchecked Sendable` because of that confinement: `connection`,
/// `memo` and `opened` are read and written only on `queue` (and in
/// `deinit`, when nothing else can reach them).
final class DBusConnection: @unchecked Sendable {
    /// The name a private bus knows us by, and how many connections were opened so far (for tests).
    struct Info: Sendable, Equatable {
        var uniqueName: String?
        var opened: Int
    }

    private let environment: [String: String]
    private let runUserDirectory: String
    private let queue = SerialThread(name: "birthdaybuzz.dbus")
    private var connection: OpaquePointer?
    /// libdbus, set when the first connection is opened (so whenever `connection` is set).
    private var lib: LibDBus?
    private var uniqueName: String?
    /// Replies of calls made once per connection (`call(_:timeout:oncePerConnection:)`).
    private var memo: [String: [DBusValue]] = [:]
    private var opened = 0

    /// - Parameters:
    ///   - environment: where `DBUS_SESSION_BUS_ADDRESS` and `XDG_RUNTIME_DIR` are read from.
    ///   - runUserDirectory: the parent of the per-user runtime directories (`/run/user`).
    init(environment: [String: String], runUserDirectory: String = "/run/user") {
        self.environment = environment
        self.runUserDirectory = runUserDirectory
    }

    deinit {
        if let connection, let lib {
            lib.dbus_connection_close(connection)
            lib.dbus_connection_unref(connection)
        }
    }

    /// Sends `call` and waits up to `timeout` milliseconds for its reply's values.
    ///
    /// With `oncePerConnection`, a successful reply is kept and returned again
    /// until the connection is replaced (for questions like GetCapabilities).
    func call(_ call: DBusMethodCall, timeout: Int32, oncePerConnection: Bool = false) async throws(DBusFailure) -> [DBusValue] {
        try await onQueue { () throws(DBusFailure) -> [DBusValue] in
            let (lib, connection) = try self.openIfNeeded(timeout: timeout)
            let key = "\(call.destination) \(call.path) \(call.interface).\(call.member)"
            if oncePerConnection, let kept = self.memo[key] { return kept }
            let reply: [DBusValue]
            do throws(DBusFailure) {
                reply = try lib.send(call, over: connection, timeout: timeout)
            } catch {
                self.dropIfDisconnected()
                throw error
            }
            self.discardIncoming()
            if oncePerConnection { self.memo[key] = reply }
            return reply
        }
    }

    /// `call`, waiting on the calling thread: for a question asked once before
    /// anything async runs (whether a notification server is there). Never call
    /// it from `queue`.
    func callBlocking(_ call: DBusMethodCall, timeout: Int32) throws(DBusFailure) -> [DBusValue] {
        let result: Result<[DBusValue], DBusFailure> = queue.sync {
            Result { () throws(DBusFailure) -> [DBusValue] in
                let (lib, connection) = try self.openIfNeeded(timeout: timeout)
                defer { self.discardIncoming() }
                return try lib.send(call, over: connection, timeout: timeout)
            }
        }
        return try result.get()
    }

    /// Closes the connection; a later call opens a new one.
    func close() async {
        await onQueue { () -> Void in self.drop() }
    }

    /// The current connection's unique name and the number of connections opened so far.
    func info() async -> Info {
        await onQueue { () -> Info in Info(uniqueName: self.uniqueName, opened: self.opened) }
    }

    /// Where the session bus is, as docs/design/channels.md orders it: `DBUS_SESSION_BUS_ADDRESS`,
    /// else `$XDG_RUNTIME_DIR/bus`, else `/run/user/<uid>/bus` (cron and systemd
    /// timers have no session variables). `nil` when none of them is there.
    static func sessionBusAddress(environment: [String: String], uid: UInt32,
                                  runUserDirectory: String = "/run/user") -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            return address
        }
        return socketCandidates(environment: environment, uid: uid, runUserDirectory: runUserDirectory)
            .first(where: isSocket).map { "unix:path=" + escapeAddressValue($0) }
    }

    /// Where a session bus socket usually is, in the order they are tried.
    static func socketCandidates(environment: [String: String], uid: UInt32, runUserDirectory: String) -> [String] {
        var candidates: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            candidates.append(runtime + "/bus")
        }
        candidates.append("\(runUserDirectory)/\(uid)/bus")
        return candidates
    }

    /// D-Bus address values keep `[-0-9A-Za-z_/.\*]` and percent-encode every other byte.
    static func escapeAddressValue(_ value: String) -> String {
        var escaped = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return escaped
    }

    private static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    // MARK: - On the queue

    /// Runs `body` on `queue` and hands back its result.
    /// Runs `body` on this connection's thread (a blocking libdbus call must not hold a pool thread).
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws(DBusFailure) -> T) async throws(DBusFailure) -> T {
        let result: Result<T, DBusFailure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(DBusFailure) -> T in try body() })
            }
        }
        return try result.get()
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// The live connection, opened (and registered with the bus) when there is none or the old one is gone.
    private func openIfNeeded(timeout: Int32) throws(DBusFailure) -> (LibDBus, OpaquePointer) {
        let lib = try LibDBus.get()
        self.lib = lib
        if let connection {
            // A non-blocking read notices a bus that hung up since the last call.
            _ = lib.dbus_connection_read_write(connection, 0)
            if lib.dbus_connection_get_is_connected(connection) != 0 {
                discardIncoming()
                return (lib, connection)
            }
            drop()
        }
        let uid = UInt32(getuid())
        guard let address = Self.sessionBusAddress(environment: environment, uid: uid,
                                                   runUserDirectory: runUserDirectory) else {
            throw .noSessionBus(checked: Self.socketCandidates(environment: environment, uid: uid,
                                                               runUserDirectory: runUserDirectory))
        }
        var error = DBusError()
        lib.dbus_error_init(&error)
        defer { lib.dbus_error_free(&error) }
        guard let opened = lib.dbus_connection_open_private(address, &error) else {
            throw .unreachable(address: address, detail: lib.text(of: &error))
        }
        // A lost bus must end a send, never the process.
        lib.dbus_connection_set_exit_on_disconnect(opened, 0)
        do throws(DBusFailure) {
            uniqueName = try lib.register(opened, timeout: timeout)
        } catch {
            lib.dbus_connection_close(opened)
            lib.dbus_connection_unref(opened)
            if case .error(_, let message) = error {
                throw .unreachable(address: address, detail: message)
            }
            throw error
        }
        connection = opened
        self.opened += 1
        return (lib, opened)
    }

    private func dropIfDisconnected() {
        if let connection, let lib, lib.dbus_connection_get_is_connected(connection) == 0 {
            drop()
        }
    }

    private func drop() {
        if let connection, let lib {
            lib.dbus_connection_close(connection)
            lib.dbus_connection_unref(connection)
        }
        connection = nil
        uniqueName = nil
        memo = [:]
    }

    /// Signals addressed to us (NameAcquired, a server's NotificationClosed) pile up
    /// in libdbus's incoming queue while we wait for replies; nobody reads them.
    private func discardIncoming() {
        guard let connection, let lib else { return }
        while let message = lib.dbus_connection_pop_message(connection) {
            lib.dbus_message_unref(message)
        }
    }

}

// MARK: - Messages

/// The message work, as methods of the loaded library: inside them `dbus_…`
/// names are libdbus's functions (`LibDBus`'s members).
extension LibDBus {
    /// Says Hello to the bus, as `dbus_bus_register` does, but within the channel's timeout
    /// (`dbus_bus_register` waits libdbus's default 25 s for a bus that does not answer).
    func register(_ connection: OpaquePointer, timeout: Int32) throws(DBusFailure) -> String {
        let hello = DBusMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", member: "Hello")
        guard case .string(let name)? = try send(hello, over: connection, timeout: timeout).first else {
            throw .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "the bus sent no name in reply to Hello")
        }
        guard dbus_bus_set_unique_name(connection, name) != 0 else { throw .outOfMemory }
        return name
    }


    /// Sends `call` and waits up to `timeout` milliseconds for its reply's values.
    func send(_ call: DBusMethodCall, over connection: OpaquePointer,
              timeout: Int32) throws(DBusFailure) -> [DBusValue] {
        try exchange(call, over: connection, timeout: timeout).values
    }

    /// `send`, with the unique bus name of the peer that answered.
    func exchange(_ call: DBusMethodCall, over connection: OpaquePointer,
                  timeout: Int32) throws(DBusFailure) -> DBusReply {
        guard let message = dbus_message_new_method_call(call.destination, call.path, call.interface, call.member) else {
            throw .outOfMemory
        }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for argument in call.arguments {
            try append(argument, to: &iter)
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, timeout, &error) else {
            let name = dbus_error_is_set(&error) != 0 ? error.name.map { String(cString: $0) } : nil
            throw .error(name: name ?? "org.freedesktop.DBus.Error.Failed", message: text(of: &error))
        }
        defer { dbus_message_unref(reply) }
        return DBusReply(values: values(of: reply), sender: sender(of: reply))
    }

    /// The unique name of the connection that sent `message`, as the bus daemon
    /// stamped it (a peer cannot choose it); nil on a connection without a bus.
    func sender(of message: OpaquePointer) -> String? {
        dbus_message_get_sender(message).map { String(cString: $0) }
    }

    fileprivate func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusFailure) {
        var ok: dbus_bool_t = 0
        switch value {
        case .string(let string):
            // libdbus aborts the process on a string it cannot send; ask it first.
            let clean = string.contains("\0") ? string.replacing("\0", with: "") : string
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard dbus_validate_utf8(clean, &error) != 0 else {
                throw .invalidArgument(text(of: &error))
            }
            ok = clean.withCString { cString in
                var pointer: UnsafePointer<CChar>? = cString
                return dbus_message_iter_append_basic(&iter, CDBus_TYPE_STRING, &pointer)
            }
        case .uint32(var number):
            ok = dbus_message_iter_append_basic(&iter, CDBus_TYPE_UINT32, &number)
        case .int32(var number):
            ok = dbus_message_iter_append_basic(&iter, CDBus_TYPE_INT32, &number)
        case .byte(var number):
            ok = dbus_message_iter_append_basic(&iter, CDBus_TYPE_BYTE, &number)
        case .bool(let flag):
            var value: dbus_bool_t = flag ? 1 : 0
            ok = dbus_message_iter_append_basic(&iter, CDBus_TYPE_BOOLEAN, &value)
        case .strings(let strings):
            var array = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBus_TYPE_ARRAY, "s", &array) != 0 else { throw .outOfMemory }
            do throws(DBusFailure) {
                for string in strings { try append(.string(string), to: &array) }
            } catch {
                dbus_message_iter_abandon_container(&iter, &array)
                throw error
            }
            ok = dbus_message_iter_close_container(&iter, &array)
        case .variants(let entries):
            var array = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBus_TYPE_ARRAY, "{sv}", &array) != 0 else { throw .outOfMemory }
            do throws(DBusFailure) {
                for (key, value) in entries { try appendEntry(key, value, to: &array) }
            } catch {
                dbus_message_iter_abandon_container(&iter, &array)
                throw error
            }
            ok = dbus_message_iter_close_container(&iter, &array)
        }
        guard ok != 0 else { throw .outOfMemory }
    }

    /// One `{sv}` entry of an `a{sv}` array.
    fileprivate func appendEntry(_ key: String, _ value: DBusValue, to array: inout DBusMessageIter) throws(DBusFailure) {
        var entry = DBusMessageIter()
        guard dbus_message_iter_open_container(&array, CDBus_TYPE_DICT_ENTRY, nil, &entry) != 0 else { throw .outOfMemory }
        var variant = DBusMessageIter()
        do throws(DBusFailure) {
            try append(.string(key), to: &entry)
            guard dbus_message_iter_open_container(&entry, CDBus_TYPE_VARIANT, signature(of: value), &variant) != 0 else {
                throw DBusFailure.outOfMemory
            }
            do throws(DBusFailure) {
                try append(value, to: &variant)
            } catch {
                dbus_message_iter_abandon_container(&entry, &variant)
                throw error
            }
            guard dbus_message_iter_close_container(&entry, &variant) != 0 else { throw DBusFailure.outOfMemory }
        } catch {
            dbus_message_iter_abandon_container(&array, &entry)
            throw error
        }
        guard dbus_message_iter_close_container(&array, &entry) != 0 else { throw .outOfMemory }
    }

    fileprivate func signature(of value: DBusValue) -> String {
        switch value {
        case .string: return "s"
        case .uint32: return "u"
        case .int32: return "i"
        case .byte: return "y"
        case .bool: return "b"
        case .strings: return "as"
        case .variants: return "a{sv}"
        }
    }

    /// The reply's top-level values that `DBusValue` can hold; others are left out.
    func values(of reply: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(reply, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            if let value = value(at: &iter) { values.append(value) }
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    fileprivate func value(at iter: inout DBusMessageIter) -> DBusValue? {
        switch dbus_message_iter_get_arg_type(&iter) {
        case CDBus_TYPE_STRING:
            var pointer: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iter, &pointer)
            return pointer.map { .string(String(cString: $0)) }
        case CDBus_TYPE_UINT32:
            var number: UInt32 = 0
            dbus_message_iter_get_basic(&iter, &number)
            return .uint32(number)
        case CDBus_TYPE_INT32:
            var number: Int32 = 0
            dbus_message_iter_get_basic(&iter, &number)
            return .int32(number)
        case CDBus_TYPE_BYTE:
            var number: UInt8 = 0
            dbus_message_iter_get_basic(&iter, &number)
            return .byte(number)
        case CDBus_TYPE_BOOLEAN:
            var flag: UInt32 = 0  // dbus_bool_t
            dbus_message_iter_get_basic(&iter, &flag)
            return .bool(flag != 0)
        case CDBus_TYPE_ARRAY where dbus_message_iter_get_element_type(&iter) == CDBus_TYPE_STRING:
            var element = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &element)
            var strings: [String] = []
            while case .string(let string)? = value(at: &element) {
                strings.append(string)
                guard dbus_message_iter_next(&element) != 0 else { break }
            }
            return .strings(strings)
        default:
            return nil
        }
    }

    /// A libdbus error's message as one line.
    func text(of error: inout DBusError) -> String {
        guard dbus_error_is_set(&error) != 0, let message = error.message else { return "unknown D-Bus error" }
        return String(cString: message).split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
