internal import CDBus
import BuzzSystem

/// libdbus, loaded with `dlopen` the first time a dbus channel connects instead
/// of being linked: libdbus brings libsystemd, libgcrypt, liblzma, liblz4,
/// libzstd, libcap and libgpg-error, and every command that never shows a
/// desktop notification (`list`, `import`, a webhook `send`) would otherwise
/// map them at start-up. The headers still come from the CDBus module.
///
/// Each member is the C function of the same name, with its exact prototype.
/// `@unchecked Sendable`: C function pointers, written once at load.
struct LibDBus: @unchecked Sendable {
    /// The soname of Debian's libdbus-1-3.
    static let soname = "libdbus-1.so.3"

    typealias Connection = OpaquePointer
    typealias Message = OpaquePointer
    typealias Iter = UnsafeMutablePointer<DBusMessageIter>
    typealias Error = UnsafeMutablePointer<DBusError>
    typealias CString = UnsafePointer<CChar>

    let dbus_threads_init_default: @convention(c) () -> dbus_bool_t
    let dbus_error_init: @convention(c) (Error?) -> Void
    let dbus_error_free: @convention(c) (Error?) -> Void
    let dbus_error_is_set: @convention(c) (UnsafePointer<DBusError>?) -> dbus_bool_t
    let dbus_validate_utf8: @convention(c) (CString?, Error?) -> dbus_bool_t
    let dbus_connection_open_private: @convention(c) (CString?, Error?) -> Connection?
    let dbus_connection_close: @convention(c) (Connection?) -> Void
    let dbus_connection_unref: @convention(c) (Connection?) -> Void
    let dbus_connection_read_write: @convention(c) (Connection?, Int32) -> dbus_bool_t
    let dbus_connection_get_is_connected: @convention(c) (Connection?) -> dbus_bool_t
    let dbus_connection_set_exit_on_disconnect: @convention(c) (Connection?, dbus_bool_t) -> Void
    let dbus_connection_pop_message: @convention(c) (Connection?) -> Message?
    let dbus_connection_send_with_reply_and_block: @convention(c) (Connection?, Message?, Int32, Error?) -> Message?
    let dbus_bus_set_unique_name: @convention(c) (Connection?, CString?) -> dbus_bool_t
    let dbus_message_new_method_call: @convention(c) (CString?, CString?, CString?, CString?) -> Message?
    let dbus_message_unref: @convention(c) (Message?) -> Void
    let dbus_message_iter_init_append: @convention(c) (Message?, Iter?) -> Void
    let dbus_message_iter_append_basic: @convention(c) (Iter?, Int32, UnsafeRawPointer?) -> dbus_bool_t
    let dbus_message_iter_open_container: @convention(c) (Iter?, Int32, CString?, Iter?) -> dbus_bool_t
    let dbus_message_iter_close_container: @convention(c) (Iter?, Iter?) -> dbus_bool_t
    let dbus_message_iter_abandon_container: @convention(c) (Iter?, Iter?) -> Void
    let dbus_message_iter_init: @convention(c) (Message?, Iter?) -> dbus_bool_t
    let dbus_message_iter_next: @convention(c) (Iter?) -> dbus_bool_t
    let dbus_message_iter_get_arg_type: @convention(c) (Iter?) -> Int32
    let dbus_message_iter_get_element_type: @convention(c) (Iter?) -> Int32
    let dbus_message_iter_get_basic: @convention(c) (Iter?, UnsafeMutableRawPointer?) -> Void
    let dbus_message_iter_recurse: @convention(c) (Iter?, Iter?) -> Void
    let dbus_connection_get_unix_fd: @convention(c) (Connection?, UnsafeMutablePointer<Int32>?) -> dbus_bool_t
    let dbus_message_is_signal: @convention(c) (Message?, CString?, CString?) -> dbus_bool_t
    let dbus_message_get_sender: @convention(c) (Message?) -> CString?

    /// The process's libdbus, loaded once with its thread locks on (libdbus is
    /// used from whichever thread runs a connection's queue).
    static let shared: Result<LibDBus, DBusFailure> = load()

    static func get() throws(DBusFailure) -> LibDBus { try shared.get() }

    private static func load() -> Result<LibDBus, DBusFailure> {
        let library: LibDBus
        do throws(SharedLibrary.LoadError) {
            library = try LibDBus(try SharedLibrary(soname: soname, name: "libdbus", package: "libdbus-1-3"))
        } catch {
            return .failure(.libraryMissing(error.description))
        }
        guard library.dbus_threads_init_default() != 0 else {
            return .failure(.outOfMemory)
        }
        return .success(library)
    }

    private init(_ library: SharedLibrary) throws(SharedLibrary.LoadError) {
        dbus_threads_init_default = try library.function("dbus_threads_init_default")
        dbus_error_init = try library.function("dbus_error_init")
        dbus_error_free = try library.function("dbus_error_free")
        dbus_error_is_set = try library.function("dbus_error_is_set")
        dbus_validate_utf8 = try library.function("dbus_validate_utf8")
        dbus_connection_open_private = try library.function("dbus_connection_open_private")
        dbus_connection_close = try library.function("dbus_connection_close")
        dbus_connection_unref = try library.function("dbus_connection_unref")
        dbus_connection_read_write = try library.function("dbus_connection_read_write")
        dbus_connection_get_is_connected = try library.function("dbus_connection_get_is_connected")
        dbus_connection_set_exit_on_disconnect = try library.function("dbus_connection_set_exit_on_disconnect")
        dbus_connection_pop_message = try library.function("dbus_connection_pop_message")
        dbus_connection_send_with_reply_and_block = try library.function("dbus_connection_send_with_reply_and_block")
        dbus_bus_set_unique_name = try library.function("dbus_bus_set_unique_name")
        dbus_message_new_method_call = try library.function("dbus_message_new_method_call")
        dbus_message_unref = try library.function("dbus_message_unref")
        dbus_message_iter_init_append = try library.function("dbus_message_iter_init_append")
        dbus_message_iter_append_basic = try library.function("dbus_message_iter_append_basic")
        dbus_message_iter_open_container = try library.function("dbus_message_iter_open_container")
        dbus_message_iter_close_container = try library.function("dbus_message_iter_close_container")
        dbus_message_iter_abandon_container = try library.function("dbus_message_iter_abandon_container")
        dbus_message_iter_init = try library.function("dbus_message_iter_init")
        dbus_message_iter_next = try library.function("dbus_message_iter_next")
        dbus_message_iter_get_arg_type = try library.function("dbus_message_iter_get_arg_type")
        dbus_message_iter_get_element_type = try library.function("dbus_message_iter_get_element_type")
        dbus_message_iter_get_basic = try library.function("dbus_message_iter_get_basic")
        dbus_message_iter_recurse = try library.function("dbus_message_iter_recurse")
        dbus_connection_get_unix_fd = try library.function("dbus_connection_get_unix_fd")
        dbus_message_is_signal = try library.function("dbus_message_is_signal")
        dbus_message_get_sender = try library.function("dbus_message_get_sender")
    }
}
